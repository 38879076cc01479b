"""The judge's one JSON comparison: where two JSON values differ, in document order.

certify names the first place an answer differs, golden and the HTML reports the first
few; each renders the places its own way (a report never repeats a planted secret).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from session_contracts.errors import json_path
from session_contracts.validation.xkeywords import json_equal

__all__ = ["ABSENT", "Mismatch", "character_offset", "mismatches"]


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


# What a side holds where a member or an entry is only on the other side.
ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One place where ``actual`` differs from ``expected`` (either may be ABSENT)."""

    parts: tuple[str | int, ...]
    expected: Any
    actual: Any

    @property
    def path(self) -> str:
        return json_path(self.parts)


def mismatches(
    expected: Any,
    actual: Any,
    *,
    limit: int = 1,
    equal: Callable[[Any, Any], bool] = json_equal,
) -> list[Mismatch]:
    """The first ``limit`` places where the values differ under ``equal``: objects member by
    member (the expected value's order, then the members only ``actual`` has), arrays
    entry by entry, anything else as a whole."""
    found: list[Mismatch] = []

    def walk(e: Any, a: Any, parts: tuple[str | int, ...]) -> None:
        if len(found) >= limit or equal(e, a):
            return
        if isinstance(e, dict) and isinstance(a, dict):
            for key in [*e, *(k for k in a if k not in e)]:
                walk(e.get(key, ABSENT), a.get(key, ABSENT), (*parts, key))
                if len(found) >= limit:
                    return
            return
        if isinstance(e, list) and isinstance(a, list):
            for index in range(max(len(e), len(a))):
                left = e[index] if index < len(e) else ABSENT
                right = a[index] if index < len(a) else ABSENT
                walk(left, right, (*parts, index))
                if len(found) >= limit:
                    return
            return
        found.append(Mismatch(parts, e, a))

    walk(expected, actual, ())
    return found


def character_offset(expected: str, actual: str) -> int:
    """The first character where two strings differ."""
    return next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
