"""verify / hash / canonicalize: every hash a snapshot carries is recomputed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from session_contracts.conformance._strategies import documents

from session_contracts._canonical import content_hash
from session_contracts._snapshot_hashes import (
    classify_extensions,
    content_hash_of_sources,
    projection_hash,
    verify_snapshot,
)
from session_contracts.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "schemas" / "examples"
BOUND_MEMBERS = [
    "schemaVersion",
    "sessionId",
    "query",
    "cursor",
    "coverage",
    "contentHash",
    "turns",
]


def snapshot() -> dict[str, Any]:
    return json.loads((EXAMPLES / "session-recap.snapshot.json").read_text())


def test_the_example_snapshot_verifies() -> None:
    assert verify_snapshot(snapshot()) == []


def test_content_hash_is_the_hash_of_source_events() -> None:
    value = snapshot()
    assert value["contentHash"] == content_hash(value["source"]["events"])


@given(st.sampled_from(BOUND_MEMBERS), st.data())
def test_any_change_to_a_bound_member_moves_projection_hash(
    member: str, data: st.DataObject
) -> None:
    value = snapshot()
    before = projection_hash(value)
    changed = copy.deepcopy(value)
    replacement = data.draw(st.one_of(st.integers(-(2**53) + 1, 2**53 - 1), st.text(), st.none()))
    if changed[member] == replacement:
        return
    changed[member] = replacement
    assert projection_hash(changed) != before


@given(
    st.dictionaries(
        st.text(),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(),
            lambda c: st.lists(c) | st.dictionaries(st.text(), c),
            max_leaves=8,
        ),
    )
)
def test_no_change_to_extensions_moves_projection_hash(extensions: dict[str, Any]) -> None:
    value = snapshot()
    before = projection_hash(value)
    value["extensions"] = extensions
    assert projection_hash(value) == before
    del value["extensions"]
    assert projection_hash(value) == before


def test_any_change_to_a_source_event_moves_content_hash() -> None:
    value = snapshot()
    before = content_hash_of_sources(value["source"]["events"])
    value["source"]["events"][0]["recordHash"] = "sha256:" + "0" * 64
    assert content_hash_of_sources(value["source"]["events"]) != before


def test_mismatches_are_reported_by_path() -> None:
    value = snapshot()
    value["turns"][0]["prompts"][0]["text"] = "tampered"
    value["source"]["events"][1]["recordHash"] = "sha256:" + "1" * 64
    codes = {(f.path, f.code) for f in verify_snapshot(value, ("snapshot",))}
    assert codes == {
        ("$.snapshot.contentHash", "content_hash_mismatch"),
        ("$.snapshot.projectionHash", "projection_hash_mismatch"),
    }


def test_hashing_with_extensions_included_is_caught() -> None:
    value = snapshot()
    value["projectionHash"] = content_hash(
        {k: v for k, v in value.items() if k not in ("projectionHash", "source")}
    )
    assert [f.code for f in verify_snapshot(value) if f.level == "error"] == [
        "projection_hash_mismatch"
    ]


def test_source_events_must_increase() -> None:
    value = snapshot()
    value["source"]["events"].reverse()
    value["contentHash"] = content_hash_of_sources(value["source"]["events"])
    value["projectionHash"] = projection_hash(value)
    errors = [f.code for f in verify_snapshot(value) if f.level == "error"]
    assert errors == ["source_events_not_increasing"]


def test_record_hashes_are_checked_against_the_journal() -> None:
    value = snapshot()
    journal = {s["id"]: s["recordHash"] for s in value["source"]["events"]}
    assert verify_snapshot(value, journal_record_hashes=journal) == []
    journal[2] = "sha256:" + "2" * 64
    del journal[3]
    assert {(f.path, f.code) for f in verify_snapshot(value, journal_record_hashes=journal)} == {
        ("$.source.events[1].recordHash", "record_hash_mismatch"),
        ("$.source.events[2].recordHash", "source_event_missing"),
    }


@pytest.mark.parametrize(
    ("extension", "state"),
    [
        ({"binding": {"target": "projectionHash", "hash": "PROJECTION"}}, "bound"),
        ({"binding": {"target": "contentHash", "hash": "CONTENT"}}, "bound"),
        ({"binding": {"target": "contentHash", "hash": "PROJECTION"}}, "stale-binding"),
        ({"binding": {"target": "turns", "hash": "PROJECTION"}}, "stale-binding"),
        ({"binding": "PROJECTION"}, "stale-binding"),
        ({"note": "no binding"}, "decorative"),
        ([1, 2], "decorative"),
        (None, "decorative"),
    ],
)
def test_extension_classification(extension: Any, state: str) -> None:
    value = snapshot()
    text = (
        json.dumps(extension)
        .replace("PROJECTION", value["projectionHash"])
        .replace("CONTENT", value["contentHash"])
    )
    value["extensions"] = {"x": json.loads(text)}
    (binding,) = classify_extensions(value)
    assert binding.state == state


@given(documents("session-recap.snapshot"))
def test_generated_snapshots_with_recomputed_hashes_verify(value: dict[str, Any]) -> None:
    value["contentHash"] = content_hash_of_sources(value["source"]["events"])
    value["projectionHash"] = projection_hash(value)
    ids = [s["id"] for s in value["source"]["events"]]
    errors = [f for f in verify_snapshot(value) if f.level == "error"]
    if ids == sorted(set(ids)):
        assert errors == []
    else:
        assert [f.code for f in errors] == ["source_events_not_increasing"]


def test_cli_verify_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = EXAMPLES / "session-recap.envelope.json"
    assert main(["verify", "session-recap.envelope", str(good)]) == 0
    bad = json.loads(good.read_text())
    bad["snapshot"]["coverage"]["scanned"] += 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert main(["verify", "session-recap.envelope", str(path)]) == 1
    assert "$.snapshot.projectionHash" in capsys.readouterr().out


def test_cli_hash_and_canonicalize(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"b": [1, 2.5, null], "a": "\\u00e9", "c": 1.0}')
    assert main(["canonicalize", str(path)]) == 0
    assert capsysbinary.readouterr().out == '{"a":"é","b":[1,2.5,null],"c":1}'.encode()
    assert main(["hash", str(path)]) == 0
    assert (
        capsysbinary.readouterr().out.strip()
        == content_hash({"a": "é", "b": [1, 2.5, None], "c": 1}).encode()
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a": 9007199254740992}', "canonical_unsafe_integer"),
        ('{"a": 1, "a": 2}', "json_duplicate_key"),
        ("[1] x", "json_trailing_data"),
    ],
)
def test_cli_hash_refuses_what_cannot_be_hashed(
    tmp_path: Path, text: str, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(text)
    assert main(["hash", str(path)]) == 1
    assert f"[{code}]" in capsys.readouterr().err
