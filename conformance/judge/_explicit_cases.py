"""Explicit cases: rare but decisive inputs every check sends before its random ones.

A check's random cases come from ``_cases`` strategies; the inputs that
decide a rule (a limit at its boundary and one past it, a reset with a trend
in flight, an exactly full page, a secret behind a label) are too rare to
leave to chance at the default number of examples. ``EXPLICIT_CASES`` maps a
check id to the case inputs (the same shape as that check's strategy draws,
with the operation named) sent first, in order, at every setting; the seed
never changes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["EXPLICIT_CASES", "ExplicitCase"]


@dataclass(frozen=True, slots=True)
class ExplicitCase:
    """One explicit case: the operation, its input, and the rule it decides."""

    operation: str
    input: Mapping[str, Any]
    why: str


EXPLICIT_CASES: Mapping[str, Sequence[ExplicitCase]] = {}
