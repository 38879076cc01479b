"""Canonical JSON (RFC 8785) and content hashes: vectors, refusals, and the fast path.

The reference for every byte is the ``rfc8785`` package and the RFC 8785
authors' test vectors in ``shared/vectors/jcs``.  Both of the module's paths
(orjson with a type census, and the exact path) are checked against it.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import hashlib
import json
import math
import re
import struct
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from number_spellings import number_spellings

from session_contracts.errors import EXIT_FINDINGS, InvalidDocument, json_path
from session_contracts.jsontext.canonical import (
    HASH_PREFIX,
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    _census_by_iteration,
    canonical_bytes,
    canonical_bytes_from_text,
    content_hash,
    exact_bytes,
    hash_bytes,
    type_census,
)

REPO = Path(__file__).resolve().parents[2]
JCS_VECTORS = REPO / "tests" / "vectors" / "jcs"  # vendored: tests/vectors/README.md
STRUCTURAL = ("arrays", "french", "structures", "unicode", "values", "weird")
HASH_FORM = re.compile(r"sha256:[0-9a-f]{64}")


def _vectors() -> Path:
    return JCS_VECTORS


def _reference_hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


# ----------------------------------------------------------------------------- vectors


@pytest.mark.parametrize("name", STRUCTURAL)
def test_structural_vector_byte_for_byte(name: str) -> None:
    vectors = _vectors()
    expected = (vectors / "output" / f"{name}.json").read_bytes()
    assert expected == bytes.fromhex((vectors / "outhex" / f"{name}.txt").read_text())
    raw = (vectors / "input" / f"{name}.json").read_bytes()
    assert canonical_bytes_from_text(raw) == expected
    assert canonical_bytes_from_text(raw.decode("utf-8")) == expected
    assert exact_bytes(json.loads(raw)) == expected


def test_all_ten_thousand_number_vectors() -> None:
    lines = (_vectors() / "es6-numbers-10k.txt").read_text(encoding="ascii").splitlines()
    assert len(lines) == 10_000
    wrong = []
    for line in lines:
        bits, expected = line.split(",")
        number = struct.unpack(">d", bytes.fromhex(bits.zfill(16)))[0]
        got = canonical_bytes(number).decode("ascii")
        inside = canonical_bytes({"n": [number]}).decode("ascii")
        if got != expected or inside != f'{{"n":[{expected}]}}':
            wrong.append((bits, expected, got, inside))
    assert not wrong, f"{len(wrong)} number vectors differ, first ones: {wrong[:5]}"


@pytest.mark.parametrize(
    ("number", "text"), [(v.number, v.rfc8785) for v in number_spellings()], ids=repr
)
def test_number_forms(number: float, text: str) -> None:
    assert canonical_bytes(number) == text.encode("ascii")
    assert canonical_bytes([number]) == f"[{text}]".encode("ascii")


def test_integers_print_as_digits_up_to_the_safe_limit() -> None:
    value = {"max": MAX_SAFE_INTEGER, "min": -MAX_SAFE_INTEGER, "zero": 0, "yes": True}
    assert canonical_bytes(value) == (
        b'{"max":9007199254740991,"min":-9007199254740991,"yes":true,"zero":0}'
    )


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F602 is D83D DE02 in UTF-16, so it sorts before U+FB33 (code point order
    # would put U+FB33 first).
    value = {"\ufb33": 1, "\U0001f602": 2, "a": 3, "\u00e9": 4}
    expected = '{"a":3,"\u00e9":4,"\U0001f602":2,"\ufb33":1}'.encode()
    assert canonical_bytes(value) == expected
    assert canonical_bytes({"outer": [value]}) == b'{"outer":[' + expected + b"]}"


def test_non_ascii_keys_without_a_range_clash() -> None:
    value = {"z": 1, "\u00e9": 2, "a": 3, "\U0001f602": 4, "\u65e5": 5}
    assert canonical_bytes(value) == rfc8785.dumps(value)
    assert canonical_bytes(value).startswith(b'{"a":3,"z":1,"\xc3\xa9":2,')


def test_strings_escape_as_jcs() -> None:
    text = "".join(map(chr, range(0x20))) + '"\\/\x7f\u2028\u2029\ufeff\U0001f602'
    expected = (
        '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r'
        "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018"
        '\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\"\\\\/\x7f\u2028\u2029\ufeff'
        '\U0001f602"'
    ).encode()
    assert canonical_bytes(text) == expected
    assert canonical_bytes({text: text}) == b"{" + expected + b":" + expected + b"}"


def test_unicode_is_not_normalized() -> None:
    assert content_hash("\u00c5") != content_hash("A\u030a")


def test_deep_nesting_up_to_the_limit() -> None:
    deepest: Any = []
    for _ in range(MAX_DEPTH - 1):
        deepest = [deepest]
    assert canonical_bytes(deepest) == b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    floats: Any = 0.5
    for level in range(600):
        floats = {"k": floats} if level % 2 else [floats]
    expected = b'{"k":[' * 300 + b"0.5" + b"]}" * 300
    assert canonical_bytes(floats) == expected


def test_shared_references_are_written_each_time() -> None:
    shared: Any = {"b": 1.5, "a": [1, 2]}
    value: Any = {"x": shared, "y": [shared, shared]}
    assert canonical_bytes(value) == rfc8785.dumps(value)


# ---------------------------------------------------------------------------- refusals


class _Colour(enum.Enum):
    RED = 1


class _Size(enum.IntEnum):
    SMALL = 1


class _Text(str):
    pass


def _self_containing_tuple() -> tuple[list[Any]]:
    # orjson 3.13 recurses into tuples without limit: dumping this one crashes
    # the interpreter, so the census must refuse it before orjson sees it.
    holder: tuple[list[Any]] = ([],)
    holder[0].append(holder)
    return holder


def _self_containing_list() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


REFUSALS: list[tuple[str, Any, str, str]] = [
    ("nan", {"a": [1, {"b": math.nan}]}, "canonical_non_finite", "$.a[1].b"),
    ("infinity", [math.inf], "canonical_non_finite", "$[0]"),
    ("minus infinity root", -math.inf, "canonical_non_finite", "$"),
    (
        "integer above",
        {"events": [{}, {}, {}, {"id": 2**53}]},
        "canonical_unsafe_integer",
        "$.events[3].id",
    ),
    ("integer below", {"n": -(2**53)}, "canonical_unsafe_integer", "$.n"),
    ("integer beyond 64 bits", [2**64], "canonical_unsafe_integer", "$[0]"),
    ("lone surrogate", {"s": ["ok", "x\ud800y"]}, "canonical_lone_surrogate", "$.s[1]"),
    ("lone low surrogate", "\udc00", "canonical_lone_surrogate", "$"),
    (
        "lone surrogate key",
        {"a": {"\udc00k": 1}},
        "canonical_lone_surrogate",
        json_path(["a", "\\udc00k"]),
    ),
    (
        "lone surrogate key with other non-ASCII text",
        {"a": {"\u00e9\ud800": 1}},
        "canonical_lone_surrogate",
        json_path(["a", "\u00e9\\ud800"]),
    ),
    ("tuple", {"x": (1, 2)}, "canonical_unsupported_type", "$.x"),
    ("tuple root", (1,), "canonical_unsupported_type", "$"),
    ("set", {"x": {1}}, "canonical_unsupported_type", "$.x"),
    ("frozenset", [frozenset()], "canonical_unsupported_type", "$[0]"),
    ("bytes", {"odd key!": b"x"}, "canonical_unsupported_type", "$['odd key!']"),
    ("bytearray", [bytearray(b"x")], "canonical_unsupported_type", "$[0]"),
    ("decimal", [decimal.Decimal("1.5")], "canonical_unsupported_type", "$[0]"),
    ("complex", [1j], "canonical_unsupported_type", "$[0]"),
    ("enum", {"c": _Colour.RED}, "canonical_unsupported_type", "$.c"),
    ("int enum", {"c": _Size.SMALL}, "canonical_unsupported_type", "$.c"),
    ("str subclass", {"c": _Text("x")}, "canonical_unsupported_type", "$.c"),
    ("uuid", {"u": uuid.UUID(int=7)}, "canonical_unsupported_type", "$.u"),
    ("datetime", {"t": datetime.datetime(2025, 1, 1)}, "canonical_unsupported_type", "$.t"),
    ("fragment", {"f": orjson.Fragment(b"[1,2")}, "canonical_unsupported_type", "$.f"),
    ("ordered dict", [collections.OrderedDict(a=1)], "canonical_unsupported_type", "$[0]"),
    ("object", {"o": object()}, "canonical_unsupported_type", "$.o"),
    ("int key", {"a": {1: "x"}}, "canonical_unsupported_type", "$.a"),
    ("str subclass key", {_Text("k"): 1}, "canonical_unsupported_type", "$"),
    ("self-containing tuple", _self_containing_tuple(), "canonical_unsupported_type", "$"),
    (
        "self-containing list",
        _self_containing_list(),
        "canonical_too_deep",
        json_path([0] * MAX_DEPTH),
    ),
]


@pytest.mark.parametrize(
    ("value", "code", "path"),
    [pytest.param(value, code, path, id=name) for name, value, code, path in REFUSALS],
)
def test_refusal_code_and_path(value: Any, code: str, path: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        canonical_bytes(value)
    assert caught.value.exit_status == EXIT_FINDINGS
    assert len(caught.value.findings) == 1
    finding = caught.value.findings[0]
    assert (finding.code, finding.path) == (code, path)
    assert finding.message
    assert finding.hint
    with pytest.raises(InvalidDocument) as again:
        content_hash(value)
    assert again.value.findings == caught.value.findings


def test_one_past_max_depth_is_refused() -> None:
    value: Any = []
    for _ in range(MAX_DEPTH):
        value = [value]
    with pytest.raises(InvalidDocument) as caught:
        canonical_bytes(value)
    assert caught.value.findings[0].code == "canonical_too_deep"


def test_the_first_problem_in_document_order_is_reported() -> None:
    value = {"b": {"x": [1, math.nan]}, "a": 2**60, "c": (1,)}
    with pytest.raises(InvalidDocument) as caught:
        canonical_bytes(value)
    assert [(f.code, f.path) for f in caught.value.findings] == [
        ("canonical_non_finite", "$.b.x[1]")
    ]


def test_bool_and_none_are_fine() -> None:
    assert canonical_bytes([True, False, None]) == b"[true,false,null]"


@pytest.mark.parametrize(
    ("text", "code", "path"),
    [
        ('{"a": 1, "a": 2}', "json_duplicate_key", "$.a"),
        ('{"a": NaN}', "json_non_finite_number", "$.a"),
        ("[1e400]", "json_non_finite_number", "$[0]"),
        ('{"s": "\\ud800"}', "json_lone_surrogate", "$.s"),
        ("[1] [2]", "json_trailing_data", "$"),
        ('{"id": 9007199254740992}', "canonical_unsafe_integer", "$.id"),
        ('{"id": -9007199254740992}', "canonical_unsafe_integer", "$.id"),
    ],
)
def test_text_refusals(text: str, code: str, path: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        canonical_bytes_from_text(text)
    assert [(f.code, f.path) for f in caught.value.findings] == [(code, path)]


def test_text_numbers() -> None:
    text = '{"b": [56.0, -0.0, -0, 1E2, 1e-7, 9007199254740991], "a": "\\u00e9"}'
    assert (
        canonical_bytes_from_text(text)
        == b'{"a":"\xc3\xa9","b":[56,0,0,100,1e-7,9007199254740991]}'
    )


# ------------------------------------------------------------------------------ hashes


def test_hash_form() -> None:
    value = {"b": [1, 2.5, None], "a": "\u00e9"}
    digest = content_hash(value)
    assert HASH_FORM.fullmatch(digest)
    assert digest.startswith(HASH_PREFIX)
    assert canonical_bytes(value) == b'{"a":"\xc3\xa9","b":[1,2.5,null]}'
    # Pinned: hashlib.sha256 of the bytes above, computed once by hand.
    assert digest == "sha256:d764fee2563da33e3d57334755404e635da33c995824b0adfabc4b6e1af4f608"


def test_hash_bytes() -> None:
    assert hash_bytes(b"") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    value = {"z": [1, {"y": "x"}], "a": None}
    assert hash_bytes(canonical_bytes(value)) == content_hash(value)


def test_equal_values_hash_alike_whatever_the_key_order() -> None:
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 1.5})
    assert content_hash({"a": 1}) == content_hash({"a": 1.0})
    assert content_hash([1, 2]) != content_hash([2, 1])


# ------------------------------------------------------------- properties vs rfc8785

_KEY_CHARS = st.sampled_from(
    [
        *("a", "b", "Z", "_", "\x00", '"', "\\", "\x7f", "\u00e9", "\u65e5", "\ud7ff"),
        *("\ue000", "\ufb33", "\uffff", "\U00010000", "\U0001f602", "\U0010ffff"),
    ]
)
_KEYS = st.one_of(
    st.text(alphabet=_KEY_CHARS, max_size=4),
    st.text(st.characters(codec="utf-8"), max_size=6),
)
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_SAFE_INTS = st.one_of(
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.integers(MAX_SAFE_INTEGER - 3, MAX_SAFE_INTEGER),
    st.integers(-MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER + 3),
)
_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 56.0, 1e16, 1e21, 1e-7, 1e-6, 2.0**53, 5e-324]),
)
_SCALARS_NO_FLOAT = st.one_of(st.none(), st.booleans(), _SAFE_INTS, _TEXT)


def _json(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5), st.dictionaries(_KEYS, inner, max_size=5)
        ),
        max_leaves=25,
    )


_ANY_JSON = _json(st.one_of(_SCALARS_NO_FLOAT, _FLOATS))
_NO_FLOATS = _json(_SCALARS_NO_FLOAT)
_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _floats_in(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [number for item in value.values() for number in _floats_in(item)]
    if isinstance(value, list):
        return [number for item in value for number in _floats_in(item)]
    return []


@_PROPERTY
@given(_ANY_JSON)
def test_both_paths_equal_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_bytes(value) == expected
    assert exact_bytes(value) == expected
    assert content_hash(value) == _reference_hash(value)


@_PROPERTY
@given(_NO_FLOATS)
def test_fast_path_equals_rfc8785(value: Any) -> None:
    # Without floats the census passes with no float, so this is orjson's output
    # (with, when keys clash across U+E000..U+FFFF and the astral planes, the
    # clashing objects rewritten).
    assert type_census(value) == []
    assert canonical_bytes(value) == rfc8785.dumps(value)


@_PROPERTY
@given(_ANY_JSON)
def test_the_census_sees_every_float(value: Any) -> None:
    expected = sorted(map(repr, _floats_in(value)))
    assert sorted(map(repr, _census_by_iteration(value) or [])) == expected
    assert _census_by_iteration(value) is not None


@pytest.mark.parametrize(
    "value",
    [
        {"a": {"b": (1,)}},
        {"a": [_Colour.RED]},
        {"a": [_Size.SMALL]},
        [uuid.UUID(int=1)],
        [orjson.Fragment(b"1")],
        {"a": _Text("x")},
        [collections.OrderedDict()],
    ],
)
def test_the_census_refuses_what_orjson_would_write_differently(value: Any) -> None:
    assert _census_by_iteration(value) is None


def test_the_census_stops_on_a_cycle() -> None:
    loop = _self_containing_list()
    assert _census_by_iteration(loop) is None


@_PROPERTY
@given(st.dictionaries(st.text(alphabet=_KEY_CHARS, min_size=1, max_size=3), _SAFE_INTS))
def test_key_order_clashes(value: dict[str, int]) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)
    assert canonical_bytes([value, {"\U0001f602": value}]) == rfc8785.dumps(
        [value, {"\U0001f602": value}]
    )


@_PROPERTY
@given(_ANY_JSON)
def test_text_round_trip(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert canonical_bytes_from_text(text) == rfc8785.dumps(json.loads(text))
