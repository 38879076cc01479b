"""The reference session-feedback store: the rules of ``rules.py`` over SQLite.

This module is the I/O edge.  Each call reads the prior state a rule needs,
asks the pure rules for a decision, and writes what they accept:

* one write transaction per request (``BEGIN IMMEDIATE``, so the prior state
  cannot change between the read and the write);
* an accepted request is committed before its receipt is returned, with WAL
  and ``synchronous = FULL`` by default, so a receipt names a checkpoint that
  survives a power cut;
* a rejected or replayed request is rolled back: it writes nothing.

Layout (``docs/feedback.md`` has the full description):

``sessions``            one row per session and its current session_version
``checkpoints``         every accepted session.start / session.checkpoint: the
                        request_id and request hash for replay, the original
                        receipt JSON, the checkpoint's own fields
``client_declarations`` each supplied client_info, by checkpoint
``progress_reports``    each supplied progress, by checkpoint
``usage_snapshots``     each supplied usage snapshot, by checkpoint, with its
                        (source, counter_id) and host measurement time
``usage_counters``      per (session, source, counter_id) the highest accepted
                        value of each token field (the decrease rule's input)
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

import orjson

from session_contracts.connection_owner import ConnectionOwner, prepared
from session_contracts.errors import Finding, InvalidDocument, SessionContractsError
from session_contracts.feedback.rules import (
    CONTRACT_VERSION,
    NO_USAGE,
    Accept,
    CheckpointPrior,
    CheckpointRequest,
    CounterPeak,
    JsonObject,
    PriorRequest,
    Rejection,
    Replay,
    SessionReports,
    StartPrior,
    StartRequest,
    StoredReport,
    UsagePrior,
    UsageSample,
    decide_checkpoint,
    decide_start,
    identifier_problem,
    observe_session,
    parse_checkpoint,
    parse_start,
    receipt,
)
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER
from session_contracts.store_failure import StoreFailure

__all__ = ["APPLICATION_ID", "FORMAT_VERSION", "FeedbackStore", "FeedbackStoreError", "Synchronous"]

# PRAGMA application_id "SFBK": any other SQLite database is refused, not misread.
APPLICATION_ID: Final = 0x5346424B
FORMAT_VERSION: Final = 1  # PRAGMA user_version: the layout below
_DEFAULT_BUSY_TIMEOUT_MS: Final = 5_000

Synchronous = Literal["FULL", "NORMAL"]

_CREATE: Final = (
    """
    CREATE TABLE sessions (
        session_id         TEXT PRIMARY KEY,
        session_version    INTEGER NOT NULL,
        created_at_unix_ms INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TABLE checkpoints (
        seq                 INTEGER PRIMARY KEY,
        checkpoint_id       TEXT NOT NULL,
        session_id          TEXT NOT NULL REFERENCES sessions (session_id),
        request_id          TEXT NOT NULL,
        operation           TEXT NOT NULL
                            CHECK (operation IN ('session.start', 'session.checkpoint')),
        request_hash        TEXT NOT NULL,
        session_version     INTEGER NOT NULL,
        context_hash        TEXT,
        next_action         TEXT,
        open_loops          TEXT,
        reported_at_unix_ms INTEGER NOT NULL,
        receipt             TEXT NOT NULL,
        UNIQUE (session_id, request_id)
    ) STRICT
    """,
    """
    CREATE TABLE client_declarations (
        checkpoint_seq   INTEGER PRIMARY KEY REFERENCES checkpoints (seq),
        session_id       TEXT NOT NULL,
        contract_version INTEGER NOT NULL,
        client_info      TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX client_declarations_session ON client_declarations (session_id, checkpoint_seq)",
    """
    CREATE TABLE progress_reports (
        checkpoint_seq   INTEGER PRIMARY KEY REFERENCES checkpoints (seq),
        session_id       TEXT NOT NULL,
        contract_version INTEGER NOT NULL,
        progress         TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX progress_reports_session ON progress_reports (session_id, checkpoint_seq)",
    """
    CREATE TABLE usage_snapshots (
        checkpoint_seq      INTEGER PRIMARY KEY REFERENCES checkpoints (seq),
        session_id          TEXT NOT NULL,
        source              TEXT NOT NULL,
        counter_id          TEXT NOT NULL,
        observed_at_unix_ms INTEGER NOT NULL,
        input_tokens        INTEGER,
        output_tokens       INTEGER,
        cached_input_tokens INTEGER,
        contract_version    INTEGER NOT NULL,
        usage               TEXT NOT NULL
    ) STRICT
    """,
    # The session-wide rules (latest observation time, the samples at that
    # time) and the latest report; the rowid (checkpoint_seq) breaks ties.
    "CREATE INDEX usage_snapshots_observed ON usage_snapshots (session_id, observed_at_unix_ms)",
    """
    CREATE TABLE usage_counters (
        session_id               TEXT NOT NULL,
        source                   TEXT NOT NULL,
        counter_id               TEXT NOT NULL,
        peak_input_tokens        INTEGER,
        peak_output_tokens       INTEGER,
        peak_cached_input_tokens INTEGER,
        PRIMARY KEY (session_id, source, counter_id)
    ) STRICT, WITHOUT ROWID
    """,
)

_INSERT_CHECKPOINT: Final = (
    "INSERT INTO checkpoints (seq, checkpoint_id, session_id, request_id, operation, "
    "request_hash, session_version, context_hash, next_action, open_loops, "
    "reported_at_unix_ms, receipt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPSERT_COUNTER: Final = """
    INSERT INTO usage_counters VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id, source, counter_id) DO UPDATE SET
        peak_input_tokens = COALESCE(MAX(peak_input_tokens, excluded.peak_input_tokens),
                                     peak_input_tokens, excluded.peak_input_tokens),
        peak_output_tokens = COALESCE(MAX(peak_output_tokens, excluded.peak_output_tokens),
                                      peak_output_tokens, excluded.peak_output_tokens),
        peak_cached_input_tokens = COALESCE(
            MAX(peak_cached_input_tokens, excluded.peak_cached_input_tokens),
            peak_cached_input_tokens, excluded.peak_cached_input_tokens)
"""


def _latest_report_query(table: str, column: str, order: str) -> str:
    return (
        f"SELECT c.checkpoint_id, c.reported_at_unix_ms, t.contract_version, t.{column} "
        f"FROM {table} t JOIN checkpoints c ON c.seq = t.checkpoint_seq "
        f"WHERE t.session_id = ? ORDER BY {order} LIMIT 1"
    )


_LATEST_CLIENT: Final = _latest_report_query(
    "client_declarations", "client_info", "t.checkpoint_seq DESC"
)
_LATEST_PROGRESS: Final = _latest_report_query(
    "progress_reports", "progress", "t.checkpoint_seq DESC"
)
# Accepted usage never goes back in time, so the latest observation is also the
# latest accepted snapshot; among equal times (identical samples) the last one.
_LATEST_USAGE: Final = _latest_report_query(
    "usage_snapshots", "usage", "t.observed_at_unix_ms DESC, t.checkpoint_seq DESC"
)


class FeedbackStoreError(SessionContractsError):
    """The store cannot be opened, is closed, or SQLite failed; nothing was committed.

    Findings carry ``feedback_store_unavailable`` (open/closed) or
    ``feedback_store_write_failed`` (a transaction could not run or commit: no
    receipt was returned, the caller may retry with the same request_id).
    """


def _store_error(code: str, message: str, hint: str, source: str = "") -> FeedbackStoreError:
    return FeedbackStoreError([Finding("$", code, message, hint, source=source)])


# What a SQLite failure at each step means to the caller.
_CANNOT_OPEN: Final = StoreFailure(
    "feedback_store_unavailable",
    "SQLite cannot open the file",
    "check the path and permissions",
    FeedbackStoreError,
    sqlite3.Error,
)
_NOT_A_DATABASE: Final = StoreFailure(
    "feedback_store_unavailable",
    "the file is not a usable SQLite database",
    "pass a feedback store written by FeedbackStore",
    FeedbackStoreError,
    sqlite3.Error,
)
_WRITE_FAILED: Final = StoreFailure(
    "feedback_store_write_failed",
    "SQLite could not run or commit the request",
    "nothing was committed; retry with the same request_id",
    FeedbackStoreError,
    sqlite3.Error,
)
_READ_FAILED: Final = StoreFailure(
    "feedback_store_unavailable",
    "SQLite could not read the session",
    "retry once no other writer holds the lock",
    FeedbackStoreError,
    sqlite3.Error,
)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


class FeedbackStore(ConnectionOwner[sqlite3.Connection]):
    """The reference session-feedback store in one SQLite file.  Open it with :meth:`open`."""

    def __init__(
        self, connection: sqlite3.Connection, *, path: Path, clock: Callable[[], int]
    ) -> None:
        super().__init__(connection, path=path)
        self._clock = clock

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], int],
        synchronous: Synchronous = "FULL",
        busy_timeout_ms: int = _DEFAULT_BUSY_TIMEOUT_MS,
    ) -> FeedbackStore:
        """Open (creating if missing) the store at ``path``.

        ``clock`` returns the server time in unix milliseconds; it is read once
        per call.  ``synchronous="FULL"`` (the default) makes every receipt
        durable against power loss; ``"NORMAL"`` exists for the benchmark's
        comparison (with WAL it survives application crashes, not power loss).
        """
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL', not {synchronous!r}")
        location = Path(path)
        source = str(location)
        if location.exists() and not location.is_file():
            raise _store_error(
                "feedback_store_unavailable", "the path is not a file", "pass a file path", source
            )
        with _CANNOT_OPEN.raised_for(source):
            connection = sqlite3.connect(
                location, isolation_level=None, timeout=busy_timeout_ms / 1000
            )
        with _NOT_A_DATABASE.raised_for(source):
            prepared(connection, lambda opened: _prepare(opened, source, synchronous))
        return cls(connection, path=location, clock=clock)

    @property
    def durability(self) -> tuple[str, str]:
        """The journal mode and synchronous level SQLite reports: ``("wal", "FULL")``."""
        connection = self._live()
        mode = str(connection.execute("PRAGMA journal_mode").fetchone()[0])
        level = int(connection.execute("PRAGMA synchronous").fetchone()[0])
        return mode, {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[level]

    def _live(self) -> sqlite3.Connection:
        if self._connection is None:
            raise _store_error(
                "feedback_store_unavailable",
                "the store is closed",
                "open it again with FeedbackStore.open",
                str(self._path),
            )
        return self._connection

    def _now(self) -> int:
        now = self._clock()
        if isinstance(now, bool) or not isinstance(now, int) or not 0 <= now <= MAX_SAFE_INTEGER:
            raise ValueError(f"the clock must return unix milliseconds as an int, not {now!r}")
        return now

    # ----------------------------------------------------------------- writing

    def start(self, request: object) -> JsonObject:
        """session.start: a receipt (session_version 0) or a rejection, as a JSON value.

        The start is the session's first checkpoint: its receipt validates as
        ``session-feedback.checkpoint-receipt``, a refusal as
        ``session-feedback.checkpoint-rejection``.
        """
        parsed = parse_start(request)
        if isinstance(parsed, Rejection):
            return parsed.to_json()
        return self._transact(lambda connection, now: _start(connection, parsed, now))

    def checkpoint(self, request: object) -> JsonObject:
        """session.checkpoint: a receipt once durably committed, or a rejection.

        A rejection (like a replay) writes nothing: its transaction is rolled back.
        """
        parsed = parse_checkpoint(request)
        if isinstance(parsed, Rejection):
            return parsed.to_json()
        return self._transact(lambda connection, now: _checkpoint(connection, parsed, now))

    def _transact(
        self, step: Callable[[sqlite3.Connection, int], tuple[bool, JsonObject]]
    ) -> JsonObject:
        connection = self._live()
        with _WRITE_FAILED.raised_for(str(self._path)):
            connection.execute("BEGIN IMMEDIATE")
            try:
                # Read the clock under the write lock, so report times follow
                # commit order whenever the clock is monotonic.
                commit, response = step(connection, self._now())
                # The receipt leaves only after COMMIT returned: with
                # synchronous=FULL the WAL is fsynced by then.
                connection.execute("COMMIT" if commit else "ROLLBACK")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        return response

    # ----------------------------------------------------------------- reading

    def observe(
        self,
        session_id: str,
        *,
        reader_can_read_raw_receipts: bool,
        contract_version: int = CONTRACT_VERSION,
    ) -> JsonObject:
        """work.observe: the session's feedback at query time (``session-feedback.observation``).

        ``contract_version`` is the reader's: reports written under another
        version say ``contract_match: false`` and are stale.
        """
        problem = identifier_problem(session_id)
        if problem is not None:
            raise InvalidDocument(
                [Finding("$.session_id", "invalid_request", problem, "pass a session id")]
            )
        if (
            isinstance(contract_version, bool)
            or not isinstance(contract_version, int)
            or not 0 <= contract_version <= MAX_SAFE_INTEGER
        ):
            raise ValueError(f"contract_version must be an unsigned int, not {contract_version!r}")
        connection = self._live()
        with _READ_FAILED.raised_for(str(self._path)):
            # One read transaction: every slot comes from the same snapshot.
            connection.execute("BEGIN")
            try:
                now = self._now()
                reports = _read_reports(connection, session_id, reader_can_read_raw_receipts)
            finally:
                connection.execute("COMMIT")
        return observe_session(
            session_id,
            reports,
            now_ms=now,
            reader_can_read_raw_receipts=reader_can_read_raw_receipts,
            reader_contract_version=contract_version,
        )


# --------------------------------------------------------------------- layout


def _header(connection: sqlite3.Connection) -> tuple[int, int, int]:
    application_id = int(connection.execute("PRAGMA application_id").fetchone()[0])
    user_version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    tables = int(connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0])
    return application_id, user_version, tables


def _prepare(connection: sqlite3.Connection, source: str, synchronous: Synchronous) -> None:
    if _header(connection) == (0, 0, 0):
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Look again under the write lock: another process may have
            # created the layout since.
            if _header(connection) == (0, 0, 0):
                for statement in _CREATE:
                    connection.execute(statement)
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                connection.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    application_id, user_version, _ = _header(connection)
    if application_id != APPLICATION_ID or user_version != FORMAT_VERSION:
        raise _store_error(
            "feedback_store_unavailable",
            f"the database is not a feedback store of format {FORMAT_VERSION} "
            f"(application_id {application_id:#x}, user_version {user_version})",
            "pass a feedback store written by FeedbackStore",
            source,
        )
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise _store_error(
            "feedback_store_unavailable",
            f"SQLite refused WAL mode (journal_mode is {mode})",
            "put the store on a local file system",
            source,
        )
    connection.execute(f"PRAGMA synchronous = {synchronous}")
    connection.execute("PRAGMA foreign_keys = ON")


def _next_checkpoint(connection: sqlite3.Connection) -> tuple[int, str]:
    # Under BEGIN IMMEDIATE no other writer can take the same number.
    seq = int(connection.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM checkpoints").fetchone()[0])
    return seq, f"ckpt-{seq}"


def _session_version(connection: sqlite3.Connection, session_id: str) -> int | None:
    row = connection.execute(
        "SELECT session_version FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else int(row[0])


def _prior_request(
    connection: sqlite3.Connection, session_id: str, request_id: str
) -> PriorRequest | None:
    row = connection.execute(
        "SELECT request_hash, receipt FROM checkpoints WHERE session_id = ? AND request_id = ?",
        (session_id, request_id),
    ).fetchone()
    return None if row is None else PriorRequest(row[0], orjson.loads(row[1]))


def _usage_prior(
    connection: sqlite3.Connection, session_id: str, sample: UsageSample | None
) -> UsagePrior:
    if sample is None:
        return NO_USAGE
    latest = connection.execute(
        "SELECT MAX(observed_at_unix_ms) FROM usage_snapshots WHERE session_id = ?",
        (session_id,),
    ).fetchone()[0]
    at_latest: frozenset[bytes] = frozenset()
    if latest is not None:
        at_latest = frozenset(
            row[0].encode()
            for row in connection.execute(
                "SELECT DISTINCT usage FROM usage_snapshots "
                "WHERE session_id = ? AND observed_at_unix_ms = ?",
                (session_id, latest),
            )
        )
    row = connection.execute(
        "SELECT peak_input_tokens, peak_output_tokens, peak_cached_input_tokens "
        "FROM usage_counters WHERE session_id = ? AND source = ? AND counter_id = ?",
        (session_id, sample.source, sample.counter_id),
    ).fetchone()
    counter = None if row is None else CounterPeak(row[0], row[1], row[2])
    return UsagePrior(latest, at_latest, counter)


def _insert_client_info(
    connection: sqlite3.Connection, seq: int, session_id: str, client_info: JsonObject | None
) -> None:
    # A supplied declaration replaces the previous one (the latest row is the
    # current one); an omitted one writes nothing, so the previous stays.
    if client_info is not None:
        connection.execute(
            "INSERT INTO client_declarations VALUES (?, ?, ?, ?)",
            (seq, session_id, CONTRACT_VERSION, _json(client_info)),
        )


def _unwritten(decision: Rejection | Replay) -> JsonObject:
    """The answer to a request that writes nothing: the rejection, or the replayed receipt."""
    return decision.to_json() if isinstance(decision, Rejection) else decision.receipt


def _accepted(
    connection: sqlite3.Connection,
    request: StartRequest | CheckpointRequest,
    accept: Accept,
    operation: str,
) -> tuple[int, JsonObject]:
    """Write an accepted request's checkpoint and client declaration (the session row
    exists); return the checkpoint's number and its receipt."""
    seq, checkpoint_id = _next_checkpoint(connection)
    response = receipt(
        request_id=request.request_id,
        session_id=request.session_id,
        checkpoint_id=checkpoint_id,
        session_version=accept.session_version,
        reported_at_unix_ms=accept.reported_at_unix_ms,
    )
    fields: tuple[str | None, str | None, str | None] = (None, None, None)
    if isinstance(request, CheckpointRequest):
        fields = (request.context_hash, request.next_action, _json(list(request.open_loops)))
    connection.execute(
        _INSERT_CHECKPOINT,
        (
            seq,
            checkpoint_id,
            request.session_id,
            request.request_id,
            operation,
            request.request_hash,
            accept.session_version,
            *fields,
            accept.reported_at_unix_ms,
            _json(response),
        ),
    )
    _insert_client_info(connection, seq, request.session_id, request.client_info)
    return seq, response


def _start(
    connection: sqlite3.Connection, request: StartRequest, now: int
) -> tuple[bool, JsonObject]:
    prior = StartPrior(
        _session_version(connection, request.session_id),
        _prior_request(connection, request.session_id, request.request_id),
    )
    decision = decide_start(request, prior, now_ms=now)
    if not isinstance(decision, Accept):
        return False, _unwritten(decision)
    connection.execute(
        "INSERT INTO sessions VALUES (?, ?, ?)",
        (request.session_id, decision.session_version, decision.reported_at_unix_ms),
    )
    _, response = _accepted(connection, request, decision, "session.start")
    return True, response


def _checkpoint(
    connection: sqlite3.Connection, request: CheckpointRequest, now: int
) -> tuple[bool, JsonObject]:
    version = _session_version(connection, request.session_id)
    prior = CheckpointPrior(
        version,
        None
        if version is None
        else _prior_request(connection, request.session_id, request.request_id),
        NO_USAGE
        if version is None
        else _usage_prior(connection, request.session_id, request.usage_sample),
    )
    decision = decide_checkpoint(request, prior, now_ms=now)
    if not isinstance(decision, Accept):
        return False, _unwritten(decision)
    connection.execute(
        "UPDATE sessions SET session_version = ? WHERE session_id = ?",
        (decision.session_version, request.session_id),
    )
    seq, response = _accepted(connection, request, decision, "session.checkpoint")
    if request.progress is not None:
        connection.execute(
            "INSERT INTO progress_reports VALUES (?, ?, ?, ?)",
            (seq, request.session_id, CONTRACT_VERSION, _json(request.progress)),
        )
    sample = request.usage_sample
    if sample is not None:
        # Stored as its canonical bytes: the same-time rule compares samples
        # by them.  Snapshots are kept one per checkpoint, never summed.
        connection.execute(
            "INSERT INTO usage_snapshots VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                request.session_id,
                sample.source,
                sample.counter_id,
                sample.observed_at_unix_ms,
                sample.input_tokens,
                sample.output_tokens,
                sample.cached_input_tokens,
                CONTRACT_VERSION,
                sample.canonical.decode(),
            ),
        )
        connection.execute(
            _UPSERT_COUNTER,
            (
                request.session_id,
                sample.source,
                sample.counter_id,
                sample.input_tokens,
                sample.output_tokens,
                sample.cached_input_tokens,
            ),
        )
    return True, response


def _stored_report(row: tuple[Any, ...] | None) -> StoredReport | None:
    if row is None:
        return None
    return StoredReport(row[0], int(row[1]), int(row[2]), orjson.loads(row[3]))


def _read_reports(
    connection: sqlite3.Connection, session_id: str, with_raw_receipts: bool
) -> SessionReports | None:
    if _session_version(connection, session_id) is None:
        return None
    raw: tuple[JsonObject, ...] | None = None
    if with_raw_receipts:
        # Read only for a permitted reader: the gate is not just a filter on output.
        raw = tuple(
            orjson.loads(row[0])
            for row in connection.execute(
                "SELECT receipt FROM checkpoints WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        )
    return SessionReports(
        client=_stored_report(connection.execute(_LATEST_CLIENT, (session_id,)).fetchone()),
        progress=_stored_report(connection.execute(_LATEST_PROGRESS, (session_id,)).fetchone()),
        usage=_stored_report(connection.execute(_LATEST_USAGE, (session_id,)).fetchone()),
        raw_receipts=raw,
    )
