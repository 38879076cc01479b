"""The fast paths held equal to the exact paths and to ``rfc8785``, where they are most
likely to part: floats at the notation thresholds, keys whose UTF-16 and code point
orders differ, and text that looks like the number tokens the fast path rewrites.

``canonical_bytes`` takes orjson's bytes and rewrites float tokens (``56.0``,
``1e+16``, ``1e-6``) and the members of objects whose keys clash; each rewrite
is sound only when the patterns it counts do not also occur inside strings.
These properties feed it exactly such strings.
"""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from session_contracts.jsontext.canonical import (
    _es6_numbers_by_quotes,
    _fast_bytes,
    _format_number,
    canonical_bytes,
    exact_bytes,
)
from session_contracts.jsontext.harn_canonical import exact_bytes as harn_exact_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

_EDGE_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 56.0, 0.5, 1e15, 9007199254740992.0, 9999999999999998.0, 1e16,
    -1e16, 1.5e16, 123456789012345680000.0, 1e20, 1e21, -1e21, 1.5e21, 1e22, 1e-4, 1e-5,
    9.999999999999999e-06, 1e-6, -1e-6, 1.5e-6, 9.99999999999999e-07, 1e-7, -1e-7, 5e-324,
    -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    -1.7976931348623157e308, 0.1, 0.30000000000000004,
]  # fmt: skip
_FLOATS = st.one_of(
    st.sampled_from(_EDGE_FLOATS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=1e-7, max_value=1e-4),
    st.floats(min_value=1e15, max_value=1e22),
    st.floats(min_value=0, max_value=2.2250738585072014e-308),  # subnormals
    st.integers(-(2**53), 2**53).map(float),
)
_CLASH_CHARS = ["a", "\ue000", "\ufb33", "\uffff", "\U00010000", "\U0001f602", "\u00e9", "z"]
_KEYS = st.one_of(
    st.text(alphabet=st.sampled_from(_CLASH_CHARS), max_size=3),
    st.sampled_from(["\ufb33", "\U0001f602", "\ue000", "\uffff", "\U00010000", "id", "x"]),
)
# Text that imitates the tokens and objects the fast path counts and rewrites.
_TRICKY_TEXT = st.one_of(
    st.text(max_size=8),
    st.lists(
        st.sampled_from(
            [
                "1.0,",
                ":1.0}",
                "[0.0]",
                "-0.0,",
                ":-0.0}",
                "1e+16,",
                "1.5e+20]",
                "1e-6}",
                ",2e-6,",
                '"',
                "\\",
                '\\"',
                "{",
                '{"',
                '":',
                ":",
                ",",
                "[",
                "]",
                "}",
                "\ufb33",
                "\U0001f602",
                "\ue000",
                "56.0",
                "e+1",
                "x",
            ]
        ),
        max_size=8,
    ).map("".join),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53) + 1, 2**53 - 1),
    _FLOATS,
    _TRICKY_TEXT,
)


def _json(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=6),
            st.dictionaries(st.one_of(_KEYS, _TRICKY_TEXT), inner, max_size=6),
        ),
        max_leaves=30,
    )


_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(_json(_SCALARS))
@example({"a": "x:1.0,", "b": 1.0})
@example({"s": '\\":1.0,', "n": [0.0, -0.0]})
@example({"\ufb33": 1.0, "\U0001f602": {"\ue000": -0.0, "a": 1e16}, "t": '{"\ufb33":1,'})
@example([{"\ufb33": 1, "\U0001f602": 2}, '{"\ufb33":1,"\U0001f602":2}', {"k": "1e-6,"}])
def test_fast_equals_exact_equals_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_bytes(value) == expected
    assert exact_bytes(value) == expected


@_PROPERTY
@given(st.lists(_FLOATS, min_size=1, max_size=40), st.lists(_TRICKY_TEXT, max_size=6))
def test_float_tokens_among_tricky_strings(numbers: list[float], texts: list[str]) -> None:
    value = {"numbers": numbers, "texts": texts, "both": [*texts, *numbers]}
    assert canonical_bytes(value) == rfc8785.dumps(value)


@_PROPERTY
@given(_json(_SCALARS))
def test_quote_counting_rewrite_agrees(value: Any) -> None:
    # The slow rewrite (tokens told from text by the quotes before them) gives
    # JCS numbers whatever the strings hold.
    # (A float at the root is written directly, never rewritten: wrap the value.)
    wrapped = [value]
    out = orjson.dumps(wrapped, option=orjson.OPT_SORT_KEYS)
    assert _es6_numbers_by_quotes(out) == _with_es6_numbers(wrapped)


def _with_es6_numbers(value: Any) -> bytes:
    """orjson's key order (code points) with JCS numbers: the reference for the rewrite."""

    def convert(node: Any) -> Any:
        if type(node) is float:
            return orjson.Fragment(_format_number(node).encode("ascii"))
        if type(node) is list:
            return [convert(item) for item in node]
        if type(node) is dict:
            return {key: convert(item) for key, item in node.items()}
        return node

    return orjson.dumps(convert(value), option=orjson.OPT_SORT_KEYS)


@_PROPERTY
@given(
    st.lists(
        st.dictionaries(_KEYS, st.one_of(_FLOATS, st.integers(0, 9), _TRICKY_TEXT), max_size=5),
        max_size=8,
    ),
    st.integers(0, 3),
)
def test_many_clashing_objects(objects: list[dict[str, Any]], nesting: int) -> None:
    value: Any = {"events": [{"payload": item, "n": i} for i, item in enumerate(objects)]}
    for _ in range(nesting):
        value = {"\U0001f602": value, "\ufb33": [value], "\ue000": 1.5}
    assert canonical_bytes(value) == rfc8785.dumps(value)
    assert exact_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("number", _EDGE_FLOATS)
def test_edge_floats_everywhere(number: float) -> None:
    expected = _format_number(number).encode("ascii")
    assert expected == rfc8785.dumps(number)
    assert canonical_bytes(number) == expected
    assert canonical_bytes([number]) == b"[" + expected + b"]"
    assert canonical_bytes({"\U0001f602": number, "\ufb33": [number]}) == (
        b'{"\xf0\x9f\x98\x82":' + expected + b',"\xef\xac\xb3":[' + expected + b"]}"
    )


def test_the_fast_path_answers_for_floats_and_clashing_keys() -> None:
    # Not the exact path in disguise: these documents are written by the fast path.
    assert (
        _fast_bytes({"a": [1.0, -0.0, 1e16, 1e-6, 0.5]})
        == b'{"a":[1,0,10000000000000000,0.000001,0.5]}'
    )
    assert _fast_bytes({"\ufb33": 1, "\U0001f602": 2.0}) == ('{"\U0001f602":2,"\ufb33":1}'.encode())


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused_on_the_fast_path_too(bad: float) -> None:
    assert _fast_bytes({"a": [1.0, bad]}) is None
    assert _fast_bytes([0.5] * 10 + [bad]) is None


@_PROPERTY
@given(_json(_SCALARS))
def test_harn_fast_equals_exact(value: Any) -> None:
    assert harn_canonical_bytes(value) == harn_exact_bytes(value)
