"""Our reference producer: the oracle, speaking the producer protocol.

``session-contracts reference-producer`` runs it on stdio.  Each operation is
a thin adapter from the protocol's case input to the reference implementation
of one contract; docs/protocol.md specifies inputs and outputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from session_contracts.conformance.protocol import Handler, Rejected, serve

from session_contracts import __version__
from session_contracts._errors import InvalidDocument

__all__ = ["HANDLERS", "main"]


def _reject(
    exc: InvalidDocument, prefix: str = "$", renames: Mapping[str, str] | None = None
) -> Rejected:
    """The first finding as a rejection whose path points into the case input:
    ``prefix`` is where the checked value sits in the input, ``renames`` maps
    an output path (the library reports a run record's own paths) to the input
    member it came from."""
    first = exc.findings[0]
    path = first.path
    for output_path, input_path in (renames or {}).items():
        if path == output_path or path.startswith((output_path + ".", output_path + "[")):
            return Rejected(first.code, input_path + path[len(output_path) :], first.message)
    return Rejected(first.code, prefix + path[1:], first.message)


def _each(items: Any, parse: Any, prefix: str) -> list[Any]:
    """Parse every item of an input list; a rejection names the item's index."""
    parsed = []
    for index, item in enumerate(items):
        try:
            parsed.append(parse(item))
        except InvalidDocument as exc:
            raise _reject(exc, f"{prefix}[{index}]") from None
    return parsed


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
    from session_contracts.conformance.reference.journal import SessionEvent
    from session_contracts.conformance.reference.runrecord import project_run_record

    events = _each(case.get("events", []), SessionEvent.from_json, "$.events")
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


def recap_project(case: Mapping[str, Any]) -> Any:
    """Write the case's events to a fresh journal and ask the recap service:
    the same path the HTTP, ACP and CLI adapters take."""
    from session_contracts.conformance.reference.journal import SessionEvent, SqliteJournal
    from session_contracts.conformance.reference.recap import RecapService

    events = _each(case.get("events", []), SessionEvent.from_json, "$.events")
    with tempfile.TemporaryDirectory(prefix="sc-recap-") as folder:
        path = Path(folder) / "journal.sqlite"
        with SqliteJournal.open(path, create=True) as journal:
            if events:
                journal.append(events)
        with RecapService(path) as service:
            try:
                outcome = service.query(case["query"])
            except InvalidDocument as exc:
                raise _reject(exc, "$.query") from None
    return outcome.envelope


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
