"""The recap service: the I/O edge between a journal file and the pure projection.

:class:`RecapService` answers one query at a time (or many at once, from
threads): it opens the SQLite journal read-only for each query, reads the
bounded page, projects it, checks the envelope against the closed v1
contract, and returns it.  Every failure past the query itself becomes one of
the contract's unavailable reasons, never a traceback:

=====================  ==============================================================
reason                 when
=====================  ==============================================================
journal_unavailable    the journal cannot be opened or read (missing file, not a
                       journal, locked past the timeout)
session_missing        the journal holds no event of the session
projection_failed      a stored event is corrupt, or the projection or the envelope
                       check failed (logged on ``session_contracts.recap``)
admission_terminal     the service is closing or closed
=====================  ==============================================================

An invalid query raises :class:`InvalidDocument` instead: it is the caller's
mistake, which each adapter reports in its own way (HTTP 400, JSON-RPC
-32602, exit status 1).

:func:`envelope_bytes` is the one serialization every adapter uses: Harn's
canonical JSON, so the same query gives the same bytes over HTTP, ACP and
the command line.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, NamedTuple

from session_contracts.accel import paused_gc
from session_contracts.doctypes import ENVELOPE_DOCUMENT_TYPE
from session_contracts.hashes.snapshot import harn_canonical_bytes
from session_contracts.journal import (
    JournalCorrupt,
    JournalUnavailable,
    MemoryJournal,
    SessionMissing,
    SqliteJournal,
    quick_validator,
)
from session_contracts.recap.projection import (
    project_stored,
    with_extensions,
)
from session_contracts.recap.query import clamp_limit, query_echo
from session_contracts.recap.stored_read import StoredRead
from session_contracts.redaction.engine import RedactionPolicy
from session_contracts.redaction.policy import default_policy
from session_contracts.validation.validator import default_validator

__all__ = [
    "ENVELOPE_DOCUMENT_TYPE",
    "UNAVAILABLE_REASONS",
    "MemoryRecapService",
    "RecapOutcome",
    "RecapService",
    "envelope_bytes",
    "recap_of_stored_events",
    "unavailable",
]

UNAVAILABLE_REASONS = (
    "journal_unavailable",
    "session_missing",
    "projection_failed",
    "admission_terminal",
)
LOG = logging.getLogger("session_contracts.recap")

Extender = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]


class RecapOutcome(NamedTuple):
    """What a query gave: ``status`` is ``available`` or the unavailable reason."""

    status: str
    envelope: dict[str, Any]

    @property
    def available(self) -> bool:
        return self.status == "available"


def unavailable(reason: str) -> RecapOutcome:
    """The unavailable envelope for ``reason`` (one of :data:`UNAVAILABLE_REASONS`)."""
    if reason not in UNAVAILABLE_REASONS:
        raise ValueError(f"unknown unavailable reason {reason!r}")
    return RecapOutcome(reason, {"state": "unavailable", "reason": reason})


def envelope_bytes(envelope: Mapping[str, Any]) -> bytes:
    """The wire bytes of an envelope: Harn's canonical JSON, compact, UTF-8.

    Every adapter writes exactly these bytes, so the same query reads the
    same over HTTP, ACP and the command line.  Harn's canonical form (keys in
    UTF-8 byte order, numbers as serde_json writes them, docs/hashing.md), not
    RFC 8785: a snapshot echoes a limit or carries tool values Harn's runtime
    writes as 64-bit integers, which RFC 8785 cannot represent.
    """
    return harn_canonical_bytes(dict(envelope))


class RecapService(AbstractContextManager["RecapService"]):
    """Recaps of the sessions in one SQLite journal.  Close it to refuse further reads."""

    def __init__(
        self,
        journal_path: str | os.PathLike[str],
        policy: RedactionPolicy | None = None,
        *,
        extend: Extender | None = None,
    ) -> None:
        """``policy`` defaults to the built-in one; ``extend``, when given, is
        called with each snapshot and may return extensions to attach
        (they do not move projectionHash)."""
        self.journal_path = Path(journal_path)
        self.policy = policy if policy is not None else default_policy()
        self._extend = extend
        self._lock = threading.Condition()
        self._in_flight = 0
        self._closed = False

    # ------------------------------------------------------------------ admission

    @property
    def closed(self) -> bool:
        return self._closed

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self, timeout: float | None = 5.0) -> None:
        """Refuse new queries (``admission_terminal``) and wait for those in flight."""
        with self._lock:
            self._closed = True
            self._lock.wait_for(lambda: self._in_flight == 0, timeout)

    def _admit(self) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._in_flight += 1
            return True

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()

    # -------------------------------------------------------------------- queries

    def query(self, raw: Mapping[str, Any]) -> RecapOutcome:
        """Answer a query as received (either spelling); :class:`InvalidDocument` if invalid."""
        return self.answer(query_echo(raw))

    def answer(self, query: Mapping[str, Any]) -> RecapOutcome:
        """Answer a checked query (:func:`query_echo`).  Never raises."""
        if not self._admit():
            return unavailable("admission_terminal")
        try:
            return self._answer(query)
        except Exception:  # a bug must still answer within the contract
            LOG.exception("recap of session %r failed", query.get("sessionId"))
            return unavailable("projection_failed")
        finally:
            self._release()

    def _answer(self, query: Mapping[str, Any]) -> RecapOutcome:
        # The page's events die when _recap returns, inside the pause: the
        # collection that follows the pause then walks only the envelope, not
        # also the hundreds of thousands of parsed event objects.
        with paused_gc():
            return self._recap(query)

    def _open_journal(self) -> SqliteJournal | MemoryJournal:
        """The journal one query reads: the file, opened read-only for that query."""
        return SqliteJournal.open(self.journal_path)

    def _recap(self, query: Mapping[str, Any]) -> RecapOutcome:
        """Read, project and check one page (the caller holds the collector off)."""
        try:
            with self._open_journal() as journal:
                read = journal.read(
                    query["sessionId"],
                    from_event_id=query["fromEventId"],
                    limit=clamp_limit(query["limit"]),
                )
        except JournalUnavailable as exc:
            LOG.warning("journal unavailable: %s", exc)
            return unavailable("journal_unavailable")
        except SessionMissing:
            return unavailable("session_missing")
        except JournalCorrupt as exc:
            LOG.error("journal corrupt: %s", exc)
            return unavailable("projection_failed")
        snapshot = project_stored(read.events, query, rows_beyond=read.pending, policy=self.policy)
        if self._extend is not None:
            extensions = self._extend(snapshot)
            if extensions is not None:
                snapshot = with_extensions(snapshot, extensions)
        return _checked(snapshot)


class MemoryRecapService(RecapService):
    """The recap service over a :class:`MemoryJournal` instead of a file (the reference
    producer's throwaway journal): each query reads it as :class:`RecapService` reads
    its file; ``journal_path`` is the journal's ``source``."""

    def __init__(
        self,
        journal: MemoryJournal,
        policy: RedactionPolicy | None = None,
        *,
        extend: Extender | None = None,
    ) -> None:
        super().__init__(journal.source, policy, extend=extend)
        self._journal = journal

    def _open_journal(self) -> MemoryJournal:
        return self._journal


def recap_of_stored_events(
    events: Iterable[Mapping[str, Any]],
    raw_query: Mapping[str, Any],
    *,
    policy: RedactionPolicy | None = None,
) -> RecapOutcome:
    """The recap of Harn ``StoredEvent`` values (checked, in store order), read as Harn's
    in-memory session store reads them (docs/recap.md section 11): the session's events
    from ``fromEventId`` (1 when absent) in id order, at most the clamped limit;
    ``pending`` the session's last id minus the last id read.  A session with no event
    is missing.  ``events`` is consumed once, holding only what the read keeps.
    :class:`InvalidDocument` if the query is invalid."""
    query = query_echo(raw_query)
    read = StoredRead(query["sessionId"], query["fromEventId"], clamp_limit(query["limit"]))
    for event in events:
        read.add(event)
    if read.tail_id is None:
        return unavailable("session_missing")
    snapshot = project_stored(
        read.events,
        query,
        rows_beyond=read.rows_beyond,
        policy=policy if policy is not None else default_policy(),
    )
    return _checked(snapshot)


def _checked(snapshot: dict[str, Any]) -> RecapOutcome:
    """The available envelope, or ``projection_failed`` when it breaks the contract."""
    envelope = {"state": "available", "snapshot": snapshot}
    # The write contract is closed: refuse to hand out what it does not
    # allow.  The quick validator agrees with the full one here: the
    # projection writes integers as ints (event ids, iterations, counts);
    # a value it cannot take (an integer beyond 64 bits) goes to the full one.
    if not _quick_valid(envelope):
        findings = default_validator().validate(ENVELOPE_DOCUMENT_TYPE, envelope)
        if findings:
            LOG.error(
                "recap envelope breaks the contract: %s",
                "; ".join(f.render() for f in findings[:5]),
            )
            return unavailable("projection_failed")
    return RecapOutcome("available", envelope)


def _quick_valid(envelope: Mapping[str, Any]) -> bool:
    try:
        return bool(quick_validator(ENVELOPE_DOCUMENT_TYPE).is_valid(envelope))
    except (ValueError, TypeError, OverflowError):
        return False
