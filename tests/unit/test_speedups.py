"""The C census (``session_contracts_c._speedups``) against its Python specification.

``_speedups.scan`` must answer exactly what the pure-Python census in
``jsontext/canonical.py`` answers (plain or not, and which floats), plus the counts of
float tokens to rewrite and the objects whose key orders clash; ``strip_dot_zero``
must rewrite exactly what the regular expressions of the Python path rewrite.
The end-to-end properties (both canonical forms, with and without the
extension, equal to ``rfc8785`` and to Harn's exact encoder) close the loop.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import math
import os
import re
import sys
import tracemalloc
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_contracts.accel import speedups as _speedups
from session_contracts.accel import switched_off
from session_contracts.errors import InvalidDocument
from session_contracts.jsontext import canonical, harn_canonical
from session_contracts.jsontext.canonical import (
    FAST_MAX_LEVELS,
    _census_by_iteration,
    _orders_may_differ,
    canonical_bytes,
    exact_bytes,
)
from session_contracts.jsontext.harn_canonical import exact_bytes as harn_exact_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes


def _stable_id(value: object) -> str:
    """A test id without memory addresses, the same in every process (pytest-xdist)."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))


needs_extension = pytest.mark.skipif(_speedups is None, reason="the C census is not built here")

_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_KEY_CHARS = "ab\ufb33\ue000\uffff\U0001f602\U00010000é"
_KEYS = st.one_of(st.text(alphabet=_KEY_CHARS, max_size=3), st.text(max_size=4))
_TEXT = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["1.0,", "x-0.0]", "2e+16}", ":1.0}", "[-0.0,", "1.5e-6,", '"\\']),
)
_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -3.0, 56.0, 1e15, 1e16, 1.5e20, 1e21, 1e-5, 1e-6, 3e-6]),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), _TEXT, _FLOATS)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=12), st.dictionaries(_KEYS, inner, max_size=6)
    ),
    max_leaves=40,
)


def _notation_counts(floats: list[float]) -> tuple[int, int, int]:
    """(dot_zero, negative_zero, exponent): the Python path's classes of float tokens."""
    dot_zero = negative_zero = exponent = 0
    for number in floats:
        size = abs(number)
        if number.is_integer():
            if size >= 1e16:
                exponent += size < 1e21
            else:
                dot_zero += 1
                negative_zero += number == 0 and math.copysign(1.0, number) < 0
        elif 1e-6 <= size < 1e-5:
            exponent += 1
    return dot_zero, negative_zero, exponent


def _every_float(value: Any) -> list[float]:
    if type(value) is float:
        return [value]
    if type(value) is dict:
        return [number for child in value.values() for number in _every_float(child)]
    if type(value) is list:
        return [number for child in value for number in _every_float(child)]
    return []


def _expected_clashes(value: Any) -> tuple[list[int], list[float]]:
    """Ids of the outermost clashing objects, and the floats outside them."""
    outermost: list[int] = []
    floats: list[float] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is float:
            floats.append(node)
        elif type(node) is list:
            stack.extend(node)
        elif type(node) is dict:
            if _orders_may_differ("".join(node)):
                outermost.append(id(node))
            else:
                stack.extend(node.values())
    return outermost, floats


# ----------------------------------------------------------------------------- build


def test_the_extension_is_built_where_ci_runs() -> None:
    # A silent build failure would keep every answer right and lose the speed
    # the benchmarks promise; CI's machine has a C compiler, so it must be there.
    if os.environ.get("CI") != "true" or switched_off():
        pytest.skip("only CI insists on the C census (set CI=true), unless switched off")
    assert _speedups is not None


# ------------------------------------------------------------------------------ scan


@needs_extension
@_PROPERTY
@given(_JSON)
def test_scan_answers_what_the_python_census_answers(value: Any) -> None:
    assert _speedups is not None
    python = _census_by_iteration(value)
    assert python is not None
    harn = _speedups.scan(value, False, FAST_MAX_LEVELS)
    assert harn == (0, 0, 0, None, None, 0)
    scanned = _speedups.scan(value, True, FAST_MAX_LEVELS)
    assert scanned is not None
    dot_zero, negative_zero, exponent, clashing, edits, integral = scanned
    outermost, floats = _expected_clashes(value)
    assert integral == sum(number.is_integer() for number in _every_float(value))
    assert (dot_zero, negative_zero, exponent) == _notation_counts(floats)
    assert sorted(map(id, clashing or [])) == sorted(outermost)
    if not outermost:
        assert sorted(map(repr, python)) == sorted(map(repr, floats))
        assert edits is None
    else:
        # Every slot named leads to a clashing object, and every clashing object is reached.
        reached: set[int] = set()
        stack = [value] if id(value) not in outermost else []
        assert edits is not None or id(value) in outermost
        while stack:
            node = stack.pop()
            for slot, child in (edits or {})[id(node)]:
                assert node[slot] is child
                if id(child) in outermost:
                    reached.add(id(child))
                else:
                    stack.append(child)
        assert reached == set(outermost) - {id(value)}


def _python_fast_path_refuses(value: Any) -> bool:
    """The census refuses, a float is not finite, or orjson raises (keys are left to it)."""
    python = _census_by_iteration(value)
    if python is None or not all(map(math.isfinite, python)):
        return True
    try:
        orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except orjson.JSONEncodeError:
        return True
    return False


class _Colour(enum.Enum):
    RED = "red"


class _Number(enum.IntEnum):
    ONE = 1


class _Text(str):
    pass


def _cycle() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _nested(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@needs_extension
@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        {"a": [1, (2,)]},
        {"a": _Colour.RED},
        [_Number.ONE],
        {"id": uuid.UUID(int=7)},
        [orjson.Fragment(b"1")],
        [math.nan],
        {"x": [math.inf]},
        [-math.inf],
        {1: "integer key"},
        {_Text("k"): 1},
        [_Text("v")],
        collections.OrderedDict(a=1),
        [collections.OrderedDict(a=1)],
        {"b": b"bytes"},
        [{1, 2}],
        _cycle(),
        _nested(FAST_MAX_LEVELS + 1),
        [[[[[[[[[[{"deep": (1,)}]]]]]]]]]],
    ],
    ids=_stable_id,
)
def test_scan_refuses_what_the_python_census_refuses(value: Any) -> None:
    assert _speedups is not None
    assert _python_fast_path_refuses(value)
    assert _speedups.scan(value, False, FAST_MAX_LEVELS) is None
    assert _speedups.scan(value, True, FAST_MAX_LEVELS) is None


@needs_extension
def test_scan_stops_before_orjsons_nesting_limit() -> None:
    assert _speedups is not None
    deepest = _nested(FAST_MAX_LEVELS)  # the innermost list is empty: nothing that deep
    assert _speedups.scan(deepest, True, FAST_MAX_LEVELS) == (0, 0, 0, None, None, 0)
    assert orjson.dumps(deepest) == b"[" * FAST_MAX_LEVELS + b"]" * FAST_MAX_LEVELS
    assert _speedups.scan([deepest], True, FAST_MAX_LEVELS) is None
    assert _speedups.scan([{"a": deepest}], False, FAST_MAX_LEVELS) is None


@needs_extension
def test_scan_reads_split_tables_and_tables_with_deleted_members() -> None:
    assert _speedups is not None

    class Holder:
        def __init__(self) -> None:
            self.a = 1.0
            self.b = [2.0, math.nan]

    split = Holder().__dict__  # a split table: values live outside the keys
    assert _speedups.scan(split, True, FAST_MAX_LEVELS) is None
    split["b"] = [2.0]
    assert _speedups.scan(split, True, FAST_MAX_LEVELS) == (2, 0, 0, None, None, 2)
    edited: dict[str, Any] = {f"k{n}": float(n) for n in range(40)}
    for n in range(0, 40, 3):
        del edited[f"k{n}"]
    edited["late"] = (1,)
    assert _speedups.scan(edited, True, FAST_MAX_LEVELS) is None
    del edited["late"]
    assert _speedups.scan(edited, True, FAST_MAX_LEVELS) == (26, 0, 0, None, None, 26)


@needs_extension
def test_scan_checks_its_arguments() -> None:
    assert _speedups is not None
    with pytest.raises(ValueError, match="max_levels"):
        _speedups.scan([], True, 0)
    with pytest.raises(ValueError, match="max_levels"):
        _speedups.scan([], True, 10_000)
    with pytest.raises(TypeError):
        _speedups.scan([], True)  # type: ignore[call-arg]


# -------------------------------------------------------------------- strip_dot_zero

_DOT_ZERO = re.compile(rb"\.0(?=[,\]}])")
_NEGATIVE_ZERO = re.compile(rb"-0\.0(?=[,\]}])")


@needs_extension
@_PROPERTY
@given(_JSON)
def test_strip_dot_zero_rewrites_what_the_python_path_rewrites(value: Any) -> None:
    assert _speedups is not None
    out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    scanned = _speedups.scan(value, True, FAST_MAX_LEVELS)
    assert scanned is not None
    dot_zero, negative_zero = scanned[0], scanned[1]
    stripped = _speedups.strip_dot_zero(out, dot_zero, negative_zero)
    in_text = len(_DOT_ZERO.findall(out)) != dot_zero
    if in_text or len(_NEGATIVE_ZERO.findall(out)) != negative_zero:
        # Some string holds such text: the extension must not guess.
        assert stripped is None or not in_text
        return
    assert stripped == _DOT_ZERO.sub(b"", _NEGATIVE_ZERO.sub(b"0.0", out))


@needs_extension
def test_strip_dot_zero_refuses_counts_that_do_not_match() -> None:
    assert _speedups is not None
    out = b'{"a":1.0,"b":"x 2.0,","c":-0.0}'
    assert _speedups.strip_dot_zero(out, 2, 1) is None  # three patterns, one in a string
    assert _speedups.strip_dot_zero(b"[1.0,-0.0]", 2, 0) is None
    assert _speedups.strip_dot_zero(b"[1.0,-0.0]", 2, 1) == b"[1,0]"
    assert _speedups.strip_dot_zero(b"[1.0,-0.0]", 1, 2) is None
    assert _speedups.strip_dot_zero(b"[-10.0,0.0]", 2, 0) == b"[-10,0]"
    assert _speedups.strip_dot_zero(b"[]", 0, 0) == b"[]"
    with pytest.raises(TypeError):
        _speedups.strip_dot_zero("[1.0]", 1, 0)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ end to end


_CENSUSES = ["c", "python"]


@contextlib.contextmanager
def type_census(which: str) -> Iterator[None]:
    """Run the body with the C census, or with the pure-Python one."""
    if which == "c" and _speedups is None:
        pytest.skip("the C census is not built here")
    with pytest.MonkeyPatch.context() as patch:
        if which == "python":
            patch.setattr(canonical, "speedups", None)
            patch.setattr(harn_canonical, "speedups", None)
        yield


@pytest.mark.parametrize("census", _CENSUSES)
def test_both_canonical_forms_are_exact_with_either_census(census: str) -> None:
    @_PROPERTY
    @given(_JSON)
    def check(value: Any) -> None:
        assert canonical_bytes(value) == rfc8785.dumps(value) == exact_bytes(value)
        assert harn_canonical_bytes(value) == harn_exact_bytes(value)

    with type_census(census):
        check()


@pytest.mark.parametrize("census", _CENSUSES)
def test_clashing_objects_at_every_depth_with_either_census(census: str) -> None:
    with type_census(census):
        _clashing_objects_at_every_depth()


def _clashing_objects_at_every_depth() -> None:
    clash = {"\ufb33": 1.0, "\U0001f602": [2.0, "x"], "\ue000": {"k": -0.0}}
    nested_clash = {"\ufb33": clash, "\U0001f602": [clash], "a": 1e16}
    for value in (
        clash,
        [clash],
        {"events": [{"n": 1.0}, {"payload": clash}, clash, {"deeper": [nested_clash]}]},
        nested_clash,
        {"same": [clash, clash, clash], "text": ["1.0,", "-0.0]"]},
    ):
        assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("census", _CENSUSES)
def test_a_clashing_object_with_no_canonical_form_is_refused_at_its_path(census: str) -> None:
    with type_census(census):
        _refused_at_its_path()


def _refused_at_its_path() -> None:
    value = {"ok": [1.0], "bad": [{"\ufb33": 1, "\U0001f602": 2**60}]}
    with pytest.raises(InvalidDocument) as refused:
        canonical_bytes(value)
    assert [f.path for f in refused.value.findings] == ["$.bad[0]['\U0001f602']"]


# ------------------------------------------------------------------- reading census

_READ_TEXT = st.one_of(st.text(max_size=6), st.sampled_from(["a:b", "::", "ü:", "\U0001f602:x"]))
_READ_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**63), 2**64 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([1e17, 9.99e17, 1e18, -1e18, 2.0**63, 1e300, 5.0, -0.0, 0.5]),
        _READ_TEXT,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_READ_TEXT, inner, max_size=4)
    ),
    max_leaves=30,
)


@needs_extension
@_PROPERTY
@given(value=_READ_JSON, max_depth=st.integers(1, 6))
def test_reading_census_reads_what_the_indented_text_shows(value: Any, max_depth: int) -> None:
    # The strict reader's fast path used to learn these facts from orjson's
    # indented text (session_contracts/jsontext/strict.py); the census must agree.
    assert _speedups is not None
    written = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    too_deep = b"\n" + b" " * (2 * max_depth) in written
    census = _speedups.reading_census(value, max_depth)
    if too_deep:
        assert census is None
        return
    assert census is not None
    colons, big_float, integral_float = census
    assert colons == written.count(b":")
    assert big_float == bool(re.search(rb"[0-9]e\+(?:1[89]|[2-9][0-9]|[0-9]{3})", written))
    # validate's screen with the ints-only validator is sound only without these
    assert integral_float == any(number.is_integer() for number in _floats_in(value))


def _floats_in(value: Any) -> Iterator[float]:
    if type(value) is float:
        yield value
    elif isinstance(value, dict):
        for child in value.values():
            yield from _floats_in(child)
    elif isinstance(value, list):
        for child in value:
            yield from _floats_in(child)


@needs_extension
def test_reading_census_checks_its_arguments() -> None:
    assert _speedups is not None
    with pytest.raises(ValueError, match="max_depth"):
        _speedups.reading_census([], 0)
    assert _speedups.reading_census([(1,)], 64) is None
    assert _speedups.reading_census([math.nan], 64) is None


# ------------------------------------------------------------------------ harn_dumps

_HARN_FLOAT_EDGES = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.1,
    1e15,
    1e16,
    -1e16,
    1e21,
    1e22,
    1e-5,
    1e-6,
    1e-7,
    5e-324,
    -5e-324,
    2.225073858507201e-308,  # the largest subnormal
    2.2250738585072014e-308,  # the smallest normal
    1.7976931348623157e308,
    123456789012345680.0,
]
_HARN_INT_EDGES = [
    0,
    -1,
    9,
    10,
    99,
    100,
    2**30 - 1,  # one 30-bit digit: CPython's compact ints end here
    2**30,
    -(2**30),
    2**53 + 1,
    -(2**63),
    2**63 - 1,
    2**63,
    2**64 - 1,
    10**19,
]
_HARN_TEXT = st.one_of(
    st.text(max_size=6),
    st.text(max_size=40),  # past the 8-byte words and the inlined short ASCII path
    st.text(st.characters(max_codepoint=0x7F), max_size=40),  # controls, quotes, U+007F
    st.text(st.characters(max_codepoint=0xFF), max_size=20),  # one byte a code point
    st.text(st.characters(min_codepoint=0xE000), max_size=8),  # U+E000.. and astral
    st.sampled_from(["", "\\", '"', "/", "\x7f", "\x00\x1f\x08\x0c", "\u2028", "\ufeff"]),
)
_HARN_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from(_HARN_INT_EDGES),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(
        allow_nan=False,
        allow_infinity=False,
        allow_subnormal=True,
        max_value=1e-300,
        min_value=-1e-300,
    ),
    st.sampled_from(_HARN_FLOAT_EDGES),
    _HARN_TEXT,
)
_HARN_JSON = st.recursive(
    _HARN_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=12),
        st.dictionaries(_HARN_TEXT, inner, max_size=6),
        st.dictionaries(_HARN_TEXT, inner, min_size=17, max_size=30),  # sorted off the stack
    ),
    max_leaves=60,
)


def _harn_dumps(value: Any, float_writer: Any = orjson.dumps) -> bytes | None:
    assert _speedups is not None
    return _speedups.harn_dumps(value, FAST_MAX_LEVELS, float_writer)


def _orjson_harn(value: Any) -> bytes:
    return orjson.dumps(value, option=harn_canonical._FAST_OPTIONS)


@needs_extension
@_PROPERTY
@given(_HARN_JSON)
def test_harn_dumps_writes_what_orjson_writes(value: Any) -> None:
    written = _harn_dumps(value)  # before orjson has cached any str's UTF-8 form
    assert written == _orjson_harn(value)
    assert _harn_dumps(value) == written  # after: the cached UTF-8 forms are read
    assert harn_canonical_bytes(value) == written == harn_exact_bytes(value)


@needs_extension
def test_harn_dumps_reads_text_with_and_without_a_cached_utf8_form() -> None:
    texts = ["é" * 20 + '\n\t"\\', "日本語\x01" * 5, "😂\x1f\ue000" * 7, "ü", "\x7f/" * 9]
    uncached = _harn_dumps(texts)
    sizes = [sys.getsizeof(text) for text in texts]
    expected = _orjson_harn(texts)  # orjson leaves the UTF-8 form on each str
    assert [sys.getsizeof(text) for text in texts] != sizes
    assert uncached == _harn_dumps(texts) == expected
    keys = {text: n for n, text in enumerate(texts)}
    assert _harn_dumps(keys) == _orjson_harn(keys)


@needs_extension
@pytest.mark.parametrize("number", _HARN_INT_EDGES + [-n for n in _HARN_INT_EDGES])
def test_harn_dumps_writes_integers_at_the_edges(number: int) -> None:
    if number < -(2**63):
        assert _harn_dumps([number]) is None
    else:
        assert _harn_dumps([number, {"n": number}]) == _orjson_harn([number, {"n": number}])


@needs_extension
@pytest.mark.parametrize("number", _HARN_FLOAT_EDGES + [-n for n in _HARN_FLOAT_EDGES])
def test_harn_dumps_writes_floats_as_orjson(number: float) -> None:
    value = {"b": number, "a": [number, "x", number], "c": {"d": number}}
    assert _harn_dumps(value) == _orjson_harn(value)


def test_harn_dumps_sorts_keys_by_code_point() -> None:
    if _speedups is None:
        pytest.skip("the C census is not built here")
    keys = ["\U0001f602", "\ufb33", "\ue000", "\uffff", "é", "z", "", "a\x00", "a", "A", "ab"]
    value = {key: n for n, key in enumerate(keys)}
    assert _harn_dumps(value) == _orjson_harn(value)
    assert list(orjson.loads(_harn_dumps(value) or b"{}")) == sorted(keys)


class _Float(float):
    pass


class _Int(int):
    pass


class _List(list):  # type: ignore[type-arg]
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


def _self_containing_dict() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


# Each is refused on its own: not plain JSON, or where orjson and Harn's form part.
_HARN_REFUSED = [
    (1, 2),
    _Colour.RED,
    _Number.ONE,
    _Text("v"),
    _Float(1.5),
    _Int(3),
    _List([1]),
    _Dict(a=1),
    collections.OrderedDict(a=1),
    uuid.UUID(int=7),
    orjson.Fragment(b"1"),
    b"bytes",
    {1, 2},
    frozenset(),
    math.nan,
    math.inf,
    -math.inf,
    2**64,
    -(2**63) - 1,
    10**400,
    "\ud800",
    "a\udfffb",
    "\ud83d\ude02",  # a pair as two code points is two lone surrogates to UTF-8
    "é\ud800",
    "\U0001f602\udc00",
    {1: "integer key"},
    {None: 1},
    {1.5: 1},
    {(1,): 1},
    {_Text("k"): 1},
    {"\ud800": 1},
    {"ok": 1, "\U0001f602\udbff": 2},
    _cycle(),
    _self_containing_dict(),
    _nested(FAST_MAX_LEVELS + 1),
]


@needs_extension
@pytest.mark.parametrize("bad", _HARN_REFUSED, ids=_stable_id)
def test_harn_dumps_refuses_each_problem_wherever_it_lies(bad: Any) -> None:
    assert _harn_dumps(bad) is None
    # Deep inside an otherwise fine value, after floats (holes to release) and text.
    inside = {"a": [1.5, "x", {"b": [2.5, -0.0, {"c": [bad]}]}], "z": 3.5}
    assert _harn_dumps(inside) is None
    assert _harn_dumps([{"m": 1.0}] * 20 + [bad]) is None
    with contextlib.suppress(TypeError):  # unhashable: never a key
        assert _harn_dumps({"ok": 1.5, bad: 1}) is None
        assert _harn_dumps({f"k{n}": float(n) for n in range(20)} | {bad: 1}) is None
    # The exact path decides: it names the problem, or writes what orjson cannot.
    try:
        exact = harn_exact_bytes(inside)
    except InvalidDocument:
        with pytest.raises(InvalidDocument):
            harn_canonical_bytes(inside)
    else:
        assert harn_canonical_bytes(inside) == exact


def _deep(levels: int, innermost: Any) -> Any:
    """levels nested lists and dicts; the innermost one holds innermost (or nothing)."""
    value: Any = [] if innermost is None else [innermost]
    for level in range(levels - 1):
        value = {"k": value} if level % 2 else [value]
    return value


@needs_extension
def test_harn_dumps_nests_to_the_limit_and_not_one_past() -> None:
    limit = FAST_MAX_LEVELS
    for fine in (_deep(limit, None), _deep(limit - 1, 1.5), _deep(limit - 1, {})):
        assert _harn_dumps(fine) == _orjson_harn(fine)
    for deep in (_deep(limit + 1, None), _deep(limit, 1.5), _deep(limit, "x"), [_nested(limit)]):
        assert _harn_dumps(deep) is None
        assert harn_canonical_bytes(deep) == harn_exact_bytes(deep)  # the exact path writes it
    assert _speedups is not None
    assert _speedups.harn_dumps([[1]], 2, orjson.dumps) is None
    assert _speedups.harn_dumps([[]], 2, orjson.dumps) == b"[[]]"
    assert _speedups.harn_dumps([1], 1, orjson.dumps) is None
    assert _speedups.harn_dumps([], 1, orjson.dumps) == b"[]"


@needs_extension
def test_harn_dumps_reads_split_tables_and_tables_with_deleted_members() -> None:
    class Holder:
        def __init__(self) -> None:
            self.b = [2.0, math.nan]
            self.a = 1.0

    split = Holder().__dict__  # a split table: values live outside the keys
    assert _harn_dumps(split) is None
    split["b"] = [2.0, "\n"]
    assert _harn_dumps(split) == _orjson_harn(split) == b'{"a":1.0,"b":[2.0,"\\n"]}'
    for size in (10, 40):  # sorted on the stack, and off it
        edited: dict[str, Any] = {f"k{n}": float(n) for n in range(size)}
        for n in range(0, size, 3):
            del edited[f"k{n}"]
        edited["late"] = (1,)
        assert _harn_dumps(edited) is None
        del edited["late"]
        edited["\U0001f602"] = "last"
        assert _harn_dumps(edited) == _orjson_harn(edited)


@needs_extension
def test_harn_dumps_splices_the_float_writers_texts_in_order() -> None:
    seen: list[list[float]] = []

    def writer(numbers: list[float]) -> bytes:
        seen.append(list(numbers))
        return b"[" + b",".join(b"F%d" % n for n in range(len(numbers))) + b"]"

    value = {"b": 2.5, "a": [1.5, "x,", 0.5], "c": {"e": 4.5, "d": -0.0}, "n": 7}
    assert _harn_dumps(value, writer) == b'{"a":[F0,"x,",F1],"b":F2,"c":{"d":F3,"e":F4},"n":7}'
    assert seen == [[1.5, 0.5, 2.5, -0.0, 4.5]]
    assert _harn_dumps({"no": ["floats", 1]}, writer) == b'{"no":["floats",1]}'
    assert len(seen) == 1  # no float, no call


class _WriterFailed(Exception):
    pass


def _failing_writer(numbers: list[float]) -> bytes:
    raise _WriterFailed(len(numbers))


@needs_extension
@pytest.mark.parametrize(
    "answer",
    [b"[1.0]", b"[1.0,2.0,3.0]", b"[1.0,,2.0]", b"1.0,2.0", b"[1.0,2.0", b"[,]", b"[]", "[1,2]"],
)
def test_harn_dumps_refuses_a_float_writer_that_answers_otherwise(answer: Any) -> None:
    with pytest.raises(ValueError, match="float_writer"):
        _harn_dumps([1.5, {"x": 2.5}], lambda numbers: answer)


@needs_extension
def test_harn_dumps_propagates_the_float_writers_error() -> None:
    with pytest.raises(_WriterFailed):
        _harn_dumps({"a": [1.5, 2.5]}, _failing_writer)


@needs_extension
def test_harn_dumps_checks_its_arguments() -> None:
    assert _speedups is not None
    with pytest.raises(ValueError, match="max_levels"):
        _speedups.harn_dumps([], 0, orjson.dumps)
    with pytest.raises(ValueError, match="max_levels"):
        _speedups.harn_dumps([], 10_000, orjson.dumps)
    with pytest.raises(TypeError, match="float_writer"):
        _speedups.harn_dumps([], 5, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _speedups.harn_dumps([], 5)  # type: ignore[call-arg]


@needs_extension
def test_harn_dumps_keeps_no_reference_and_no_memory() -> None:
    number = 1234.5678  # one float object, shared by every slot below
    fine = {"a": [number] * 10, "b": number, "t": "é" * 30, "n": [2**63, -1]}
    refused = [number, {"k": number}, (1,)]
    before = sys.getrefcount(number)
    expected = _orjson_harn(fine)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(100_000):
            assert _harn_dumps(fine) == expected
            assert _harn_dumps(refused) is None
        with pytest.raises(_WriterFailed):
            _harn_dumps(fine, _failing_writer)
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(number) == before
    assert grown < 64 * 1024


_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(10**6), 10**6).map(float),
    st.sampled_from([-0.0, 1e20, 1e300, 2.0**53, 0.5]),
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.text(max_size=4) | _NUMBERS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_the_integral_float_census_is_its_python_twin(value: Any) -> None:
    """The journal stores an event holding an integral float in Harn's form: both answers
    must agree, C census or not (docs/journal.md, "The stored bytes")."""
    from session_contracts.validation.validator import (
        holds_integral_float,
        holds_integral_float_in_python,
    )

    assert holds_integral_float(value) is holds_integral_float_in_python(value)
