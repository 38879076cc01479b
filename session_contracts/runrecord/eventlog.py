"""The I/O edge of run records: provider_call_response events in the journal, tape envelopes.

* :func:`append_provider_call_response` builds a model response's payload
  (redacted first, see ``responses``), wraps it in a canonical session event
  on ``agent.transcript.llm`` whose ``executionId`` and ``iteration`` headers
  repeat the payload's, checks that the policy finds nothing left in it, and
  appends it to a :class:`SqliteJournal`.
* :func:`read_by_execution_id` reads events back by the journal's indexed
  ``execution_id`` header column, without parsing bodies to select them.
* :func:`tape_entry` / :func:`tape_line` give the ``run-record.tape-entry``
  JSONL envelope of an event, with ``execution_id`` on every envelope.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, TypedDict, Unpack

from session_contracts.doctypes import TAPE_ENTRY_DOCUMENT_TYPE, TAPE_RECORD_DOCUMENT_TYPE
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal import (
    SessionEvent,
    SqliteJournal,
    journal_event_of,
)
from session_contracts.journal.model import corrupt
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.redaction.engine import RedactionPolicy, scan_value
from session_contracts.runrecord.record import EXECUTION_ID_RELABELLED
from session_contracts.runrecord.responses import provider_call_response
from session_contracts.validation.validator import default_validator

__all__ = [
    "LLM_TOPIC",
    "PROVIDER_CALL_RESPONSE_KIND",
    "TAPE_ENTRY_DOCUMENT_TYPE",
    "TAPE_RECORD_DOCUMENT_TYPE",
    "ProviderCallResponseKeywords",
    "append_provider_call_response",
    "next_event_id",
    "provider_call_response_event",
    "read_by_execution_id",
    "read_session",
    "tape_entry",
    "tape_line",
    "tape_record",
    "tape_record_line",
]

LLM_TOPIC: Final = "agent.transcript.llm"
PROVIDER_CALL_RESPONSE_KIND: Final = "provider_call_response"


class ProviderCallResponseKeywords(TypedDict):
    """The keyword arguments, all required, of :func:`provider_call_response_event` and
    :func:`append_provider_call_response`: the redaction policy and the event's headers."""

    policy: RedactionPolicy
    event_id: int
    session_id: str
    run_id: str | None
    turn_id: str | None
    execution_id: str | None
    recorded_at_unix_ms: int


# A TypedDict is not checked at run time: a call that misses or misspells a keyword must
# still be a TypeError, as for any parameter.
_KEYWORDS: Final = ProviderCallResponseKeywords.__required_keys__


# ---------------------------------------------------------------------------- pure


def provider_call_response_event(
    raw: Mapping[str, Any], **keywords: Unpack[ProviderCallResponseKeywords]
) -> SessionEvent:
    """The canonical event of one model response, redacted and checked; nothing is written.

    The keywords are :class:`ProviderCallResponseKeywords`.  The headers repeat the
    payload: ``executionId`` is the payload's ``execution_id`` (``None`` outside a VM
    scope) and ``iteration`` its ``iteration``.  Raises :class:`InvalidDocument` for a
    run or session id passed as the execution id (``execution_id_relabelled``), for a
    payload in which the policy still finds a secret (``redaction_secret_found``: the
    redaction failed, so nothing may be stored), or for an event the contract refuses.
    """
    if keywords.keys() != _KEYWORDS:
        raise TypeError(
            "provider_call_response_event() takes exactly the keywords "
            + ", ".join(sorted(_KEYWORDS))
            + f"; got {', '.join(sorted(keywords))}"
        )
    session_id, run_id = keywords["session_id"], keywords["run_id"]
    execution_id = keywords["execution_id"]
    if execution_id is not None and execution_id in (session_id, run_id):
        which = "session" if execution_id == session_id else "run"
        raise InvalidDocument(
            [
                Finding(
                    "$.executionId",
                    EXECUTION_ID_RELABELLED,
                    f"execution_id {execution_id!r} is the event's {which} id",
                    "outside a VM scope execution_id is None; never substitute a session or run id",
                )
            ]
        )
    policy = keywords["policy"]
    payload = provider_call_response(raw, execution_id=execution_id, policy=policy)
    leftovers = scan_value(payload, policy)
    if leftovers:
        raise InvalidDocument(leftovers)
    return SessionEvent.from_json(
        {
            "id": keywords["event_id"],
            "sessionId": session_id,
            "runId": run_id,
            "turnId": keywords["turn_id"],
            "iteration": payload["iteration"],
            "executionId": payload["execution_id"],
            "topic": LLM_TOPIC,
            "kind": PROVIDER_CALL_RESPONSE_KIND,
            "recordedAtUnixMs": keywords["recorded_at_unix_ms"],
            "payload": payload,
        }
    )


def tape_entry(event: SessionEvent) -> dict[str, Any]:
    """The ``run-record.tape-entry`` envelope of an event.

    ``execution_id`` is on every envelope: the event's execution, ``None``
    outside a VM scope (never the session id).  Raises :class:`InvalidDocument`
    when the envelope breaks the contract (a provider_call_response off its
    topic, or whose payload disagrees with its header).
    """
    entry = {
        "event_id": event.id,
        "topic": event.topic,
        "kind": event.kind,
        "session_id": event.session_id,
        "execution_id": event.execution_id,
        "emitted_at_unix_ms": event.recorded_at_unix_ms,
        "payload": event.to_json()["payload"],
    }
    return _checked(TAPE_ENTRY_DOCUMENT_TYPE, entry)


def tape_line(event: SessionEvent) -> bytes:
    """One JSONL tape line: the envelope's canonical JSON (RFC 8785) and ``\\n``."""
    return canonical_bytes(tape_entry(event)) + b"\n"


def tape_record(event: SessionEvent) -> dict[str, Any]:
    """The event as one line of Harn's file event-log backend (``run-record.tape-record``).

    ``{"id", "event": {"kind", "payload", "headers", "occurred_at_ms"}}``, the
    topic being the file's name.  The headers carry ``session_id``,
    ``execution_id`` inside a VM scope only (a header map holds strings, so no
    header means ``null``, as Harn's ``EventLogSink`` writes agent events) and,
    for a ``provider_call_response`` with a span, ``span_id`` (as Harn's
    transcript lines).  Raises :class:`InvalidDocument` like :func:`tape_entry`.
    """
    payload = event.to_json()["payload"]
    headers = {"session_id": event.session_id}
    if event.execution_id is not None:
        headers["execution_id"] = event.execution_id
    span_id = payload.get("span_id") if event.kind == PROVIDER_CALL_RESPONSE_KIND else None
    if isinstance(span_id, int) and not isinstance(span_id, bool):
        headers["span_id"] = str(span_id)
    record = {
        "id": event.id,
        "event": {
            "kind": event.kind,
            "payload": payload,
            "headers": headers,
            "occurred_at_ms": event.recorded_at_unix_ms,
        },
    }
    return _checked(TAPE_RECORD_DOCUMENT_TYPE, record)


def tape_record_line(event: SessionEvent) -> bytes:
    """One line of ``topics/<topic>.jsonl``: the record's canonical JSON and ``\n``."""
    return canonical_bytes(tape_record(event)) + b"\n"


def _checked(doctype: str, value: dict[str, Any]) -> dict[str, Any]:
    """``value`` when it meets the ``doctype`` contract; :class:`InvalidDocument` if not."""
    findings = default_validator().validate(doctype, value)
    if findings:
        raise InvalidDocument(findings)
    return value


# ---------------------------------------------------------------------------- I/O


def append_provider_call_response(
    journal: SqliteJournal,
    raw: Mapping[str, Any],
    **keywords: Unpack[ProviderCallResponseKeywords],
) -> SessionEvent:
    """Append one model response as a provider_call_response event; return the event.

    Redaction happens before the event exists (:func:`provider_call_response_event`),
    so the journal only ever sees the redacted payload.  Raises
    :class:`InvalidDocument` (see there) or the journal's
    :class:`~session_contracts.journal.JournalWriteError`.
    """
    event = provider_call_response_event(raw, **keywords)
    journal.append([event])
    return event


def next_event_id(journal: SqliteJournal, session_id: str) -> int:
    """The id the session's next event must at least have: one past its last id (1 for
    a session without events, as Harn's store numbers them)."""
    last = journal.last_event_id(session_id)
    return 1 if last is None else last + 1


def read_by_execution_id(
    journal: SqliteJournal, execution_id: str | None, *, topic: str | None = None
) -> tuple[SessionEvent, ...]:
    """Every run-record event (``provider_call_response``, ``session_attribute``,
    ``transcript_reset``, ``other``) written inside ``execution_id`` (``None``:
    outside any VM scope), in append order, as journal events.

    The selection is the indexed ``execution_id`` header column (and ``topic``
    when given), never the bodies (:meth:`SqliteJournal.read_by_execution_id`);
    each row is checked as every journal read checks it and read back with
    :func:`journal_event_of` (a recap event of the execution, which has no
    run-record form, is passed over).  Pass ``topic="agent.transcript.llm"``
    for one execution's model responses in order.
    """
    return _run_record_events(journal, journal.read_by_execution_id(execution_id, topic=topic))


def read_session(journal: SqliteJournal, session_id: str) -> tuple[SessionEvent, ...]:
    """The run-record events of one session, in id order, as journal events: what a
    session-backed run record is projected from (``project_run_record(spec,
    read_session(journal, session_id))``).  A session without events is
    :class:`~session_contracts.journal.SessionMissing`."""
    return _run_record_events(journal, journal.iter_events(session_id=session_id))


def _run_record_events(
    journal: SqliteJournal, stored_events: Iterable[Mapping[str, Any]]
) -> tuple[SessionEvent, ...]:
    """Each stored event of a run-record kind as its journal event (checked); the recap
    kinds, which have no run-record form, are passed over."""
    events = []
    for stored in stored_events:
        raw = journal_event_of(stored)
        if raw is None:
            continue
        source = f"{journal.path}#{stored['session_id']}/event-{stored['event_id']}"
        try:
            events.append(SessionEvent.from_json(raw))
        except InvalidDocument as exc:
            raise corrupt(exc.findings, source=source, event_id=stored["event_id"]) from None
    return tuple(events)
