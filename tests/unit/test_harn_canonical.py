"""Harn's canonical JSON (the recap hashes' form): vectors, refusals, and fast path = exact path.

The vectors in ``docs/vectors/harn-canonical-json.json`` were computed by hand
from the rules in docs/hashing.md and cross-checked against serde_json.  The
property tests hold the orjson fast path byte-equal to the exact encoder.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from number_spellings import number_spellings

from session_contracts.errors import InvalidDocument
from session_contracts.jsontext.harn_canonical import (
    HARN_MAX_DEPTH,
    _fast_path_applies,
    exact_bytes,
    harn_canonical_bytes,
    harn_sha256,
    harn_sha256_of_parsed,
    serde_float_format,
)

VECTORS = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "harn-canonical-json.json"


def _vectors() -> list[dict[str, str]]:
    document = json.loads(VECTORS.read_text(encoding="utf-8"))
    vectors: list[dict[str, str]] = document["vectors"]
    return vectors


@pytest.mark.parametrize("vector", _vectors(), ids=lambda vector: vector["name"])
def test_vector(vector: dict[str, str]) -> None:
    value = json.loads(vector["input"])
    expected = vector["canonical"].encode("utf-8")
    assert harn_canonical_bytes(value) == expected
    assert exact_bytes(value) == expected
    assert harn_sha256(value) == vector["sha256"]
    assert vector["sha256"] == "sha256:" + hashlib.sha256(expected).hexdigest()


def test_the_vectors_cover_what_differs_from_rfc8785() -> None:
    names = " ".join(vector["name"] for vector in _vectors())
    for topic in ("astral", "floats keep", "beyond 2**53", "beyond 64 bits", "thresholds"):
        assert topic in names


@pytest.mark.parametrize(
    ("number", "text"), [(v.number, v.harn) for v in number_spellings()], ids=repr
)
def test_serde_float_format(number: float, text: str) -> None:
    assert serde_float_format(number) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_format_equals_orjson(number: float) -> None:
    assert serde_float_format(number).encode("ascii") == orjson.dumps(number)


def test_float_format_on_random_bit_patterns() -> None:
    # Deterministic bit patterns over the whole double range (hypothesis favours edges).
    state = 0x9E3779B97F4A7C15
    checked = 0
    for _ in range(20_000):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        number = struct.unpack("<d", struct.pack("<Q", state))[0]
        if math.isfinite(number):
            assert serde_float_format(number).encode("ascii") == orjson.dumps(number)
            checked += 1
    assert checked > 19_000


_keys = st.text(st.characters(codec="utf-8"), max_size=4) | st.sampled_from(
    ["\ufb33", "\U0001f602", "\ue000", "\uffff", "a", "A", "_", ""]
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8"), max_size=6)
)
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300)
@given(_values)
def test_fast_path_equals_exact_path(value: Any) -> None:
    assert harn_canonical_bytes(value) == exact_bytes(value)


@settings(max_examples=200)
@given(_values)
def test_output_is_json_of_the_same_value_with_sorted_keys(value: Any) -> None:
    out = harn_canonical_bytes(value)
    again = json.loads(out)
    assert harn_canonical_bytes(again) == out


def _sha_or_refusal(hasher: Any, value: Any) -> str:
    try:
        return str(hasher(value))
    except InvalidDocument as exc:
        return exc.findings[0].code


@settings(max_examples=300)
@given(_values)
def test_the_hash_of_a_parsed_value_skips_only_what_the_strict_reader_vouches_for(
    value: Any,
) -> None:
    """``check`` and ``verify`` hash values the strict reader returned without the
    census: the same hash, or the same refusal, as the census path."""
    from session_contracts.jsontext.strict import loads_strict

    text = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")
    try:
        parsed = loads_strict(text)
    except InvalidDocument:
        return  # a lone surrogate: never read, never hashed
    assert _sha_or_refusal(harn_sha256_of_parsed, parsed) == _sha_or_refusal(harn_sha256, parsed)


def test_the_hash_of_a_parsed_value_past_orjsons_limits_takes_the_exact_path() -> None:
    from session_contracts.jsontext.strict import loads_strict

    deep = b"[" * 300 + b'{"x":1.5,"big":18446744073709551616}' + b"]" * 300
    parsed = loads_strict(deep, max_depth=400)
    assert harn_sha256_of_parsed(parsed) == harn_sha256(parsed)
    assert harn_sha256_of_parsed({"n": 2**64}) == harn_sha256({"n": 2**64})


def test_keys_sorted_by_code_point_not_utf16() -> None:
    out = harn_canonical_bytes({"\U0001f602": 1, "\ufb33": 2})
    assert out.decode("utf-8") == '{"\ufb33":2,"\U0001f602":1}'


def test_big_integers_distinct_where_rfc8785_collapses_them() -> None:
    assert harn_sha256(2**53) != harn_sha256(2**53 + 1)
    assert harn_canonical_bytes(2**64 - 1) == b"18446744073709551615"
    assert harn_canonical_bytes(2**64) == b"1.8446744073709552e+19"


@pytest.mark.parametrize(
    ("value", "code", "path"),
    [
        ({"a": [1, float("nan")]}, "canonical_non_finite", "$.a[1]"),
        ({"a": float("inf")}, "canonical_non_finite", "$.a"),
        ({"a": (1, 2)}, "canonical_unsupported_type", "$.a"),
        ({1: "x"}, "canonical_unsupported_type", "$"),
        ({"a": "\ud800"}, "canonical_lone_surrogate", "$.a"),
        ({"b": [10**400]}, "canonical_number_out_of_range", "$.b[0]"),
    ],
)
def test_refusals_name_code_and_path(value: Any, code: str, path: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        harn_canonical_bytes(value)
    [finding] = caught.value.findings
    assert (finding.code, finding.path) == (code, path)
    assert finding.hint


def test_deep_and_self_containing_values_are_refused_not_crashing() -> None:
    deep: Any = []
    for _ in range(HARN_MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(InvalidDocument) as caught:
        harn_canonical_bytes(deep)
    assert caught.value.findings[0].code == "canonical_too_deep"
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(InvalidDocument):
        harn_canonical_bytes(cycle)


def test_deep_but_allowed_values_take_the_exact_path() -> None:
    deep: Any = {"x": 1.5}
    for _ in range(300):  # past orjson's nesting limit
        deep = [deep]
    assert not _fast_path_applies(deep)
    assert harn_canonical_bytes(deep) == b"[" * 300 + b'{"x":1.5}' + b"]" * 300


def test_subclasses_are_refused_not_serialized_by_their_overrides() -> None:
    class Key(str):
        pass

    with pytest.raises(InvalidDocument):
        harn_canonical_bytes({Key("a"): 1})
    assert not _fast_path_applies([True, 1, Key("a")])


def test_cli_hash_and_canonicalize_take_the_harn_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from session_contracts.cli import main

    document = tmp_path / "doc.json"
    document.write_text('{"b": 1e16, "a": [1.0, 9007199254740993]}', encoding="utf-8")
    canonical = b'{"a":[1.0,9007199254740993],"b":1e+16}'
    assert main(["hash", "--form", "harn", str(document)]) == 0
    assert capsys.readouterr().out.strip() == "sha256:" + hashlib.sha256(canonical).hexdigest()
    # The default stays RFC 8785, which refuses the unsafe integer.
    assert main(["hash", str(document)]) == 1
    assert "canonical_unsafe_integer" in capsys.readouterr().err
