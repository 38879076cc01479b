"""The needle set of the secret screen and the text screen (``gate.needle_finder``, one
RE2 set) against its definition: ``needle in line``, or ``needle in line.lower()`` for a
folded needle, on short lines and on lines of several hundred bytes with the needles
anywhere in them, in any case, or cut short."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts.redaction.gate import NEEDLE_SET_MAX_BYTES, needle_finder


def _finder(needles: list[tuple[bytes, bool]]) -> Callable[[bytes], tuple[int, ...]]:
    find = needle_finder(needles)
    assert find is not None
    return find


# Bytes that make the cases meet: ASCII letters of both cases, JSON punctuation,
# and bytes above 0x7f (UTF-8 and Latin-1 letters, which must not fold).
_ALPHABET = b'aAbBkKsSzZ:."\\u03/-_ \xc3\xa9\x89\xe3\xc5\xbf'
_BYTES = st.binary(max_size=0) | st.lists(st.sampled_from(_ALPHABET), max_size=40).map(bytes)
_NEEDLE = st.lists(st.sampled_from(_ALPHABET), min_size=1, max_size=5).map(bytes)


def _folded_needle(needle: bytes) -> bytes:
    return needle.lower()  # the screen's folded needles are lowercase


def _expected(needles: list[tuple[bytes, bool]], line: bytes) -> tuple[int, ...]:
    lowered = line.lower()
    return tuple(
        index
        for index, (needle, folded) in enumerate(needles)
        if (needle in lowered if folded else needle in line)
    )


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[tuple[bytes, bool]], bytes]:
    needles = []
    for needle, folded in draw(st.lists(st.tuples(_NEEDLE, st.booleans()), max_size=8)):
        needles.append((_folded_needle(needle) if folded else needle, folded))
    # The line is made of pieces of the needles, their case changed, and other bytes.
    pieces = draw(
        st.lists(
            st.sampled_from([n for n, _ in needles]).map(
                lambda n: draw(st.sampled_from([n, n.upper(), n.swapcase(), n[:-1]]))
            )
            | _BYTES
            if needles
            else _BYTES,
            max_size=6,
        )
    )
    return needles, b"".join(pieces)


@st.composite
def _long_cases(draw: st.DrawFn) -> tuple[list[tuple[bytes, bool]], bytes]:
    """Lines of one to several hundred bytes: needles (in any case, or cut short)
    placed at any offset, so that they straddle the blocks of 32 and end the line."""
    needles, _ = draw(_cases())
    filler = draw(st.sampled_from([b"x", b"a", b"k", b' "', b"\xc5"]))
    line = bytearray(filler * draw(st.integers(0, 300)))
    for _ in range(draw(st.integers(0, 4))):
        piece = (
            draw(
                st.sampled_from([n for n, _ in needles]).map(
                    lambda n: draw(st.sampled_from([n, n.upper(), n.swapcase(), n[:-1]]))
                )
            )
            if needles
            else draw(_BYTES)
        )
        at = draw(st.integers(0, len(line)))
        line[at:at] = piece
    return needles, bytes(line)


@settings(max_examples=500, deadline=None)
@given(case=_cases() | _long_cases())
def test_found_is_each_needle_in_the_line_or_in_the_lowered_line(
    case: tuple[list[tuple[bytes, bool]], bytes],
) -> None:
    needles, line = case
    assert _finder(needles)(line) == _expected(needles, line)


def test_found_on_long_lines_and_at_the_edges() -> None:
    find = _finder([(b"key", True), (b"sk", False), (b":", False), (b"END", False)])
    assert find(b"x" * 100_000 + b"KEY" + b"y" * 100_000 + b"END") == (0, 3)
    assert find(b"sk") == (1,)
    assert find(b"s") == ()
    assert find(b"") == ()
    assert find(bytearray(b"a:b")) == (2,)
    for at in range(70):
        line = b"x" * at + b"Key" + b"y" * (70 - at) + b"sk"
        assert find(line) == (0, 1), at
        assert find(line[: at + 2]) == (), at


def test_found_with_hundreds_of_needles() -> None:
    needles = [(bytes([97 + i % 26, 97 + i // 26 % 26, 97 + i // 676]), True) for i in range(300)]
    assert _finder(needles)(b"-" * 50 + b"FbA" + b"-" * 50) == (31,)  # b"fba"


def test_needles_too_many_for_one_set_are_declined() -> None:
    # The callers then test each literal on its own (gate.holding).
    assert needle_finder([(b"x" * NEEDLE_SET_MAX_BYTES, False)]) is not None
    assert needle_finder([(b"x" * NEEDLE_SET_MAX_BYTES, False), (b"y", False)]) is None


@pytest.mark.parametrize("byte", [b"\x00", b"\\", b"[", b".", b"*", b"\xff"])
def test_bytes_that_mean_something_to_re2_are_literal(byte: bytes) -> None:
    find = _finder([(b"a" + byte + b"b", False)])
    assert find(b"-a" + byte + b"b-") == (0,)
    assert find(b"-axb-") == ()
