"""The C byte scans of a JSON line (session_contracts/_linescan.c) against their
definitions: ``needle in line`` (``needle in line.lower()`` for a folded needle), the
RE2 set that finds the same where the module is not built, and ``bytes.count``.

``found`` has two loops: AVX2 screens 32 positions at a time where the processor has
it, byte by byte otherwise.  The tests run where AVX2 is on (when it can be) and again
with it turned off, on lines long enough for several blocks of 32."""

from __future__ import annotations

import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts.accel import linescan as _linescan
from session_contracts.accel import switched_off

needs_module = pytest.mark.skipif(_linescan is None, reason="the C module is not built here")


LOOPS = pytest.mark.parametrize("avx2", [True, False], ids=["avx2", "bytewise"])


@contextmanager
def _loop(avx2: bool) -> Iterator[None]:
    """``found`` with the AVX2 screen (where the processor has it) or without."""
    before = _linescan._use_avx2(avx2)
    try:
        yield
    finally:
        _linescan._use_avx2(before)


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


@needs_module
@LOOPS
@settings(max_examples=500, deadline=None)
@given(case=_cases() | _long_cases())
def test_found_is_each_needle_in_the_line_or_in_the_lowered_line(
    avx2: bool, case: tuple[list[tuple[bytes, bool]], bytes]
) -> None:
    needles, line = case
    with _loop(avx2):
        assert _linescan.NeedleSet(needles).found(line) == _expected(needles, line)


@needs_module
@LOOPS
@settings(max_examples=200, deadline=None)
@given(case=_cases() | _long_cases())
def test_found_equals_the_re2_set_it_replaces(
    avx2: bool, case: tuple[list[tuple[bytes, bool]], bytes]
) -> None:
    from session_contracts.redaction.gate import needle_finder

    needles, line = case
    find = needle_finder(needles)
    assert find is not None
    with _loop(avx2):
        assert _linescan.NeedleSet(needles).found(line) == find(line)


@needs_module
@LOOPS
def test_found_on_long_lines_and_at_the_edges(avx2: bool) -> None:
    needles = [(b"key", True), (b"sk", False), (b":", False), (b"END", False)]
    line = b"x" * 100_000 + b"KEY" + b"y" * 100_000 + b"END"
    found = _linescan.NeedleSet(needles)
    with _loop(avx2):
        assert found.found(line) == (0, 3)
        assert found.found(b"sk") == (1,)
        assert found.found(b"s") == ()
        assert found.found(b"") == ()
        assert found.found(bytearray(b"a:b")) == (2,)
        # every offset in and around a block of 32, and a needle ending the line
        for at in range(70):
            line = b"x" * at + b"Key" + b"y" * (70 - at) + b"sk"
            assert found.found(line) == (0, 1), at
            assert found.found(line[: at + 2]) == (), at


@needs_module
@LOOPS
def test_found_with_more_needles_than_the_screen_takes(avx2: bool) -> None:
    # Past 256 fingerprints the screen is not built: every position is tested.
    needles = [(bytes([97 + i % 26, 97 + i // 26 % 26, 97 + i // 676]), True) for i in range(300)]
    line = b"-" * 50 + b"FbA" + b"-" * 50
    with _loop(avx2):
        assert _linescan.NeedleSet(needles).found(line) == (31,)  # b"fba"


@needs_module
def test_bad_needles_and_lines_are_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        _linescan.NeedleSet([(b"", False)])
    with pytest.raises(TypeError):
        _linescan.NeedleSet([("text", False)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        _linescan.NeedleSet([(b"a",)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        _linescan.NeedleSet([(b"a", False)]).found("a line of text")  # type: ignore[arg-type]


@needs_module
@settings(max_examples=500, deadline=None)
@given(raw=_BYTES)
def test_colon_facts_count_colons_and_find_the_escaped_colon(raw: bytes) -> None:
    assert _linescan.colon_facts(raw) == (raw.count(b":"), b"\\u003" in raw)


@needs_module
@settings(max_examples=300, deadline=None)
@given(raw=_BYTES | st.binary(max_size=300))
def test_opening_count_counts_both_brackets(raw: bytes) -> None:
    assert _linescan.opening_count(raw) == raw.count(b"{") + raw.count(b"[")
    assert _linescan.opening_count(b"{[" * 1000 + raw) == 2000 + raw.count(b"{") + raw.count(b"[")


@needs_module
def test_the_avx2_screen_is_on_where_the_processor_has_it() -> None:
    # Off, every answer stays right and the screen loses its speed (bench_check).
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if platform.machine() != "x86_64" or " avx2" not in flags:
        pytest.skip("no AVX2 here")
    before = _linescan._use_avx2(True)
    try:
        assert _linescan._use_avx2(True)
    finally:
        _linescan._use_avx2(before)
    assert before  # the module turned it on when it was imported


def test_the_module_is_built_where_ci_runs() -> None:
    # A silent build failure keeps every answer right (RE2, bytes.count) and loses
    # the speed the benchmarks promise; CI's machine has a C compiler.
    if os.environ.get("CI") != "true" or switched_off():
        pytest.skip("only CI insists on the C module (set CI=true), unless switched off")
    assert _linescan is not None
