"""The C byte scans of a JSON line (session_contracts/_linescan.c) against their
definitions: ``needle in line`` (``needle in line.lower()`` for a folded needle), the
RE2 set that finds the same where the module is not built, and ``bytes.count``."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

try:
    from session_contracts import _linescan
except ImportError:  # pragma: no cover - a machine without a C compiler
    _linescan = None  # type: ignore[assignment,unused-ignore]

needs_module = pytest.mark.skipif(_linescan is None, reason="the C module is not built here")

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


@needs_module
@settings(max_examples=500, deadline=None)
@given(case=_cases())
def test_found_is_each_needle_in_the_line_or_in_the_lowered_line(
    case: tuple[list[tuple[bytes, bool]], bytes],
) -> None:
    needles, line = case
    assert _linescan.NeedleSet(needles).found(line) == _expected(needles, line)


@needs_module
@settings(max_examples=200, deadline=None)
@given(case=_cases())
def test_found_equals_the_re2_set_it_replaces(case: tuple[list[tuple[bytes, bool]], bytes]) -> None:
    from session_contracts.conformance.judge._captured import _re2_finder

    needles, line = case
    members = [(needle, folded, 0) for needle, folded in needles]
    assert _linescan.NeedleSet(needles).found(line) == _re2_finder(members)(line)


@needs_module
def test_found_on_long_lines_and_at_the_edges() -> None:
    needles = [(b"key", True), (b"sk", False), (b":", False), (b"END", False)]
    line = b"x" * 100_000 + b"KEY" + b"y" * 100_000 + b"END"
    found = _linescan.NeedleSet(needles)
    assert found.found(line) == (0, 3)
    assert found.found(b"sk") == (1,)
    assert found.found(b"s") == ()
    assert found.found(b"") == ()
    assert found.found(bytearray(b"a:b")) == (2,)


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


def test_the_module_is_built_where_ci_runs() -> None:
    # A silent build failure keeps every answer right (RE2, bytes.count) and loses
    # the speed the benchmarks promise; CI's machine has a C compiler.
    if os.environ.get("CI") != "true":
        pytest.skip("only CI insists on the C module (set CI=true)")
    assert _linescan is not None
