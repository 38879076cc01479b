"""Harn's stored events read as Harn's in-memory session store reads them.

``crates/harn-session-store/src/memory.rs`` keeps each session's events in id
order and answers a bounded read from ``from_event_id`` (1 when absent), at most
``limit`` events; the recap's ``pending`` is the session's last id minus the last
id read. :class:`StoredEventOrder` checks events one at a time as a store holds
them (each against ``session-event.stored``, each id above the previous one of its
session); :class:`StoredRead` keeps only what one query reads, so a file of any
length is read in memory bounded by the clamped limit. docs/recap.md section 11.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from session_contracts.errors import Finding
from session_contracts.validation.validator import default_validator

__all__ = ["StoredEventOrder", "StoredRead"]


class StoredEventOrder:
    """The findings of each stored event in turn: its own against the contract, and an
    id that does not increase on the previous valid event of its session."""

    def __init__(self) -> None:
        from session_contracts.journal import STORED_EVENT_DOCUMENT_TYPE

        self._doctype = STORED_EVENT_DOCUMENT_TYPE
        self._validator = default_validator()
        self._previous: dict[str, int] = {}

    def findings(self, event: Any) -> list[Finding]:
        """Paths are the event's own (``$``, ``$.event_id``); an empty list accepts it."""
        found = self._validator.validate(self._doctype, event)
        if found:
            return list(found)
        session, event_id = event["session_id"], event["event_id"]
        previous = self._previous.get(session)
        self._previous[session] = event_id
        if previous is not None and event_id <= previous:
            return [
                Finding(
                    "$.event_id",
                    "events_not_increasing",
                    f"event id {event_id} does not follow the session's previous id {previous}",
                    "a session's event ids increase in store order; sort the events by id",
                )
            ]
        return []


class StoredRead:
    """One bounded read of one session over checked stored events, fed in store order."""

    def __init__(self, session_id: str, from_event_id: int | None, limit: int) -> None:
        self._session = session_id
        self._start = from_event_id if from_event_id is not None else 1
        self._limit = limit
        self.events: list[Mapping[str, Any]] = []
        self.tail_id: int | None = None  # the session's last event id; None: no event

    def add(self, event: Mapping[str, Any]) -> None:
        if event["session_id"] != self._session:
            return
        self.tail_id = event["event_id"]
        if event["event_id"] >= self._start and len(self.events) < self._limit:
            self.events.append(event)

    @property
    def rows_beyond(self) -> int:
        """``pending``: the session's last id minus the last id read (0 when none was)."""
        if not self.events or self.tail_id is None:
            return 0
        return int(self.tail_id) - int(self.events[-1]["event_id"])
