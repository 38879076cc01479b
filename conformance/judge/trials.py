"""A case as sent, and the other forms of it and of its answer that a judge accepts.

Below the judges and golden alike: both compare answers this way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.serde_numbers import NumberOutOfRange, floats_as_harn_reads

__all__ = ["Trial", "as_harn_reads", "copy_json", "normalize_feedback"]


@dataclass(frozen=True)
class Trial:
    """One case as sent: the operation and its input."""

    operation: str
    input: Mapping[str, Any]


_SCALARS = (str, int, float, bool, type(None))


def copy_json(value: Any) -> Any:
    """``copy.deepcopy`` of a JSON value (dicts, lists, tuples, scalars), several times as
    fast. One object met twice becomes two equal copies (no memo): a case is read as JSON,
    which cannot tell. Anything else is copied by ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    if kind in _SCALARS:
        return value
    if kind is tuple:
        return tuple(copy_json(item) for item in value)
    return copy.deepcopy(value)


def as_harn_reads(trial: Trial) -> Trial | None:
    """The trial as a producer built like Harn reads it (serde_json without
    ``float_roundtrip``: docs/recap.md section 4, "Numbers as Harn reads them"), or None
    when that reading changes no number (or refuses one). A judge that compares numbers
    exactly, or hashes over them, accepts the reference's answer to either trial: the
    exact reading and Harn's, never a mixture and never any other change."""
    try:
        harn = floats_as_harn_reads(trial.input)
    except NumberOutOfRange:
        return None
    if canonical_bytes(harn) == canonical_bytes(trial.input):
        return None
    return Trial(trial.operation, harn)


def normalize_feedback(output: Any) -> Any:
    # Checkpoint ids are the implementation's own: compare them by first appearance.
    names: dict[str, str] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "checkpoint_id" and isinstance(value, str):
                    out[key] = names.setdefault(value, f"checkpoint#{len(names) + 1}")
                elif key == "message":
                    out[key] = "<message>"  # people's text: not compared
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(output)
