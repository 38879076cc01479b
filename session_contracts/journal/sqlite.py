"""The SQLite session journal: Harn's stored events, durable and indexed, as projections read them.

One table, ``session_events``, one row per Harn ``StoredEvent``
(``crates/harn-session-store/src/event.rs``; docs/journal.md): keyed by the
session and its per-session ``event_id``, as Harn's store numbers them, with
the columns a reader filters or joins on (the kind's discriminator, the
``run_id``, ``turn_id``, ``execution_id`` and ``topic`` headers, the record and
previous hashes) copied out of the event and indexed, and the whole event kept
as Harn's canonical JSON text.  Columns are copies, so every read checks them
against the body: a row whose columns and body disagree is corrupt, never
silently trusted one way or the other.

Two ways in: :meth:`SqliteJournal.append_stored` keeps Harn's stored events as
they are (their hashes included); :meth:`SqliteJournal.append` takes the
journal's own event model (``session-event.event``) and stores each event's
stored form (``harn_stored.stored_events_of``), chained on the session's last
record hash.

Readers open the file through a read-only URI (``mode=ro``) and also set
``PRAGMA query_only``, so a projection cannot write even by mistake.  Writers
use WAL mode (readers keep reading while one writer appends) with
``synchronous = FULL``, so a committed batch survives a power cut.

Reads check every row, and most rows take a quick path that is exact: a row
the journal wrote is the canonical JSON of a valid stored event, so a row
whose bytes equal the canonical form of their own parse (orjson, then
``harn_canonical_bytes``, all rows at once) and that passes a jsonschema-rs
validator (:func:`quick_validator`) is exactly a row the full check accepts.
Any row the quick path does not vouch for goes through the full check, which
names the problem.
"""

from __future__ import annotations

import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import repeat
from operator import add, itemgetter, lt
from pathlib import Path
from typing import Any

import orjson

from session_contracts.connection_owner import ConnectionOwner, prepared
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal.batch import (
    CheckedEvents,
    checked_for_writing,
    element_forms,
    stored_forms,
)
from session_contracts.journal.harn_stored import discriminator, unheld_integer
from session_contracts.journal.model import (
    MAX_FINDINGS,
    STORED_EVENT_DOCUMENT_TYPE,
    WRITE_REJECTED,
    JournalCorrupt,
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    SessionIdOrder,
    SessionMissing,
    capped,
    corrupt,
    decode_stored_form,
    rejected,
    stored_refusals,
    unheld_refusal,
)
from session_contracts.jsontext.harn_canonical import (
    harn_canonical_bytes,
    harn_canonical_bytes_of_parsed,
)
from session_contracts.jsontext.strict import MAX_DEPTH, MAX_DOCUMENT_BYTES, loads_strict
from session_contracts.store_failure import StoreFailure
from session_contracts.validation.validator import (
    compact_text_may_hold_integral_float,
    default_validator,
)


def _opening_count(raw: bytes, /) -> int:
    return raw.count(b"{") + raw.count(b"[")


__all__ = [
    "APPLICATION_ID",
    "FORMAT_VERSION",
    "MemoryJournal",
    "ReadResult",
    "SqliteJournal",
    "damage_events",
    "quick_validator",
]

# Written to the database header (PRAGMA application_id): "SJNL" marks a file
# as a session journal, so any other SQLite database is refused, not misread.
APPLICATION_ID = 0x534A4E4C
FORMAT_VERSION = 2  # PRAGMA user_version: the layout below (1 held the journal model's rows)
_BUSY_TIMEOUT_S = 5.0
_MAX_EVENT_ID = 2**63 - 1

_COLUMNS = (
    "seq",
    "session_id",
    "event_id",
    "kind",
    "run_id",
    "turn_id",
    "execution_id",
    "topic",
    "record_hash",
    "prev_hash",
    "event",
)
# The columns a row copies out of its event (every one but seq and event).
_COPIED = _COLUMNS[1:-1]

_CREATE = (
    """
    CREATE TABLE session_events (
        seq          INTEGER PRIMARY KEY,
        session_id   TEXT NOT NULL,
        event_id     INTEGER NOT NULL,
        kind         TEXT NOT NULL,
        run_id       TEXT,
        turn_id      TEXT,
        execution_id TEXT,
        topic        TEXT,
        record_hash  TEXT NOT NULL,
        prev_hash    TEXT,
        event        TEXT NOT NULL
    ) STRICT
    """,
    # Bounded session reads: WHERE session_id = ? AND event_id >= ? ORDER BY event_id LIMIT ?
    "CREATE UNIQUE INDEX session_events_session_id ON session_events (session_id, event_id)",
    "CREATE INDEX session_events_run_id ON session_events (run_id)",
    "CREATE INDEX session_events_turn_id ON session_events (turn_id)",
    "CREATE INDEX session_events_topic ON session_events (topic)",
    "CREATE INDEX session_events_execution_id ON session_events (execution_id)",
)
# The body comes back as its stored UTF-8 bytes: parsed and compared as bytes,
# never decoded to str and encoded again.
_SELECT = f"SELECT {', '.join(_COLUMNS[:-1])}, CAST(event AS BLOB) FROM session_events"
_INSERT = (
    f"INSERT INTO session_events ({', '.join(_COLUMNS[1:])}) "
    f"VALUES ({', '.join('?' for _ in _COLUMNS[1:])})"
)

_Row = tuple[Any, ...]
Stored = Mapping[str, Any]


def copied_columns(event: Stored) -> tuple[Any, ...]:
    """The column values a row copies out of a stored event, in ``_COPIED`` order."""
    headers = event["headers"]
    return (
        event["session_id"],
        event["event_id"],
        discriminator(event["kind"]),
        headers.get("run_id"),
        headers.get("turn_id"),
        headers.get("execution_id"),
        headers.get("topic"),
        event["record_hash"],
        event["prev_hash"],
    )


@dataclass(frozen=True, slots=True)
class ReadResult:
    """One bounded read of a session, as Harn's store reads it.

    ``scanned`` counts the session's events read within the limit, in id
    order; ``events`` are those of them that pass the run and turn filters
    (Harn ``StoredEvent`` values, plain parsed JSON meant to be read only).
    ``last_event_id`` is the last scanned id; ``next_event_id`` is the id of
    the session's next event after it, or ``None`` when the read reached the
    end: pass it as ``from_event_id`` to continue.  ``pending`` is the
    session's last id minus the last id read (0 when nothing was read), Harn's
    ``coverage.pending``.
    """

    events: tuple[Stored, ...]
    scanned: int
    last_event_id: int | None
    next_event_id: int | None
    pending: int = 0

    @property
    def matched(self) -> int:
        return len(self.events)

    @property
    def has_more(self) -> bool:
        return self.next_event_id is not None


def _unavailable(source: str, message: str, hint: str) -> JournalUnavailable:
    return JournalUnavailable([Finding("$", JournalUnavailable.code, message, hint, source=source)])


def _write_error(code: str, message: str, hint: str, path: str = "$") -> JournalWriteError:
    return JournalWriteError([Finding(path, code, message, hint)])


# What a SQLite failure at each step means to the caller.
_CANNOT_OPEN = StoreFailure(
    "journal_unavailable",
    "SQLite cannot open the file",
    "check the path and permissions",
    JournalUnavailable,
    sqlite3.Error,
)
_NOT_A_DATABASE = StoreFailure(
    "journal_unavailable",
    "the file is not a readable SQLite database",
    "pass a session journal written by SqliteJournal",
    JournalUnavailable,
    sqlite3.Error,
)
_COMMIT_FAILED = StoreFailure(
    "journal_write_failed",
    "SQLite could not commit the batch",
    "check disk space and permissions; retry once no other writer holds the lock",
    JournalWriteError,
    sqlite3.Error,
)
_READ_FAILED = StoreFailure(
    "journal_unavailable",
    "SQLite could not read the journal",
    "retry; check the file",
    JournalUnavailable,
    sqlite3.OperationalError,
)
# SQLite cannot read the file (truncated or damaged under us): the journal is not
# available (seed 002), as when it cannot be opened.
_DAMAGED = StoreFailure(
    "journal_unavailable",
    "the file is not a readable SQLite database",
    "restore the journal from a copy; SQLite cannot read this file",
    JournalUnavailable,
    sqlite3.DatabaseError,
)


class _SessionReads(ABC):
    """A journal's bounded session reads, every row read checked: :class:`SqliteJournal`
    fetches the rows from its file, :class:`MemoryJournal` holds them."""

    @property
    @abstractmethod
    def _source(self) -> str:
        """What a finding's source names the journal by (its file's path)."""

    @abstractmethod
    def last_event_id(self, session_id: str) -> int | None:
        """The session's highest event id, None when it has no event."""

    @abstractmethod
    def _bounded_rows(self, session_id: str, from_event_id: int | None, limit: int) -> list[_Row]:
        """At most ``limit + 1`` of the session's rows from ``from_event_id`` on, in id order
        (seq, the copied columns, the stored bytes); :class:`SessionMissing` for a session
        without events."""

    def read(
        self,
        session_id: str,
        *,
        run_id: str | None = None,
        turn_id: str | None = None,
        from_event_id: int | None = None,
        limit: int,
    ) -> ReadResult:
        """Read at most ``limit`` of the session's events with ``event_id >= from_event_id``
        (1 when ``None``, as Harn's store reads), in id order.

        The bound counts scanned source events, not matches: the ``run_id`` and
        ``turn_id`` header filters apply after scanning, so a read costs the same
        whatever it matches.  Every scanned event is checked; a bad one raises
        :class:`JournalCorrupt`.  A session without events raises
        :class:`SessionMissing`; a read past a session's last event returns
        nothing scanned.
        """
        rows = self._bounded_rows(session_id, from_event_id, limit)
        following = rows[limit] if len(rows) > limit else None
        del rows[limit:]
        scanned = self._decode_draining(rows)
        events = (
            tuple(scanned)
            if run_id is None and turn_id is None
            else tuple(
                event
                for event in scanned
                if (run_id is None or event["headers"].get("run_id") == run_id)
                and (turn_id is None or event["headers"].get("turn_id") == turn_id)
            )
        )
        last = scanned[-1]["event_id"] if scanned else None
        pending = 0
        if following is not None and last is not None:
            tail = self.last_event_id(session_id)
            pending = 0 if tail is None else tail - last
        return ReadResult(
            events=events,
            scanned=len(scanned),
            last_event_id=last,
            next_event_id=following[2] if following is not None else None,
            pending=pending,
        )

    def _decode_draining(self, rows: list[_Row]) -> list[Stored]:
        """``_decode_all(rows)``, emptying ``rows`` a chunk at a time: each chunk's text
        is freed once parsed, so a large read never holds all its text and all its
        events at once."""
        out: list[Stored] = []
        while rows:
            chunk = rows[:_TEXT_CHUNK]
            del rows[:_TEXT_CHUNK]
            out.extend(self._decode_all(chunk))
        return out

    def _decode_all(self, rows: Sequence[_Row]) -> list[Stored]:
        out: list[Stored] = []
        append = out.append
        # Row by row: each event's columns while it is at hand (a pass over all the events
        # for each column costs twice as much, fetching each event again and again).
        for row, checked in zip(rows, _quick_check_all(rows), strict=True):
            # The common case inline: a checked event whose columns agree.
            if checked is not None and copied_columns(checked) == row[1:-1]:
                append(checked)
            else:
                append(self._decode(row, checked))
        return out

    def _decode(self, row: _Row, checked: dict[str, Any] | None) -> Stored:
        source = f"{self._source}#{row[1]}/event-{row[2]}"
        event = (
            checked
            if checked is not None
            else decode_stored_form(row[-1], source=source, event_id=row[2])
        )
        body = copied_columns(event)
        if body != row[1:-1] or any(
            type(a) is not type(b) for a, b in zip(body, row[1:-1], strict=True)
        ):
            raise corrupt(_column_mismatches(row, body), source=source, event_id=row[2])
        return event


class SqliteJournal(_SessionReads, ConnectionOwner[sqlite3.Connection]):
    """A session journal in one SQLite file.  Open it with :meth:`open`."""

    def __init__(self, connection: sqlite3.Connection, *, path: Path, writable: bool) -> None:
        super().__init__(connection, path=path)
        self._writable = writable

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        writable: bool | None = None,
    ) -> SqliteJournal:
        """Open the journal at ``path``.

        By default the journal is opened read-only and must exist.
        ``create=True`` opens it for writing and creates the file and its
        layout if missing; ``writable=True`` opens an existing journal for
        writing.  A missing file, a file that is not SQLite, or a SQLite
        database that is not a journal raises :class:`JournalUnavailable`.
        """
        writable = create if writable is None else writable
        if create and not writable:
            raise ValueError("create=True opens the journal for writing; drop writable=False")
        location = Path(path)
        source = str(location)
        if location.exists() and not location.is_file():
            raise _unavailable(source, "the path is not a file", "pass the journal's file path")
        if not create and not location.exists():
            raise _unavailable(
                source,
                "there is no journal at this path",
                "check the path, or create the journal with SqliteJournal.open(path, create=True)",
            )
        mode = "rwc" if create else "rw" if writable else "ro"
        uri = f"{location.resolve().as_uri()}?mode={mode}"
        with _CANNOT_OPEN.raised_for(source):
            connection = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=_BUSY_TIMEOUT_S
            )
        with _NOT_A_DATABASE.raised_for(source):
            prepared(
                connection,
                lambda opened: _prepare(opened, source, create=create, writable=writable),
            )
        return cls(connection, path=location, writable=writable)

    @property
    def writable(self) -> bool:
        return self._writable

    @property
    def _source(self) -> str:
        return str(self._path)

    @property
    def closed(self) -> bool:
        return self._connection is None

    def _open_connection(self) -> sqlite3.Connection:
        if self._connection is None:
            raise _unavailable(
                str(self._path), "the journal is closed", "open it again with SqliteJournal.open"
            )
        return self._connection

    # ------------------------------------------------------------------ writing

    def append(self, events: Iterable[SessionEvent]) -> int:
        """Append journal-model events, each as its stored form, in one durable transaction;
        return how many were written.

        Every event is checked against the ``session-event.event`` contract
        first.  Its stored form keeps its id, carries its record hash
        (docs/hashing.md 4.1) and chains on the previous record hash of its
        session (``prev_hash``).  Ids must increase within each session,
        through the batch and after the session's last id; a duplicate is
        refused.  On any refusal or failure nothing of the batch is written
        and :class:`JournalWriteError` says why.
        """
        return self.append_checked(checked_for_writing([event.to_json() for event in events]))

    def append_checked(self, events: CheckedEvents) -> int:
        """Append journal events that :func:`check_events` checked (wire form, as a
        request carries them), each as its stored form, as :meth:`append` does."""
        return self._write(
            lambda previous: stored_forms(events, previous),
            sessions={event["sessionId"] for event in events.events},
            id_member="id",
            plain=True,
        )

    def append_stored(self, events: Iterable[Stored]) -> int:
        """Append Harn ``StoredEvent`` values as they are, in one durable transaction; return
        how many were written.

        Each is checked against ``session-event.stored``; its record and previous
        hashes are kept (Harn's store computed them).  Ids must increase within
        each session, through the batch and after the session's last id.  On any
        refusal or failure nothing of the batch is written.
        """
        batch = [dict(event) if isinstance(event, Mapping) else event for event in events]
        problems = capped(stored_refusals(event, index=index) for index, event in enumerate(batch))
        if problems:
            raise JournalWriteError(problems)
        return self._write(
            lambda _previous: batch,
            sessions={event["session_id"] for event in batch},
            id_member="event_id",
        )

    def _write(
        self,
        stored_forms: Callable[[Mapping[str, str]], Sequence[Stored]],
        *,
        sessions: set[str],
        id_member: str,
        plain: bool = False,
    ) -> int:
        """Encode and insert the stored forms ``stored_forms(previous)`` gives, where
        ``previous`` maps each session to its last record hash, in one transaction.
        ``plain``: the stored forms are built of checked journal events, which have an
        RFC 8785 form, and so only of JSON's own types, every float finite."""
        connection = self._open_connection()
        if not self._writable:
            raise _write_error(
                WRITE_REJECTED,
                "the journal was opened read-only",
                "open it with SqliteJournal.open(path, writable=True) to append",
            )
        if not sessions:
            return 0
        # No source: an import restates the failure at the file it imports.
        with _COMMIT_FAILED.raised_for(""):
            connection.execute("BEGIN IMMEDIATE")
            try:
                tails = self._tails(connection, sessions)
                previous = {session: tail[1] for session, tail in tails.items()}
                stored = stored_forms(previous)
                rows, problems = _encode_batch(
                    stored, {s: t[0] for s, t in tails.items()}, id_member, plain=plain
                )
                if problems:
                    raise JournalWriteError(problems)
                connection.executemany(_INSERT, rows)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        return len(rows)

    @staticmethod
    def _tails(connection: sqlite3.Connection, sessions: set[str]) -> dict[str, tuple[int, str]]:
        """Each session's last (event_id, record_hash), for the sessions that have events."""
        tails: dict[str, tuple[int, str]] = {}
        for session in sorted(sessions):
            row = connection.execute(
                "SELECT event_id, record_hash FROM session_events WHERE session_id = ? "
                "ORDER BY event_id DESC LIMIT 1",
                (session,),
            ).fetchone()
            if row is not None:
                tails[session] = (int(row[0]), str(row[1]))
        return tails

    # ------------------------------------------------------------------ reading

    def last_event_id(self, session_id: str) -> int | None:
        """The session's highest event id, None when it has no event."""
        rows = self._fetch(
            "SELECT max(event_id) FROM session_events WHERE session_id = ?", (session_id,)
        )
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    def has_session(self, session_id: str) -> bool:
        """Whether the journal holds at least one event of ``session_id``."""
        rows = self._fetch(
            "SELECT 1 FROM session_events WHERE session_id = ? LIMIT 1", (session_id,)
        )
        return bool(rows)

    def _bounded_rows(self, session_id: str, from_event_id: int | None, limit: int) -> list[_Row]:
        start = _read_start(from_event_id, limit)
        if start > _MAX_EVENT_ID:
            rows: list[_Row] = []  # past every id a journal row can hold
        else:
            # One row past the bound says whether more events follow, and which.
            rows = self._fetch(
                f"{_SELECT} WHERE session_id = ? AND event_id >= ? ORDER BY event_id LIMIT ?",
                (session_id, start, _rows_to_fetch(limit)),
            )
        if not rows and not self.has_session(session_id):
            raise _session_missing(session_id, self._source)
        return rows

    def iter_events(
        self, *, session_id: str | None = None, page_size: int = 4096
    ) -> Iterator[Stored]:
        """Every stored event (of one session, in id order, when ``session_id`` is given;
        else the whole journal in append order), page by page."""
        if session_id is not None:
            next_id: int | None = 0
            while True:
                result = self.read(session_id, from_event_id=next_id, limit=page_size)
                yield from result.events
                if result.next_event_id is None:
                    return
                next_id = result.next_event_id
        start = 0
        while True:
            rows = self._fetch(f"{_SELECT} WHERE seq > ? ORDER BY seq LIMIT ?", (start, page_size))
            yield from self._decode_all(rows)
            if len(rows) < page_size:
                return
            start = rows[-1][0]

    def read_by_execution_id(
        self, execution_id: str | None, *, topic: str | None = None
    ) -> tuple[Stored, ...]:
        """Every stored event whose ``execution_id`` header is ``execution_id`` (``None``:
        no such header, outside any VM scope), and whose ``topic`` header is ``topic``
        when given, in append order.  The selection reads the indexed columns, never the
        bodies; each selected row is then checked like every read."""
        clauses = ["execution_id IS ?"]
        parameters: list[Any] = [execution_id]
        if topic is not None:
            clauses.append("topic = ?")
            parameters.append(topic)
        rows = self._fetch(f"{_SELECT} WHERE {' AND '.join(clauses)} ORDER BY seq", parameters)
        return tuple(self._decode_all(rows))

    def statistics(self) -> tuple[int, int, int | None, int | None]:
        """(sessions, events, lowest event id, highest event id) of the whole journal."""
        ((sessions, events, low, high),) = self._fetch(
            "SELECT count(DISTINCT session_id), count(*), min(event_id), max(event_id) "
            "FROM session_events",
            (),
        )
        return int(sessions), int(events), low, high

    def _fetch(self, sql: str, parameters: Sequence[Any]) -> list[_Row]:
        connection = self._open_connection()
        source = str(self._path)
        # The inner one first: an OperationalError is a DatabaseError too.
        with _DAMAGED.raised_for(source), _READ_FAILED.raised_for(source):
            return connection.execute(sql, parameters).fetchall()


def _read_start(from_event_id: int | None, limit: int) -> int:
    """The first id a read asks for (1 when ``None``), its arguments checked."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer, not {limit!r}")
    start = 1 if from_event_id is None else from_event_id
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"from_event_id must be an unsigned integer, not {from_event_id!r}")
    return start


def _rows_to_fetch(limit: int) -> int:
    """One row past the bound (within SQLite's integers): whether more events follow."""
    return min(limit, _MAX_EVENT_ID - 1) + 1


def _session_missing(session_id: str, source: str) -> SessionMissing:
    return SessionMissing(
        [
            Finding(
                "$.sessionId",
                SessionMissing.code,
                f"the journal holds no event of session {session_id!r}",
                "check the session id",
                source=source,
            )
        ],
        session_id=session_id,
    )


class MemoryJournal(_SessionReads, AbstractContextManager["MemoryJournal"]):
    """A fresh journal after one :meth:`SqliteJournal.append_checked`, held in memory:
    the rows that append writes to a new file (columns and stored bytes), which
    :meth:`read` reads as :meth:`SqliteJournal.read` reads them from the file (the same
    selection, the same checks of every row, the same result), without SQLite.

    For a journal written once, read once and thrown away (the reference producer's
    recap cases, docs/journal.md "In memory"): there the file adds nothing to the
    answer and its writes and reads cost a third of a large case's CPU.  Make one with
    :meth:`of_checked`; it is read-only, and closing it does nothing.
    """

    def __init__(self, rows: Sequence[_Row], *, source: str = "memory") -> None:
        # Rows as SqliteJournal fetches them: seq, the copied columns, the stored bytes.
        self._rows = tuple(rows)
        self.source = source

    @classmethod
    def of_checked(cls, events: CheckedEvents, *, source: str = "memory") -> MemoryJournal:
        """The journal ``append_checked(events)`` makes of a new file; raises
        :class:`JournalWriteError` where that append would."""
        rows, problems = _encode_batch(stored_forms(events, {}), {}, "id", plain=True)
        if problems:
            raise JournalWriteError(problems)
        # seq: SQLite numbers a new table's rows 1, 2, 3, ... in insert order.
        return cls(
            [(seq, *row[:-1], row[-1].encode("utf-8")) for seq, row in enumerate(rows, 1)],
            source=source,
        )

    def __exit__(self, *exc_info: object) -> None:
        return None

    @property
    def _source(self) -> str:
        return self.source

    def _session_rows(self, session_id: str) -> list[_Row]:
        # In id order: the append refuses a session's ids in any other order.
        return [row for row in self._rows if row[1] == session_id]

    def last_event_id(self, session_id: str) -> int | None:
        rows = self._session_rows(session_id)
        return int(rows[-1][2]) if rows else None

    def _bounded_rows(self, session_id: str, from_event_id: int | None, limit: int) -> list[_Row]:
        start = _read_start(from_event_id, limit)
        session = self._session_rows(session_id)
        if not session:
            raise _session_missing(session_id, self._source)
        return [row for row in session if row[2] >= start][: _rows_to_fetch(limit)]


# ------------------------------------------------------------------- quick check


def _quick_check_all(rows: Sequence[_Row]) -> list[dict[str, Any] | None]:
    """Each row's parsed event if the quick path vouches for it, else ``None``.

    Vouching means the full check (:func:`decode_stored_form`) accepts the row
    and parses it to the same value: the bytes are their own canonical form (so
    no duplicate key, whitespace or unsafe integer), within the strict reader's
    size and nesting limits, and the event passes the contract.  ``None`` sends
    the row to the full check, which decides and names the problem.
    """
    datas: list[bytes] = [row[-1] for row in rows]
    parsed = _parsed_rows(datas)
    is_valid = quick_validator(STORED_EVENT_DOCUMENT_TYPE).is_valid
    if None not in parsed:  # the usual case: every row parsed, check them as one batch
        canonical = _canonical_rows(parsed, datas)
        # Every row its own canonical text, which is orjson's compact text of its parse:
        # the texts say whether an integral float is held.
        if all(canonical) and default_validator().all_valid(
            STORED_EVENT_DOCUMENT_TYPE,
            parsed,
            may_hold_integral_float=any(
                compact_text_may_hold_integral_float(b",".join(datas[at : at + _TEXT_CHUNK]))
                for at in range(0, len(datas), _TEXT_CHUNK)
            ),
        ):
            return list(parsed)
        pairs = zip(parsed, canonical, strict=True)
        return [raw if same and is_valid(raw) else None for raw, same in pairs]
    candidates = [index for index, raw in enumerate(parsed) if raw is not None]
    canonical = _canonical_rows([parsed[i] for i in candidates], [datas[i] for i in candidates])
    out: list[dict[str, Any] | None] = [None] * len(rows)
    for index, same in zip(candidates, canonical, strict=True):
        if same and is_valid(parsed[index]):
            out[index] = parsed[index]
    return out


def _parsed_rows(datas: list[bytes]) -> list[Any]:
    """Each row's parse, or ``None`` where the quick path cannot judge it: beyond the strict
    reader's size or nesting limits (it judges those), not JSON, not an object, or with an
    envelope integer that is not an int."""
    # The usual rows all at once, the loops in C (maps); any doubt, row by row.
    if datas and (
        max(map(len, datas)) <= MAX_DOCUMENT_BYTES
        and max(
            map(add, map(bytes.count, datas, repeat(b"{")), map(bytes.count, datas, repeat(b"[")))
        )
        <= MAX_DEPTH
    ):
        try:
            every = list(map(orjson.loads, datas))
        except ValueError:
            pass
        else:
            return [
                raw if isinstance(raw, dict) and _integral_members(raw) else None for raw in every
            ]
    parsed: list[Any] = []
    for data in datas:
        if len(data) > MAX_DOCUMENT_BYTES or _opening_count(data) > MAX_DEPTH:
            parsed.append(None)  # the strict reader's limits might apply: let it judge
            continue
        try:
            raw = orjson.loads(data)
        except ValueError:
            raw = None
        parsed.append(raw if isinstance(raw, dict) and _integral_members(raw) else None)
    return parsed


def _integral_members(raw: dict[str, Any]) -> bool:
    """The envelope's integer members are ints (the quick validator is exact only on
    documents whose integers are ints; the opaque payload holds what it likes)."""
    return (
        type(raw.get("event_id")) is int
        and type(raw.get("ts_ms")) is int
        and (raw.get("parent_event_id") is None or type(raw.get("parent_event_id")) is int)
    )


def _canonical_rows(raws: list[Any], datas: list[bytes]) -> list[bool]:
    """Whether each stored text is the canonical form of its parse.

    Canonicalized ``_TEXT_CHUNK`` rows at once: the canonical form of an array
    is its elements' canonical forms joined by commas, and each text is one
    complete JSON value, so if the array's form equals the texts so joined,
    every text equals its element's form (the top-level commas fall in the
    same places).  Only when that fails is each row canonicalized on its own.
    """
    out: list[bool] = []
    for at in range(0, len(raws), _TEXT_CHUNK):
        out.extend(_canonical_chunk(raws[at : at + _TEXT_CHUNK], datas[at : at + _TEXT_CHUNK]))
    return out


# Rows whose texts are joined at once: the joined copies stay a few megabytes, not
# three copies of a whole read (a 32,768-event read is 40 MB of text).
_TEXT_CHUNK = 1024


def _canonical_chunk(raws: list[Any], datas: list[bytes]) -> list[bool]:
    try:
        if harn_canonical_bytes_of_parsed(raws) == b"[" + b",".join(datas) + b"]":
            return [True] * len(raws)
    except InvalidDocument:
        pass
    out = []
    for raw, data in zip(raws, datas, strict=True):
        try:
            out.append(harn_canonical_bytes_of_parsed(raw) == data)
        except InvalidDocument:
            out.append(False)
    return out


def quick_validator(doctype: str) -> Any:
    """A jsonschema-rs validator of ``doctype`` whose ``is_valid`` agrees with the
    toolkit's validator on documents whose integers are ints, about three times
    faster on large documents (:meth:`DocumentValidator.ints_only_validator`)."""
    return default_validator().ints_only_validator(doctype)


def _encode_batch(
    events: Sequence[Stored], tails: Mapping[str, int], id_member: str, *, plain: bool = False
) -> tuple[list[_Row], list[Finding]]:
    """Rows for a batch of checked stored events, or the findings that refuse it: ids
    increase within each session, after the session's last id in the journal.
    ``plain``: the events hold only JSON's own types, every float finite and every integer
    within +-(2**53 - 1), as the stored forms of checked journal events do (see ``_write``)."""
    rows: list[_Row] = []
    problems: list[Finding] = []
    ids = SessionIdOrder(tails, id_member=id_member)
    # One look at the whole batch (the usual answer: every integer held, every event with
    # Harn's canonical form, cut out of the batch's), else at each event.
    # A plain batch's integers are all safe ones (RFC 8785 refuses the rest), and so held.
    all_held = plain or unheld_integer(list(events)) is None
    bodies = _harn_forms(events, plain=plain)
    if all_held and bodies is not None:
        in_order = _rows_in_order(events, bodies, tails)
        if in_order is not None:
            return in_order, problems
    for index, event in enumerate(events):
        if len(problems) >= MAX_FINDINGS:
            break
        try:
            body = bodies[index] if bodies is not None else harn_canonical_bytes(dict(event))
        except InvalidDocument as exc:
            problems.extend(rejected(exc.findings, index=index, event_id=event["event_id"]))
            continue
        unheld = None if all_held else unheld_refusal(event, index=index)
        if unheld is not None:
            problems.append(unheld)
            continue
        order = ids.refusal(event["session_id"], event["event_id"], index=index)
        if order is not None:
            problems.append(order)
            continue
        rows.append((*copied_columns(event), body.decode("utf-8")))
    return rows, problems


def _rows_in_order(
    events: Sequence[Stored], bodies: Sequence[bytes], tails: Mapping[str, int]
) -> list[_Row] | None:
    """The rows of a batch of one session whose ids increase through the batch and after
    the session's last id in the journal (the usual batch, decided at once); None when
    the batch is not so, and ``_encode_batch`` looks at each event."""
    sessions = set(map(itemgetter("session_id"), events))
    if len(sessions) != 1:
        return None
    (session,) = sessions
    ids = list(map(itemgetter("event_id"), events))
    tail = tails.get(session)
    if (tail is not None and not ids[0] > tail) or not all(map(lt, ids, ids[1:])):
        return None
    return [
        (*copied_columns(event), body)
        for event, body in zip(events, map(bytes.decode, bodies), strict=True)
    ]


def _harn_forms(events: Sequence[Stored], *, plain: bool) -> list[bytes] | None:
    """Harn's canonical bytes of each stored event, encoded as one list and cut
    (:func:`element_forms`); None when the batch has no such form or cannot be cut.
    ``plain``: the events hold only JSON's own types, every float finite, which the
    type census would find again (``harn_canonical_bytes_of_parsed``)."""
    encode = harn_canonical_bytes_of_parsed if plain else harn_canonical_bytes
    try:
        whole = encode(list(events))
    except InvalidDocument:
        return None
    return element_forms(events, whole)


# The layout before this one: journal-model events, one per row, ids across sessions.
_LAYOUT_ONE = 1
SQLITE_HEADER = b"SQLite format 3\x00"


def damage_events(path: str | os.PathLike[str], event_ids: Sequence[int], data: str) -> None:
    """Overwrite the stored bytes of these events with ``data``, as a torn write or bit rot
    would (the damaged-rows condition of ``recap.project``); nothing else is touched."""
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executemany(
                "UPDATE session_events SET event = ? WHERE event_id = ?",
                [(data, event_id) for event_id in event_ids],
            )
    finally:
        connection.close()


def journal_file_items(path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
    """(place, parsed event) of every event of a journal file, to import elsewhere: a
    journal of this layout gives its stored events (append order); one of layout 1 (which
    held journal-model events) gives those, in id order, so ``journal import`` moves an
    old journal into a new one.  Anything else raises :class:`JournalUnavailable`."""
    source = str(path)
    try:
        with SqliteJournal.open(path) as journal:
            return [
                (f"{source}#{event['session_id']}/event-{event['event_id']}", event)
                for event in journal.iter_events()
            ]
    except JournalUnavailable:
        rows = _layout_one_rows(Path(path))
        if rows is None:
            raise
    items = []
    for event_id, body in rows:
        place = f"{source}#event-{event_id}"
        try:
            items.append((place, loads_strict(body)))
        except InvalidDocument as exc:
            raise corrupt(exc.findings, source=place, event_id=event_id) from None
    return items


def _layout_one_rows(path: Path) -> list[tuple[int, bytes]] | None:
    """The (id, event) rows of a layout-1 journal, or None when ``path`` is not one."""
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        connection.execute("PRAGMA query_only = ON")
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if application_id != APPLICATION_ID or version != _LAYOUT_ONE:
            return None
        rows = connection.execute(
            "SELECT id, CAST(event AS BLOB) FROM session_events ORDER BY id"
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    return [(int(event_id), bytes(body)) for event_id, body in rows]


def _prepare(connection: sqlite3.Connection, source: str, *, create: bool, writable: bool) -> None:
    if not writable:
        connection.execute("PRAGMA query_only = ON")
    if create and _is_blank(connection):
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            if _is_blank(connection):  # another writer may have created it meanwhile
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                connection.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
                for statement in _CREATE:
                    connection.execute(statement)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
    _check_layout(connection, source)
    if writable:
        connection.execute("PRAGMA journal_mode = WAL")
        # WAL with synchronous = NORMAL may lose the last commits on power loss;
        # FULL syncs the WAL at every commit, which "durable" means here.
        connection.execute("PRAGMA synchronous = FULL")


def _is_blank(connection: sqlite3.Connection) -> bool:
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    objects = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    return bool(application_id == 0 and objects == 0)


def _check_layout(connection: sqlite3.Connection, source: str) -> None:
    hint = "pass a session journal written by SqliteJournal"
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    if application_id != APPLICATION_ID:
        raise _unavailable(
            source,
            f"the file is a SQLite database but not a session journal "
            f"(application_id {application_id:#010x}, expected {APPLICATION_ID:#010x})",
            hint,
        )
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version != FORMAT_VERSION:
        raise _unavailable(
            source,
            f"the journal has layout version {version}; this toolkit reads {FORMAT_VERSION}",
            "import it into a new journal: session-contracts journal import OLD --journal NEW",
        )
    columns = tuple(row[1] for row in connection.execute("PRAGMA table_info(session_events)"))
    if columns != _COLUMNS:
        raise _unavailable(
            source, "the journal's session_events table does not have the journal's columns", hint
        )


def _column_mismatches(row: _Row, body: Sequence[Any]) -> list[Finding]:
    return [
        Finding(
            "$",
            JournalCorrupt.code,
            f"the row's {column} column holds {stored!r} but the event says {said!r}",
        )
        for column, stored, said in zip(_COPIED, row[1:-1], body, strict=True)
        if type(stored) is not type(said) or stored != said
    ]
