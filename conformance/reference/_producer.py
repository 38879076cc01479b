"""Our reference producer: the oracle, speaking the producer protocol.

``session-contracts reference-producer`` runs it on stdio.  Each operation is
a thin adapter from the protocol's case input to the reference implementation
of one contract; docs/protocol.md specifies inputs and outputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from session_contracts.conformance.protocol import Handler, Rejected, serve

from session_contracts import __version__
from session_contracts._errors import Finding, InvalidDocument
from session_contracts._validator import default_validator

__all__ = ["HANDLERS", "MAX_REJECTION_FINDINGS", "main"]

# The protocol's bound on a rejection's findings list (producer-protocol.schema.json).
MAX_REJECTION_FINDINGS = 1000


def _rebase(path: str, prefix: str = "$", renames: Mapping[str, str] | None = None) -> str:
    """A library finding's path as a path into the case input: ``prefix`` is where
    the checked value sits in the input, ``renames`` maps an output path (the library
    reports a run record's own paths) to the input member it came from."""
    for output_path, input_path in (renames or {}).items():
        if path == output_path or path.startswith((output_path + ".", output_path + "[")):
            return input_path + path[len(output_path) :]
    return prefix + path[1:]


def _rejected(findings: Sequence[Finding]) -> Rejected:
    """Every finding of an input as one rejection: ``code`` and ``path`` name the
    first (findings are sorted by path, then code), ``findings`` lists them all."""
    unique = sorted({(f.path, f.code): f for f in findings}.values())[:MAX_REJECTION_FINDINGS]
    first = unique[0]
    return Rejected(
        first.code,
        first.path,
        _fit(first.message),
        [{"code": f.code, "path": f.path, "message": _fit(f.message)} for f in unique],
    )


def _fit(message: str) -> str:
    """A message within the protocol's 4,096 UTF-8 bytes (cut at a character)."""
    return message.encode("utf-8")[:4096].decode("utf-8", "ignore")


def _reject(
    exc: InvalidDocument, prefix: str = "$", renames: Mapping[str, str] | None = None
) -> Rejected:
    """An invalid input's findings as a rejection whose paths point into the case input."""
    return _rejected(
        [Finding(_rebase(f.path, prefix, renames), f.code, f.message, f.hint) for f in exc.findings]
    )


def _parse_each(items: Any, parse: Any, prefix: str) -> tuple[list[Any], list[Finding]]:
    """Parse every item of an input list: the parsed items and the findings of every
    item that failed (each located at its index), so that one bad item never hides
    the next."""
    parsed: list[Any] = []
    findings: list[Finding] = []
    if not isinstance(items, list):
        return parsed, [
            Finding(prefix, "wrong_type", f"{prefix[2:]} is a JSON array", "send an array")
        ]
    for index, item in enumerate(items):
        try:
            parsed.append(parse(item))
        except InvalidDocument as exc:
            findings.extend(
                Finding(_rebase(f.path, f"{prefix}[{index}]"), f.code, f.message, f.hint)
                for f in exc.findings
            )
    return parsed, findings


def _each(items: Any, parse: Any, prefix: str) -> list[Any]:
    """Parse every item of an input list; a rejection names every failing item's index."""
    parsed, findings = _parse_each(items, parse, prefix)
    if findings:
        raise _rejected(findings)
    return parsed


def _events(case: Mapping[str, Any]) -> tuple[list[Any], list[Finding]]:
    """A case's journal events and the findings against them: each event's own, and
    each id that does not increase on the one before (the journal holds each id once,
    in increasing order: such a list is a rejected input, not an error of ours)."""
    from session_contracts.conformance.reference.journal import (
        SessionEvent,
        canonical_event_bytes,
    )

    def storable(raw_event: Any) -> Any:
        # The journal stores each event as RFC 8785 bytes: a number those cannot
        # hold exactly (an integer beyond 2**53 - 1 in an open payload) is refused
        # as the event is written, a rejected input like any other finding.
        event = SessionEvent.from_json(raw_event)
        canonical_event_bytes(event)
        return event

    events, findings = _parse_each(case.get("events", []), storable, "$.events")
    raw = case.get("events")
    previous: int | None = None
    for index, event in enumerate(raw if isinstance(raw, list) else []):
        event_id = event.get("id") if isinstance(event, Mapping) else None
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            continue
        if previous is not None and event_id <= previous:
            findings.append(
                Finding(
                    f"$.events[{index}].id",
                    "events_not_increasing",
                    f"event id {event_id} does not follow the previous id {previous}",
                    "event ids are unique and increase in journal order; sort the events by id",
                )
            )
        previous = event_id
    return events, findings


def document_roundtrip(case: Mapping[str, Any]) -> Any:
    from session_contracts.bindings import decode, encode

    try:
        historical = case.get("historical", False)
        if not isinstance(historical, bool):
            raise Rejected("invalid_case", "$.historical", "historical is true or false")
        # historical: load a record written before the current contract (its
        # legacy names accepted), then write it as newly persisted records are.
        return encode(decode(str(case["doctype"]), case["document"], historical=historical))
    except InvalidDocument as exc:
        raise _reject(exc, "$.document") from None


def health_reduce(case: Mapping[str, Any]) -> Any:
    from session_contracts.conformance.reference.health import reduce

    try:
        return {"facts": reduce(str(case["session_id"]), case["observations"])}
    except InvalidDocument as exc:
        raise _reject(exc) from None


def health_a2a_status_update(case: Mapping[str, Any]) -> Any:
    """Seed 000: "A2A task streams carry the same fact in metadata.harn.sessionHealth on a
    standard status update, preserving the current task state"."""
    from session_contracts.conformance.reference.health import a2a_status_update

    fact: Any = case.get("fact")
    findings = default_validator().validate("session-health.fact", fact)
    if findings:
        raise _reject(InvalidDocument(findings), "$.fact")
    task: Any = case.get("task")
    try:
        return a2a_status_update(fact, task)
    except InvalidDocument as exc:
        raise _reject(exc, "$.task") from None


def _reader_version(step: Mapping[str, Any], index: int) -> int:
    """The reader's contract version (default 1): reports of another are stale."""
    version = step.get("reader_contract_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 2**53:
        raise Rejected(
            "invalid_step",
            f"$.steps[{index}].reader_contract_version",
            "reader_contract_version must be an unsigned safe integer",
        )
    return version


def feedback_run(case: Mapping[str, Any]) -> Any:
    from session_contracts.conformance.reference.feedback import FeedbackStore

    steps = case["steps"]
    now = {"ms": 0}
    responses: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="sc-feedback-") as folder:
        store = FeedbackStore.open(Path(folder) / "feedback.sqlite", clock=lambda: now["ms"])
        try:
            for index, step in enumerate(steps):
                now["ms"] = int(step["at_unix_ms"])
                call = step["call"]
                try:
                    if call == "start":
                        responses.append(store.start(step["request"]))
                    elif call == "checkpoint":
                        responses.append(store.checkpoint(step["request"]))
                    else:
                        responses.append(
                            store.observe(
                                str(step["session_id"]),
                                reader_can_read_raw_receipts=bool(step["can_read_raw_receipts"]),
                                contract_version=_reader_version(step, index),
                            )
                        )
                except InvalidDocument as exc:
                    raise _reject(exc) from None
        finally:
            store.close()
    return {"responses": responses}


def _run_spec(value: Mapping[str, Any]) -> Any:
    from session_contracts.conformance.reference.runrecord import (
        EvidenceGap,
        FlightRecording,
        RunSpec,
        Span,
    )

    flight = value.get("flight_recording")
    return RunSpec(
        kind=value["kind"],
        status=value["status"],
        session_id=value.get("session_id"),
        execution_id=value.get("execution_id"),
        id=value.get("id"),
        spans=_each(value.get("spans", []), Span.from_json, "$.run.spans"),
        flight_recording=FlightRecording.from_json(flight) if flight else None,
        gaps=[
            EvidenceGap(gap["component"], gap["code"], gap["message"])
            for gap in value.get("gaps", [])
        ],
        execution_gap_reason=value.get("execution_gap_reason"),
    )


_RUN_RECORD_TO_INPUT = {
    "$.evidence.trace_spans": "$.run.spans",
    "$.evidence.execution_id": "$.run.execution_id",
    "$.evidence.gaps": "$.run.gaps",
    "$.evidence.flight_recording": "$.run.flight_recording",
    "$.evidence": "$.run",
}


def runrecord_project(case: Mapping[str, Any]) -> Any:
    from session_contracts.conformance.reference.runrecord import project_run_record

    events, findings = _events(case)
    if findings:
        raise _rejected(findings)
    try:
        return project_run_record(_run_spec(case["run"]), events)
    except InvalidDocument as exc:
        # The library names the record it would build; the input is the run.
        raise _reject(exc, "$.run", _RUN_RECORD_TO_INPUT) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise Rejected("invalid_run", "$.run", str(exc)) from None


def runrecord_provider_call_response(case: Mapping[str, Any]) -> Any:
    from session_contracts.conformance.reference.runrecord import provider_call_response

    from session_contracts._redaction_policy import default_policy

    try:
        return provider_call_response(
            case["response"], execution_id=case.get("execution_id"), policy=default_policy()
        )
    except InvalidDocument as exc:
        raise _reject(exc, "$.response") from None


def _stored_events(case: Mapping[str, Any]) -> tuple[list[Any], list[Finding]]:
    """A case's Harn stored events and the findings against them: each event's own, and
    each id that does not increase on the session's one before (Harn's store numbers
    each session's events in append order)."""
    from session_contracts.conformance.reference.journal import STORED_EVENT_DOCUMENT_TYPE

    raw = case["storedEvents"]
    if not isinstance(raw, list):
        return [], [
            Finding(
                "$.storedEvents",
                "wrong_type",
                "storedEvents is not an array",
                "send the session store's events as an array",
            )
        ]
    findings: list[Finding] = []
    validator = default_validator()
    previous: dict[str, int] = {}
    for index, event in enumerate(raw):
        found = validator.validate(STORED_EVENT_DOCUMENT_TYPE, event)
        findings.extend(
            Finding(_rebase(f.path, f"$.storedEvents[{index}]"), f.code, f.message, f.hint)
            for f in found
        )
        if found:
            continue
        session, event_id = event["session_id"], event["event_id"]
        if session in previous and event_id <= previous[session]:
            findings.append(
                Finding(
                    f"$.storedEvents[{index}].event_id",
                    "events_not_increasing",
                    f"event id {event_id} does not follow the session's previous id "
                    f"{previous[session]}",
                    "a session's event ids increase in store order; sort the events by id",
                )
            )
        previous[session] = event_id
    return raw, findings


def _query_findings(case: Mapping[str, Any]) -> list[Finding]:
    from session_contracts.conformance.reference.recap import query_echo

    if "query" not in case:
        return [
            Finding(
                "$.query",
                "required",
                "the case has no query",
                'send the recap query, such as {"sessionId": "sess-1"}',
            )
        ]
    try:
        query_echo(case["query"])
    except InvalidDocument as exc:
        return [
            Finding(_rebase(f.path, "$.query"), f.code, f.message, f.hint) for f in exc.findings
        ]
    return []


def _recap_of_stored(case: Mapping[str, Any]) -> Any:
    """recap.project over Harn's stored events, held as Harn's in-memory store holds them."""
    from session_contracts.conformance.reference.recap import recap_of_stored_events
    from session_contracts.conformance.reference.recap._service import unavailable

    if "events" in case:
        raise Rejected(
            "invalid_case", "$", "give the session's events as events or as storedEvents, not both"
        )
    events, findings = _stored_events(case)
    findings.extend(_query_findings(case))
    if findings:
        raise _rejected(findings)
    journal_state, admission, damaged = _recap_conditions(case)
    if damaged:
        raise Rejected(
            "invalid_case",
            "$.damagedEventIds",
            "damaged rows are a journal condition: give them with events, not storedEvents",
        )
    if journal_state == "unavailable":
        return unavailable("journal_unavailable").envelope
    if admission == "refused":
        return unavailable("admission_terminal").envelope
    return recap_of_stored_events(events, case["query"]).envelope


def recap_project(case: Mapping[str, Any]) -> Any:
    """Write the case's events to a fresh journal and ask the recap service:
    the same path the HTTP, ACP and CLI adapters take. Harn's stored events
    (``storedEvents``) are read as Harn's in-memory store reads them."""
    from session_contracts.conformance.reference.journal import SqliteJournal
    from session_contracts.conformance.reference.recap import RecapService

    if "storedEvents" in case:
        return _recap_of_stored(case)
    events, findings = _events(case)
    findings.extend(_query_findings(case))
    if findings:
        raise _rejected(findings)
    journal_state, admission, damaged = _recap_conditions(case)
    with tempfile.TemporaryDirectory(prefix="sc-recap-") as folder:
        path = Path(folder) / "journal.sqlite"
        with SqliteJournal.open(path, create=True) as journal:
            if events:
                journal.append(events)
        if damaged:
            _damage_rows(path, damaged)
        if journal_state == "unavailable":
            path = Path(folder) / "no-journal-here" / "journal.sqlite"
        with RecapService(path) as service:
            if admission == "refused":
                service.close()
            try:
                outcome = service.query(case["query"])
            except InvalidDocument as exc:
                raise _reject(exc, "$.query") from None
    return outcome.envelope


def _recap_conditions(case: Mapping[str, Any]) -> tuple[str, str, list[int]]:
    """The runtime conditions a recap case may present (docs/protocol.md, recap.project)."""
    journal_state = case.get("journal", "available")
    if journal_state not in ("available", "unavailable"):
        raise Rejected("not_allowed_value", "$.journal", "journal is 'available' or 'unavailable'")
    admission = case.get("admission", "open")
    if admission not in ("open", "refused"):
        raise Rejected("not_allowed_value", "$.admission", "admission is 'open' or 'refused'")
    damaged = case.get("damagedEventIds", [])
    if not isinstance(damaged, list):
        raise Rejected("wrong_type", "$.damagedEventIds", "damagedEventIds is an array")
    for index, event_id in enumerate(damaged):
        if isinstance(event_id, bool) or not isinstance(event_id, int) or event_id < 1:
            raise Rejected(
                "wrong_type", f"$.damagedEventIds[{index}]", "an event id is a positive integer"
            )
    return journal_state, admission, damaged


# What a damaged row holds instead of its canonical event: not JSON at all.
DAMAGED_ROW = '{"id": 1, "damaged'


def _damage_rows(path: Path, event_ids: list[int]) -> None:
    """Overwrite the stored bytes of these events, as a torn write or bit rot would."""
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executemany(
                "UPDATE session_events SET event = ? WHERE id = ?",
                [(DAMAGED_ROW, event_id) for event_id in event_ids],
            )
    finally:
        connection.close()


def redaction_apply(case: Mapping[str, Any]) -> Any:
    """Redact ``text`` (or the JSON ``value``) with the built-in ``policy``."""
    from session_contracts._redaction_vectors import POLICY_NAMES, apply

    if case.get("policy") not in POLICY_NAMES:
        raise Rejected("invalid_case", "$.policy", "policy is default or extended")
    if ("text" in case) == ("value" in case) or not isinstance(case.get("text", ""), str):
        raise Rejected("invalid_case", "$", "give exactly one of text (a string) and value")
    return apply(case)


HANDLERS: dict[str, Handler] = {
    "recap.project": recap_project,
    "runrecord.project": runrecord_project,
    "runrecord.provider_call_response": runrecord_provider_call_response,
    "document.roundtrip": document_roundtrip,
    "health.reduce": health_reduce,
    "health.a2a_status_update": health_a2a_status_update,
    "feedback.run": feedback_run,
    "redaction.apply": redaction_apply,
}


def main() -> int:
    return serve(
        HANDLERS,
        implementation={
            "name": "session-contracts reference producer",
            "version": __version__,
            "language": "python",
        },
        contracts=["session-health", "session-feedback", "session-recap", "run-record"],
    )
