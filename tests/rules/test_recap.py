"""The reference session recap producer: query, projection, service, journal fast path.

Fixtures (tests/fixtures/recap/): JSON Lines tapes of small sessions, and
cases.json naming, for each case, a tape, a query and the expected envelope
(indented JSON; compared by canonical bytes).  ``canaries.template.jsonl``
holds ``{canary:KIND}`` placeholders, replaced at run time by
``session_contracts.redaction.canaries.canaries()``: no realistic fake secret is
stored in the repository, only the redacted envelope it must become.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_contracts import InvalidDocument
from session_contracts.conformance.judge.cases.operations import recap_cases as recap_case_strategy
from session_contracts.hashes.snapshot import (
    classify_extensions,
    harn_canonical_bytes,
    harn_sha256,
    projection_hash,
    record_hash,
    verify_snapshot,
)
from session_contracts.journal import (
    JournalCorrupt,
    JsonlTape,
    SessionEvent,
    SqliteJournal,
    export_tape,
    import_tape,
    stored_events_of,
)
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.strict import MAX_DOCUMENT_BYTES, loads_strict
from session_contracts.recap import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    EventRecord,
    RecapService,
    clamp_limit,
    coerce_http_params,
    envelope_bytes,
    project,
    project_stored,
    query_echo,
    redact_texts,
    with_extensions,
)
from session_contracts.recap import projection as projection_module
from session_contracts.redaction.canaries import (
    canaries,
    canary_secrets,
    known_canaries,
    known_canary_secrets,
    lookalikes,
)
from session_contracts.redaction.engine import redact_text, redact_value, scan_value
from session_contracts.redaction.gate import (
    CASE_TRAPS,
    TextScreen,
    detector_gates,
    holding,
    redact_values,
)
from session_contracts.redaction.policy import default_policy, extended_policy
from session_contracts.validation.validator import default_validator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recap"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "cases.json").read_text("utf-8"))
POLICY = default_policy()
_PLACEHOLDER = re.compile(r"\{canary:([a-z_]+)\}")


# ------------------------------------------------------------------------------ helpers


def _with_canaries(value: Any) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda match: known_canaries()[match.group(1)], value)
    if isinstance(value, list):
        return [_with_canaries(item) for item in value]
    if isinstance(value, dict):
        return {_with_canaries(k): _with_canaries(v) for k, v in value.items()}
    return value


def tape_events(name: str) -> list[SessionEvent]:
    """The events of a fixture tape, canary placeholders filled in."""
    lines = (FIXTURES / name).read_bytes().splitlines()
    return [SessionEvent.from_json(_with_canaries(loads_strict(line))) for line in lines if line]


def journal_of(folder: Path, events: list[SessionEvent], name: str = "events") -> Path:
    """A SQLite journal made the way a runtime would: write a tape, import it."""
    tape = folder / f"{name}.jsonl"
    JsonlTape(tape).write(events)
    path = folder / f"{name}.sqlite"
    import_tape(tape, path)
    return path


def event(event_id: int, kind: str, payload: dict[str, Any], **headers: Any) -> SessionEvent:
    raw: dict[str, Any] = {
        "id": event_id,
        "sessionId": "sess-1",
        "runId": "run-1",
        "turnId": "turn-1",
        "iteration": 0,
        "executionId": None,
        "topic": "agent.transcript.llm" if kind == "provider_call_response" else "agent",
        "kind": kind,
        "recordedAtUnixMs": 1_760_000_000_000 + event_id,
        "payload": payload,
    }
    raw.update(headers)
    return SessionEvent.from_json(raw)


def records(events: list[SessionEvent]) -> list[EventRecord]:
    return [EventRecord(e.to_json(), record_hash(e.to_json())) for e in events]


def snapshot_of(events: list[SessionEvent], **query: Any) -> dict[str, Any]:
    """The pure projection of all ``events`` (one session, read whole), without a journal."""
    return project(
        records(events), query_echo({"sessionId": "sess-1", **query}), rows_beyond=0, policy=POLICY
    )


@pytest.fixture(scope="module")
def basic_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return journal_of(tmp_path_factory.mktemp("basic"), tape_events("basic.jsonl"))


def assert_valid_snapshot(envelope: Mapping[str, Any]) -> None:
    assert default_validator().validate("session-recap.envelope", envelope) == []
    if envelope["state"] == "available":
        assert [f for f in verify_snapshot(envelope["snapshot"]) if f.level == "error"] == []


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def fixture_journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fixtures")
    tapes = sorted({case["tape"] for case in CASES})
    return {tape: journal_of(folder, tape_events(tape), tape.split(".")[0]) for tape in tapes}


@pytest.mark.sentence(
    "recap.grouping",
    "recap.run-filter",
    "recap.turn-filter",
    "recap.from-event-id",
    "recap.limit-bound",
    "recap.snake-case-aliases",
    "recap.available-carries-snapshot",
    "recap.session-missing",
    "recap.zero-matching-facts",
    "recap.read-coverage",
    "recap.source-events",
    "recap.content-hash",
    "recap.projection-hash",
    "recap.redaction",
)
@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_fixture_case(case: dict[str, Any], fixture_journals: dict[str, Path]) -> None:
    journal = fixture_journals[case["tape"]]
    outcome = RecapService(journal).query(case["query"])
    expected = json.loads((FIXTURES / case["expect"]).read_text("utf-8"))
    assert envelope_bytes(outcome.envelope) == canonical_bytes(expected)
    assert outcome.status == expected.get("reason", "available")
    assert_valid_snapshot(outcome.envelope)
    if outcome.available:
        # Ids are per session: the record hashes of the queried session's events, as
        # the journal stores them and as docs/hashing.md 4.1 gives them.
        session = outcome.envelope["snapshot"]["sessionId"]
        with SqliteJournal.open(journal) as reader:
            hashes = {
                e["event_id"]: e["record_hash"] for e in reader.iter_events(session_id=session)
            }
        assert hashes == {
            e.id: record_hash(e.to_json())
            for e in tape_events(case["tape"])
            if e.session_id == session
        }
        assert verify_snapshot(outcome.envelope["snapshot"], (), hashes) == []


@pytest.mark.sentence("recap.content-hash", "recap.projection-hash")
def test_worked_example_of_docs_hashing_md(fixture_journals: dict[str, Path]) -> None:
    outcome = RecapService(fixture_journals["hashing-example.jsonl"]).query(
        {"sessionId": "sess-01"}
    )
    snapshot = outcome.envelope["snapshot"]
    assert snapshot["contentHash"] == (
        "sha256:88289064c10bfc3a5aef3596e19b891afa3d23877398c33210ef06b53cc047a0"
    )
    assert snapshot["projectionHash"] == (
        "sha256:b262e590eedfa21731d6e6b31f15e640b7681fd36f0fc93c2ededa65dd598b54"
    )


@pytest.mark.sentence("recap.snake-case-aliases")
def test_the_fixtures_pair_both_spellings_with_one_envelope() -> None:
    spellings: dict[str, set[str]] = {}
    for case in CASES:
        snake = any("_" in key for key in case["query"])
        spellings.setdefault(case["expect"], set()).add("snake" if snake else "camel")
    assert {"snake", "camel"} in spellings.values()


# -------------------------------------------------------------------------------- query


@pytest.mark.sentence("recap.limit-bound", "recap.limit-default-clamp")
@pytest.mark.parametrize(
    ("requested", "effective"),
    [(None, DEFAULT_LIMIT), (0, 1), (1, 1), (4096, 4096), (32_768, 32_768), (99_999, MAX_LIMIT)],
)
def test_limit_default_and_clamp(requested: int | None, effective: int) -> None:
    raw: dict[str, Any] = {"sessionId": "s"}
    if requested is not None:
        raw["limit"] = requested
    assert query_echo(raw)["limit"] == requested, "the echo keeps the limit as received"
    assert clamp_limit(requested) == effective


@pytest.mark.sentence("recap.other-fields-optional", "recap.snake-case-aliases")
def test_query_echo_has_all_five_members_in_canonical_spelling() -> None:
    assert query_echo({"session_id": "s", "run_id": "r", "from_event_id": 3, "x": 1}) == {
        "sessionId": "s",
        "runId": "r",
        "turnId": None,
        "fromEventId": 3,
        "limit": None,
    }, "absent members are null, unknown ones dropped (Harn's runtime ignores them)"
    assert query_echo({"sessionId": "s", "runId": None, "limit": None})["limit"] is None


@pytest.mark.sentence("recap.session-id-required")
@pytest.mark.parametrize(
    ("raw", "path", "code"),
    [
        ({}, "$.sessionId", "required"),
        ({"sessionId": ""}, "$.sessionId", "min_length"),
        ({"sessionId": "  "}, "$.sessionId", "pattern"),
        ({"sessionId": "s", "session_id": "s"}, "$.session_id", "alias_conflict"),
        ({"sessionId": "s", "limit": -1}, "$.limit", "minimum"),
        ({"sessionId": "s", "limit": 2**64}, "$.limit", "maximum"),
        ({"sessionId": "s", "limit": "4"}, "$.limit", "wrong_type"),
        ({"sessionId": "s", "limit": 4.0}, "$.limit", "integer_literal_required"),
        ({"sessionId": "s", "limit": True}, "$.limit", "wrong_type"),
        ({"sessionId": "s", "run_id": 7}, "$.run_id", "wrong_type"),
        ({"session_id": "s", "from_event_id": -3}, "$.from_event_id", "minimum"),
        ([], "$", "wrong_type"),
    ],
)
def test_invalid_queries_are_refused_with_paths(raw: Any, path: str, code: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        query_echo(raw)
    assert (path, code) in {(f.path, f.code) for f in caught.value.findings}


@pytest.mark.sentence("recap.http-adapter")
@pytest.mark.parametrize("text", ["+3", " 3", "3 ", "3.0", "03", "00", "-1", "", "3e2", "0x3", "٣"])
def test_http_integers_are_strict(text: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        coerce_http_params([("limit", text)])
    assert [f.path for f in caught.value.findings] == ["$.limit"]


@pytest.mark.sentence("recap.http-adapter")
def test_http_integers_and_their_limits() -> None:
    assert coerce_http_params({"limit": "0", "from_event_id": "18446744073709551615"}) == {
        "limit": 0,
        "from_event_id": 2**64 - 1,
    }
    with pytest.raises(InvalidDocument) as caught:
        coerce_http_params({"fromEventId": "1" * 5000})  # refused before int()
    assert caught.value.findings[0].code == "maximum"
    with pytest.raises(InvalidDocument) as caught:
        coerce_http_params([("limit", "1"), ("limit", "2")])
    assert caught.value.findings[0].code == "duplicate_parameter"


# --------------------------------------------------------------------------- projection


def user(event_id: int, text: str, **headers: Any) -> SessionEvent:
    return event(event_id, "message", {"role": "user", "visibility": None, "text": text}, **headers)


def assistant(
    event_id: int, text: str, visibility: str | None = "public", **headers: Any
) -> SessionEvent:
    payload = {"role": "assistant", "visibility": visibility, "text": text}
    return event(event_id, "message", payload, **headers)


def checkpoint(event_id: int, label: str, iteration: int | None, **headers: Any) -> SessionEvent:
    payload = {"checkpoint": label, "iteration": iteration}
    return event(event_id, "loop_checkpoint", payload, **headers)


def tool_call(event_id: int, call_id: str | None, **headers: Any) -> SessionEvent:
    payload = {"callId": call_id, "toolName": "edit", "input": {"path": f"p{event_id}"}}
    return event(event_id, "tool_call", payload, **headers)


def tool_result(
    event_id: int, call_id: str | None, error: bool = False, **headers: Any
) -> SessionEvent:
    payload = {
        "callId": call_id,
        "toolName": None,
        "isError": error,
        "output": {"at": event_id},
        "verification": None,
    }
    return event(event_id, "tool_result", payload, **headers)


def terminal(
    event_id: int, kind: str | None = "natural", owner: str | None = "agent", **headers: Any
) -> SessionEvent:
    payload = {
        "kind": kind,
        "owner": owner,
        "finalStatus": None,
        "stopReason": None,
        "reason": None,
    }
    return event(event_id, "terminal", payload, **headers)


def test_turns_are_keyed_by_run_and_turn_in_order_of_first_appearance() -> None:
    events = [
        user(1, "b", turnId="b"),
        user(2, "a", turnId="a"),
        user(3, "b again, another run", turnId="b", runId="run-2"),
        terminal(4, turnId="a", owner=None),
        terminal(5, turnId="a"),
    ]
    snapshot = snapshot_of(events)
    keys = [(t["runId"], t["turnId"]) for t in snapshot["turns"]]
    assert keys == [("run-1", "b"), ("run-1", "a"), ("run-2", "b")]
    assert snapshot["turns"][1]["terminal"]["sourceEventId"] == 5, "the latest terminal wins"
    assert snapshot["turns"][1]["state"] == "complete"
    assert snapshot["turns"][0]["state"] == "open", "no iteration and no terminal"
    assert snapshot["coverage"] == {
        "scanned": 5, "matched": 5, "pending": 0, "unassigned": 0, "truncated": False
    }  # fmt: skip
    incomplete = snapshot_of(events[:4])
    assert incomplete["turns"][1]["terminal"]["state"] == "incomplete", "no owner"
    assert incomplete["turns"][1]["state"] == "incomplete"


def test_iterations_follow_loop_checkpoints_not_event_headers() -> None:
    events = [
        user(1, "go"),
        checkpoint(2, "iteration_start", 5),
        assistant(3, "in five", iteration=0),  # the header iteration does not place it
        checkpoint(4, "iteration_end", 5),
        assistant(5, "between iterations"),
        checkpoint(6, "iteration_start", 2),
        assistant(7, "in two"),
        assistant(8, "hidden", visibility="internal"),
    ]
    snapshot = snapshot_of(events)
    (turn,) = snapshot["turns"]
    assert [(i["iteration"], i["state"]) for i in turn["iterations"]] == [
        (5, "complete"),
        (None, "unassigned"),
        (2, "incomplete"),
    ], "in order of first appearance; an iteration never ended is incomplete"
    assert [i["sourceEventIds"] for i in turn["iterations"]] == [[2, 3, 4], [5], [6, 7]]
    assert turn["sourceEventIds"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert turn["state"] == "incomplete"
    assert snapshot["coverage"]["unassigned"] == 1, "one fact placed outside any iteration"
    assert snapshot["coverage"]["matched"] == 7, "the hidden message yields no fact"


@pytest.mark.sentence("recap.grouping")
def test_tool_exchanges_join_by_call_id_across_the_turn_in_either_order() -> None:
    events = [
        user(1, "go"),
        checkpoint(2, "iteration_start", 0),
        tool_result(3, "c1"),
        tool_call(4, "c1"),
        tool_call(5, "c2"),
        checkpoint(6, "iteration_end", 0),
        checkpoint(7, "iteration_start", 1),
        tool_result(8, "c2", error=True),
        tool_call(9, "c3"),
        tool_call(10, None),
        checkpoint(11, "iteration_end", 1),
    ]
    snapshot = snapshot_of(events)
    first, second = snapshot["turns"][0]["iterations"]
    assert [
        (x["toolCallId"], x["state"], x["callObserved"], x["resultObserved"], x["sourceEventIds"])
        for x in first["tools"]
    ] == [("c1", "completed", True, True, [3, 4]), ("c2", "failed", True, True, [5, 8])]
    assert first["tools"][0]["input"] == {"path": "p4"}
    assert first["tools"][0]["output"] == {"at": 3}
    assert [(x["toolCallId"], x["state"]) for x in second["tools"]] == [("c3", "incomplete")]
    assert first["sourceEventIds"] == [2, 3, 4, 5, 6, 8], "a result is marked where it joined"
    assert second["sourceEventIds"] == [7, 9, 11]
    assert snapshot["coverage"]["unassigned"] == 1, "the call without an id"
    assert snapshot["turns"][0]["state"] == "incomplete"


@pytest.mark.sentence("recap.zero-matching-facts", "recap.read-coverage", "recap.source-events")
def test_other_kinds_are_read_but_neither_matched_nor_unassigned() -> None:
    events = [
        event(1, "session_attribute", {"name": "n", "value": 1}, turnId=None),
        event(2, "transcript_reset", {}, turnId=None, iteration=None),
        event(3, "other", {"x": 1}),
    ]
    snapshot = snapshot_of(events)
    assert snapshot["turns"] == []
    assert snapshot["coverage"] == {
        "scanned": 3, "matched": 0, "pending": 0, "unassigned": 0, "truncated": False
    }  # fmt: skip
    assert snapshot["source"] == {
        "firstEventId": 1,
        "lastEventId": 3,
        "events": [{"eventId": e.id, "recordHash": record_hash(e.to_json())} for e in events],
    }


def test_filters_apply_after_the_read_and_source_lists_every_event_read() -> None:
    events = [user(1, "a"), user(2, "b", turnId="turn-2"), user(3, "loose", runId=None)]
    snapshot = snapshot_of(events, turnId="turn-2")
    assert [t["turnId"] for t in snapshot["turns"]] == ["turn-2"]
    assert [s["eventId"] for s in snapshot["source"]["events"]] == [1, 2, 3]
    assert snapshot["coverage"]["unassigned"] == 1, "counted before the filters, as Harn does"
    assert snapshot["coverage"]["matched"] == 1


def test_cursor_pending_and_truncated_describe_the_rows_beyond_the_read() -> None:
    events = [user(7, "a"), user(9, "b")]
    query = query_echo({"sessionId": "sess-1", "limit": 2})
    page = project(records(events), query, rows_beyond=4, policy=POLICY)
    assert page["cursor"] == {"lastEventId": 9, "nextEventId": 10}, "arithmetic, as Harn's"
    assert page["coverage"]["pending"] == 4
    assert page["coverage"]["truncated"] is True
    assert page["query"]["limit"] == 2
    end = project(records(events), query, rows_beyond=0, policy=POLICY)
    assert end["cursor"] == {"lastEventId": 9, "nextEventId": None}
    assert (end["coverage"]["pending"], end["coverage"]["truncated"]) == (0, False)


def test_the_service_counts_the_rows_beyond_the_read(tmp_path: Path) -> None:
    """As Harn's store reads: ``coverage.pending`` is the session's last event id minus
    the last id read (an id distance, not a count of the rows left), and another
    session's events never count."""
    events = [user(i, f"p{i}", turnId=f"t{i}") for i in (2, 4, 6, 8, 10)]
    other = [
        SessionEvent.from_json({**user(i, "x").to_json(), "sessionId": "sess-other"})
        for i in (5, 40)
    ]
    journal = journal_of(tmp_path, sorted([*events, *other], key=lambda e: e.id))
    first = RecapService(journal).query({"sessionId": "sess-1", "limit": 2})
    snapshot = first.envelope["snapshot"]
    assert snapshot["cursor"] == {"lastEventId": 4, "nextEventId": 5}
    assert snapshot["coverage"]["pending"] == 10 - 4, "the session's last id minus 4"
    assert snapshot["coverage"]["truncated"] is True
    assert snapshot["query"] == {
        "sessionId": "sess-1", "runId": None, "turnId": None, "fromEventId": None, "limit": 2
    }  # fmt: skip
    middle = RecapService(journal).query({"sessionId": "sess-1", "fromEventId": 5, "limit": 2})
    snapshot = middle.envelope["snapshot"]
    assert [s["eventId"] for s in snapshot["source"]["events"]] == [6, 8]
    assert snapshot["cursor"] == {"lastEventId": 8, "nextEventId": 9}
    assert snapshot["coverage"]["pending"] == 10 - 8
    rest = RecapService(journal).query({"sessionId": "sess-1", "fromEventId": 5})
    snapshot = rest.envelope["snapshot"]
    assert [s["eventId"] for s in snapshot["source"]["events"]] == [6, 8, 10]
    assert snapshot["cursor"] == {"lastEventId": 10, "nextEventId": None}
    assert (snapshot["coverage"]["pending"], snapshot["coverage"]["truncated"]) == (0, False)
    huge = RecapService(journal).query({"sessionId": "sess-1", "fromEventId": 2**64 - 1})
    assert huge.envelope["snapshot"]["coverage"]["scanned"] == 0
    assert huge.envelope["snapshot"]["query"]["fromEventId"] == 2**64 - 1
    assert b'"fromEventId":18446744073709551615' in envelope_bytes(huge.envelope)


def test_redaction_reaches_exactly_harns_fields() -> None:
    secret = canaries()["github_token"]
    hidden = redact_text(secret, POLICY).text
    assert hidden != secret
    events = [
        user(1, secret),
        checkpoint(2, "iteration_start", 0),
        event(
            3,
            "plan",
            {
                "documentId": secret,
                "revisionId": "r",
                "title": secret,
                "summary": secret,
                "steps": [{"id": "s", "content": secret, "status": "pending"}],
                "event": None,
            },
        ),
        event(4, "tool_call", {"callId": "c", "toolName": "t", "input": {"note": secret}}),
        event(
            5,
            "tool_result",
            {
                "callId": "c",
                "toolName": None,
                "isError": False,
                "output": [secret],
                "verification": {
                    "schema": "harn.agent_tool_postcondition.v1",
                    "status": "passed",
                    "verifiedPaths": [secret],
                },
            },
        ),
        event(
            6,
            "progress",
            {
                "message": secret,
                "entries": [{"content": secret, "status": "pending", "priority": None}],
                "replace": False,
            },
        ),
        terminal(7, kind=secret, owner=secret),
    ]
    snapshot = snapshot_of(events)
    turn = snapshot["turns"][0]
    (iteration,) = turn["iterations"]
    plan, tool, progress = iteration["plans"][0], iteration["tools"][0], iteration["progress"][0]
    assert turn["prompts"][0]["text"] == hidden
    assert (plan["title"], plan["summary"], plan["steps"][0]["content"]) == (hidden,) * 3
    assert plan["documentId"] == secret, "ids are not redacted, as in Harn's runtime"
    assert tool["input"] == redact_value({"note": secret}, POLICY)
    assert tool["output"] == redact_value([secret], POLICY)
    assert tool["verification"]["verifiedPaths"] == [hidden]
    assert (progress["message"], progress["entries"][0]["content"]) == (hidden, hidden)
    assert progress["replace"] is False
    assert (turn["terminal"]["kind"], turn["terminal"]["owner"]) == (hidden, hidden)


@pytest.mark.sentence("recap.zero-matching-facts", "recap.content-hash")
def test_an_empty_read_is_a_valid_snapshot() -> None:
    snapshot = project([], query_echo({"sessionId": "s"}), rows_beyond=0, policy=POLICY)
    assert_valid_snapshot({"state": "available", "snapshot": snapshot})
    empty = {"firstEventId": None, "lastEventId": None, "events": []}
    assert snapshot["source"] == empty
    assert snapshot["contentHash"] == harn_sha256(empty)
    assert snapshot["extensions"] == {}


def test_projection_refuses_events_out_of_order() -> None:
    events = [event(2, "other", {}), event(1, "other", {})]
    with pytest.raises(InvalidDocument) as caught:
        project(records(events), query_echo({"sessionId": "sess-1"}), rows_beyond=0, policy=POLICY)
    assert caught.value.findings[0].path == "$[1].id"


@pytest.mark.sentence("recap.deterministic-projection")
def test_projection_does_not_touch_its_input() -> None:
    events = tape_events("basic.jsonl")
    given_records = records(events)
    before = copy.deepcopy([r.event for r in given_records])
    snapshot_of(events)
    assert [r.event for r in given_records] == before


# --------------------------------------------------------------------------- determinism


@pytest.mark.sentence("recap.deterministic-projection")
def test_same_journal_and_query_give_the_same_bytes(basic_journal: Path, tmp_path: Path) -> None:
    query = {"sessionId": "sess-basic", "limit": 7}
    first = envelope_bytes(RecapService(basic_journal).query(query).envelope)
    assert envelope_bytes(RecapService(basic_journal).query(query).envelope) == first
    # Through a tape and into a fresh SQLite file: the same bytes again.
    tape = tmp_path / "copy.jsonl"
    export_tape(basic_journal, tape)
    copied = tmp_path / "copy.sqlite"
    import_tape(tape, copied)
    assert envelope_bytes(RecapService(copied).query(query).envelope) == first


@pytest.mark.sentence("recap.deterministic-projection")
def test_the_projection_agrees_with_the_service(basic_journal: Path) -> None:
    events = tape_events("basic.jsonl")
    pure = project(
        records(events), query_echo({"sessionId": "sess-basic"}), rows_beyond=0, policy=POLICY
    )
    served = RecapService(basic_journal).query({"sessionId": "sess-basic"}).envelope["snapshot"]
    assert envelope_bytes(pure) == envelope_bytes(served)


# ----------------------------------------------------------------------------- read-only


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


@pytest.mark.sentence("recap.deterministic-projection", "recap.no-model-no-write")
def test_a_recap_never_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = journal_of(tmp_path, tape_events("basic.jsonl"))
    before = _files(tmp_path)
    opened: list[SqliteJournal] = []
    original = SqliteJournal.open.__func__  # type: ignore[attr-defined]

    def spy(cls: type[SqliteJournal], /, path: Any, **kwargs: Any) -> SqliteJournal:
        assert kwargs == {}, "the service opens the journal with the read-only defaults"
        journal: SqliteJournal = original(cls, path, **kwargs)
        opened.append(journal)
        return journal

    monkeypatch.setattr(SqliteJournal, "open", classmethod(spy))
    service = RecapService(journal)
    for query in ({"sessionId": "sess-basic"}, {"sessionId": "nobody"}, {"sessionId": "x"}):
        service.query(query)
    assert opened
    assert not any(j.writable for j in opened)
    after = _files(tmp_path)
    # A WAL reader may leave SQLite's coordination files beside the journal
    # (shared memory, and a write-ahead log with no frame in it); the journal
    # itself and every other file keep every byte and their mtime.
    wal = after.pop("events.sqlite-wal", (b"", 0))[0]
    after.pop("events.sqlite-shm", None)
    assert wal == b"", "no transaction wrote a frame"
    assert after == before


@pytest.mark.sentence("recap.no-model-no-write")
def test_the_read_connection_cannot_write(basic_journal: Path) -> None:
    with SqliteJournal.open(basic_journal) as journal:
        connection = journal._open_connection()
        with pytest.raises(sqlite3.OperationalError):
            connection.execute("DELETE FROM session_events")


# --------------------------------------------------------------------------- unavailable


@pytest.mark.sentence(
    "recap.unavailable-reasons",
    "recap.journal-unavailable",
    "recap.session-missing",
    "recap.admission-terminal",
)
def test_unavailable_reasons(tmp_path: Path, basic_journal: Path) -> None:
    query = {"sessionId": "sess-basic"}
    assert RecapService(tmp_path / "missing.sqlite").query(query).status == "journal_unavailable"
    (tmp_path / "text.sqlite").write_text("not a database")
    assert RecapService(tmp_path / "text.sqlite").query(query).status == "journal_unavailable"
    assert RecapService(tmp_path).query(query).status == "journal_unavailable"
    assert RecapService(basic_journal).query({"sessionId": "nobody"}).status == "session_missing"
    service = RecapService(basic_journal)
    service.close()
    outcome = service.query(query)
    assert outcome == (
        "admission_terminal",
        {"state": "unavailable", "reason": "admission_terminal"},
    )
    for status in ("journal_unavailable", "admission_terminal"):
        assert_valid_snapshot({"state": "unavailable", "reason": status})


_ROW = " WHERE session_id = ? AND event_id = ?"


def _canonical_text(raw: dict[str, Any]) -> str:
    """A stored event as a journal row holds it: Harn's canonical JSON."""
    return harn_canonical_bytes(raw).decode("utf-8")


def _with_turn(text: str, turn_id: str) -> str:
    raw = json.loads(text)
    raw["headers"]["turn_id"] = turn_id
    return _canonical_text(raw)


@pytest.mark.sentence("recap.projection-failed")
@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("UPDATE session_events SET event = ?" + _ROW, lambda text: "{not json"),
        # A duplicate key in an otherwise valid event: the quick path's parser keeps the
        # last value, the full check refuses the document.
        ("UPDATE session_events SET event = ?" + _ROW, lambda text: '{"event_id":3,' + text[1:]),
        # A canonical, valid body whose header no longer matches its column.
        ("UPDATE session_events SET event = ?" + _ROW, lambda text: _with_turn(text, "turn-9")),
        ("UPDATE session_events SET turn_id = ?" + _ROW, lambda text: "turn-9"),
        ("UPDATE session_events SET kind = ?" + _ROW, lambda text: "other"),
        ("UPDATE session_events SET execution_id = ?" + _ROW, lambda text: "hxe-x"),
        ("UPDATE session_events SET record_hash = ?" + _ROW, lambda text: "sha256:" + "0" * 64),
        ("UPDATE session_events SET prev_hash = ?" + _ROW, lambda text: None),
        ("UPDATE session_events SET event_id = ?" + _ROW, lambda text: 30),
    ],
    ids=[
        "not-json",
        "duplicate-key",
        "body-header",
        "turn_id",
        "kind",
        "execution_id",
        "record_hash",
        "prev_hash",
        "event_id",
    ],
)
def test_a_corrupt_row_fails_the_projection(tmp_path: Path, sql: str, value: Any) -> None:
    """A row whose body is not a stored event, or whose columns disagree with its body,
    is journal_corrupt, named ``PATH#SESSION/event-ID``; the recap is projection_failed."""
    journal = journal_of(tmp_path, tape_events("basic.jsonl"))
    connection = sqlite3.connect(journal, isolation_level=None)
    try:
        (text,) = connection.execute(
            "SELECT event FROM session_events" + _ROW, ("sess-basic", 3)
        ).fetchone()
        assert connection.execute(sql, (value(text), "sess-basic", 3)).rowcount == 1
    finally:
        connection.close()
    with SqliteJournal.open(journal) as reader, pytest.raises(JournalCorrupt) as caught:
        reader.read("sess-basic", limit=100)
    assert {f.code for f in caught.value.findings} == {"journal_corrupt"}
    row_id = value(text) if "SET event_id" in sql else 3  # the row as its columns key it
    assert {f.source for f in caught.value.findings} == {f"{journal}#sess-basic/event-{row_id}"}
    service = RecapService(journal)
    assert service.query({"sessionId": "sess-basic"}).status == "projection_failed"
    page = service.query({"sessionId": "sess-basic", "limit": 2})
    assert page.status == "available", "rows before the corrupt one still read"


def _rewrite_row(journal: Path, event_id: int, change: Any, session_id: str = "sess-basic") -> None:
    """Replace the body of the session's event ``event_id`` with ``change(body)``."""
    connection = sqlite3.connect(journal, isolation_level=None)
    try:
        (text,) = connection.execute(
            "SELECT event FROM session_events" + _ROW, (session_id, event_id)
        ).fetchone()
        connection.execute(
            "UPDATE session_events SET event = ?" + _ROW,
            (change(json.loads(text)), session_id, event_id),
        )
    finally:
        connection.close()


@pytest.mark.sentence("recap.projection-failed")
@pytest.mark.parametrize(
    ("filler", "extra", "status"),
    [
        ("r", 0, "available"),  # MAX_DOCUMENT_BYTES bytes
        ("r", 1, "projection_failed"),  # one byte more
        ("é", 0, "available"),  # MAX_DOCUMENT_BYTES bytes, about half as many characters
        ("é", 1, "projection_failed"),  # one byte more, still far fewer characters
    ],
)
def test_the_fast_read_path_keeps_the_byte_limits(
    tmp_path: Path, filler: str, extra: int, status: str
) -> None:
    """The strict reader's byte limit holds on the quick read path, in UTF-8 bytes, not
    characters: a canonical, valid row of MAX_DOCUMENT_BYTES bytes reads, one byte more
    is corrupt.  (The stored contract bounds no header or member in bytes, Harn's being
    any strings, so the document's limit is the byte limit a read enforces.)"""
    journal = journal_of(tmp_path, tape_events("basic.jsonl"))
    size = MAX_DOCUMENT_BYTES + extra

    def change(raw: dict[str, Any]) -> str:
        assert raw["ts"] == ""  # a member the projection does not read
        room = size - len(harn_canonical_bytes(raw))
        width = len(filler.encode("utf-8"))
        raw["ts"] = filler * (room // width) + "r" * (room % width)
        text = _canonical_text(raw)
        assert len(text.encode("utf-8")) == size
        if filler != "r":
            assert len(text) < MAX_DOCUMENT_BYTES
        return text

    _rewrite_row(journal, 2, change)
    assert RecapService(journal).query({"sessionId": "sess-basic"}).status == status


@pytest.mark.sentence("recap.deterministic-projection", "recap.source-events")
def test_a_valid_row_in_another_spelling_reads_as_its_canonical_form(tmp_path: Path) -> None:
    """A valid row the quick path does not vouch for (not canonical) reads through the full
    check as the same stored event, with the same record hash, and gives the same recap."""
    events = tape_events("basic.jsonl")
    journal = journal_of(tmp_path, events)
    query = {"sessionId": "sess-basic"}
    served = envelope_bytes(RecapService(journal).query(query).envelope)
    _rewrite_row(journal, 4, lambda raw: json.dumps(raw, indent=1))  # valid, not canonical
    with contextlib.closing(sqlite3.connect(journal)) as connection:
        (text,) = connection.execute(
            "SELECT event FROM session_events" + _ROW, ("sess-basic", 4)
        ).fetchone()
    assert text != _canonical_text(json.loads(text)), "the row is not canonical any more"
    with SqliteJournal.open(journal) as reader:
        read = reader.read("sess-basic", limit=100)
    expected = list(stored_events_of([e.to_json() for e in events]))
    assert list(read.events) == expected
    assert [e["record_hash"] for e in read.events] == [record_hash(e.to_json()) for e in events]
    assert envelope_bytes(RecapService(journal).query(query).envelope) == served


@pytest.mark.sentence("recap.admission-terminal")
def test_admission_is_refused_while_closing(
    basic_journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    original = projection_module.project_stored

    def slow_project(*args: Any, **kwargs: Any) -> dict[str, Any]:
        entered.set()
        assert release.wait(10)
        return original(*args, **kwargs)

    monkeypatch.setattr("session_contracts.recap.service.project_stored", slow_project)
    service = RecapService(basic_journal)
    results: list[str] = []
    worker = threading.Thread(
        target=lambda: results.append(service.query({"sessionId": "sess-basic"}).status)
    )
    worker.start()
    assert entered.wait(10)
    closer = threading.Thread(target=service.close)
    closer.start()
    deadline = time.monotonic() + 10
    while not service.closed and time.monotonic() < deadline:
        time.sleep(0.001)
    assert service.query({"sessionId": "sess-basic"}).status == "admission_terminal"
    release.set()
    worker.join(10)
    closer.join(10)
    assert results == ["available"], "a query admitted before closing completes"


@pytest.mark.sentence("recap.projection-failed")
def test_a_failing_projection_is_unavailable_not_a_traceback(
    basic_journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise KeyError("a bug")

    monkeypatch.setattr("session_contracts.recap.service.project_stored", broken)
    assert RecapService(basic_journal).query({"sessionId": "sess-basic"}).status == (
        "projection_failed"
    )


@pytest.mark.sentence(
    "recap.projection-failed", "recap.write-contract-closed", "recap.reject-unknown-fields"
)
def test_an_envelope_that_breaks_the_contract_is_not_handed_out(
    basic_journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = projection_module.project_stored

    def sloppy(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**original(*args, **kwargs), "summary": "an unknown field"}

    monkeypatch.setattr("session_contracts.recap.service.project_stored", sloppy)
    assert RecapService(basic_journal).query({"sessionId": "sess-basic"}).status == (
        "projection_failed"
    )


def test_the_garbage_collector_is_restored(basic_journal: Path) -> None:
    assert gc.isenabled()
    RecapService(basic_journal).query({"sessionId": "sess-basic"})
    assert gc.isenabled()


# ---------------------------------------------------------------------------- extensions


@pytest.mark.sentence("recap.projection-hash-excludes-extensions", "recap.extension-binding")
def test_extensions_survive_and_bind(basic_journal: Path) -> None:
    def extend(snapshot: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "example.summary": {
                "binding": {"target": "projectionHash", "hash": snapshot["projectionHash"]},
                "summary": "Atomic writes.",
            },
            "example.vendor": {"score": 0.5},
        }

    plain = RecapService(basic_journal).query({"sessionId": "sess-basic"}).envelope["snapshot"]
    outcome = RecapService(basic_journal, extend=extend).query({"sessionId": "sess-basic"})
    snapshot = outcome.envelope["snapshot"]
    assert outcome.available
    assert snapshot["projectionHash"] == plain["projectionHash"]
    assert snapshot["extensions"]["example.vendor"] == {"score": 0.5}
    assert [(b.name, b.state) for b in classify_extensions(snapshot)] == [
        ("example.summary", "bound"),
        ("example.vendor", "decorative"),
    ]
    assert_valid_snapshot(outcome.envelope)


def test_with_extensions_refuses_what_is_not_json() -> None:
    snapshot = snapshot_of([event(1, "other", {})])
    with pytest.raises(InvalidDocument) as caught:
        with_extensions(snapshot, {"bad": {"x": float("nan")}})
    assert caught.value.findings[0].path.startswith("$.extensions")


# ------------------------------------------------------------------------------ paging


@pytest.fixture(scope="module")
def long_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[SessionEvent]]:
    events = [
        *tape_events("basic.jsonl"),
        *(
            SessionEvent.from_json({**e.to_json(), "id": e.id + 100, "turnId": f"t-{e.id % 3}"})
            for e in tape_events("unassigned.jsonl")
        ),
    ]
    events = [SessionEvent.from_json({**e.to_json(), "sessionId": "sess-long"}) for e in events]
    other = SessionEvent.from_json({**events[0].to_json(), "id": 50, "sessionId": "sess-other"})
    events = sorted([*events, other], key=lambda e: e.id)
    return journal_of(tmp_path_factory.mktemp("long"), events), events


def _page_through(service: RecapService, query: dict[str, Any]) -> Iterator[dict[str, Any]]:
    cursor: int | None = None
    for _ in range(1000):
        outcome = service.query({**query, **({} if cursor is None else {"fromEventId": cursor})})
        assert outcome.available
        snapshot = outcome.envelope["snapshot"]
        yield snapshot
        cursor = snapshot["cursor"]["nextEventId"]
        if cursor is None:
            return
    raise AssertionError("the cursor never reached the end")


@pytest.mark.sentence(
    "recap.run-filter",
    "recap.turn-filter",
    "recap.from-event-id",
    "recap.limit-bound",
    "recap.read-coverage",
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    limit=st.integers(1, 12),
    filters=st.sampled_from([{}, {"runId": "run-1"}, {"turnId": "t-1"}, {"turnId": "turn-2"}]),
)
def test_paging_collects_every_event_exactly_once(
    long_journal: tuple[Path, list[SessionEvent]], limit: int, filters: dict[str, str]
) -> None:
    """Following nextEventId from the first page reads every event of the session once, in
    id order, whatever the filters; as Harn's store reads, each page's pending is the
    session's last id minus the page's last id."""
    journal, events = long_journal
    service = RecapService(journal)
    pages = list(_page_through(service, {"sessionId": "sess-long", "limit": limit, **filters}))
    seen = [s["eventId"] for page in pages for s in page["source"]["events"]]
    wanted = [e.id for e in events if e.session_id == "sess-long"]
    assert seen == wanted, "every event of the session once, in order, whatever the filters"
    shown = {
        source for page in pages for turn in page["turns"] for source in turn["sourceEventIds"]
    }
    kept = {
        e.id
        for e in events
        if e.session_id == "sess-long"
        and e.run_id is not None
        and e.turn_id is not None
        and all(
            getattr(e, {"runId": "run_id", "turnId": "turn_id"}[k]) == v for k, v in filters.items()
        )
        and e.kind in projection_module.RECAP_KINDS
    }
    assert shown == kept, "a turn lists exactly its filter-passing events of recap kinds"
    for page in pages:
        assert page["coverage"]["scanned"] <= limit
        assert page["query"]["limit"] == limit
        assert page["coverage"]["truncated"] == (page["cursor"]["nextEventId"] is not None)
        if page["coverage"]["truncated"]:
            assert page["cursor"]["nextEventId"] == page["cursor"]["lastEventId"] + 1
    # As Harn's store reads: pending is the session's last id minus the page's last id
    # read, an id distance (the session's ids jump from the basic events to 100 and on),
    # not a count of the events left.
    assert [p["coverage"]["pending"] for p in pages] == [
        wanted[-1] - p["source"]["events"][-1]["eventId"] for p in pages
    ]
    assert pages[-1]["coverage"]["pending"] == 0


# ---------------------------------------------------------------------- hash properties


def _leaf_paths(node: Any, where: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaf_paths(value, (*where, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaf_paths(value, (*where, index))
    else:
        yield where


_BASE = snapshot_of(tape_events("basic.jsonl"))
_BOUND_PATHS = [
    path for path in _leaf_paths(_BASE) if path[0] not in ("projectionHash", "source", "extensions")
]
_json_leaf = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=8)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@pytest.mark.sentence("recap.projection-hash")
@given(path=st.sampled_from(_BOUND_PATHS), value=_json_leaf)
def test_any_change_to_a_bound_member_changes_the_projection_hash(
    path: tuple[Any, ...], value: Any
) -> None:
    changed = copy.deepcopy(_BASE)
    node = changed
    for part in path[:-1]:
        node = node[part]
    if harn_canonical_bytes([node[path[-1]]]) == harn_canonical_bytes([value]):
        value = [value]  # a different value, whatever was drawn
    node[path[-1]] = value
    assert projection_hash(changed) != _BASE["projectionHash"]


@pytest.mark.sentence("recap.projection-hash-excludes-extensions")
@given(extensions=st.dictionaries(st.text(max_size=8), _json, max_size=4))
def test_no_change_to_extensions_moves_the_projection_hash(extensions: dict[str, Any]) -> None:
    extended = with_extensions(_BASE, extensions)
    assert projection_hash(extended) == _BASE["projectionHash"]
    assert [f for f in verify_snapshot(extended) if f.level == "error"] == []


_EVENTS = tape_events("basic.jsonl")


@pytest.mark.sentence("recap.content-hash")
@given(
    index=st.integers(0, len(_EVENTS) - 1),
    member=st.sampled_from(["recordedAtUnixMs", "runId", "sessionAttribute"]),
    value=st.integers(1, 2**40),
)
def test_any_change_to_a_source_event_changes_the_content_hash(
    index: int, member: str, value: int
) -> None:
    raw = _EVENTS[index].to_json()
    if member == "recordedAtUnixMs":
        raw[member] += value
    elif member == "runId":
        raw[member] = f"run-{value}"
    else:  # an event the projection ignores still counts
        raw.update(kind="session_attribute", topic="session", executionId=None)
        raw["payload"] = {"name": "n", "value": value}
    events = [*_EVENTS[:index], SessionEvent.from_json(raw), *_EVENTS[index + 1 :]]
    assert snapshot_of(events)["contentHash"] != snapshot_of(_EVENTS)["contentHash"]


# ---------------------------------------------------------------------------- redaction


@pytest.mark.sentence("recap.redaction")
def test_canaries_the_policy_catches_never_reach_the_snapshot(
    fixture_journals: dict[str, Path],
) -> None:
    outcome = RecapService(fixture_journals["canaries.template.jsonl"]).query(
        {"sessionId": "sess-canary", "limit": 32768}
    )
    body = envelope_bytes(outcome.envelope).decode()
    # The canaries went in: the journal holds every secret of every planted kind.
    with SqliteJournal.open(fixture_journals["canaries.template.jsonl"]) as reader:
        stored = "".join(json.dumps(e) for e in reader.iter_events())
    template = (FIXTURES / "canaries.template.jsonl").read_text(encoding="utf-8")
    planted = sorted(set(re.findall(r"\{canary:([a-z0-9_]+)\}", template)))
    caught = 0
    for kind in planted:
        secret = known_canary_secrets()[kind]
        assert json.dumps(secret)[1:-1] in stored, kind
        if redact_text(known_canaries()[kind], POLICY).text == known_canaries()[kind]:
            # Harn's default catalog has no pattern for it (docs/redaction.md lists
            # these): the recap shows it, as Harn's does.
            continue
        caught += 1
        assert secret not in body, kind
        assert json.dumps(secret)[1:-1] not in body, kind
    assert caught >= 10
    assert scan_value(outcome.envelope["snapshot"]["turns"], POLICY) == []
    # Each prompt is its event's text through the policy, exactly.
    with SqliteJournal.open(fixture_journals["canaries.template.jsonl"]) as reader:
        texts = {
            e["event_id"]: e["payload"]["transcript_event"].get("text")
            for e in reader.iter_events(session_id="sess-canary")
            if e["kind"] == {"kind": "message"}
        }
    for turn in outcome.envelope["snapshot"]["turns"]:
        for prompt in turn["prompts"]:
            assert prompt["text"] == redact_text(texts[prompt["sourceEventId"]], POLICY).text


_pieces = st.one_of(
    st.sampled_from(sorted(canaries().values())),
    st.sampled_from(sorted(lookalikes().values())),
    st.sampled_from(["password", "PASSWORD", "Token", "=", ": ", '"', "\\", "\n", " ", "://", "-"]),
    st.sampled_from(sorted(CASE_TRAPS)),
    st.sampled_from(["[REDACTED:jwt]", "[REDACTED:x]", "é", "\u2028", "sk-", "ghp_", "Bearer "]),
    st.text(max_size=12),
)
_texts = st.lists(_pieces, max_size=6).map("".join)


@pytest.mark.sentence("recap.redaction")
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(_texts, max_size=6))
def test_the_gate_redacts_exactly_like_redact_text(texts: list[str]) -> None:
    assert redact_texts(texts, POLICY) == [redact_text(text, POLICY).text for text in texts]


@pytest.mark.sentence("recap.redaction")
@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(
        st.dictionaries(
            st.sampled_from(["token", "api_key", "path", "note", "Authorization", "x"]),
            _texts | st.lists(_texts, max_size=2) | st.integers(0, 9),
            max_size=4,
        ),
        max_size=4,
    )
)
def test_the_gate_redacts_values_exactly_like_redact_value(values: list[Any]) -> None:
    assert redact_values(values, POLICY) == [redact_value(value, POLICY) for value in values]


_SCREENED_POLICIES = {"default": POLICY, "extended": extended_policy()}


@pytest.mark.parametrize("name", sorted(_SCREENED_POLICIES))
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_texts | _texts.map(str.upper), min_size=1, max_size=8))
def test_the_projection_screen_answers_as_the_gate_and_never_skips_a_change(
    name: str, texts: list[str]
) -> None:
    # The projection redacts only the texts its screen lets through: the screen must
    # say what the gate says (holding: some detector has every clause in the text),
    # and a text it stops must be its own redaction.
    policy = _SCREENED_POLICIES[name]
    screen = TextScreen(policy)
    checks = [(g.kind, tuple(tuple(c.literals) for c in g.clauses)) for g in detector_gates(policy)]
    for text in texts + texts:  # twice: the remembered verdicts too
        may_change = screen.may_change(text)
        assert may_change == (next(holding(text, checks), None) is not None), text
        if not may_change:
            assert redact_text(text, policy).text == text
            assert redact_value({"note": [text]}, policy) == {"note": [text]}
            if policy.pattern_style:
                assert not screen.value_may_change({"note": [text], "n": 1})
    if policy.pattern_style:
        assert screen.value_may_change({"note": {"api_key": 1}})  # a sensitive key


@pytest.mark.parametrize("kind", sorted(canaries()))
def test_the_screen_lets_every_canary_through(kind: str) -> None:
    screen = TextScreen(POLICY)
    text = f"before {canaries()[kind]} after"
    if redact_text(text, POLICY).text != text:
        assert screen.may_change(text)
        assert screen.may_change(text.upper()) or redact_text(text.upper(), POLICY).text == (
            text.upper()
        )
    assert not screen.may_change("plain prose")


@pytest.mark.sentence("recap.redaction")
@pytest.mark.parametrize("kind", sorted(canaries()))
def test_the_gate_keeps_every_detector_for_its_canary(kind: str) -> None:
    text = f"before {canaries()[kind]} after"
    assert redact_texts([text, "plain prose"], POLICY) == [
        redact_text(text, POLICY).text,
        "plain prose",
    ]
    assert canary_secrets()[kind] not in redact_texts([text], POLICY)[0]


@pytest.mark.sentence("recap.redaction")
def test_every_default_detector_has_a_clause() -> None:
    assert all(gate.clauses for gate in detector_gates(POLICY))


@pytest.mark.sentence("recap.redaction")
def test_case_traps_are_exactly_the_characters_that_fold_to_ascii_letters() -> None:
    everything = "".join(
        chr(code) for code in range(0x80, 0x110000) if not 0xD800 <= code <= 0xDFFF
    )
    folding = set(re.findall("[a-z]", everything, re.IGNORECASE))
    assert folding == set(CASE_TRAPS)
    lowering = {c for c in CASE_TRAPS if any(x.isascii() for x in c.lower())}
    assert {c for c in everything if any(x.isascii() for x in c.lower())} <= lowering


# ----------------------------------------------------------------------- journal records

_ids = st.text(min_size=1, max_size=6)
_payloads: dict[str, st.SearchStrategy[Any]] = {
    "message": st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "visibility": st.none() | st.just("public"),
            "text": st.none() | st.text(max_size=20),
        }
    ),
    "loop_checkpoint": st.fixed_dictionaries(
        {
            "checkpoint": st.sampled_from(["iteration_start", "iteration_end"]),
            "iteration": st.none() | st.integers(0, 2),
        }
    ),
    "tool_call": st.fixed_dictionaries(
        {"callId": st.none() | _ids, "toolName": st.none() | _ids, "input": _json}
    ),
    "tool_result": st.fixed_dictionaries(
        {
            "callId": st.none() | _ids,
            "toolName": st.none() | _ids,
            "isError": st.booleans(),
            "output": _json,
            "verification": st.none(),
        }
    ),
    "other": st.dictionaries(st.text(max_size=4), _json, max_size=3),
    "session_attribute": st.fixed_dictionaries({"name": _ids, "value": _json}),
}


@st.composite
def _session(draw: st.DrawFn) -> list[SessionEvent]:
    ids = sorted(draw(st.sets(st.integers(0, 2**53 - 1), min_size=1, max_size=8)))
    out = []
    for event_id in ids:
        kind = draw(st.sampled_from(sorted(_payloads)))
        out.append(
            event(
                event_id,
                kind,
                draw(_payloads[kind]),
                runId=draw(st.none() | _ids),
                turnId=draw(st.none() | _ids),
                iteration=draw(st.none() | st.integers(0, 3)),
                topic=draw(_ids),
                recordedAtUnixMs=draw(st.integers(0, 2**53 - 1)),
            )
        )
    return out


@pytest.mark.sentence("recap.from-event-id", "recap.read-coverage", "recap.source-events")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=_session())
def test_a_read_returns_the_stored_forms_and_record_hashes_stored_events_of_gives(
    tmp_path_factory: pytest.TempPathFactory, events: list[SessionEvent]
) -> None:
    """The events a read returns are the stored forms ``stored_events_of`` computes: each
    carries its journal event's record hash (docs/hashing.md 4.1), chained on the
    session's previous one.  As Harn's store reads: without ``from_event_id`` the read
    starts at event 1 (an event with id 0 is read only from 0), and ``pending`` is the
    session's last id minus the last id read."""
    folder = tmp_path_factory.mktemp("records")
    path = folder / "j.sqlite"
    with SqliteJournal.open(path, create=True) as writer:
        writer.append(events)
    raws = [e.to_json() for e in events]
    expected = list(stored_events_of(raws))
    hashes = [record_hash(raw) for raw in raws]
    assert [s["record_hash"] for s in expected] == hashes
    assert [s["prev_hash"] for s in expected] == [None, *hashes[:-1]]
    ids = [e.id for e in events]
    half = max(1, len(events) // 2)
    with SqliteJournal.open(path) as reader:
        whole = reader.read("sess-1", from_event_id=0, limit=len(events))
        default = reader.read("sess-1", limit=len(events))
        first = reader.read("sess-1", from_event_id=0, limit=half)
    assert list(whole.events) == expected
    assert (whole.scanned, whole.last_event_id, whole.next_event_id, whole.pending) == (
        len(events),
        ids[-1],
        None,
        0,
    )
    assert list(default.events) == [s for s in expected if s["event_id"] >= 1]
    assert list(first.events) == expected[:half]
    if half < len(events):
        assert (first.last_event_id, first.next_event_id, first.pending) == (
            ids[half - 1],
            ids[half],
            ids[-1] - ids[half - 1],
        )
    query = query_echo({"sessionId": "sess-1", "fromEventId": 0, "limit": len(events)})
    outcome = RecapService(path).answer(query)
    assert outcome.available
    assert_valid_snapshot(outcome.envelope)
    snapshot = outcome.envelope["snapshot"]
    assert snapshot["source"]["events"] == [
        {"eventId": event_id, "recordHash": hashes[i]} for i, event_id in enumerate(ids)
    ]
    assert snapshot == project(records(events), query, rows_beyond=0, policy=POLICY)
    from_one = RecapService(path).query({"sessionId": "sess-1"})
    assert from_one.available
    assert_valid_snapshot(from_one.envelope)
    assert [s["eventId"] for s in from_one.envelope["snapshot"]["source"]["events"]] == [
        event_id for event_id in ids if event_id >= 1
    ]


# ------------------------------------------------------- text and numbers as Harn reads them

# Rust's str::trim removes exactly the Unicode White_Space characters.
RUST_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_padding = st.text(alphabet=RUST_WHITE_SPACE, max_size=3)
_core = st.text(alphabet="ab c\u001f\ufeff\u00e9", min_size=1, max_size=6).filter(
    lambda text: text.strip(RUST_WHITE_SPACE) == text
)


def _trimmed_session(
    text: str, call_id: str, tool: str, owner: str, kind: str
) -> list[SessionEvent]:
    return [
        event(1, "loop_checkpoint", {"checkpoint": "iteration_start", "iteration": 0}),
        event(2, "message", {"role": "user", "visibility": None, "text": text}),
        event(3, "message", {"role": "assistant", "visibility": " public ", "text": text}),
        event(4, "tool_call", {"callId": call_id, "toolName": tool, "input": None}),
        event(5, "tool_result", {**_RESULT, "callId": call_id.strip(RUST_WHITE_SPACE) or "x"}),
        event(6, "loop_checkpoint", {"checkpoint": "iteration_end", "iteration": 0}),
        event(7, "terminal", {**_TERMINAL, "owner": owner, "kind": kind, "reason": text}),
    ]


_RESULT = {"toolName": None, "isError": False, "output": None, "verification": None}
_TERMINAL = {"finalStatus": "done", "stopReason": None}


@settings(max_examples=60, deadline=None)
@given(core=_core, left=_padding, right=_padding)
def test_semantic_text_is_trimmed_and_blank_is_absent(core: str, left: str, right: str) -> None:
    """event_facts.rs ``semantic_string``: message text, call id, tool name and the
    terminal members are trimmed of White_Space; nothing left is absent (docs/recap.md 4.1)."""

    def pad(text: str) -> str:
        return left + text + right

    plain = snapshot_of(_trimmed_session(core, core, core, core, core))
    padded = snapshot_of(_trimmed_session(pad(core), pad(core), pad(core), pad(core), pad(core)))
    assert padded["turns"] == plain["turns"]
    assert padded["coverage"] == plain["coverage"]
    blank = (left + right) or " "  # ids and names are at least one character
    nothing = snapshot_of(_trimmed_session(blank, blank, blank, blank, blank))
    turn = nothing["turns"][0]
    assert turn["prompts"] == []
    assert turn["iterations"][0]["assistantText"] == []
    assert turn["terminal"] is not None
    assert (turn["terminal"]["owner"], turn["terminal"]["kind"], turn["terminal"]["reason"]) == (
        None,
        None,
        None,
    )
    assert turn["terminal"]["state"] == "incomplete"
    # the call without an id counts unassigned; its result ("x") opens an exchange of its own
    assert [tool["toolCallId"] for tool in turn["iterations"][0]["tools"]] == ["x"]
    assert nothing["coverage"]["unassigned"] == plain["coverage"]["unassigned"] + 1


@settings(max_examples=40, deadline=None)
@given(core=_core, left=_padding, right=_padding)
def test_plan_and_progress_text_is_read_verbatim(core: str, left: str, right: str) -> None:
    """Harn reads plan and progress texts without semantic_string: kept as recorded."""
    text = left + core + right
    events = [
        event(1, "loop_checkpoint", {"checkpoint": "iteration_start", "iteration": 0}),
        event(
            2,
            "plan",
            {
                "documentId": "d",
                "revisionId": "r",
                "title": text,
                "summary": text,
                "steps": [{"id": "s1", "content": text, "status": "pending"}],
                "event": None,
            },
        ),
        event(
            3,
            "progress",
            {
                "message": text,
                "entries": [{"content": text, "status": "pending", "priority": None}],
                "replace": None,
            },
        ),
    ]
    segment = snapshot_of(events)["turns"][0]["iterations"][0]
    plan, progress = segment["plans"][0], segment["progress"][0]
    assert plan["title"] == plan["summary"] == plan["steps"][0]["content"] == text
    assert progress["message"] == progress["entries"][0]["content"] == text


def test_characters_outside_white_space_are_not_trimmed() -> None:
    """U+001C..U+001F and U+FEFF are whitespace to Python's str.strip, not to Rust's trim."""
    for character in "\x1c\x1d\x1e\x1f\ufeff":
        events = [event(1, "message", {"role": "user", "visibility": None, "text": character})]
        assert snapshot_of(events)["turns"][0]["prompts"][0]["text"] == character


def test_integral_floats_in_tool_values_stay_floats_through_the_journal(tmp_path: Path) -> None:
    """Harn keeps serde_json numbers (canonical_json.rs): 1.0 and -0.0 stay floats in the
    snapshot and in projectionHash; the record hash is of the RFC 8785 form."""
    values = {"one": 1.0, "negzero": -0.0, "big": 1e20, "int": 1}
    events = [
        event(1, "loop_checkpoint", {"checkpoint": "iteration_start", "iteration": 0}),
        event(2, "tool_call", {"callId": "c", "toolName": "f", "input": values}),
    ]
    path = tmp_path / "j.sqlite"
    with SqliteJournal.open(path, create=True) as writer:
        writer.append(events)
    outcome = RecapService(path).query({"sessionId": "sess-1"})
    snapshot = outcome.envelope["snapshot"]
    shown = snapshot["turns"][0]["iterations"][0]["tools"][0]["input"]
    assert {key: type(value) for key, value in shown.items()} == {
        "one": float,
        "negzero": float,
        "big": float,
        "int": int,
    }
    assert str(shown["negzero"]) == "-0.0"
    assert snapshot == snapshot_of(events)
    as_integers = [
        events[0],
        event(
            2,
            "tool_call",
            {
                "callId": "c",
                "toolName": "f",
                "input": {"one": 1, "negzero": 0, "big": 1e20, "int": 1},
            },
        ),
    ]
    other = snapshot_of(as_integers)
    assert other["contentHash"] == snapshot["contentHash"]  # RFC 8785: the same numbers
    assert other["projectionHash"] != snapshot["projectionHash"]  # Harn's form: not the same


# ------------------------------------------------------------- Harn's stored events


def stored(event_id: int, kind: Any, payload: Any, **headers: str) -> dict[str, Any]:
    """A StoredEvent as harn-session-store's serde writes it, in run-1/turn-1."""
    return {
        "event_id": event_id,
        "session_id": "sess-1",
        "tenant_id": None,
        "parent_event_id": None,
        "actor": None,
        "kind": {"kind": kind} if isinstance(kind, str) else kind,
        "payload": payload,
        "tags": [],
        "headers": {"run_id": "run-1", "turn_id": "turn-1", **headers},
        "ts_ms": 1,
        "ts": "",
        "record_hash": f"sha256:{event_id:064x}",
        "prev_hash": None,
        "signed_by": None,
    }


def _custom(name: str) -> dict[str, str]:
    return {"kind": "custom", "type": name}


def _start(event_id: int, iteration: Any = 1) -> dict[str, Any]:
    metadata = {"kind": "iteration_start", "iteration": iteration}
    return stored(
        event_id, _custom("loop_checkpoint"), {"transcript_event": {"metadata": metadata}}
    )


def stored_snapshot(events: list[dict[str, Any]]) -> dict[str, Any]:
    return project_stored(events, query_echo({"sessionId": "sess-1"}), rows_beyond=0, policy=POLICY)


def _tools(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    return [tool for it in snapshot["turns"][0]["iterations"] for tool in it["tools"]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=recap_case_strategy())
def test_a_journal_event_and_its_stored_form_give_the_same_recap(
    case: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The journal stores a journal event as its stored form (docs/journal.md "As Harn
    stores it"): the recap of the journal is project_stored of the stored forms."""
    events = [SessionEvent.from_json(raw) for raw in case["events"]]
    sessions = [e.to_json() for e in events if e.session_id == "sess-1"]
    if not sessions:
        return
    path = tmp_path_factory.mktemp("journal") / "journal.sqlite"
    with SqliteJournal.open(path, create=True) as journal:
        journal.append(events)
    query = query_echo({"sessionId": "sess-1", "fromEventId": 0, "limit": 32768})
    with RecapService(path, POLICY) as service:
        from_journal = service.answer(query).envelope["snapshot"]
    from_store = project_stored(
        list(stored_events_of(sessions)), query, rows_beyond=0, policy=POLICY
    )
    assert from_store == from_journal
    assert (
        project(
            records([SessionEvent.from_json(e) for e in sessions]),
            query,
            rows_beyond=0,
            policy=POLICY,
        )
        == from_store
    )


def test_a_tool_call_id_header_comes_before_the_payload_and_is_read_verbatim() -> None:
    """event_facts.rs tool_call_id: the tool_call_id header first, untrimmed."""
    metadata = {"tool_call_id": "c1", "tool_name": "read"}
    events = [
        _start(1),
        stored(2, "tool_call", {"transcript_event": {"metadata": metadata}}, tool_call_id=" h "),
        stored(3, "tool_result", {"transcript_event": {"metadata": {"tool_call_id": " h "}}}),
    ]
    assert [t["toolCallId"] for t in _tools(stored_snapshot(events))] == [" h ", "h"]


def test_raw_message_fallbacks_are_read_when_the_envelope_lacks_a_fact() -> None:
    """event_facts.rs TEXT, ROLE, TOOL_NAME_ANY, TOOL_INPUT_ANY, TOOL_OUTPUT_ANY,
    TOOL_IS_ERROR_ANY and the raw result's call id (verbatim)."""
    events = [
        stored(1, "message", {"raw_message": {"role": " user ", "content": " hi "}}),
        _start(2),
        stored(
            3,
            "tool_call",
            {
                "raw_message": {"tool_calls": [{"name": "grep", "arguments": {"q": 1.0}}]},
                "transcript_event": {"metadata": {"tool_call_id": "c1"}},
            },
        ),
        stored(
            4,
            "tool_result",
            {
                "raw_message": {
                    "content": "found",
                    "is_error": True,
                    "_harn": {"tool_call_id": "c1"},
                }
            },
        ),
    ]
    snapshot = stored_snapshot(events)
    assert snapshot["turns"][0]["prompts"] == [{"text": "hi", "sourceEventId": 1}]
    (tool,) = _tools(snapshot)
    assert (tool["toolName"], tool["input"], tool["output"], tool["state"]) == (
        "grep",
        {"q": 1.0},
        "found",
        "failed",
    )
    assert type(tool["input"]["q"]) is float


def test_an_explicit_null_value_replaces_an_earlier_one_and_an_absent_one_does_not() -> None:
    """session_recap.rs upsert_tool: a Some(value) wins, JSON null included; None keeps."""

    def call(event_id: int, metadata: dict[str, Any]) -> dict[str, Any]:
        meta = {"tool_call_id": "c1", **metadata}
        return stored(event_id, "tool_call", {"transcript_event": {"metadata": meta}})

    kept = stored_snapshot([_start(1), call(2, {"input": {"a": 1}}), call(3, {})])
    nulled = stored_snapshot([_start(1), call(2, {"input": {"a": 1}}), call(3, {"input": None})])
    assert _tools(kept)[0]["input"] == {"a": 1}
    assert _tools(nulled)[0]["input"] is None


def test_a_plan_harn_cannot_read_counts_unassigned() -> None:
    """PlanDocumentEvent::Updated needs input_revision_id; the event's document must be
    the plan document; every read member must have its type."""
    document = {
        "document_id": "d",
        "current_revision": {
            "revision_id": "r2",
            "plan": {
                "title": "T",
                "summary": "S",
                "steps": [{"id": "s", "content": "c", "status": "pending"}],
            },
        },
    }

    def plan(event_id: int, **metadata: Any) -> dict[str, Any]:
        return stored(event_id, "plan", {"transcript_event": {"metadata": metadata}})

    updated = {"kind": "updated", "event_id": "e", "document": document}
    events = [
        _start(1),
        plan(2, plan_document=document),
        plan(3, plan_document=document, plan_document_event=updated),
        plan(4, plan_document=document, plan_document_event={**updated, "input_revision_id": "r1"}),
        plan(
            5,
            plan_document=document,
            plan_document_event={
                **updated,
                "input_revision_id": "r1",
                "document": {**document, "document_id": "x"},
            },
        ),
        plan(6, plan_document={**document, "document_id": 7}),
    ]
    snapshot = stored_snapshot(events)
    plans = snapshot["turns"][0]["iterations"][0]["plans"]
    assert [p["sourceEventId"] for p in plans] == [2, 4]
    assert plans[1]["event"] == {"kind": "updated", "eventId": "e", "inputRevisionId": "r1"}
    assert snapshot["coverage"]["unassigned"] == 3


def test_a_redacted_projection_is_listed_by_its_source_hash_and_iterations_truncate() -> None:
    """StoredEvent::source_record_hash strips "redacted:"; i64_at truncates a float."""
    event = _start(1, iteration=2.7)
    event["record_hash"] = "redacted:sha256:" + "a" * 64
    snapshot = stored_snapshot([event])
    assert snapshot["source"]["events"] == [{"eventId": 1, "recordHash": "sha256:" + "a" * 64}]
    assert snapshot["turns"][0]["iterations"][0]["iteration"] == 2
