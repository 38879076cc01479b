"""read_record: a frozen dataclass read from a JSON object by its fields' names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from session_contracts.jsontext.records import read_record


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    name: str
    note: str | None
    count: int | None = 0
    tags: list[str] = field(default_factory=list)
    digest: str


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            {"name": "a", "note": "n", "count": 3, "tags": ["x"]},
            Sample(name="a", note="n", count=3, tags=["x"], digest="d"),
        ),
        # Absent optional members: the field's default, its factory's value, or None.
        ({"name": "a"}, Sample(name="a", note=None, count=0, tags=[], digest="d")),
        # A member that is present reads as it stands, null included.
        ({"name": "a", "count": None}, Sample(name="a", note=None, count=None, digest="d")),
    ],
)
def test_fields_read_by_name(value: Mapping[str, Any], expected: Sample) -> None:
    assert read_record(Sample, value, digest="d") == expected


def test_given_fields_are_not_read() -> None:
    value = {"name": "a", "digest": "ignored"}
    assert read_record(Sample, value, digest="d", count=7).count == 7
    assert read_record(Sample, value, digest="d").digest == "d"


def test_an_absent_required_member_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="name"):
        read_record(Sample, {"note": "n"}, digest="d")


def test_each_factory_default_is_a_fresh_value() -> None:
    first = read_record(Sample, {"name": "a"}, digest="d")
    second = read_record(Sample, {"name": "b"}, digest="d")
    assert first.tags == second.tags == []
    assert first.tags is not second.tags
