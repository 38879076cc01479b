"""Run-record reference semantics (seed 003): one test per rule of the seed, then properties.

Every record, span, payload and tape entry a test produces is checked against
its document type (``assert_valid``); the seed's sentences are quoted in the
docstrings of the tests that hold them.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_contracts import InvalidDocument
from session_contracts import runrecord as rr
from session_contracts.journal import (
    EventKind,
    JsonlTape,
    SessionEvent,
    SqliteJournal,
    export_tape,
    import_tape,
    journal_event_of,
)
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.redaction.canaries import canaries, canary_secrets
from session_contracts.redaction.engine import scan_value
from session_contracts.redaction.policy import default_policy
from session_contracts.runrecord import (
    EXECUTION_ID_RELABELLED,
    LLM_TOPIC,
    LOOP_STATE_MALFORMED,
    SPAN_CYCLE,
    SPAN_EXECUTION_MISMATCH,
    SPAN_ID_DUPLICATE,
    TOOL_CALL_UNPARSED,
    EvidenceGap,
    FlightRecording,
    RunSpec,
    Span,
)
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

VALIDATOR = default_validator()
POLICY = default_policy()
SESSION = "sess-01"
RUN = "run-7"
EXECUTION = "hxe-0199a2b4-c6d8-7e0f-8a1b-2c3d4e5f6071"
EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"
RECORD = "run-record.record"
SPAN = "run-record.span"
RESPONSE = "run-record.provider-call-response"
TAPE = "run-record.tape-entry"
MAX_SAFE = 2**53 - 1

# ----------------------------------------------------------------------------- helpers


def assert_valid(doctype: str, value: Any) -> None:
    assert VALIDATOR.validate(doctype, value) == []
    assert VALIDATOR.validate(doctype, value, reference=True) == []


def codes(error: InvalidDocument) -> list[tuple[str, str]]:
    return sorted((finding.path, finding.code) for finding in error.findings)


def event(
    event_id: int,
    kind: str,
    payload: dict[str, Any],
    *,
    session: str = SESSION,
    run: str | None = RUN,
    turn: str | None = "turn-1",
    iteration: int | None = None,
    execution: str | None = None,
    topic: str = "session",
) -> SessionEvent:
    built = SessionEvent(
        id=event_id,
        session_id=session,
        run_id=run,
        turn_id=turn,
        iteration=iteration,
        execution_id=execution,
        topic=topic,
        kind=cast(EventKind, kind),
        recorded_at_unix_ms=1_700_000_000_000 + event_id,
        payload=payload,
    )
    return SessionEvent.from_json(built.to_json())  # checked against the contract


def attribute(event_id: int, value: Any, name: str = "completion_receipt") -> SessionEvent:
    return event(event_id, "session_attribute", {"name": name, "value": value}, turn=None)


def session_opening() -> list[SessionEvent]:
    """A session as created: a prompt, an answer, a terminal fact; no receipt yet."""
    return [
        event(1, "message", PROMPT),
        event(2, "message", ASSISTANT_DONE, iteration=0, execution=EXECUTION),
        event(3, "terminal", TERMINAL_NATURAL),
    ]


def span(
    span_id: int,
    parent: int | None,
    *,
    kind: str = "llm_call",
    ttft_ms: int | None = None,
    metadata: dict[str, Any] | None = None,
) -> Span:
    return Span(
        trace_id="trace_01",
        span_id=span_id,
        parent_span_id=parent,
        kind=kind,
        name=kind,
        start_ms=10 * span_id,
        duration_ms=100,
        ttft_ms=ttft_ms,
        metadata=metadata or {},
    )


def spec(**fields: Any) -> RunSpec:
    values: dict[str, Any] = {
        "kind": "run",
        "status": "completed",
        "session_id": SESSION,
        "execution_id": EXECUTION,
    }
    values.update(fields)
    return RunSpec(**values)


def project(run: RunSpec, events: Sequence[SessionEvent] = ()) -> dict[str, Any]:
    record = rr.project_run_record(run, events)
    assert_valid(RECORD, record)
    return record


def respond(
    text: str = "",
    tool_calls: list[Any] | None = None,
    *,
    execution_id: str | None = EXECUTION,
    **fields: Any,
) -> dict[str, Any]:
    raw = {"call_id": "call-42", "iteration": 2, "span_id": 8, "text": text}
    raw["tool_calls"] = [] if tool_calls is None else tool_calls
    raw.update(fields)
    payload = rr.provider_call_response(raw, execution_id=execution_id, policy=POLICY)
    assert_valid(RESPONSE, payload)
    return payload


PROMPT = {"role": "user", "visibility": None, "text": "Make the writes atomic."}
ASSISTANT_DONE = {"role": "assistant", "visibility": "public", "text": "Done."}
ASSISTANT_X = {"role": "assistant", "visibility": "public", "text": "x"}
TERMINAL_NATURAL = {
    "kind": "natural",
    "owner": "agent",
    "finalStatus": None,
    "stopReason": "completed",
    "reason": None,
}
HARN_CALL = {"id": "tc-1", "name": "run_tests", "arguments": {"target": "all"}}


@contextlib.contextmanager
def journal_at(path: Path) -> Iterator[SqliteJournal]:
    with SqliteJournal.open(path, create=True) as journal:
        yield journal


def append(
    journal: SqliteJournal,
    raw: dict[str, Any],
    *,
    event_id: int,
    execution_id: str | None = EXECUTION,
    run_id: str | None = RUN,
) -> SessionEvent:
    stored = rr.append_provider_call_response(
        journal,
        raw,
        policy=POLICY,
        event_id=event_id,
        session_id=SESSION,
        run_id=run_id,
        turn_id="turn-1",
        execution_id=execution_id,
        recorded_at_unix_ms=1_700_000_000_000 + event_id,
    )
    assert_valid(RESPONSE, stored.to_json()["payload"])
    return stored


def raw_response(
    text: str = "", tool_calls: list[Any] | None = None, **fields: Any
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "call_id": "call-42",
        "iteration": 2,
        "span_id": 8,
        "text": text,
        "tool_calls": tool_calls or [],
    }
    raw.update(fields)
    return raw


def journal_events(stored: Iterable[Mapping[str, Any]]) -> list[SessionEvent]:
    """The journal events back from the stored events of the run-record kinds
    (``journal_event_of``): the only ones a run record reads (a completion receipt is a
    session attribute); the recap kinds have no way back and are left out."""
    return [
        SessionEvent.from_json(raw)
        for event in stored
        if (raw := journal_event_of(event)) is not None
    ]


def stored_rows(path: Path, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
        return db.execute(sql, parameters).fetchall()


# ============================================================================ completion receipt


@pytest.mark.sentence("runrecord.receipt-always", "runrecord.receipt-from-attribute")
@pytest.mark.parametrize("kind", ["run", "workflow", "session"])
def test_session_backed_record_always_carries_completion_receipt(kind: str) -> None:
    """Session-backed run records always carry metadata.completion_receipt."""
    fields: dict[str, Any] = {"kind": kind}
    if kind == "workflow":
        fields["id"] = "wf-build"
    if kind == "session":
        fields["execution_id"] = None
    without = project(spec(**fields), session_opening())
    assert without["metadata"] == {"completion_receipt": None}
    receipt = {"owner": "ci", "verdict": "accepted"}
    with_receipt = project(spec(**fields), [*session_opening(), attribute(4, receipt)])
    assert with_receipt["metadata"] == {"completion_receipt": receipt}


RECEIPTS = [
    {"owner": "ci", "verdict": "rejected", "status": "failed", "schema": "ci/v3"},
    [1, "two", None, {"three": [3.5, -0.25]}],
    "accepted",
    0,
    False,
    1.5,
    {},
    [],
    "null",
    {"ünïcode": "✓", "nested": {"deep": [{"x": MAX_SAFE}]}},
]


@pytest.mark.sentence("runrecord.receipt-copied-verbatim")
@pytest.mark.parametrize("receipt", RECEIPTS, ids=[json.dumps(r)[:24] for r in RECEIPTS])
def test_receipt_copied_verbatim_without_interpretation(receipt: Any) -> None:
    """Harn copies that value without interpreting its schema."""
    record = project(spec(), [*session_opening(), attribute(4, receipt)])
    copied = record["metadata"]["completion_receipt"]
    assert json_equal(copied, receipt)
    assert json.dumps(copied, sort_keys=False) == json.dumps(receipt, sort_keys=False)
    # A copy, not a view: changing the record does not change the session.
    if isinstance(copied, dict | list):
        copied.clear()
        again = project(spec(), [*session_opening(), attribute(4, receipt)])
        assert json_equal(again["metadata"]["completion_receipt"], receipt)


@pytest.mark.sentence("runrecord.receipt-copied-verbatim")
def test_receipt_never_changes_the_terminal_status() -> None:
    """... without interpreting its schema or changing the loop's terminal status."""
    receipt = {"status": "failed", "terminal": "user_cancelled"}
    record = project(spec(status="completed"), [*session_opening(), attribute(4, receipt)])
    assert record["status"] == "completed"
    assert record["metadata"]["completion_receipt"] == receipt


@pytest.mark.sentence("runrecord.receipt-from-attribute")
def test_receipt_available_after_session_creation_is_copied() -> None:
    """... including when the receipt becomes available after the session was created."""
    opening = session_opening()
    assert project(spec(), opening)["metadata"]["completion_receipt"] is None
    late = [*opening, event(4, "other", {"note": "launcher exited"}), attribute(9, {"n": 1})]
    assert project(spec(), late)["metadata"]["completion_receipt"] == {"n": 1}
    # The latest attribute wins, by event order (id), whatever order the caller passes.
    later = [*late, attribute(12, {"n": 2})]
    assert project(spec(), later)["metadata"]["completion_receipt"] == {"n": 2}
    assert project(spec(), list(reversed(later)))["metadata"]["completion_receipt"] == {"n": 2}


@pytest.mark.sentence("runrecord.reprojection-preserves-receipt")
def test_reprojection_from_the_session_preserves_the_receipt(tmp_path: Path) -> None:
    """Re-projecting a run from its session preserves the receipt without requiring the
    launcher's stdout."""
    receipt = {"owner": "ci", "verdict": "accepted", "checks": [True, 2, "three"]}
    events = [*session_opening(), attribute(4, receipt)]
    first = project(spec(), events)
    database = tmp_path / "events.sqlite"
    with journal_at(database) as journal:
        journal.append(events)
    # A fresh reader: the journal is the only input, no process output is kept.
    with SqliteJournal.open(database) as reader:
        replayed = list(rr.read_session(reader, SESSION))
        assert replayed == journal_events(reader.iter_events(session_id=SESSION))
    assert [e.to_json() for e in replayed] == [events[-1].to_json()], "the attribute, intact"
    assert project(spec(), replayed) == first
    tape = tmp_path / "events.jsonl"
    export_tape(database, tape)
    imported = tmp_path / "imported.sqlite"
    import_tape(tape, imported)
    assert project(spec(), journal_events(JsonlTape(tape).read())) == first
    with SqliteJournal.open(imported) as again:
        assert project(spec(), journal_events(again.iter_events())) == first


@pytest.mark.sentence("runrecord.receipt-null")
@pytest.mark.parametrize(
    "attributes",
    [
        [],
        [attribute(4, None)],
        [attribute(4, {"verdict": "accepted"}), attribute(5, None)],
        [attribute(4, {"verdict": "accepted"}, name="completion_receipt_v2")],
        [attribute(4, {"verdict": "accepted"}, name="Completion_Receipt")],
    ],
    ids=["absent", "explicit-null", "null-after-value", "other-name", "name-is-exact"],
)
def test_absent_or_null_receipt_projects_json_null(attributes: list[SessionEvent]) -> None:
    """An absent or explicitly null session attribute projects as JSON null."""
    record = project(spec(), [*session_opening(), *attributes])
    assert "completion_receipt" in record["metadata"]
    assert record["metadata"]["completion_receipt"] is None
    assert rr.read_completion_receipt(record) == rr.CompletionReceipt("not_recorded")


@pytest.mark.sentence("runrecord.missing-key-historical")
def test_missing_metadata_key_reads_as_historical() -> None:
    """A missing metadata key identifies a record produced before this projection contract."""
    historical = json.loads((EXAMPLES / "run-record.record.json").read_text())
    historical["metadata"] = {}
    assert_valid(RECORD, historical)
    assert rr.read_completion_receipt(historical) == rr.CompletionReceipt("historical")
    assert rr.load_historical(historical)["metadata"] == {}
    # Not session-backed: the projection leaves the key out, as only such records may.
    sessionless = project(spec(session_id=None))
    assert sessionless["metadata"] == {}
    assert rr.read_completion_receipt(sessionless).state == "historical"
    recorded = project(spec(), [attribute(1, {"verdict": "ok"})])
    assert rr.read_completion_receipt(recorded) == rr.CompletionReceipt(
        "recorded", {"verdict": "ok"}
    )


@pytest.mark.sentence("runrecord.receipt-owner-schema")
def test_non_null_receipt_is_left_to_the_owner_schema() -> None:
    """Consumers interpret non-null receipts according to the producing owner's schema."""
    odd = {"verdict": 7, "status": None}  # no shape Harn knows of: still recorded verbatim
    record = project(spec(), [attribute(1, odd)])
    assert rr.read_completion_receipt(record) == rr.CompletionReceipt("recorded", odd)


# ============================================================================ execution evidence


@pytest.mark.sentence("runrecord.one-evidence")
def test_record_carries_one_evidence_object() -> None:
    """Each run record carries one evidence object (with the five members shown)."""
    record = project(spec(spans=[span(3, None)]))
    assert list(record) == ["id", "kind", "session_id", "status", "metadata", "evidence"]
    assert list(record["evidence"]) == [
        "schema_version",
        "execution_id",
        "trace_spans",
        "flight_recording",
        "gaps",
    ]
    assert record["evidence"]["schema_version"] == 1
    assert record["evidence"]["flight_recording"] is None
    assert record["evidence"]["gaps"] == []
    assert_valid("run-record.evidence", record["evidence"])


@pytest.mark.sentence("runrecord.execution-owner")
def test_execution_id_owns_record_spans_and_flight_artifact() -> None:
    """execution_id is the owner used by the run record, local spans, OpenTelemetry, and an
    optional flight artifact."""
    owned = {"harn.execution.id": EXECUTION}
    digest = "blake3:" + "ab" * 32
    flight = FlightRecording(
        execution_id=EXECUTION, content_hash=digest, byte_length=4096, retained_events=7
    )
    record = project(spec(spans=[span(3, None, metadata=owned)], flight_recording=flight))
    assert record["evidence"]["execution_id"] == EXECUTION
    assert record["evidence"]["trace_spans"][0]["metadata"] == owned
    assert record["evidence"]["flight_recording"] == {
        "schema_version": 1,
        "execution_id": EXECUTION,
        "format": "harn.flight.v1+json",
        "path": None,
        "content_hash": digest,
        "byte_length": 4096,
        "retained_events": 7,
        "dropped_events": 0,
        "value_policy": "omitted",
    }
    # The artifact of another execution is refused (x-sameValue on the evidence).
    stranger = FlightRecording(
        execution_id="hxe-other", content_hash=digest, byte_length=4096, retained_events=7
    )
    with pytest.raises(InvalidDocument) as caught:
        rr.project_run_record(spec(flight_recording=stranger), [])
    assert codes(caught.value) == [("$.evidence.flight_recording.execution_id", "same_value")]
    foreign = spec(spans=[span(3, None), span(4, 3, metadata={"harn.execution.id": "hxe-other"})])
    with pytest.raises(InvalidDocument) as caught:
        rr.project_run_record(foreign, [])
    assert codes(caught.value) == [
        ("$.evidence.trace_spans[1].metadata['harn.execution.id']", SPAN_EXECUTION_MISMATCH)
    ]


@pytest.mark.sentence("runrecord.gaps")
def test_gaps_name_requested_evidence_that_was_not_persisted() -> None:
    """gaps names requested evidence that Harn couldn't persist."""
    gaps = [
        EvidenceGap("flight_recording", "persist_failed", "the flight recorder ran out of disk"),
        EvidenceGap("otel_export", "export_refused", "the collector refused the batch"),
    ]
    record = project(spec(gaps=gaps))
    assert record["evidence"]["gaps"] == [
        {
            "component": "flight_recording",
            "code": "persist_failed",
            "message": "the flight recorder ran out of disk",
        },
        {
            "component": "otel_export",
            "code": "export_refused",
            "message": "the collector refused the batch",
        },
    ]


@pytest.mark.sentence("runrecord.gaps-partial")
def test_non_empty_gaps_mean_partial_evidence() -> None:
    """Consumers must treat a non-empty list as partial evidence rather than silently accepting
    the record as complete."""
    complete = project(spec())
    partial = project(spec(gaps=[EvidenceGap("otel_export", "export_refused", "collector down")]))
    assert rr.evidence_is_partial(complete) is False
    assert rr.evidence_is_partial(partial) is True
    assert rr.evidence_is_partial(partial["evidence"]) is True
    # A null execution id always comes with a gap, so such evidence is never complete.
    assert rr.evidence_is_partial(project(spec(kind="session", execution_id=None))) is True
    # Evidence that cannot show its gaps cannot vouch for completeness either.
    assert rr.evidence_is_partial({"schema_version": 1}) is True


@pytest.mark.sentence("runrecord.null-execution-id", "runrecord.execution-identity-gap")
@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (
            {"kind": "session", "execution_id": None},
            "session-only projection: no VM execution owner is recorded for this session",
        ),
        (
            {"kind": "workflow", "id": "wf-build", "execution_id": None},
            "the VM execution that owned this record was not recorded",
        ),
        (
            {"kind": "session", "execution_id": None, "execution_gap_reason": "pre-VM record"},
            "pre-VM record",
        ),
    ],
)
def test_null_execution_id_carries_execution_identity_gap(
    fields: dict[str, Any], reason: str
) -> None:
    """Historical records and session-only projections can carry execution_id: null. They include
    an execution_identity gap explaining why the VM owner cannot be recovered."""
    other = EvidenceGap("otel_export", "export_refused", "collector down")
    record = project(spec(gaps=[other], **fields))
    assert record["evidence"]["execution_id"] is None
    assert record["evidence"]["gaps"] == [
        {"component": "execution_identity", "code": "owner_not_recorded", "message": reason},
        {"component": "otel_export", "code": "export_refused", "message": "collector down"},
    ]
    # The schema holds producers to it too.
    bare = copy.deepcopy(record)
    bare["evidence"]["gaps"] = [other.to_json()]
    assert [f.code for f in VALIDATOR.validate(RECORD, bare)] == ["contains"]
    # An owner and an explanation of its absence contradict each other.
    with pytest.raises(ValueError, match="execution_identity"):
        spec(gaps=[EvidenceGap("execution_identity", "projection_invalid", "unknown")])


@pytest.mark.sentence("runrecord.execution-identity-gap", "runrecord.outside-vm-null")
def test_run_or_session_id_never_relabelled_as_execution_id(tmp_path: Path) -> None:
    """Harn does not relabel a run or session ID as an execution ID."""
    events = session_opening()
    for relabelled in (SESSION, RUN):
        with pytest.raises(InvalidDocument) as caught:
            rr.project_run_record(spec(kind="session", execution_id=relabelled), events)
        assert codes(caught.value) == [("$.evidence.execution_id", EXECUTION_ID_RELABELLED)]
    with pytest.raises(InvalidDocument) as caught:
        rr.project_run_record(spec(kind="workflow", id="wf-1", execution_id="wf-1"), events)
    assert codes(caught.value) == [("$.evidence.execution_id", EXECUTION_ID_RELABELLED)]
    # Recovering the owner from the session reads executionId headers only.
    outside = [event(1, "message", {"role": "user", "visibility": None, "text": "hi"}, run=RUN)]
    owner = rr.execution_owner(outside)
    assert owner.execution_id is None
    record = project(spec(kind="session", execution_id=owner.execution_id), outside)
    assert record["evidence"]["execution_id"] is None
    assert record["id"] == SESSION  # the session id is the record's id, not its owner
    # Events are held to it as well.
    with journal_at(tmp_path / "events.sqlite") as journal:
        for relabelled in (SESSION, RUN):
            with pytest.raises(InvalidDocument) as caught:
                append(journal, raw_response("hi"), event_id=1, execution_id=relabelled)
            assert codes(caught.value) == [("$.executionId", EXECUTION_ID_RELABELLED)]
        assert rr.next_event_id(journal, SESSION) == 1  # nothing was written


def test_a_missing_or_unknown_event_keyword_is_a_type_error(tmp_path: Path) -> None:
    """The keywords are one TypedDict; a call that misses or misspells one still fails
    as a call with a wrong keyword does, and writes nothing."""
    keywords: dict[str, Any] = {
        "policy": POLICY,
        "event_id": 1,
        "session_id": SESSION,
        "run_id": RUN,
        "turn_id": "turn-1",
        "execution_id": EXECUTION,
        "recorded_at_unix_ms": 1_700_000_000_001,
    }
    missing = {k: v for k, v in keywords.items() if k != "turn_id"}
    misspelt = {**missing, "turnid": "turn-1"}
    with journal_at(tmp_path / "events.sqlite") as journal:
        for wrong in (missing, misspelt):
            with pytest.raises(TypeError, match="turn_id"):
                rr.provider_call_response_event(raw_response("hi"), **wrong)
            with pytest.raises(TypeError, match="turn_id"):
                rr.append_provider_call_response(journal, raw_response("hi"), **wrong)
        assert rr.next_event_id(journal, SESSION) == 1
        assert rr.append_provider_call_response(journal, raw_response("hi"), **keywords).id == 1


@pytest.mark.sentence("runrecord.execution-identity-gap", "runrecord.events-carry-execution-id")
def test_execution_owner_is_recovered_from_event_headers() -> None:
    """The owner a session-only projection may use is the one its events name, if only one."""
    inside = session_opening()
    assert rr.execution_owner(inside) == rr.ExecutionOwner(EXECUTION, None)
    assert rr.execution_owner([inside[0]]) == rr.ExecutionOwner(
        None, "no event of the session was written inside a VM execution"
    )
    two = [*inside, event(9, "message", ASSISTANT_X, execution="hxe-other")]
    assert rr.execution_owner(two) == rr.ExecutionOwner(
        None, "the session's events name 2 VM executions; none owns the whole run"
    )


@pytest.mark.sentence("runrecord.plain-run-id")
def test_plain_run_uses_execution_id_as_record_id() -> None:
    """Plain harn run executions use the same execution identity for the record id."""
    record = project(spec(kind="run"), session_opening())
    assert record["id"] == EXECUTION
    assert record["evidence"]["execution_id"] == EXECUTION
    assert record["kind"] == "run"
    assert project(spec(kind="run", id=EXECUTION))["id"] == EXECUTION
    with pytest.raises(ValueError, match="record id is its execution id"):
        spec(kind="run", id=RUN)
    with pytest.raises(ValueError, match="needs one"):
        spec(kind="run", execution_id=None)


@pytest.mark.sentence("runrecord.workflow-identity")
def test_workflow_keeps_identity_and_carries_execution_id() -> None:
    """Workflow records retain their workflow identity and carry the execution owner inside
    evidence.execution_id."""
    record = project(spec(kind="workflow", id="wf-build-42"), session_opening())
    assert record["id"] == "wf-build-42"
    assert record["kind"] == "workflow"
    assert record["evidence"]["execution_id"] == EXECUTION
    with pytest.raises(ValueError, match="workflow identity"):
        spec(kind="workflow")


# ============================================================================ durable correlation


@pytest.mark.sentence("runrecord.events-carry-execution-id", "runrecord.sqlite-headers")
def test_execution_id_in_payload_and_indexed_header(tmp_path: Path) -> None:
    """SQLite event-log records store it in both the payload and the indexed headers, so readers
    can join by the typed field without parsing event bodies."""
    database = tmp_path / "events.sqlite"
    with journal_at(database) as journal:
        journal.append(session_opening())
        stored = append(journal, raw_response("Running.", [HARN_CALL]), event_id=4)
        append(journal, raw_response("Elsewhere."), event_id=5, execution_id="hxe-other")
        assert stored.execution_id == EXECUTION
        assert stored.to_json()["payload"]["execution_id"] == EXECUTION
        rows = stored_rows(
            database,
            "SELECT execution_id, topic, kind, event FROM session_events "
            "WHERE session_id = ? AND event_id = ?",
            [SESSION, 4],
        )
        assert rows[0][:3] == (EXECUTION, LLM_TOPIC, "provider_call_response")
        body = json.loads(rows[0][3])
        assert body["payload"]["execution_id"] == EXECUTION
        assert (body["headers"]["execution_id"], body["headers"]["iteration"]) == (EXECUTION, "2")
        # The join by the indexed column selects the execution's events of every kind.
        found = journal.read_by_execution_id(EXECUTION)
        assert [(e["session_id"], e["event_id"]) for e in found] == [(SESSION, 2), (SESSION, 4)]
        assert rr.read_by_execution_id(journal, EXECUTION, topic=LLM_TOPIC) == (stored,)
    plan = stored_rows(
        database,
        "EXPLAIN QUERY PLAN SELECT seq FROM session_events WHERE execution_id IS ? ORDER BY seq",
        [EXECUTION],
    )
    assert any("session_events_execution_id" in row[-1] for row in plan), plan


@pytest.mark.sentence("runrecord.tape-envelope")
def test_execution_id_on_every_tape_envelope(tmp_path: Path) -> None:
    """JSONL tapes store it on each event envelope."""
    events = [
        *session_opening(),
        attribute(4, {"verdict": "ok"}),
        event(5, "tool_call", {"callId": "c1", "toolName": "read", "input": {}}, iteration=1,
              execution=EXECUTION),
    ]  # fmt: skip
    with journal_at(tmp_path / "events.sqlite") as journal:
        journal.append(events)
        events.append(append(journal, raw_response("Now.", [HARN_CALL]), event_id=6))
        events.append(append(journal, raw_response("Out."), event_id=7, execution_id=None))
    tape = tmp_path / "run.jsonl"
    tape.write_bytes(b"".join(rr.tape_line(e) for e in events))
    lines = tape.read_bytes().splitlines()
    assert len(lines) == len(events)
    for line, source in zip(lines, events, strict=True):
        entry = json.loads(line)
        assert_valid(TAPE, entry)
        assert "execution_id" in entry
        assert entry["execution_id"] == source.execution_id
        assert entry["event_id"] == source.id
        assert entry["emitted_at_unix_ms"] == source.recorded_at_unix_ms
        if entry["kind"] == "provider_call_response":
            assert entry["payload"]["execution_id"] == entry["execution_id"]
    assert [json.loads(line)["execution_id"] for line in lines] == [
        None, EXECUTION, None, None, EXECUTION, EXECUTION, None,
    ]  # fmt: skip


@pytest.mark.sentence("runrecord.tape-envelope")
def test_tape_envelope_and_payload_cannot_disagree() -> None:
    """The envelope's execution_id and the payload's are one value (x-sameValue)."""
    payload = respond("hi")
    drifted = SessionEvent(
        id=1,
        session_id=SESSION,
        run_id=RUN,
        turn_id=None,
        iteration=2,
        execution_id="hxe-other",
        topic=LLM_TOPIC,
        kind="provider_call_response",
        recorded_at_unix_ms=1,
        payload=payload,
    )
    with pytest.raises(InvalidDocument) as caught:
        rr.tape_entry(drifted)
    assert codes(caught.value) == [("$.payload.execution_id", "same_value")]


@pytest.mark.sentence("runrecord.outside-vm-null")
def test_execution_id_null_outside_vm_scope(tmp_path: Path) -> None:
    """Events emitted outside a VM scope use null; Harn does not substitute a session ID."""
    payload = respond("No VM here.", execution_id=None)
    assert payload["execution_id"] is None
    database = tmp_path / "events.sqlite"
    with journal_at(database) as journal:
        stored = append(journal, raw_response("No VM here."), event_id=1, execution_id=None)
        assert stored.execution_id is None
        entry = rr.tape_entry(stored)
        assert entry["execution_id"] is None
        assert entry["session_id"] == SESSION
        assert rr.read_by_execution_id(journal, None) == (stored,)
        assert rr.read_by_execution_id(journal, SESSION) == ()
    assert stored_rows(database, "SELECT execution_id FROM session_events") == [(None,)]


@pytest.mark.sentence("runrecord.timeline-event-order")
def test_timeline_reads_the_topic_in_event_order(tmp_path: Path) -> None:
    """Consumers that need the whole timeline should read the event-log topic in event order."""
    with journal_at(tmp_path / "events.sqlite") as journal:
        for event_id, iteration in ((1, 0), (2, 1), (3, 2)):
            append(
                journal, raw_response(f"turn {iteration}", iteration=iteration), event_id=event_id
            )
        journal.append([event(4, "message", ASSISTANT_X, execution=EXECUTION)])
        append(journal, raw_response("turn 3", iteration=3), event_id=5)
        timeline = rr.read_by_execution_id(journal, EXECUTION, topic=LLM_TOPIC)
    assert [(e.id, e.iteration) for e in timeline] == [(1, 0), (2, 1), (3, 2), (5, 3)]
    assert [e.to_json()["payload"]["text"] for e in timeline] == [
        "turn 0", "turn 1", "turn 2", "turn 3",
    ]  # fmt: skip


# ============================================================================ span tree


@pytest.mark.sentence("runrecord.workflow-spans")
def test_workflow_records_expose_completed_spans_in_evidence() -> None:
    """Workflow run records expose completed spans in evidence.trace_spans."""
    spans = [span(3, None, kind="workflow"), span(8, 3, ttft_ms=125), span(9, 3)]
    record = project(spec(kind="workflow", id="wf-1", spans=spans))
    assert record["evidence"]["trace_spans"] == [s.to_json() for s in spans]
    assert [s["span_id"] for s in record["evidence"]["trace_spans"]] == [3, 8, 9]


@pytest.mark.sentence("runrecord.span-tree-join")
def test_parent_span_id_joins_the_tree() -> None:
    """Each span has a stable span_id and optional parent_span_id; joining those fields
    produces the authoritative tree."""
    spans = [span(8, 3), span(3, None), span(9, 3), span(12, 8), span(20, None), span(21, 20)]
    tree = rr.build_tree(spans)
    assert tree.roots == (3, 20)
    assert dict(tree.children) == {8: (12,), 3: (8, 9), 9: (), 12: (), 20: (21,), 21: ()}
    assert [(depth, s.span_id) for depth, s in tree.walk()] == [
        (0, 3), (1, 8), (2, 12), (1, 9), (0, 20), (1, 21),
    ]  # fmt: skip
    assert tree.parent_of(12) == 8
    assert len(tree) == 6


@pytest.mark.sentence("runrecord.root-null-ttft-omitted")
def test_root_spans_have_null_parent() -> None:
    """Root spans set parent_span_id to null."""
    record = project(spec(spans=[span(3, None), span(8, 3)]))
    root, child = record["evidence"]["trace_spans"]
    assert "parent_span_id" in root
    assert root["parent_span_id"] is None
    assert child["parent_span_id"] == 3
    assert rr.build_tree([span(3, None), span(8, 3)]).roots == (3,)
    omitted = span(3, None).to_json()
    del omitted["parent_span_id"]
    assert [f.code for f in VALIDATOR.validate(SPAN, omitted)] == ["required"]


@pytest.mark.sentence("runrecord.ttft")
def test_ttft_present_when_first_token_observed() -> None:
    """LLM spans also expose ttft_ms when Harn observed a first response token."""
    assert span(8, None, ttft_ms=125).to_json()["ttft_ms"] == 125
    assert span(8, None, ttft_ms=0).to_json()["ttft_ms"] == 0  # observed within the first ms
    example = json.loads((EXAMPLES / "run-record.span.json").read_text())
    assert Span.from_json(example).to_json() == example


@pytest.mark.sentence("runrecord.root-null-ttft-omitted")
def test_ttft_omitted_without_first_token() -> None:
    """spans without an observed first token omit ttft_ms."""
    value = span(8, None).to_json()
    assert "ttft_ms" not in value
    assert_valid(SPAN, value)
    assert [f.code for f in VALIDATOR.validate(SPAN, {**value, "ttft_ms": None})] == ["wrong_type"]
    record = project(spec(spans=[span(3, None), span(8, 3)]))
    assert all("ttft_ms" not in s for s in record["evidence"]["trace_spans"])


@pytest.mark.sentence("runrecord.monotonic-durations")
def test_span_times_are_unsigned_milliseconds() -> None:
    """start_ms is relative to the run's tracing epoch. duration_ms and ttft_ms are monotonic
    durations (unsigned safe integers)."""
    negative = Span(
        trace_id="t", span_id=1, parent_span_id=None, kind="k", name="n",
        start_ms=0, duration_ms=-1, metadata={},
    )  # fmt: skip
    with pytest.raises(InvalidDocument) as caught:
        rr.project_run_record(spec(spans=[negative]), [])
    assert codes(caught.value) == [("$.evidence.trace_spans[0].duration_ms", "minimum")]


@pytest.mark.sentence(
    "runrecord.legacy-parent-id",
    "runrecord.historical-parent-id-loads",
    "runrecord.new-records-parent-span-id",
)
def test_historical_parent_id_loads_and_writes_parent_span_id() -> None:
    """Run records written before this schema used parent_id. Harn still accepts that name when
    loading historical records, while newly persisted records use parent_span_id."""
    current = json.loads((EXAMPLES / "run-record.record.json").read_text())
    historical = copy.deepcopy(current)
    for value in historical["evidence"]["trace_spans"]:
        value["parent_id"] = value.pop("parent_span_id")
    assert [(f.path, f.code) for f in VALIDATOR.validate(RECORD, historical)] == [
        ("$.evidence.trace_spans[0].parent_id", "unknown_field"),
        ("$.evidence.trace_spans[0].parent_span_id", "required"),
        ("$.evidence.trace_spans[1].parent_id", "unknown_field"),
        ("$.evidence.trace_spans[1].parent_span_id", "required"),
    ]
    loaded = rr.load_historical(json.dumps(historical))
    assert loaded == current
    assert_valid(RECORD, loaded)
    spans = [Span.from_json(value) for value in loaded["evidence"]["trace_spans"]]
    assert [(s.span_id, s.parent_span_id) for s in spans] == [(3, None), (8, 3)]
    both = copy.deepcopy(historical)
    both["evidence"]["trace_spans"][1]["parent_span_id"] = 3
    with pytest.raises(InvalidDocument) as caught:
        rr.load_historical(both)
    assert ("$.evidence.trace_spans[1].parent_id", "alias_conflict") in codes(caught.value)


def evidence_codes(spans: list[Span]) -> list[tuple[str, str]]:
    """The validator's span-tree findings for the same spans, as (path, code)."""
    evidence = {
        "schema_version": 1,
        "execution_id": EXECUTION,
        "trace_spans": [s.to_json() for s in spans],
        "flight_recording": None,
        "gaps": [],
    }
    tree_codes = {SPAN_ID_DUPLICATE, SPAN_CYCLE}
    return sorted(
        (f.path.replace("$.trace_spans", "$.evidence.trace_spans"), f.code)
        for f in VALIDATOR.validate("run-record.evidence", evidence)
        if f.code in tree_codes
    )


@pytest.mark.sentence("runrecord.span-tree-join")
def test_span_cycle_is_rejected() -> None:
    """Joining parent links must give a tree: a cycle has no root (x-spanTree span_cycle)."""
    spans = [span(1, None), span(2, 4), span(3, 2), span(4, 3), span(5, 5)]
    with pytest.raises(InvalidDocument) as caught:
        rr.project_run_record(spec(spans=spans), [])
    expected = [
        ("$.evidence.trace_spans[1].parent_span_id", SPAN_CYCLE),
        ("$.evidence.trace_spans[4].parent_span_id", SPAN_CYCLE),
    ]
    assert codes(caught.value) == expected
    assert evidence_codes(spans) == expected
    messages = sorted(f.message for f in caught.value.findings)
    assert messages == ["spans 2 -> 4 -> 3 -> 2 form a cycle", "spans 5 -> 5 form a cycle"]


@pytest.mark.sentence("runrecord.span-tree-join")
def test_duplicate_spans_are_rejected() -> None:
    """A stable span_id is unique within a record."""
    spans = [span(1, None), span(2, 1), span(2, None), span(3, 99)]
    with pytest.raises(InvalidDocument) as caught:
        rr.build_tree(spans, ("evidence", "trace_spans"))
    expected = [("$.evidence.trace_spans[2].span_id", SPAN_ID_DUPLICATE)]
    assert codes(caught.value) == expected
    assert evidence_codes(spans) == expected
    with pytest.raises(InvalidDocument) as again:
        rr.build_tree(spans)
    assert [f.path for f in again.value.findings] == ["$[2].span_id"]


def test_a_span_under_an_open_parent_heads_its_own_subtree() -> None:
    """Seed 003: evidence exposes *completed* spans, and its own example shows span 8
    under parent 3 with no span 3 in the list: a parent may still be open."""
    spans = [span(8, 3), span(9, 8), span(1, None)]
    tree = rr.build_tree(spans)
    assert tree.roots == (8, 1)
    assert tree.children[8] == (9,)
    assert [(depth, s.span_id) for depth, s in tree.walk()] == [(0, 8), (1, 9), (0, 1)]
    assert evidence_codes(spans) == []


# ========================================================================= per-turn parsed output


@pytest.mark.sentence("runrecord.provider-call-response-topic")
def test_every_response_is_a_provider_call_response_event_on_llm_topic(tmp_path: Path) -> None:
    """Every model response is appended as a provider_call_response event on the
    agent.transcript.llm topic."""
    database = tmp_path / "events.sqlite"
    with journal_at(database) as journal:
        stored = append(journal, raw_response("Running the tests now.", [HARN_CALL]), event_id=1)
    assert (stored.kind, stored.topic, stored.iteration) == ("provider_call_response", LLM_TOPIC, 2)
    assert stored_rows(database, "SELECT kind, topic FROM session_events") == [
        ("provider_call_response", LLM_TOPIC)
    ]


@pytest.mark.sentence("runrecord.correlation")
def test_correlation_fields_are_copied() -> None:
    """Correlate a response ... by call_id; iteration identifies its agent-loop turn and span_id
    links it to the run-record span tree."""
    payload = respond("ok", call_id="call-9", iteration=7, span_id=41)
    assert (payload["call_id"], payload["iteration"], payload["span_id"]) == ("call-9", 7, 41)
    assert respond("ok", span_id=None)["span_id"] is None


@pytest.mark.sentence("runrecord.parsed-ref-when-identical")
def test_reference_only_when_non_empty_and_identical() -> None:
    """When a non-empty view is structurally identical to the provider-native tool_calls array,
    the response stores parsed_tool_calls_ref: "tool_calls" instead of serializing the array
    twice."""
    second = {"id": "tc-2", "name": "read_file", "arguments": {"path": "a.py", "n": [1, 2.5]}}
    payload = respond("Running.", [HARN_CALL, second])
    assert payload["parsed_tool_calls_ref"] == "tool_calls"
    assert "parsed_tool_calls" not in payload
    assert payload["tool_calls"] == [HARN_CALL, second]
    assert rr.resolve_parsed_tool_calls(payload) == [HARN_CALL, second]
    # true is not 1: JSON equality, not Python's.
    flagged = {"id": "tc-3", "name": "set", "arguments": {"on": True}}
    assert "parsed_tool_calls_ref" in respond("", [flagged])
    # The writer's rule is the validator's rule (x-preferReference).
    inlined = {key: value for key, value in payload.items() if key != "parsed_tool_calls_ref"}
    inlined["parsed_tool_calls"] = [HARN_CALL, second]
    assert [f.code for f in VALIDATOR.validate(RESPONSE, inlined)] == ["prefer_reference"]


@pytest.mark.sentence("runrecord.parsed-inline")
def test_empty_parse_stays_inline() -> None:
    """Empty ... views stay in the smaller inline parsed_tool_calls representation."""
    payload = respond("No tools this turn.")
    assert payload["parsed_tool_calls"] == []
    assert "parsed_tool_calls_ref" not in payload
    assert rr.resolve_parsed_tool_calls(payload) == []
    referenced = {**payload, "parsed_tool_calls_ref": "tool_calls"}
    del referenced["parsed_tool_calls"]
    assert [f.code for f in VALIDATOR.validate(RESPONSE, referenced)] == ["min_items"]


OPENAI_CALL = {
    "id": "call_abc",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
}


@pytest.mark.sentence("runrecord.parsed-tool-calls", "runrecord.parsed-inline")
def test_distinct_parse_stays_inline() -> None:
    """Empty and distinct views stay in the smaller inline parsed_tool_calls representation."""
    payload = respond("", [OPENAI_CALL])
    assert payload["tool_calls"] == [OPENAI_CALL]
    assert payload["parsed_tool_calls"] == [
        {"id": "call_abc", "name": "read_file", "arguments": {"path": "a.py"}}
    ]
    assert "parsed_tool_calls_ref" not in payload
    # Harn's own shape without an id parses to id null: distinct, so inline.
    anonymous = {"name": "read_file", "arguments": {}}
    assert respond("", [anonymous])["parsed_tool_calls"] == [
        {"id": None, "name": "read_file", "arguments": {}}
    ]


@pytest.mark.sentence("runrecord.parsed-tool-calls")
@pytest.mark.parametrize(
    ("native", "parsed"),
    [
        (OPENAI_CALL, {"id": "call_abc", "name": "read_file", "arguments": {"path": "a.py"}}),
        (
            {"type": "function_call", "call_id": "fc_1", "name": "ls", "arguments": ""},
            {"id": "fc_1", "name": "ls", "arguments": {}},
        ),
        (
            {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"q": "x"}},
            {"id": "toolu_1", "name": "grep", "arguments": {"q": "x"}},
        ),
        (
            {"functionCall": {"name": "search", "args": {"q": "y"}}},
            {"id": None, "name": "search", "arguments": {"q": "y"}},
        ),
        (
            {"id": "tc-1", "name": "run", "arguments": '{"all": true}'},
            {"id": "tc-1", "name": "run", "arguments": {"all": True}},
        ),
    ],
    ids=["openai-chat", "openai-responses", "anthropic", "gemini", "harn-json-text"],
)
def test_provider_native_calls_are_normalized(native: dict[str, Any], parsed: Any) -> None:
    """Harn's normalized parse: every provider-native shape becomes {id, name, arguments}."""
    assert rr.parse_tool_calls("", [native]) == ([parsed], ())
    assert respond("", [native])["parsed_tool_calls"] == [parsed]


@pytest.mark.sentence("runrecord.parsed-inline", "runrecord.tool-calls-empty-inline")
def test_text_protocol_and_legacy_form_stay_inline() -> None:
    """... including calls parsed from Harn's text tool protocol and its legacy name({...})
    form."""
    text = (
        "I will look first.\n"
        '<tool_call>{"id": "t1", "name": "read_file", "arguments": {"path": "a.py"}}</tool_call>\n'
        'then:\n  grep({"pattern": "TODO", "max": 3})\n'
        "<tool_call>\n"
        '{"name": "ls"}\n'
        "</tool_call>"
    )
    payload = respond(text, [HARN_CALL])
    assert "parsed_tool_calls_ref" not in payload
    assert payload["parsed_tool_calls"] == [
        HARN_CALL,
        {"id": "t1", "name": "read_file", "arguments": {"path": "a.py"}},
        {"id": None, "name": "grep", "arguments": {"pattern": "TODO", "max": 3}},
        {"id": None, "name": "ls", "arguments": {}},
    ]
    # Even a text call identical to a native one is not the native array.
    echoed = '<tool_call>{"id": "tc-1", "name": "run_tests", "arguments": {"target": "all"}}' + (
        "</tool_call>"
    )
    only_text = respond(echoed, [])
    assert only_text["parsed_tool_calls"] == [HARN_CALL]
    assert only_text["tool_calls"] == []


@pytest.mark.sentence("runrecord.tool-calls-native", "runrecord.tool-calls-empty-inline")
def test_tool_calls_can_be_empty_with_inline_text_protocol_calls() -> None:
    """tool_calls: the provider-native receipt only. It can be empty even when an inline
    parsed_tool_calls projection contains text-protocol calls."""
    payload = respond('Reading.\nread_file({"path": "src/store.rs"})\n')
    assert payload["tool_calls"] == []
    assert payload["parsed_tool_calls"] == [
        {"id": None, "name": "read_file", "arguments": {"path": "src/store.rs"}}
    ]


@pytest.mark.sentence("runrecord.absence-historical")
def test_absence_without_reference_is_a_historical_row() -> None:
    """absence without a reference is a historical/partial row, not an alias."""
    historical = {"call_id": "c", "tool_calls": [HARN_CALL], "text": ""}
    assert rr.resolve_parsed_tool_calls(historical) is None


@pytest.mark.sentence("runrecord.parsed-tool-calls")
def test_calls_that_do_not_parse_are_reported_and_left_out() -> None:
    """Malformed model output never fails the turn: the call is left out, with a warning."""
    text = (
        "<tool_call>{not json}</tool_call>\n"
        '<tool_call>{"name": "x", "extra": 1}</tool_call>\n'
        'broken({"a": 1}, 2)\n'
        "<tool_call>never closed"
    )
    parsed = rr.parse_provider_response(
        raw_response(text, [{"arguments": {}}, {"name": "x", "arguments": "[1]"}]),
        execution_id=None,
        policy=POLICY,
    )
    assert parsed.payload["parsed_tool_calls"] == []
    assert_valid(RESPONSE, parsed.payload)
    assert [(f.path, f.code, f.level) for f in parsed.findings] == [
        ("$.tool_calls[0]", TOOL_CALL_UNPARSED, "warning"),
        ("$.tool_calls[1]", TOOL_CALL_UNPARSED, "warning"),
        ("$.text", TOOL_CALL_UNPARSED, "warning"),
        ("$.text", TOOL_CALL_UNPARSED, "warning"),
        ("$.text", TOOL_CALL_UNPARSED, "warning"),
        ("$.text", TOOL_CALL_UNPARSED, "warning"),
    ]
    assert [f.message for f in parsed.findings][2:] == [
        "the <tool_call> block at line 1 is not a tool call: it is not JSON (json_syntax)",
        "the <tool_call> block at line 2 is not a tool call: it has members other than id, "
        "name and arguments (1)",
        "the <tool_call> opened at line 4 is never closed",
        "line 3 looks like a legacy tool call but the argument object is not followed by `)` "
        "and the end of the line",
    ]


@pytest.mark.sentence("runrecord.loop-state-complete", "runrecord.loop-state-primitives")
def test_loop_state_decoding_primitives() -> None:
    """Booleans, numbers, null, and nil become JSON primitives; other values remain strings."""
    text = (
        "Plan updated.\n"
        "## LOOP_STATE\n"
        "done: false\n"
        "ready: true\n"
        "step: 3\n"
        "ratio: -0.25\n"
        "big: 1e3\n"
        "huge: 9007199254740993\n"
        "blocked_on: null\n"
        "owner: nil\n"
        "next: read src/store.rs: then test\n"
        "True_ish: True\n"
        'quoted: "false"\n'
        "padded:    42   \n"
        "empty:\n"
        "\n"
        "step: 4\n"
        "## END_LOOP_STATE\n"
    )
    payload = respond(text)
    assert payload["loop_state"] == {
        "done": False,
        "ready": True,
        "step": 4,
        "ratio": -0.25,
        "big": 1000.0,
        "huge": "9007199254740993",
        "blocked_on": None,
        "owner": None,
        "next": "read src/store.rs: then test",
        "True_ish": "True",
        "quoted": '"false"',
        "padded": 42,
        "empty": "",
    }
    assert type(payload["loop_state"]["step"]) is int
    assert type(payload["loop_state"]["done"]) is bool
    assert rr.decode_loop_state(text) == (payload["loop_state"], ())


@pytest.mark.sentence("runrecord.loop-state-null")
@pytest.mark.parametrize(
    ("text", "messages"),
    [
        ("No loop state at all.", []),
        (
            "## LOOP_STATE\ndone: false\n",
            ["the ## LOOP_STATE block opened at line 1 never ends"],
        ),
        (
            "done: false\n## END_LOOP_STATE",
            ["line 2 ends a ## LOOP_STATE block that was never opened"],
        ),
        (
            "## LOOP_STATE:\ndone: false\n## END_LOOP_STATE.",
            [],
        ),
    ],
    ids=["none", "unterminated", "end-only", "misspelled-markers"],
)
def test_loop_state_null_without_complete_block(text: str, messages: list[str]) -> None:
    """The field is null when no complete block exists."""
    parsed = rr.parse_provider_response(raw_response(text), execution_id=None, policy=POLICY)
    assert parsed.payload["loop_state"] is None
    assert_valid(RESPONSE, parsed.payload)
    assert [(f.code, f.level) for f in parsed.findings] == [
        (LOOP_STATE_MALFORMED, "warning") for _ in messages
    ]
    assert [f.message for f in parsed.findings] == messages


@pytest.mark.sentence("runrecord.loop-state-complete")
def test_last_complete_loop_state_block_wins() -> None:
    """Several blocks: the last complete one is the state; a trailing open one is reported."""
    text = (
        "## LOOP_STATE\nstep: 1\n## END_LOOP_STATE\n"
        "## LOOP_STATE\nstep: 2\nbad line\n## END_LOOP_STATE\n"
        "## LOOP_STATE\nstep: 3\n"
    )
    state, findings = rr.decode_loop_state(text)
    assert state == {"step": 2}
    assert [f.message for f in findings] == [
        "the ## LOOP_STATE block opened at line 8 never ends",
        "line 6 of the loop-state block is not `key: value`; it is skipped",
    ]


@pytest.mark.sentence("runrecord.parsed-tool-calls", "runrecord.loop-state-complete")
def test_calls_inside_loop_state_are_not_calls() -> None:
    """A loop-state block holds state, not calls: a name({...}) line there is not parsed."""
    text = "## LOOP_STATE\nnext: read_file\nread_file({})\n## END_LOOP_STATE"
    parsed = rr.parse_provider_response(raw_response(text), execution_id=None, policy=POLICY)
    assert parsed.payload["parsed_tool_calls"] == []
    assert parsed.payload["loop_state"] == {"next": "read_file"}
    assert [f.code for f in parsed.findings] == [LOOP_STATE_MALFORMED]


def secret_spellings() -> dict[str, set[str]]:
    """Each canary secret as stored text may spell it: raw, and JSON-escaped once or twice."""
    spellings: dict[str, set[str]] = {}
    for kind, secret in canary_secrets().items():
        once = json.dumps(secret)[1:-1]
        spellings[kind] = {secret, once, json.dumps(once)[1:-1]}
    return spellings


def leaked(data: str) -> list[str]:
    return sorted(
        kind for kind, forms in secret_spellings().items() if any(f in data for f in forms)
    )


def canary_response() -> dict[str, Any]:
    """A response with every canary in every place: prose, calls of each kind, loop state."""
    found = canaries()
    text = "\n".join(
        [
            "Here is what I found:",
            *found.values(),
            "<tool_call>" + json.dumps({"name": "store", "arguments": found}) + "</tool_call>",
            "remember(" + json.dumps({"note": found["aws_access_key"]}) + ")",
            "## LOOP_STATE",
            *(f"{kind}: {canary}" for kind, canary in found.items() if "\n" not in canary),
            "done: false",
            "## END_LOOP_STATE",
        ]
    )
    native = [
        {"id": "tc-1", "name": "store", "arguments": dict(found)},
        {"id": "c2", "type": "function", "function": {"name": "f", "arguments": json.dumps(found)}},
    ]
    return raw_response(text, native)


@pytest.mark.sentence("runrecord.redaction")
@pytest.mark.parametrize("value", [12345678901, True, None, ["a", "b"], {"v": "hunter2-hunter2"}])
def test_a_sensitive_keys_value_of_any_type_is_replaced_whole(value: Any) -> None:
    """docs/runrecord.md 3.5 step 1: as Harn's redact_json, whatever the value's type; a
    string it held (eight characters or more) leaves the text too."""
    call = {"name": "w", "arguments": {"db_password": value, "note": "kept"}}
    text = f"<tool_call>{json.dumps(call)}</tool_call>"
    payload = rr.provider_call_response(
        raw_response(text, [dict(call, id="n1")]), execution_id=None, policy=POLICY
    )
    parse = rr.resolve_parsed_tool_calls(payload)
    assert parse is not None
    for stored in (*payload["tool_calls"], *parse):
        assert stored["arguments"] == {"db_password": "[redacted]", "note": "kept"}
    assert "hunter2-hunter2" not in payload["text"]


@pytest.mark.sentence("runrecord.redaction")
def test_the_two_text_views_fail_closed_by_their_own_rules() -> None:
    """docs/runrecord.md 3.5 step 2: a detection wholly inside a JSON key keeps the value; in a
    LOOP_STATE line it replaces the value, LEN the value's UTF-8 length, numbers and booleans
    becoming the placeholder string; a short value under a sensitive key stays in the text."""
    from session_contracts.redaction.vectors import SAMPLE_TOKEN as token

    state = f"## LOOP_STATE\n{token}: h\u00e9llo w\u00f6rld\n{token}ab: 1\n{token}abcd: true\n"
    text = state + '## END_LOOP_STATE\n<tool_call>{"name": "n", "arguments": {"api_key": "abc"}}'
    native = [{"id": "n1", "name": "n", "arguments": {token: "hi"}}]
    payload = rr.provider_call_response(
        raw_response(text + "</tool_call>", native), execution_id=None, policy=POLICY
    )
    assert payload["tool_calls"][0]["arguments"] == {"<redacted:github_token:40>": "hi"}
    assert payload["loop_state"] == {
        "<redacted:github_token:40>": "<redacted:github_token:13>",
        "<redacted:github_token:42>": "<redacted:github_token:1>",
        "<redacted:github_token:44>": "<redacted:github_token:4>",
    }
    assert '"api_key": "abc"' in payload["text"]


@pytest.mark.sentence("runrecord.redaction")
def test_redaction_before_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These projections are redacted by the same transcript policy as text before they reach
    SQLite."""
    raw = canary_response()
    assert leaked(json.dumps(raw)) == sorted(canary_secrets())  # the input holds them all
    written: list[SessionEvent] = []
    real_append = SqliteJournal.append

    def spy(self: SqliteJournal, events: Any) -> int:
        batch = list(events)
        written.extend(batch)
        return real_append(self, batch)

    monkeypatch.setattr(SqliteJournal, "append", spy)
    database = tmp_path / "events.sqlite"
    with journal_at(database) as journal:
        stored = append(journal, raw, event_id=1)
    # What was handed to SQLite was already redacted...
    assert [leaked(json.dumps(e.to_json(), ensure_ascii=False)) for e in written] == [[]]
    payload = stored.to_json()["payload"]
    assert scan_value(payload, POLICY) == []
    # ... every projection was redacted, not only the text (Harn's placeholders: the
    # pattern and the secret's UTF-8 length; a sensitive key's whole value) ...
    secrets = canary_secrets()

    def placeholder(kind: str) -> str:
        return f"<redacted:{kind}:{len(secrets[kind].encode())}>"

    assert payload["loop_state"]["done"] is False
    assert payload["loop_state"]["github_token"] == "[redacted]"  # a sensitive key
    assert payload["loop_state"]["stripe_key"] == placeholder("stripe_key")
    assert payload["tool_calls"][0]["arguments"]["jwt"] == placeholder("jwt")
    assert payload["parsed_tool_calls"][1]["arguments"]["stripe_key"] == placeholder("stripe_key")
    assert placeholder("openai_key") in payload["tool_calls"][1]["function"]["arguments"]
    # ... and nothing of any canary is in the database files.
    for path in tmp_path.iterdir():
        assert leaked(path.read_bytes().decode("utf-8", "replace")) == [], path.name


@pytest.mark.sentence(
    "runrecord.one-evidence",
    "runrecord.plain-run-id",
    "runrecord.tape-envelope",
    "runrecord.parsed-ref-when-identical",
    "runrecord.loop-state-complete",
)
def test_bundled_examples_are_reproduced() -> None:
    """The oracle reproduces the bundled record, span, payload and tape-entry examples."""
    record = json.loads((EXAMPLES / "run-record.record.json").read_text())
    spans = [Span.from_json(value) for value in record["evidence"]["trace_spans"]]
    receipt = attribute(5, record["metadata"]["completion_receipt"])
    assert project(spec(execution_id=EXECUTION, spans=spans), [receipt]) == record
    payload = json.loads((EXAMPLES / "run-record.provider-call-response.json").read_text())
    raw = {key: payload[key] for key in ("call_id", "iteration", "span_id", "text", "tool_calls")}
    assert respond(execution_id=EXECUTION, **raw) == payload
    entry = json.loads((EXAMPLES / "run-record.tape-entry.json").read_text())
    stored = event(
        17,
        "provider_call_response",
        payload,
        session="sess-01",
        iteration=2,
        execution=EXECUTION,
        topic=LLM_TOPIC,
    )
    stored = SessionEvent.from_json({**stored.to_json(), "recordedAtUnixMs": 1700000000500})
    assert rr.tape_entry(stored) == entry
    line = json.loads((EXAMPLES / "run-record.tape-record.json").read_text())
    assert rr.tape_record(stored) == line
    assert rr.tape_record_line(stored) == canonical_bytes(line) + b"\n"


def test_file_event_log_line_keeps_the_owner_in_its_headers() -> None:
    """Seed 003: "Events emitted outside a VM scope use null; Harn does not substitute a
    session ID."  Harn's file-backend line (event_log/file.rs FileRecord) holds string
    headers only: inside a VM scope headers.execution_id is the owner, outside there is none
    (agent_events/sinks.rs EventLogSink), and the session id never stands in for it."""
    payload = respond(execution_id=None, call_id="call-9", iteration=1, span_id=None, text="ok")
    outside = event(4, "provider_call_response", payload, iteration=1, topic=LLM_TOPIC)
    record = rr.tape_record(outside)
    assert record["event"]["headers"] == {"session_id": outside.session_id}
    assert record["event"]["payload"]["execution_id"] is None
    assert record["id"] == 4
    assert record["event"]["occurred_at_ms"] == outside.recorded_at_unix_ms
    inside = event(5, "message", ASSISTANT_X, execution=EXECUTION)
    assert rr.tape_record(inside)["event"]["headers"]["execution_id"] == EXECUTION


# ============================================================================ properties


@st.composite
def span_forests(draw: st.DrawFn) -> list[Span]:
    """A random forest: each span's parent comes earlier in a hidden order, ids are random."""
    size = draw(st.integers(0, 40))
    ids = draw(st.lists(st.integers(0, MAX_SAFE), min_size=size, max_size=size, unique=True))
    parents: list[int | None] = [
        None if i == 0 else draw(st.none() | st.integers(0, i - 1)) for i in range(size)
    ]
    parent_ids = [None if parent is None else ids[parent] for parent in parents]
    spans = [
        Span(
            trace_id="trace_p",
            span_id=ids[i],
            parent_span_id=parent_ids[i],
            kind=draw(st.sampled_from(["llm_call", "tool_call", "workflow"])),
            name="n",
            start_ms=draw(st.integers(0, MAX_SAFE)),
            duration_ms=draw(st.integers(0, 10**6)),
            ttft_ms=draw(st.none() | st.integers(0, 10**6)),
            metadata={"harn.execution.id": EXECUTION} if draw(st.booleans()) else {},
        )
        for i in range(size)
    ]
    return draw(st.permutations(spans))


@pytest.mark.sentence("runrecord.span-tree-join", "runrecord.root-null-ttft-omitted")
@given(span_forests())
def test_random_span_forests_build_valid_trees(spans: list[Span]) -> None:
    tree = rr.build_tree(spans)
    walked = list(tree.walk())
    assert len(walked) == len(tree) == len(spans)
    seen: set[int] = set()
    for depth, each in walked:
        assert (depth == 0) == (each.parent_span_id is None)
        assert each.parent_span_id is None or each.parent_span_id in seen
        seen.add(each.span_id)
    assert tree.roots == tuple(s.span_id for s in spans if s.parent_span_id is None)
    record = project(spec(kind="workflow", id="wf-p", spans=spans))
    assert [s["span_id"] for s in record["evidence"]["trace_spans"]] == [s.span_id for s in spans]
    for value, source in zip(record["evidence"]["trace_spans"], spans, strict=True):
        assert ("ttft_ms" in value) == (source.ttft_ms is not None)
        assert_valid(SPAN, value)


@pytest.mark.sentence("runrecord.span-tree-join")
@given(
    st.lists(st.tuples(st.integers(0, 6), st.none() | st.integers(0, 7)), min_size=0, max_size=9)
)
def test_span_checks_agree_with_the_validator(links: list[tuple[int, int | None]]) -> None:
    spans = [span(span_id, parent) for span_id, parent in links]
    found = sorted(
        (f.path, f.code) for f in rr.span_tree_findings(spans, ("evidence", "trace_spans"))
    )
    assert found == evidence_codes(spans)


_SAFE_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE, MAX_SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _SAFE_TEXT
)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_SAFE_TEXT, inner, max_size=3),
    max_leaves=8,
)
_ARGUMENTS = st.dictionaries(_SAFE_TEXT, _JSON, max_size=3)
_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)
_PROSE = st.text(st.characters(codec="ascii", categories=["L", "Zs"]), max_size=30)


@st.composite
def responses(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """A random model response, and whether its parse must be the reference."""
    harn_calls = draw(
        st.lists(
            st.builds(
                lambda i, n, a: {"id": f"tc-{i}", "name": n, "arguments": a},
                st.integers(0, 99),
                _NAMES,
                _ARGUMENTS,
            ),
            max_size=3,
        )
    )
    other_native = draw(
        st.lists(
            st.sampled_from(
                [
                    OPENAI_CALL,
                    {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {}},
                    {"name": "no_id", "arguments": {}},
                    {"arguments": {}},
                ]
            ),
            max_size=2,
        )
    )
    native = draw(st.permutations([*harn_calls, *other_native]))
    pieces: list[str] = []
    text_calls = 0
    for kind in draw(
        st.lists(st.sampled_from(["prose", "protocol", "legacy", "state"]), max_size=6)
    ):
        if kind == "prose":
            pieces.append(draw(_PROSE))
        elif kind == "protocol":
            call = {"name": draw(_NAMES), "arguments": draw(_ARGUMENTS)}
            pieces.append(f"<tool_call>{json.dumps(call)}</tool_call>")
            text_calls += 1
        elif kind == "legacy":
            pieces.append(f"{draw(_NAMES)}({json.dumps(draw(_ARGUMENTS))})")
            text_calls += 1
        else:
            pairs = draw(st.dictionaries(_NAMES, st.sampled_from(["1", "true", "nil", "x y"])))
            block = ["## LOOP_STATE", *(f"{k}: {v}" for k, v in pairs.items())]
            if draw(st.booleans()):
                block.append("## END_LOOP_STATE")
            pieces.append("\n".join(block))
    must_reference = bool(harn_calls) and not other_native and text_calls == 0
    raw = raw_response("\n".join(pieces), native, iteration=draw(st.integers(0, 50)))
    return raw, must_reference


@pytest.mark.sentence(
    "runrecord.parsed-ref-when-identical", "runrecord.parsed-inline", "runrecord.loop-state-null"
)
@given(responses())
def test_random_responses_give_valid_payloads_following_the_reference_rule(
    case: tuple[dict[str, Any], bool],
) -> None:
    raw, must_reference = case
    parsed = rr.parse_provider_response(raw, execution_id=EXECUTION, policy=POLICY)
    payload = parsed.payload
    assert_valid(RESPONSE, payload)
    assert ("parsed_tool_calls_ref" in payload) == must_reference
    assert ("parsed_tool_calls" in payload) != ("parsed_tool_calls_ref" in payload)
    if "parsed_tool_calls" in payload:
        inline = payload["parsed_tool_calls"]
        assert not (inline and json_equal(inline, payload["tool_calls"]))
    else:
        assert payload["tool_calls"]
    assert payload["execution_id"] == EXECUTION
    assert (payload["loop_state"] is None) == (rr.decode_loop_state(raw["text"])[0] is None)
    assert all(f.level == "warning" for f in parsed.findings)


@pytest.mark.sentence("runrecord.redaction")
@given(
    st.lists(st.sampled_from(sorted(canaries())), min_size=1, max_size=4, unique=True),
    st.lists(_PROSE, min_size=1, max_size=4),
    st.sampled_from(["prose", "protocol", "legacy", "state", "native"]),
)
def test_canaries_in_the_text_never_reach_sqlite(
    kinds: list[str], prose: list[str], place: str
) -> None:
    found = canaries()
    planted = [found[kind] for kind in kinds]
    if place == "protocol":
        arguments = {f"k{i}": value for i, value in enumerate(planted)}
        body = [f"<tool_call>{json.dumps({'name': 'w', 'arguments': arguments})}</tool_call>"]
    elif place == "legacy":
        body = [f"write({json.dumps({f'k{i}': v for i, v in enumerate(planted)})})"]
    elif place == "state":
        body = [
            "## LOOP_STATE",
            *(f"k{i}: {v}" for i, v in enumerate(planted)),
            "## END_LOOP_STATE",
        ]
    else:
        body = planted
    text = "\n".join([*prose, *body])
    native = [{"id": "n1", "name": "w", "arguments": {"v": planted}}] if place == "native" else []
    with tempfile.TemporaryDirectory(prefix="runrecord-canary-") as folder:
        database = Path(folder) / "events.sqlite"
        with journal_at(database) as journal:
            append(journal, raw_response(text, native), event_id=1)
            stored = stored_rows(database, "SELECT event FROM session_events")
        assert len(stored) == 1
        assert leaked(stored[0][0]) == []
        for path in Path(folder).iterdir():
            assert leaked(path.read_bytes().decode("utf-8", "replace")) == [], path.name
