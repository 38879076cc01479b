"""A case as sent, and the other forms of it and of its answer that a judge accepts.

Below the judges and golden alike: both compare answers this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.serde_numbers import NumberOutOfRange, floats_as_harn_reads

__all__ = ["Trial", "as_harn_reads", "normalize_feedback"]


@dataclass(frozen=True)
class Trial:
    """One case as sent: the operation and its input."""

    operation: str
    input: Mapping[str, Any]


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
