"""The canonical session event: its value type, its JSON form and its contract check.

Everything here is pure: no file or database is touched.  The SQLite journal
(``sqlite``) and the JSON Lines tape (``tape``) both store Harn's stored form
of an event (``harn_stored``) and read it back through :func:`decode_stored_form`,
so one check of ``session-event.stored`` guards both; :func:`validate_event`
checks an event of the journal's own model before it is stored.

The check is the toolkit's shared validator (``session_contracts.validation.validator``)
for the document type ``session-event.event``: the schemas come from
``importlib.resources.files("session_contracts.schemas")`` into one registry,
jsonschema-rs decides (about 10 us an event, where python-jsonschema needs
about 400 us: that matters when one read checks 32,768 rows), and
python-jsonschema's ``Draft202012Validator`` is the reference engine, with the
same x- keywords (``x-maxUtf8Bytes``, ``x-jsSafeInteger``, ``x-sameValue``)
plugged into both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, cast, get_args

from session_contracts.doctypes import EVENT_DOCUMENT_TYPE, STORED_EVENT_DOCUMENT_TYPE
from session_contracts.errors import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    Finding,
    InvalidDocument,
    SessionContractsError,
)
from session_contracts.journal.harn_stored import unheld_integer
from session_contracts.jsontext.frozen import freeze_json, thaw_json
from session_contracts.jsontext.strict import loads_strict
from session_contracts.validation.validator import default_validator

__all__ = [
    "EVENT_DOCUMENT_TYPE",
    "EVENT_KINDS",
    "SESSION_EVENT_SCHEMA_ID",
    "STORED_EVENT_DOCUMENT_TYPE",
    "EventKind",
    "JournalCorrupt",
    "JournalError",
    "JournalUnavailable",
    "JournalWriteError",
    "SessionEvent",
    "SessionMissing",
    "all_events_valid",
    "decode_stored_form",
    "event_findings",
    "stored_findings",
    "validate_event",
]

SESSION_EVENT_SCHEMA_ID = "https://schemas.session-contracts.dev/v1/session-event.schema.json"
# A contract check reports at most this many findings: enough to fix a batch,
# few enough that one broken document cannot flood a log.
MAX_FINDINGS = 20

EventKind = Literal[
    "message",
    "loop_checkpoint",
    "tool_call",
    "tool_result",
    "plan",
    "progress",
    "terminal",
    "provider_call_response",
    "session_attribute",
    "transcript_reset",
    "other",
]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)


# --------------------------------------------------------------------------- errors


class JournalError(SessionContractsError):
    """Root of the journal's errors.

    ``code`` is the code its findings carry; only :class:`JournalWriteError`
    has a second one (``journal_write_failed``), listed by its ``codes``.
    """

    code: ClassVar[str] = "journal_error"


class JournalUnavailable(JournalError):
    """The journal cannot be opened or read: missing, not a journal, locked, closed."""

    code = "journal_unavailable"
    exit_status = EXIT_USAGE


class SessionMissing(JournalError):
    """The journal holds no event of the requested session."""

    code = "session_missing"
    exit_status = EXIT_FINDINGS

    def __init__(self, findings: Iterable[Finding], *, session_id: str) -> None:
        super().__init__(findings)
        self.session_id = session_id


class JournalCorrupt(JournalError):
    """A stored event does not parse, breaks the contract, or disagrees with its row.

    A recap projection reports this as the unavailable reason
    ``projection_failed``: the journal is there, but no deterministic
    projection can be derived from it.  ``event_id`` names the row (SQLite) and
    ``line`` the line (tape) when known.
    """

    code = "journal_corrupt"
    exit_status = EXIT_FINDINGS

    def __init__(
        self,
        findings: Iterable[Finding],
        *,
        event_id: int | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(findings)
        self.event_id = event_id
        self.line = line


class JournalWriteError(JournalError):
    """Events were refused, or could not be committed; nothing of the batch was written.

    Its findings carry ``journal_write_rejected`` (an event breaks the
    contract, a duplicate or non-increasing id, a read-only journal) or
    ``journal_write_failed`` (SQLite or the file system failed).
    """

    code = "journal_write_rejected"
    exit_status = EXIT_USAGE

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(f.code for f in self.findings)


WRITE_REJECTED = "journal_write_rejected"
WRITE_FAILED = "journal_write_failed"


def corrupt(
    problems: Iterable[Finding],
    *,
    source: str,
    event_id: int | None = None,
    line: int | None = None,
) -> JournalCorrupt:
    """Restate ``problems`` found in stored data as one :class:`JournalCorrupt`."""
    findings = [
        Finding(
            problem.path,
            JournalCorrupt.code,
            problem.message
            if problem.code == JournalCorrupt.code
            else f"{problem.message} ({problem.code})",
            "the stored event was damaged or written around this toolkit; restore the "
            "journal from a tape (import_tape) or re-record the session",
            source=source,
        )
        for problem in problems
    ]
    return JournalCorrupt(findings, event_id=event_id, line=line)


def rejected(problems: Iterable[Finding], *, index: int, event_id: Any) -> list[Finding]:
    """Restate an event's contract findings as write refusals located in the batch."""
    which = f"event id {event_id}" if isinstance(event_id, int) else f"event {index}"
    return [
        Finding(
            f"$[{index}]{problem.path[1:]}",
            WRITE_REJECTED,
            f"{which}: {problem.message} ({problem.code})",
            problem.hint,
        )
        for problem in problems
    ]


def stored_refusals(event: Any, *, index: int) -> list[Finding]:
    """The write refusals of a stored event at ``index`` in its batch: its
    ``session-event.stored`` findings, named by its id when it has one; empty when valid."""
    found = stored_findings(event)
    if not found:
        return []
    event_id = event.get("event_id") if isinstance(event, Mapping) else None
    return rejected(found, index=index, event_id=event_id)


def unheld_refusal(event: Mapping[str, Any], *, index: int) -> Finding | None:
    """The write refusal of a stored event at ``index`` holding an integer Harn's store
    would read as a float (outside -2^63..2^64-1), named at the first such number; None
    when it holds none."""
    unheld = unheld_integer(event)
    if unheld is None:
        return None
    return Finding(
        f"$[{index}]{unheld[1:]}",
        WRITE_REJECTED,
        f"event id {event['event_id']}: an integer outside -2^63..2^64-1, which "
        "Harn's store reads as a float (canonical_number_out_of_range)",
        "write such a number as a string, or as the float it becomes",
    )


class SessionIdOrder:
    """The write rule of ids: within each session they increase through a batch, after the
    session's last id already stored (``tails``: a journal's; none for a tape).  Ask
    :meth:`refusal` of each event in turn, as the last of its checks: an id that follows
    becomes its session's last."""

    __slots__ = ("_id_member", "_last", "_tails")

    def __init__(self, tails: Mapping[str, int], *, id_member: str = "event_id") -> None:
        self._tails = tails
        self._last = dict(tails)
        self._id_member = id_member  # the id's member in the events as given

    def refusal(self, session: str, event_id: int, *, index: int) -> Finding | None:
        previous = self._last.get(session)
        if previous is None or event_id > previous:
            self._last[session] = event_id
            return None
        tail = self._tails.get(session)
        return Finding(
            f"$[{index}].{self._id_member}",
            WRITE_REJECTED,
            f"event id {event_id} of session {session!r} "
            + (
                f"does not follow the session's previous id {previous}"
                if tail is None or event_id > tail
                else "is already in the journal"
                if event_id == tail
                else f"does not follow the session's last id {tail} in the journal"
            ),
            "a session's ids are unique and increase in append order; number new "
            "events after the session's last id",
        )


def capped(refusals: Iterable[Iterable[Finding]]) -> list[Finding]:
    """A batch's refusals, event after event, at most ``MAX_FINDINGS``: ``refusals`` is
    drawn from only until the cap is reached, so the events after it are not checked."""
    problems: list[Finding] = []
    for found in refusals:
        problems.extend(found)
        if len(problems) >= MAX_FINDINGS:
            break
    return problems[:MAX_FINDINGS]


# ---------------------------------------------------------------------- frozen JSON


# --------------------------------------------------------------------------- event


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEvent:
    """One canonical session event (schemas/session-event.schema.json).

    ``payload`` is read-only all the way down (mapping proxies and tuples);
    :meth:`to_json` returns a plain ``dict``/``list`` copy.  Construction does
    not check the contract; :meth:`from_json` does, and so does every writer.
    """

    id: int
    session_id: str
    run_id: str | None
    turn_id: str | None
    iteration: int | None
    execution_id: str | None
    topic: str
    kind: EventKind
    recorded_at_unix_ms: int
    # Mapping proxies are unhashable; the other fields identify an event well
    # enough for hashing, and equality still compares the payload.
    payload: Mapping[str, Any] = field(hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "payload", freeze_json(self.payload))

    @classmethod
    def from_json(cls, raw: Any, *, checked: bool = False) -> SessionEvent:
        """The event a parsed JSON value describes; :class:`InvalidDocument` if none.
        ``checked``: the caller found ``raw`` valid already (:func:`all_events_valid`)."""
        if not checked:
            validate_event(raw)
        return cls._from_valid(raw)

    # Written out, not read by field (jsontext.records.read_record), and so is to_json: a
    # journal takes 32,768 events in one call, and a generic to_json costs 3 % of that append.
    @classmethod
    def _from_valid(cls, raw: Mapping[str, Any]) -> SessionEvent:
        return cls(
            id=raw["id"],
            session_id=raw["sessionId"],
            run_id=raw["runId"],
            turn_id=raw["turnId"],
            iteration=raw["iteration"],
            execution_id=raw["executionId"],
            topic=raw["topic"],
            kind=cast(EventKind, raw["kind"]),
            recorded_at_unix_ms=raw["recordedAtUnixMs"],
            payload=raw["payload"],
        )

    def to_json(self) -> dict[str, Any]:
        """The wire form: camelCase keys, every header present, a mutable copy."""
        return {
            "id": self.id,
            "sessionId": self.session_id,
            "runId": self.run_id,
            "turnId": self.turn_id,
            "iteration": self.iteration,
            "executionId": self.execution_id,
            "topic": self.topic,
            "kind": self.kind,
            "recordedAtUnixMs": self.recorded_at_unix_ms,
            "payload": thaw_json(self.payload),
        }


# ---------------------------------------------------------------------- validation


def validate_event(raw: Any) -> None:
    """Check a parsed JSON value against the session-event contract.

    Raises :class:`InvalidDocument` carrying the validator's findings (codes
    such as ``required``, ``wrong_type``, ``unknown_field``, ``same_value``),
    each with its JSON path, at most ``MAX_FINDINGS`` of them.
    """
    findings = event_findings(raw)
    if findings:
        raise InvalidDocument(findings)


def all_events_valid(raws: Sequence[Any]) -> bool:
    """True only when each of ``raws`` is a valid event, decided in batches; False when
    one is not, or when the batch could not be screened: then check each
    (:meth:`~session_contracts.validation.validator.DocumentValidator.all_valid`)."""
    return default_validator().all_valid(EVENT_DOCUMENT_TYPE, raws)


def event_findings(raw: Any) -> tuple[Finding, ...]:
    """Every way ``raw`` breaks the contract; empty when it is a valid event."""
    return _findings(EVENT_DOCUMENT_TYPE, raw)


def stored_findings(raw: Any) -> tuple[Finding, ...]:
    """Every way ``raw`` breaks the ``session-event.stored`` contract (Harn's
    ``StoredEvent``); empty when it is a valid stored event."""
    return _findings(STORED_EVENT_DOCUMENT_TYPE, raw)


def _findings(doctype: str, raw: Any) -> tuple[Finding, ...]:
    validator = default_validator()
    try:
        found = validator.validate(doctype, raw)
    except (ValueError, TypeError, OverflowError):
        # jsonschema_rs refuses what it cannot convert (a lone surrogate, an
        # integer beyond 64 bits, a non-JSON type); the pure-Python reference
        # engine takes any Python value.
        found = validator.validate(doctype, raw, reference=True)
    return tuple(found[:MAX_FINDINGS])


def decode_stored_form(
    data: bytes | str,
    *,
    source: str,
    event_id: int | None = None,
    line: int | None = None,
) -> dict[str, Any]:
    """Parse and check one stored event (Harn's ``StoredEvent``, as a journal row or a
    tape line holds it); any problem is a :class:`JournalCorrupt`."""
    try:
        raw = loads_strict(data)
    except InvalidDocument as exc:
        raise corrupt(exc.findings, source=source, event_id=event_id, line=line) from None
    if event_id is None and isinstance(raw, dict) and type(raw.get("event_id")) is int:
        event_id = raw["event_id"]
    problems = stored_findings(raw)
    if problems:
        raise corrupt(problems, source=source, event_id=event_id, line=line)
    stored: dict[str, Any] = raw
    return stored
