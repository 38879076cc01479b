"""Every JSON number survives the protocol transport and the printed documents:
integers of any size, -0.0, and 1e2 as the double it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_contracts.jsontext.wire import dumps_wire, loads_wire

REPO = Path(__file__).resolve().parents[2]
BIG = 900719925474099312345678901234567890
EXTENSIONS = (
    '{"big": 900719925474099312345678901234567890, "e": 1e2, "one": 1.0, "negzero": -0.0,'
    ' "neg": -123456789012345678901234567890, "u64": 18446744073709551615,'
    ' "past_u64": 18446744073709551616, "id": "12345678901234567890123"}'
)
EXPECTED = {
    "big": BIG,
    "e": 100.0,
    "one": 1.0,
    "negzero": -0.0,
    "neg": -123456789012345678901234567890,
    "u64": 2**64 - 1,
    "past_u64": 2**64,
    "id": "12345678901234567890123",
}


def _same(a: object, b: object) -> bool:
    # JSON values with types: 1 is not 1.0, -0.0 is not 0.0.
    return json.dumps(a) == json.dumps(b) and repr(a) == repr(b)


def test_loads_keeps_integers_of_any_size() -> None:
    value = loads_wire(EXTENSIONS)
    assert _same(value, EXPECTED)
    assert orjson.loads(EXTENSIONS)["big"] != BIG  # what the plain fast path would lose


def test_dumps_writes_integers_of_any_size_and_keeps_the_sign_of_zero() -> None:
    text = dumps_wire(EXPECTED)
    assert b'"big":900719925474099312345678901234567890' in text
    assert b'"negzero":-0.0' in text
    assert b'"past_u64":18446744073709551616' in text
    assert _same(loads_wire(text), EXPECTED)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=5), children, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_dumps_then_loads_is_the_identity(value: object) -> None:
    if "Infinity" in json.dumps(value):
        return  # not JSON: refused below
    assert _same(loads_wire(dumps_wire(value)), value)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "[-Infinity, 12345678901234567890123]"])
def test_non_json_numbers_are_refused_on_both_paths(text: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        loads_wire(text)


def _snapshot_with_extensions() -> str:
    document = (REPO / "schemas" / "examples" / "session-recap.snapshot.json").read_text()
    compact = json.dumps(json.loads(document))
    assert compact.endswith('"extensions": {}}')
    return compact[: -len("{}}")] + EXTENSIONS + "}"


def test_roundtrip_prints_extension_numbers_exactly(tmp_path: Path) -> None:
    source = tmp_path / "snapshot.json"
    source.write_text(_snapshot_with_extensions())
    done = subprocess.run(
        [sys.executable, "-m", "session_contracts", "roundtrip", "session-recap.snapshot",
         str(source)],
        capture_output=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _same(loads_wire(done.stdout)["extensions"], EXPECTED)


def test_the_reference_producer_echoes_extension_numbers_exactly() -> None:
    case = (
        '{"cmd":"start"}\n{"cmd":"run","seq":1,"case":{"operation":"document.roundtrip",'
        '"input":{"doctype":"session-recap.snapshot","document":'
        + _snapshot_with_extensions()
        + '}}}\n{"cmd":"stop"}\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "session_contracts", "reference-producer"],
        input=case.encode(),
        capture_output=True,
        check=False,
    )
    answer = loads_wire(done.stdout.splitlines()[1])
    assert answer["outcome"] == "result", answer
    assert _same(answer["output"]["extensions"], EXPECTED)


@pytest.mark.parametrize(
    "number",
    [-(2**63) - 1, -(10**19) + 1, -(2**63), 2**64 - 1, 2**64, 10**19 - 1, -(10**30)],
)
def test_integers_just_past_64_bits_keep_every_digit(number: int) -> None:
    """docs/protocol.md: numbers keep their value; orjson reads -2**63 - 1 (19 digits) as a
    double, so 19 digits already take the exact path."""
    back = loads_wire(dumps_wire({"n": number}))["n"]
    assert type(back) is int
    assert back == number
