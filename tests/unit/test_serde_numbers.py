"""serde_json's default number reading (no ``float_roundtrip``), as Harn's build reads
numbers: session_contracts.jsontext.serde_numbers against serde_json's own answers
(docs/vectors/serde-json-default-floats.json) and against the cases where its
arithmetic is exact."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_contracts.jsontext.serde_numbers import (
    NumberOutOfRange,
    floats_as_harn_reads,
    read_number,
)
from session_contracts.jsontext.wire import dumps_wire

VECTORS = (
    Path(__file__).resolve().parents[2] / "docs" / "vectors" / "serde-json-default-floats.json"
)


def _vectors() -> list[list[str]]:
    vectors: list[list[str]] = json.loads(VECTORS.read_text("utf-8"))["vectors"]
    return vectors


def _bits(value: float) -> str:
    return struct.pack(">d", value).hex()


def test_every_vector_reads_as_serde_json_read_it() -> None:
    wrong = []
    for vector in _vectors():
        text, kind = vector[0], vector[1]
        try:
            got: Any = read_number(text)
        except NumberOutOfRange:
            got = "out_of_range"
        if kind == "out_of_range":
            ok = got == "out_of_range"
        elif kind == "f64":
            ok = isinstance(got, float) and _bits(got) == vector[2]
        else:
            ok = type(got) is int and got == int(vector[2]) and (kind == "u64") == (got >= 0)
        if not ok:
            wrong.append((text, vector[1:], got))
    assert wrong == []


def test_the_vectors_hold_numbers_read_off_the_correctly_rounded_double() -> None:
    # The point of the vectors: many differ from an exact reader, the measured one among them.
    off = [v[0] for v in _vectors() if v[1] == "f64" and _bits(float(v[0])) != v[2]]
    assert len(off) >= 400
    assert "0.9202898550724637" in off
    assert read_number("0.9202898550724637") == 0.9202898550724636


def test_integers_stay_integers_in_64_bits_and_become_doubles_beyond() -> None:
    assert read_number("18446744073709551615") == 2**64 - 1
    assert read_number("-9223372036854775808") == -(2**63)
    assert isinstance(read_number("18446744073709551616"), float)
    assert isinstance(read_number("-9223372036854775809"), float)
    minus_zero = read_number("-0")
    assert isinstance(minus_zero, float)
    assert str(minus_zero) == "-0.0"


@pytest.mark.parametrize("text", ["", "-", "01", "1.", "1e", ".5", "1x", "+1", "NaN"])
def test_what_is_not_one_json_number_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a JSON number"):
        read_number(text)


@given(st.integers(0, 2**53), st.integers(-22, 22))
def test_a_short_significand_and_an_exact_power_of_ten_read_correctly_rounded(
    significand: int, exponent: int
) -> None:
    # One rounding only (the significand and 10^|e| are exact doubles): no neighbour.
    text = f"{significand}e{exponent}"
    assert read_number(text) == float(text)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_double_read_back_is_the_double_or_a_neighbour(value: float) -> None:
    try:
        read = floats_as_harn_reads(value)
    except NumberOutOfRange:
        assert abs(value) > 1.7e308
        return
    assert isinstance(read, float)
    assert read == value or abs(
        struct.unpack(">q", struct.pack(">d", read))[0]
        - struct.unpack(">q", struct.pack(">d", value))[0]
    ) in (1, 2)


def test_floats_as_harn_reads_changes_numbers_only() -> None:
    value = {"a": [0.9202898550724637, 1, "0.9202898550724637", None, True], "b": 2**64}
    read = floats_as_harn_reads(value)
    assert read["a"] == [0.9202898550724636, 1, "0.9202898550724637", None, True]
    assert read["b"] == 2**64
    assert type(read["b"]) is int
    assert dumps_wire(read["a"][0]) == b"0.9202898550724636"
