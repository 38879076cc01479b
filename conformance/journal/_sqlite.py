"""The SQLite session journal: the durable, indexed event log that projections read.

One table, ``session_events``: the event id is the ``INTEGER PRIMARY KEY``
(SQLite's rowid, so id order is storage order), the header columns a reader
filters or joins on are copied out of the event and indexed, and the whole
canonical event is kept as JSON text.  Headers are copies, so every read
checks them against the body: a row whose columns and body disagree is
corrupt, never silently trusted one way or the other.

Readers open the file through a read-only URI (``mode=ro``) and also set
``PRAGMA query_only``, so a projection cannot write even by mistake.  Writers
use WAL mode (readers keep reading while one writer appends) with
``synchronous = FULL``, so a committed batch survives a power cut.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from session_contracts.conformance.journal._model import (
    MAX_FINDINGS,
    WRITE_FAILED,
    WRITE_REJECTED,
    JournalCorrupt,
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    SessionMissing,
    canonical_event_bytes,
    corrupt,
    decode_stored_event,
    rejected,
)

from session_contracts._errors import Finding, InvalidDocument

__all__ = ["APPLICATION_ID", "FORMAT_VERSION", "ReadResult", "SqliteJournal"]

# Written to the database header (PRAGMA application_id): "SJNL" marks a file
# as a session journal, so any other SQLite database is refused, not misread.
APPLICATION_ID = 0x534A4E4C
FORMAT_VERSION = 1  # PRAGMA user_version: the layout below
_BUSY_TIMEOUT_S = 5.0
_MAX_ROW_ID = 2**63 - 1

_COLUMNS = (
    "id",
    "session_id",
    "run_id",
    "turn_id",
    "iteration",
    "execution_id",
    "topic",
    "kind",
    "event",
)
# Header columns as the event body spells them, in _COLUMNS order (without "event").
_WIRE_NAMES = (
    "id",
    "sessionId",
    "runId",
    "turnId",
    "iteration",
    "executionId",
    "topic",
    "kind",
)

_CREATE = (
    """
    CREATE TABLE session_events (
        id           INTEGER PRIMARY KEY,
        session_id   TEXT NOT NULL,
        run_id       TEXT,
        turn_id      TEXT,
        iteration    INTEGER,
        execution_id TEXT,
        topic        TEXT NOT NULL,
        kind         TEXT NOT NULL,
        event        TEXT NOT NULL
    ) STRICT
    """,
    # Bounded session reads: WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?
    "CREATE INDEX session_events_session_id ON session_events (session_id, id)",
    "CREATE INDEX session_events_run_id ON session_events (run_id)",
    "CREATE INDEX session_events_turn_id ON session_events (turn_id)",
    "CREATE INDEX session_events_topic ON session_events (topic)",
    "CREATE INDEX session_events_execution_id ON session_events (execution_id)",
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM session_events"
_INSERT = f"INSERT INTO session_events VALUES ({', '.join('?' for _ in _COLUMNS)})"

_Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ReadResult:
    """One bounded read of a session.

    ``scanned`` counts the session's events read within the limit, in id
    order; ``events`` are those of them that pass the run and turn filters.
    ``last_event_id`` is the last scanned id; ``next_event_id`` is the id of
    the session's next event after it, or ``None`` when the read reached the
    end: pass it as ``from_event_id`` to continue.
    """

    events: tuple[SessionEvent, ...]
    scanned: int
    last_event_id: int | None
    next_event_id: int | None

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


class SqliteJournal:
    """A session journal in one SQLite file.  Open it with :meth:`open`."""

    def __init__(self, connection: sqlite3.Connection, *, path: Path, writable: bool) -> None:
        self._connection: sqlite3.Connection | None = connection
        self._path = path
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
        try:
            connection = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=_BUSY_TIMEOUT_S
            )
        except sqlite3.Error as exc:
            raise _unavailable(
                source, f"SQLite cannot open the file: {exc}", "check the path and permissions"
            ) from None
        try:
            if not writable:
                connection.execute("PRAGMA query_only = ON")
            _prepare(connection, source, create=create, writable=writable)
        except sqlite3.Error as exc:
            connection.close()
            raise _unavailable(
                source,
                f"the file is not a readable SQLite database: {exc}",
                "pass a session journal written by SqliteJournal",
            ) from None
        except BaseException:
            connection.close()
            raise
        return cls(connection, path=location, writable=writable)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def writable(self) -> bool:
        return self._writable

    @property
    def closed(self) -> bool:
        return self._connection is None

    def close(self) -> None:
        """Close the connection; closing twice is harmless."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> SqliteJournal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _open_connection(self) -> sqlite3.Connection:
        if self._connection is None:
            raise _unavailable(
                str(self._path), "the journal is closed", "open it again with SqliteJournal.open"
            )
        return self._connection

    # ------------------------------------------------------------------ writing

    def append(self, events: Iterable[SessionEvent]) -> int:
        """Append ``events`` in one durable transaction; return how many were written.

        Every event is checked against the contract first.  Ids must increase
        through the batch and follow the journal's last id; a duplicate id is
        refused.  On any refusal or failure nothing of the batch is written
        and :class:`JournalWriteError` says why.
        """
        connection = self._open_connection()
        if not self._writable:
            raise _write_error(
                WRITE_REJECTED,
                "the journal was opened read-only",
                "open it with SqliteJournal.open(path, writable=True) to append",
            )
        rows, problems = _encode_batch(events)
        if problems:
            raise JournalWriteError(problems)
        if not rows:
            return 0
        try:
            connection.execute("BEGIN IMMEDIATE")
            refusal = _refuse_existing_ids(connection, rows[0][0])
            if refusal is not None:
                connection.execute("ROLLBACK")
                raise refusal
            connection.executemany(_INSERT, rows)
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise _write_error(
                WRITE_FAILED,
                f"SQLite could not commit the batch: {exc}",
                "check disk space and permissions; retry once no other writer holds the lock",
            ) from None
        return len(rows)

    # ------------------------------------------------------------------ reading

    def has_session(self, session_id: str) -> bool:
        """Whether the journal holds at least one event of ``session_id``."""
        rows = self._fetch(
            "SELECT 1 FROM session_events WHERE session_id = ? LIMIT 1", (session_id,)
        )
        return bool(rows)

    def read(
        self,
        session_id: str,
        *,
        run_id: str | None = None,
        turn_id: str | None = None,
        from_event_id: int | None = None,
        limit: int,
    ) -> ReadResult:
        """Scan at most ``limit`` of the session's events from ``from_event_id`` on.

        The bound counts scanned source events, not matches: the run and turn
        filters apply after scanning, so a read costs the same whatever it
        matches.  Every scanned event is checked; a bad one raises
        :class:`JournalCorrupt`.  A session without events raises
        :class:`SessionMissing`; a read past a session's last event returns
        nothing scanned.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive integer, not {limit!r}")
        start = 0 if from_event_id is None else from_event_id
        if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= _MAX_ROW_ID:
            raise ValueError(f"from_event_id must be an unsigned integer, not {from_event_id!r}")
        # One row past the bound says whether more events follow, and which.
        rows = self._fetch(
            f"{_SELECT} WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?",
            (session_id, start, min(limit, _MAX_ROW_ID - 1) + 1),
        )
        if not rows and not self.has_session(session_id):
            raise SessionMissing(
                [
                    Finding(
                        "$.sessionId",
                        SessionMissing.code,
                        f"the journal holds no event of session {session_id!r}",
                        "check the session id",
                        source=str(self._path),
                    )
                ],
                session_id=session_id,
            )
        scanned = [self._decode(row) for row in rows[:limit]]
        matched = tuple(
            event
            for event in scanned
            if (run_id is None or event.run_id == run_id)
            and (turn_id is None or event.turn_id == turn_id)
        )
        return ReadResult(
            events=matched,
            scanned=len(scanned),
            last_event_id=scanned[-1].id if scanned else None,
            next_event_id=rows[limit][0] if len(rows) > limit else None,
        )

    def iter_events(
        self, *, session_id: str | None = None, page_size: int = 4096
    ) -> Iterator[SessionEvent]:
        """Every event in id order (of one session when ``session_id`` is given), page by page."""
        if session_id is not None:
            next_id: int | None = None
            while True:
                result = self.read(session_id, from_event_id=next_id, limit=page_size)
                yield from result.events
                if result.next_event_id is None:
                    return
                next_id = result.next_event_id
        start = 0
        while True:
            rows = self._fetch(f"{_SELECT} WHERE id >= ? ORDER BY id LIMIT ?", (start, page_size))
            for row in rows:
                yield self._decode(row)
            if len(rows) < page_size:
                return
            start = rows[-1][0] + 1

    def _fetch(self, sql: str, parameters: Sequence[Any]) -> list[_Row]:
        connection = self._open_connection()
        source = str(self._path)
        try:
            return connection.execute(sql, parameters).fetchall()
        except sqlite3.OperationalError as exc:
            raise _unavailable(
                source, f"SQLite could not read the journal: {exc}", "retry; check the file"
            ) from None
        except sqlite3.DatabaseError as exc:
            problem = Finding("$", JournalCorrupt.code, f"the database file is damaged: {exc}")
            raise corrupt([problem], source=source) from None

    def _decode(self, row: _Row) -> SessionEvent:
        event_id, text = row[0], row[-1]
        source = f"{self._path}#event-{event_id}"
        event = decode_stored_event(text, source=source, event_id=event_id)
        body = (
            event.id,
            event.session_id,
            event.run_id,
            event.turn_id,
            event.iteration,
            event.execution_id,
            event.topic,
            event.kind,
        )
        if body != row[:-1] or any(type(a) is not type(b) for a, b in zip(body, row, strict=False)):
            raise corrupt(_header_mismatches(row, body), source=source, event_id=event_id)
        return event


def _prepare(connection: sqlite3.Connection, source: str, *, create: bool, writable: bool) -> None:
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
            "read it with the toolkit version that wrote it",
        )
    columns = tuple(row[1] for row in connection.execute("PRAGMA table_info(session_events)"))
    if columns != _COLUMNS:
        raise _unavailable(
            source, "the journal's session_events table does not have the journal's columns", hint
        )


def _encode_batch(events: Iterable[SessionEvent]) -> tuple[list[_Row], list[Finding]]:
    """Rows for a batch, or the findings that refuse it (ids must increase)."""
    rows: list[_Row] = []
    problems: list[Finding] = []
    previous: int | None = None
    for index, event in enumerate(events):
        if len(problems) >= MAX_FINDINGS:
            break
        try:
            body = canonical_event_bytes(event)
        except InvalidDocument as exc:
            problems.extend(rejected(exc.findings, index=index, event_id=event.id))
            continue
        if previous is not None and event.id <= previous:
            problems.append(
                Finding(
                    f"$[{index}].id",
                    WRITE_REJECTED,
                    f"event id {event.id} does not follow the batch's previous id {previous}",
                    "ids are unique and increase in append order; sort the batch by id",
                )
            )
        previous = event.id
        rows.append(
            (
                event.id,
                event.session_id,
                event.run_id,
                event.turn_id,
                event.iteration,
                event.execution_id,
                event.topic,
                event.kind,
                body.decode("utf-8"),
            )
        )
    return rows, problems


def _refuse_existing_ids(connection: sqlite3.Connection, first_id: int) -> JournalWriteError | None:
    last = connection.execute("SELECT max(id) FROM session_events").fetchone()[0]
    if last is None or first_id > last:
        return None
    exists = connection.execute("SELECT 1 FROM session_events WHERE id = ?", (first_id,)).fetchone()
    message = (
        f"event id {first_id} is already in the journal"
        if exists
        else f"event id {first_id} does not follow the journal's last id {last}"
    )
    return _write_error(
        WRITE_REJECTED,
        message,
        "ids are unique and increase in append order; number new events after the last id",
        "$[0].id",
    )


def _header_mismatches(row: _Row, body: Sequence[Any]) -> list[Finding]:
    return [
        Finding(
            f"$.{wire}",
            JournalCorrupt.code,
            f"the row's {column} column holds {stored!r} but the event says {said!r}",
        )
        for column, wire, stored, said in zip(_COLUMNS, _WIRE_NAMES, row, body, strict=False)
        if type(stored) is not type(said) or stored != said
    ]
