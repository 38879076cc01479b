"""The canonical session journal: the input of recap and run-record projections.

A journal holds each session's events as Harn's session store holds them
(``StoredEvent``, document type ``session-event.stored``), numbered per
session, kept in SQLite (:class:`SqliteJournal`) or as a JSON Lines tape
(:class:`JsonlTape`), with :func:`import_tape` / :func:`export_tape` between
the two.  Events of the journal's own model (:class:`SessionEvent`,
``session-event.event``) are stored as their stored form.  ``docs/journal.md``
describes the model, the layout and the error codes.
"""

from session_contracts.journal.batch import CheckedEvents, check_events
from session_contracts.journal.harn_stored import (
    harn_record_hash,
    journal_event_of,
    stored_event,
    stored_events_of,
    unheld_integer,
)
from session_contracts.journal.model import (
    EVENT_DOCUMENT_TYPE,
    EVENT_KINDS,
    MAX_FINDINGS,
    SESSION_EVENT_SCHEMA_ID,
    STORED_EVENT_DOCUMENT_TYPE,
    EventKind,
    JournalCorrupt,
    JournalError,
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    SessionMissing,
    all_events_valid,
    decode_stored_form,
    event_findings,
    stored_findings,
    validate_event,
)
from session_contracts.journal.sqlite import (
    APPLICATION_ID,
    MemoryJournal,
    ReadResult,
    SqliteJournal,
    damage_events,
    quick_validator,
)
from session_contracts.journal.tape import JsonlTape
from session_contracts.journal.transfer import (
    FileImport,
    export_tape,
    import_files,
    import_tape,
    journal_stats,
)

__all__ = [
    "APPLICATION_ID",
    "EVENT_DOCUMENT_TYPE",
    "EVENT_KINDS",
    "MAX_FINDINGS",
    "SESSION_EVENT_SCHEMA_ID",
    "STORED_EVENT_DOCUMENT_TYPE",
    "CheckedEvents",
    "EventKind",
    "FileImport",
    "JournalCorrupt",
    "JournalError",
    "JournalUnavailable",
    "JournalWriteError",
    "JsonlTape",
    "MemoryJournal",
    "ReadResult",
    "SessionEvent",
    "SessionMissing",
    "SqliteJournal",
    "all_events_valid",
    "check_events",
    "damage_events",
    "decode_stored_form",
    "event_findings",
    "export_tape",
    "harn_record_hash",
    "import_files",
    "import_tape",
    "journal_event_of",
    "journal_stats",
    "quick_validator",
    "stored_event",
    "stored_events_of",
    "stored_findings",
    "unheld_integer",
    "validate_event",
]
