"""The judge's one JSON comparison (conformance/judge/json_diff.py)."""

from __future__ import annotations

import math
from typing import Any

from session_contracts.conformance.judge.json_diff import (
    ABSENT,
    Mismatch,
    character_offset,
    mismatches,
)


def test_equal_values_have_no_mismatch() -> None:
    assert mismatches({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, limit=5) == []


def test_members_in_the_expected_order_then_those_only_the_answer_has() -> None:
    found = mismatches({"b": 1, "a": 2}, {"z": 0, "a": 3}, limit=5)
    assert found == [
        Mismatch(("b",), 1, ABSENT),
        Mismatch(("a",), 2, 3),
        Mismatch(("z",), ABSENT, 0),
    ]
    assert [m.path for m in found] == ["$.b", "$.a", "$.z"]


def test_entries_one_by_one_and_the_missing_ones_absent() -> None:
    found = mismatches([1, 2, 3], [1, 5], limit=5)
    assert found == [Mismatch((1,), 2, 5), Mismatch((2,), 3, ABSENT)]


def test_a_type_change_is_one_mismatch_at_its_place() -> None:
    assert mismatches({"a": {"b": 1}}, {"a": [1]}) == [Mismatch(("a",), {"b": 1}, [1])]


def test_limit_stops_the_walk() -> None:
    assert len(mismatches(list(range(10)), list(range(1, 11)), limit=3)) == 3


def test_json_equality_by_default_and_a_judges_equality_when_given() -> None:
    assert mismatches({"n": 1}, {"n": 1.0}) == []  # JSON numbers: 1 and 1.0 are one value
    assert mismatches({"n": True}, {"n": 1}) == [Mismatch(("n",), True, 1)]

    def close(a: Any, b: Any) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-9)
        return bool(a == b)

    assert mismatches([0.1 + 0.2], [0.3], equal=close) == []


def test_paths_are_escaped_json_paths() -> None:
    (found,) = mismatches({"a b": 1}, {"a b": 2})
    assert found.path == "$['a b']"


def test_character_offset() -> None:
    assert character_offset("abcd", "abXd") == 2
    assert character_offset("abc", "abcdef") == 3
