"""Frozen dataclass records read from JSON objects whose members are named as their fields.

One statement of "each field is read from the member of its name", derived from
``dataclasses.fields`` once per class, instead of a hand-written
``cls(a=value["a"], b=value["b"], ...)`` that restates the field list in every reader.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeVar, get_args, get_type_hints

__all__ = ["read_record"]

R = TypeVar("R")

# What an absent member reads as when the JSON object must hold it.
_REQUIRED: Any = object()


class _Member(NamedTuple):
    name: str
    default: Any  # what an absent member reads as, or _REQUIRED
    factory: bool  # ``default`` is a ``default_factory``, called for each record


# Each record class's members, worked out on its first read.
_MEMBERS: dict[type, tuple[_Member, ...]] = {}


def _members(cls: type) -> tuple[_Member, ...]:
    """Each field of ``cls`` in order and what its absent member reads as: the field's
    default, else ``None`` when its type admits ``None``, else nothing (required)."""
    known = _MEMBERS.get(cls)
    if known is not None:
        return known
    hints = get_type_hints(cls)
    members = []
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            members.append(_Member(field.name, field.default, False))
        elif field.default_factory is not dataclasses.MISSING:
            members.append(_Member(field.name, field.default_factory, True))
        elif type(None) in get_args(hints[field.name]):
            members.append(_Member(field.name, None, False))
        else:
            members.append(_Member(field.name, _REQUIRED, False))
    return _MEMBERS.setdefault(cls, tuple(members))


def read_record(cls: type[R], value: Mapping[str, Any], /, **given: Any) -> R:
    """The ``cls`` record ``value`` describes, each field read from the member of its name.

    ``given`` holds the fields not read as they stand (computed, converted).  An absent
    member reads as the field's default, or ``None`` when the field's type admits it;
    an absent required one is a ``KeyError``.  Nothing is validated here: check
    ``value`` first, or trust it.
    """
    fields = dict(given)
    for name, default, factory in _members(cls):
        if name in given:
            continue
        if default is _REQUIRED or name in value:
            fields[name] = value[name]
        else:
            fields[name] = default() if factory else default
    return cls(**fields)
