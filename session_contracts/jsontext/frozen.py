"""Read-only JSON values: what immutable records (a journal event, a span) hold."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["freeze_json", "thaw_json"]


# Values that are neither objects nor arrays, and the usual objects, told by their exact
# type before the slower ``isinstance(value, Mapping)`` (an ABC check) any other value takes.
_SCALARS = frozenset({str, int, float, bool, type(None)})
_OBJECTS = frozenset({dict, MappingProxyType})


def freeze_json(value: Any) -> Any:
    """A read-only deep copy of a JSON value: objects become mapping proxies, arrays tuples."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind in _OBJECTS or isinstance(value, Mapping):
        return MappingProxyType({key: freeze_json(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze_json(item) for item in value)
    return value


def thaw_json(value: Any) -> Any:
    """A plain, mutable JSON copy (``dict``/``list``) of a frozen or plain value."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind in _OBJECTS or isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [thaw_json(item) for item in value]
    return value
