"""verify / hash / canonicalize: every hash a snapshot carries is recomputed."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_contracts.cli import main
from session_contracts.conformance.judge.cases.documents import documents
from session_contracts.hashes.snapshot import (
    classify_extensions,
    content_hash_of_source,
    harn_sha256,
    projection_hash,
    projection_hash_input,
    verify_snapshot,
)
from session_contracts.jsontext.canonical import content_hash

EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"
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


@pytest.mark.sentence("recap.content-hash", "recap.projection-hash")
def test_the_example_snapshot_verifies() -> None:
    assert verify_snapshot(snapshot()) == []


@pytest.mark.sentence("recap.content-hash")
def test_content_hash_is_harns_hash_of_the_whole_source_object() -> None:
    value = snapshot()
    assert value["contentHash"] == harn_sha256(value["source"])
    assert value["contentHash"] != content_hash(
        value["source"]["events"]
    )  # not RFC 8785 of the list


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_content_hash_vector_written_by_hand() -> None:
    """Harn's canonical JSON: keys in UTF-8 byte order at every level, no whitespace."""
    source = {
        "firstEventId": 1,
        "lastEventId": 2,
        "events": [{"recordHash": "sha256:a", "eventId": 1}, {"eventId": 2, "recordHash": "r"}],
    }
    expected = _sha(
        '{"events":[{"eventId":1,"recordHash":"sha256:a"},{"eventId":2,"recordHash":"r"}],'
        '"firstEventId":1,"lastEventId":2}'
    )
    assert content_hash_of_source(source) == expected


def test_projection_hash_vector_written_by_hand() -> None:
    """snake_case top-level keys around camelCase values; source and extensions left out."""
    value = {
        "schemaVersion": 1,
        "sessionId": "s",
        "query": {"sessionId": "s", "runId": None, "turnId": None, "fromEventId": None, "limit": 2},
        "cursor": {"lastEventId": None, "nextEventId": None},
        "coverage": {"scanned": 0, "matched": 0, "pending": 0, "unassigned": 0, "truncated": False},
        "source": {"firstEventId": None, "lastEventId": None, "events": []},
        "contentHash": "sha256:c",
        "projectionHash": "ignored",
        "turns": [{"x": 1.5, "é": -0.0, "\ue000": 1.0, "\U0001f600": 2**64 - 1, "y": 1e16}],
        "extensions": {"a": 1},
    }
    expected = _sha(
        '{"content_hash":"sha256:c",'
        '"coverage":{"matched":0,"pending":0,"scanned":0,"truncated":false,"unassigned":0},'
        '"cursor":{"lastEventId":null,"nextEventId":null},'
        '"query":{"fromEventId":null,"limit":2,"runId":null,"sessionId":"s","turnId":null},'
        '"schema_version":1,"session_id":"s",'
        '"turns":[{"x":1.5,"y":1e+16,"é":-0.0,"\ue000":1.0,"\U0001f600":18446744073709551615}]}'
    )
    assert sorted(projection_hash_input(value)) == [
        "content_hash",
        "coverage",
        "cursor",
        "query",
        "schema_version",
        "session_id",
        "turns",
    ]
    assert projection_hash(value) == expected


@pytest.mark.sentence("recap.projection-hash")
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


@pytest.mark.sentence("recap.projection-hash-excludes-extensions")
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
    value["source"] = {"firstEventId": None, "lastEventId": None, "events": []}
    assert projection_hash(value) == before, "source is bound through contentHash only"


@pytest.mark.sentence("recap.content-hash")
def test_any_change_to_a_source_event_moves_content_hash() -> None:
    value = snapshot()
    before = content_hash_of_source(value["source"])
    value["source"]["events"][0]["recordHash"] = "sha256:" + "0" * 64
    assert content_hash_of_source(value["source"]) != before
    value = snapshot()
    value["source"]["firstEventId"] = 0
    assert content_hash_of_source(value["source"]) != before


@pytest.mark.sentence("recap.content-hash", "recap.projection-hash")
def test_mismatches_are_reported_by_path() -> None:
    value = snapshot()
    value["turns"][0]["prompts"][0]["text"] = "tampered"
    value["source"]["events"][1]["recordHash"] = "sha256:" + "1" * 64
    codes = {(f.path, f.code) for f in verify_snapshot(value, ("snapshot",))}
    assert codes == {
        ("$.snapshot.contentHash", "content_hash_mismatch"),
        ("$.snapshot.projectionHash", "projection_hash_mismatch"),
    }


@pytest.mark.sentence("recap.projection-hash-excludes-extensions")
def test_hashing_with_extensions_included_is_caught() -> None:
    value = snapshot()
    value["projectionHash"] = harn_sha256(
        {**projection_hash_input(value), "extensions": value["extensions"]}
    )
    assert [f.code for f in verify_snapshot(value) if f.level == "error"] == [
        "projection_hash_mismatch"
    ]


def test_source_events_must_increase() -> None:
    value = snapshot()
    value["source"]["events"].reverse()
    events = value["source"]["events"]
    value["source"]["firstEventId"] = events[0]["eventId"]
    value["source"]["lastEventId"] = events[-1]["eventId"]
    value["contentHash"] = content_hash_of_source(value["source"])
    value["projectionHash"] = projection_hash(value)
    errors = [f.code for f in verify_snapshot(value) if f.level == "error"]
    assert errors == ["source_events_not_increasing"]


def test_source_bounds_must_name_the_listed_ends() -> None:
    value = snapshot()
    value["source"]["lastEventId"] += 1
    value["contentHash"] = content_hash_of_source(value["source"])
    value["projectionHash"] = projection_hash(value)
    assert [(f.path, f.code) for f in verify_snapshot(value)] == [
        ("$.source.lastEventId", "source_bounds_mismatch")
    ]


@pytest.mark.sentence("recap.source-events")
def test_record_hashes_are_checked_against_the_journal() -> None:
    value = snapshot()
    journal = {s["eventId"]: s["recordHash"] for s in value["source"]["events"]}
    assert verify_snapshot(value, journal_record_hashes=journal) == []
    journal[2] = "sha256:" + "2" * 64
    del journal[3]
    assert {(f.path, f.code) for f in verify_snapshot(value, journal_record_hashes=journal)} == {
        ("$.source.events[1].recordHash", "record_hash_mismatch"),
        ("$.source.events[2].recordHash", "source_event_missing"),
    }


@pytest.mark.sentence("recap.extension-binding")
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


@pytest.mark.sentence("recap.content-hash", "recap.projection-hash")
@given(documents("session-recap.snapshot"))
def test_generated_snapshots_with_recomputed_hashes_verify(value: dict[str, Any]) -> None:
    events = value["source"]["events"]
    value["source"]["firstEventId"] = events[0]["eventId"] if events else None
    value["source"]["lastEventId"] = events[-1]["eventId"] if events else None
    value["contentHash"] = content_hash_of_source(value["source"])
    value["projectionHash"] = projection_hash(value)
    ids = [s["eventId"] for s in events]
    errors = [f for f in verify_snapshot(value) if f.level == "error"]
    if ids == sorted(set(ids)):
        assert errors == []
    else:
        assert [f.code for f in errors] == ["source_events_not_increasing"]


@pytest.mark.sentence("recap.projection-hash")
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


def _rehashed(value: dict[str, Any]) -> dict[str, Any]:
    value["contentHash"] = content_hash_of_source(value["source"])
    value["projectionHash"] = projection_hash(value)
    return value


# Ways a snapshot as read can fail to hold (or hold in an unusual shape); each is applied
# before the hashes are recomputed or after (then the hashes no longer match, too).
_SOURCE_CHANGES: dict[str, Any] = {
    "ids out of order": lambda s: s["source"]["events"].reverse(),
    "an id repeated": lambda s: s["source"]["events"].append(dict(s["source"]["events"][-1])),
    "a float id": lambda s: s["source"]["events"][0].update(eventId=1.0),
    "a bool id": lambda s: s["source"]["events"][0].update(eventId=True),
    "a string id": lambda s: s["source"]["events"][0].update(eventId="1"),
    "an id missing": lambda s: s["source"]["events"][0].pop("eventId"),
    "an event not an object": lambda s: s["source"]["events"].insert(1, [1]),
    "no events": lambda s: s["source"].update(events=[], firstEventId=None, lastEventId=None),
    "one event": lambda s: s["source"].update(events=s["source"]["events"][:1]),
    "events not a list": lambda s: s["source"].update(events={}),
    "first moved": lambda s: s["source"].update(firstEventId=s["source"]["firstEventId"] - 1),
    "last moved": lambda s: s["source"].update(lastEventId=None),
    "no source": lambda s: s.pop("source"),
    "source not an object": lambda s: s.update(source=[]),
    "a stale binding": lambda s: s.update(
        extensions={"x": {"binding": {"target": "contentHash", "hash": "sha256:0"}}}
    ),
    "a decorative extension": lambda s: s.update(extensions={"x": 1}),
    "unchanged": lambda s: None,
}


@pytest.mark.parametrize("change", sorted(_SOURCE_CHANGES))
@pytest.mark.parametrize("rehash", [True, False])
def test_a_snapshot_as_read_finds_what_the_full_path_finds(change: str, rehash: bool) -> None:
    # verify_snapshot(parsed=True) returns early for a snapshot that holds on its face;
    # held equal to the full path (the census path, parsed=False) for every shape.
    for base in ((), ("snapshot",)):
        value = snapshot()
        _SOURCE_CHANGES[change](value)
        if rehash and "source" in value:
            _rehashed(value)
        as_read = json.loads(json.dumps(value))  # exact dicts and lists, as loads_strict reads
        assert verify_snapshot(as_read, base, parsed=True) == verify_snapshot(value, base)
