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

Reads check every row, and most rows take a quick path that is exact: a row
the journal wrote is the canonical JSON of a valid event, so a row whose
bytes equal the canonical form of their own parse (orjson, then
``canonical_bytes``, all rows at once) and that passes a jsonschema-rs
validator with the per-value x- keywords restated in plain JSON Schema
(:func:`quick_validator`) is exactly a row the full check accepts.  Any row the
quick path does not vouch for goes through the full check, which names the
problem.  The canonical bytes double as the record hash's input
(:meth:`SqliteJournal.read_records`), so each row is canonicalized once.
"""

from __future__ import annotations

import operator
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from session_contracts.conformance.reference._closing import ClosedOnExit
from session_contracts.conformance.reference.journal._model import (
    EVENT_DOCUMENT_TYPE,
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

from session_contracts._canonical import (
    HASH_PREFIX,
    canonical_bytes,
    hash_bytes,
)
from session_contracts._errors import Finding, InvalidDocument
from session_contracts._jsonload import MAX_DEPTH, MAX_DOCUMENT_BYTES
from session_contracts._validator import default_validator

try:
    from session_contracts._linescan import opening_count as _opening_count
except ImportError:  # built without a C compiler: two passes of bytes.count

    def _opening_count(raw: bytes, /) -> int:
        return raw.count(b"{") + raw.count(b"[")


__all__ = [
    "APPLICATION_ID",
    "FORMAT_VERSION",
    "EventRecord",
    "ReadResult",
    "RecordRead",
    "SqliteJournal",
    "quick_validator",
]

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
# The body comes back as its stored UTF-8 bytes: parsed and compared as bytes,
# never decoded to str and encoded again.
_SELECT = f"SELECT {', '.join(_COLUMNS[:-1])}, CAST(event AS BLOB) FROM session_events"
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


class EventRecord(NamedTuple):
    """One checked event in its wire form, with its record hash (docs/hashing.md 4.1).

    ``event`` is the parsed JSON object (camelCase members, every header
    present), a plain ``dict`` shared with no one else but meant to be read
    only; ``record_hash`` is the hash of its canonical bytes.  (A named tuple,
    not a dataclass: a read makes 32,768 of them, and tuples are made fastest.)
    """

    event: Mapping[str, Any]
    record_hash: str

    @property
    def id(self) -> int:
        event_id: int = self.event["id"]
        return event_id


@dataclass(frozen=True, slots=True)
class RecordRead:
    """One bounded read as :class:`EventRecord` values, unfiltered: what a recap reads.

    ``records`` are every event of the session read within the limit, in id
    order; ``rows_beyond`` counts the session's events after the last one read
    (0 when nothing was read); ``next_event_id`` is the id of the first of them.
    """

    records: tuple[EventRecord, ...]
    scanned: int
    last_event_id: int | None
    next_event_id: int | None
    rows_beyond: int = 0

    @property
    def matched(self) -> int:
        return len(self.records)

    @property
    def has_more(self) -> bool:
        return self.next_event_id is not None


def _unavailable(source: str, message: str, hint: str) -> JournalUnavailable:
    return JournalUnavailable([Finding("$", JournalUnavailable.code, message, hint, source=source)])


def _write_error(code: str, message: str, hint: str, path: str = "$") -> JournalWriteError:
    return JournalWriteError([Finding(path, code, message, hint)])


class SqliteJournal(ClosedOnExit):
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

    def last_event_id(self) -> int | None:
        """The highest event id in the journal (any session), None when it is empty."""
        rows = self._fetch("SELECT max(id) FROM session_events", ())
        return None if not rows or rows[0][0] is None else int(rows[0][0])

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
        rows = self._bounded_rows(session_id, from_event_id, limit)
        scanned = self._decode_all(rows[:limit])
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

    def read_records(
        self,
        session_id: str,
        *,
        from_event_id: int | None = None,
        limit: int,
    ) -> RecordRead:
        """:meth:`read` without filters, giving each event as wire JSON with its record hash.

        The same bound, checks and errors as :meth:`read`; every scanned event
        comes back (a recap applies its run and turn filters itself, and lists
        every event read in ``source``), as :class:`EventRecord` (a plain parsed
        ``dict`` and the hash of its canonical bytes) instead of
        :class:`SessionEvent`, without building read-only copies.  It also
        counts the session's events beyond the read (``rows_beyond``).
        """
        rows = self._bounded_rows(session_id, from_event_id, limit)
        bounded = rows[:limit]
        scanned: list[EventRecord] = []
        append = scanned.append
        make = tuple.__new__  # EventRecord(...) without its Python-level __new__
        for row, checked in zip(bounded, _quick_check_all(bounded), strict=True):
            # The common case inline (a checked event whose headers agree): this
            # loop runs once per row of a 32,768-event read.
            if checked is not None and _HEADERS_OF(checked) == row[:-1]:
                append(make(EventRecord, (checked, HASH_PREFIX + sha256(row[-1]).hexdigest())))
            else:
                append(self._record(row, checked))
        beyond = 0
        if len(rows) > limit:
            counted = self._fetch(
                "SELECT count(*) FROM session_events WHERE session_id = ? AND id > ?",
                (session_id, scanned[-1].id),
            )
            beyond = int(counted[0][0])
        return RecordRead(
            records=tuple(scanned),
            scanned=len(scanned),
            last_event_id=scanned[-1].id if scanned else None,
            next_event_id=rows[limit][0] if len(rows) > limit else None,
            rows_beyond=beyond,
        )

    def _bounded_rows(self, session_id: str, from_event_id: int | None, limit: int) -> list[_Row]:
        """At most ``limit + 1`` of the session's rows from ``from_event_id`` on, in id order."""
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
        return rows

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
            yield from self._decode_all(rows)
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
            # SQLite cannot read the file (truncated or damaged under us): the
            # journal is not available (seed 002), as when it cannot be opened.
            raise _unavailable(
                source,
                f"the file is not a readable SQLite database: {exc}",
                "restore the journal from a copy; SQLite cannot read this file",
            ) from None

    def _decode_all(self, rows: Sequence[_Row]) -> list[SessionEvent]:
        return [
            self._decode(row, checked)
            for row, checked in zip(rows, _quick_check_all(rows), strict=True)
        ]

    def _decode(self, row: _Row, checked: dict[str, Any] | None) -> SessionEvent:
        if checked is not None:
            self._check_checked_headers(row, checked)
            return SessionEvent._from_valid(checked)
        event_id = row[0]
        source = f"{self._path}#event-{event_id}"
        event = decode_stored_event(row[-1], source=source, event_id=event_id)
        self._check_headers(row, _HEADERS_OF(event.to_json()))
        return event

    def _record(self, row: _Row, checked: dict[str, Any] | None) -> EventRecord:
        if checked is not None:
            self._check_checked_headers(row, checked)
            # The quick check showed the stored bytes are the canonical form.
            return EventRecord(checked, hash_bytes(row[-1]))
        event_id = row[0]
        source = f"{self._path}#event-{event_id}"
        raw = decode_stored_event(row[-1], source=source, event_id=event_id).to_json()
        self._check_headers(row, _HEADERS_OF(raw))
        return EventRecord(raw, hash_bytes(canonical_bytes(raw)))

    def _check_checked_headers(self, row: _Row, raw: dict[str, Any]) -> None:
        # The event passed the contract, so its header values have the column
        # types (int, str or None; never a bool or a float), and equal values
        # mean equal types: comparing values is the whole check.
        if _HEADERS_OF(raw) != row[:-1]:
            self._check_headers(row, _HEADERS_OF(raw))

    def _check_headers(self, row: _Row, body: Sequence[Any]) -> None:
        if tuple(body) != row[:-1] or any(
            type(a) is not type(b) for a, b in zip(body, row, strict=False)
        ):
            raise corrupt(
                _header_mismatches(row, body),
                source=f"{self._path}#event-{row[0]}",
                event_id=row[0],
            )


# ------------------------------------------------------------------- quick check

# The header members of a wire event, in _COLUMNS order (a tuple, like a row's).
_HEADERS_OF = operator.itemgetter(*_WIRE_NAMES)


def _quick_check_all(rows: Sequence[_Row]) -> list[dict[str, Any] | None]:
    """Each row's parsed event if the quick path vouches for it, else ``None``.

    Vouching means the full check (:func:`decode_stored_event`) accepts the
    row and parses it to the same value: the bytes are their own canonical
    form (so no duplicate key, whitespace, ``1.0`` or unsafe integer), within
    the strict reader's size and nesting limits, and the event passes the
    contract.  ``None`` sends the row to the full check, which decides and
    names the problem.
    """
    datas: list[bytes] = [row[-1] for row in rows]
    parsed: list[Any] = []
    for data in datas:
        if len(data) > MAX_DOCUMENT_BYTES or _opening_count(data) > MAX_DEPTH:
            parsed.append(None)  # the strict reader's limits might apply: let it judge
            continue
        try:
            raw = orjson.loads(data)
        except ValueError:
            raw = None
        parsed.append(raw if isinstance(raw, dict) else None)
    is_valid = quick_validator(EVENT_DOCUMENT_TYPE).is_valid
    if None not in parsed:  # the usual case: every row parsed, check them as one batch
        canonical = _canonical_rows(parsed, datas)
        if all(canonical) and _all_valid(parsed):
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


# Rows checked per call into the engine: one crossing per batch, and a bounded copy
# of the rows on the engine's side.
_VALIDATION_BATCH = 1024


def _all_valid(events: list[Any]) -> bool:
    """Whether every parsed row passes the contract (the same verdict as the per-row
    check, batch by batch)."""
    is_valid = default_validator().ints_only_list_validator(EVENT_DOCUMENT_TYPE).is_valid
    return all(
        is_valid(events[at : at + _VALIDATION_BATCH])
        for at in range(0, len(events), _VALIDATION_BATCH)
    )


def _canonical_rows(raws: list[Any], datas: list[bytes]) -> list[bool]:
    """Whether each stored text is the canonical form of its parse.

    Canonicalized all at once: the canonical form of an array is its
    elements' canonical forms joined by commas, and each text is one complete
    JSON value, so if the array's form equals the texts so joined, every text
    equals its element's form (the top-level commas fall in the same places).
    Only when that fails is each row canonicalized on its own.
    """
    try:
        if canonical_bytes(raws) == b"[" + b",".join(datas) + b"]":
            return [True] * len(raws)
    except InvalidDocument:
        pass
    out = []
    for raw, data in zip(raws, datas, strict=True):
        try:
            out.append(canonical_bytes(raw) == data)
        except InvalidDocument:
            out.append(False)
    return out


def quick_validator(doctype: str) -> Any:
    """A jsonschema-rs validator of ``doctype`` whose ``is_valid`` agrees with the
    toolkit's validator on documents whose integers are ints, about three times
    faster on large documents (:meth:`DocumentValidator.ints_only_validator`)."""
    return default_validator().ints_only_validator(doctype)


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
