"""The fast strict reader (orjson, then checks) against the strict decoder, and
validation findings with either reader.

``loads_strict`` takes orjson's value only when the text has no duplicate key, no
nesting past the limit and no integer literal beyond 64 bits; otherwise the strict
decoder decides and names the problem.  These properties feed both readers texts
made to trip each of those checks, valid and invalid, and require the same value
(types included) or the same finding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from session_contracts.errors import InvalidDocument
from session_contracts.jsontext.strict import (
    _SLOW,
    _loads_fast,
    _loads_slow,
    loads_strict,
    loads_strict_noting_floats,
)
from session_contracts.validation.validator import default_validator

_PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(read: Any, raw: bytes) -> Any:
    try:
        return ("value", _typed(read(raw)))
    except InvalidDocument as refused:
        return ("refused", [(f.code, f.path, f.message) for f in refused.findings])


def _typed(value: Any) -> Any:
    """The value with every scalar's type spelled out (1 == 1.0 == True otherwise)."""
    if isinstance(value, dict):
        return {"dict": [(key, _typed(item)) for key, item in value.items()]}
    if isinstance(value, list):
        return {"list": [_typed(item) for item in value]}
    return (type(value).__name__, repr(value))


_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        '"a"',
        '"a":',
        '"a":1',
        '"b":"x:y"',
        '"\\u003a"',
        '"\\u003A":1',
        "1",
        "-0",
        "0.5",
        "1.0",
        "1e400",
        "-1e400",
        "1e19",
        "9223372036854775808",
        "18446744073709551616",
        "-9223372036854775809",
        "1" * 40,
        "NaN",
        "true",
        "null",
        '"\\ud800"',
        '"\\ud83d\\ude02"',
        '"é"',
        " ",
        "\n",
        "\ufeff",
        '"\\""',
        '"\\\\"',
    ]
)
_TEXTS = st.lists(_PIECES, max_size=14).map("".join)


def _json_values() -> st.SearchStrategy[Any]:
    keys = st.sampled_from(["a", "b", "a:b", "é", ":", "x"])
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=5),
        st.sampled_from(["x:y", "::", "e+19", "1e+18"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=20,
    )


def _with_duplicate(text: str) -> str:
    return text.replace('{"a":', '{"a":0,"a":', 1)


def _nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


@_PROPERTY
@given(_TEXTS)
@example('{"a":1,"a":2}')
@example('{"a":"x:","a":1}')
@example('{"\\u003a":1,"\\u003a":2}')
@example('{"a":1,"\\u003a":"x","\\u003a":"y"}')
@example("[18446744073709551616]")
@example('{"a": -9223372036854775809}')
@example("\ufeff[1]")
@example(_nested(64))
@example(_nested(65))
@example(_nested(63, "[]"))
@example(_nested(64, "{}"))
@example(_nested(64, '{"a":1}'))
def test_fast_reader_equals_the_strict_decoder(text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    assert _outcome(loads_strict, raw) == _outcome(lambda data: _loads_slow(data, 64), raw)


@_PROPERTY
@given(_json_values(), st.booleans(), st.integers(0, 3))
def test_fast_reader_on_json_writers_output(value: Any, duplicate: bool, indent: int) -> None:
    text = json.dumps(value, ensure_ascii=bool(indent % 2), indent=indent or None)
    if duplicate:
        text = _with_duplicate(text)
    raw = text.encode()
    assert _outcome(loads_strict, raw) == _outcome(lambda data: _loads_slow(data, 64), raw)


def test_the_fast_reader_answers_for_ordinary_documents() -> None:
    # Not the strict decoder in disguise: ordinary documents are read by orjson.
    raw = b'{"a": [1, 2.5, "x:y", {"b": null}], "c": "\\u00e9"}'
    assert _loads_fast(raw, 64) == ({"a": [1, 2.5, "x:y", {"b": None}], "c": "\u00e9"}, False)
    # ... and says whether an integral float is in it (check's validate trusts that)
    assert _loads_fast(b'{"a": [1, {"b": 5.0}]}', 64) == ({"a": [1, {"b": 5.0}]}, True)
    assert _loads_fast(b"-0.0", 64) == (-0.0, True)
    assert _loads_fast(b"[1e400]", 64) is _SLOW
    assert loads_strict_noting_floats("\ufeff[2.5]".encode()) == ([2.5], True)  # slow: unknown
    for text in ('{"a":1,"a":2}', _nested(65), "[18446744073709551616]", "\ufeff[1]"):
        assert _loads_fast(text.encode(), 64) is _SLOW


# --------------------------------------------------------------------------- validation


_DOCTYPES = sorted(default_validator().document_types())


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A document text of a contract type, most likely invalid: schema-shaped values
    with members dropped, retyped, duplicated or added."""
    doctype = draw(st.sampled_from(_DOCTYPES))
    value = draw(_json_values())
    if isinstance(value, dict) and draw(st.booleans()):
        value["schema_version"] = draw(st.sampled_from([1, 1.0, "1", None]))
    text = json.dumps(value)
    if draw(st.booleans()):
        text = _with_duplicate(text)
    return doctype, text.encode()


@_PROPERTY
@given(_mutated())
def test_validation_findings_are_the_same_with_either_reader(case: tuple[str, bytes]) -> None:
    doctype, raw = case
    validator = default_validator()

    def findings(read: Any) -> Any:
        try:
            value = read(raw)
        except InvalidDocument as refused:
            return ("refused", refused.findings)
        return ("validated", validator.validate(doctype, value))

    assert findings(loads_strict) == findings(lambda data: _loads_slow(data, 64))
    # check validates with the reader's float fact instead of a census of its own
    try:
        value, may_hold_integral_float = loads_strict_noting_floats(raw)
    except InvalidDocument:
        return
    assert validator._validate_fast(doctype, value, may_hold_integral_float) == (
        validator.validate(doctype, value)
    )


_EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "schemas" / "examples").glob("*.json"))


@pytest.mark.parametrize("path", _EXAMPLES, ids=lambda path: path.stem)
def test_examples_are_read_fast_and_alike(path: Path) -> None:
    raw = path.read_bytes()
    assert _outcome(loads_strict, raw) == _outcome(lambda data: _loads_slow(data, 64), raw)
    assert _loads_fast(raw, 64) is not _SLOW


_FLOAT_TEXT = st.sampled_from(["5.0,", "e+", "1.0\n", "x.0", "1e+16"]) | st.text(max_size=5)
_FLOAT_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.integers(-(2**53), 2**53),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([5.0, -0.0, 0.5, 1e15, 1e16, 1.5e20, 1e-7, 1.5e-6, 9e15 + 0.5]),
        _FLOAT_TEXT,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_FLOAT_TEXT, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(value=_FLOAT_JSON)
def test_the_fast_reader_never_misses_an_integral_float(value: Any) -> None:
    from session_contracts.validation.validator import holds_integral_float

    text = json.dumps(value)
    read = _loads_fast(text.encode(), 64)
    if read is _SLOW:  # a double of 2**63 or more: the strict decoder reads it
        return
    parsed, may_hold = read  # type: ignore[misc]
    if holds_integral_float(parsed):
        assert may_hold
    elif ".0" not in text and "e+" not in text:
        assert not may_hold  # the answer is exact when no text imitates a float


def _has_integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(map(_has_integral_float, value.values()))
    if isinstance(value, list):
        return any(map(_has_integral_float, value))
    return False


@settings(max_examples=400, deadline=None)
@given(value=_FLOAT_JSON)
def test_the_integral_float_screens_agree_with_a_walk(value: Any) -> None:
    """holds_integral_float is exact, and the compact-text screen a journal read uses
    (one memchr for ``.`` and ``+`` first) never misses an integral float."""
    from session_contracts.validation.validator import (
        compact_text_may_hold_integral_float,
        holds_integral_float,
    )

    held = _has_integral_float(value)
    assert holds_integral_float(value) == held
    if held:
        assert compact_text_may_hold_integral_float(orjson.dumps(value))
        assert compact_text_may_hold_integral_float(
            orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        )
