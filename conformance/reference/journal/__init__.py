"""The canonical session journal: the input of recap and run-record projections.

A journal is an ordered log of :class:`SessionEvent` values
(``schemas/session-event.schema.json``), kept in SQLite
(:class:`SqliteJournal`) or as a JSON Lines tape (:class:`JsonlTape`), with
:func:`import_tape` / :func:`export_tape` between the two.  ``docs/journal.md``
describes the layout and the error codes.
"""

from session_contracts.conformance.reference.journal._harn_stored import stored_event
from session_contracts.conformance.reference.journal._import import (
    FileImport,
    export_tape,
    import_files,
    import_tape,
    journal_stats,
)
from session_contracts.conformance.reference.journal._jsonl import JsonlTape
from session_contracts.conformance.reference.journal._model import (
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
    canonical_event_bytes,
    decode_stored_event,
    event_findings,
    validate_event,
)
from session_contracts.conformance.reference.journal._sqlite import (
    APPLICATION_ID,
    EventRecord,
    ReadResult,
    RecordRead,
    SqliteJournal,
    quick_validator,
)

__all__ = [
    "APPLICATION_ID",
    "EVENT_DOCUMENT_TYPE",
    "EVENT_KINDS",
    "MAX_FINDINGS",
    "SESSION_EVENT_SCHEMA_ID",
    "STORED_EVENT_DOCUMENT_TYPE",
    "EventKind",
    "EventRecord",
    "FileImport",
    "JournalCorrupt",
    "JournalError",
    "JournalUnavailable",
    "JournalWriteError",
    "JsonlTape",
    "ReadResult",
    "RecordRead",
    "SessionEvent",
    "SessionMissing",
    "SqliteJournal",
    "canonical_event_bytes",
    "decode_stored_event",
    "event_findings",
    "export_tape",
    "import_files",
    "import_tape",
    "journal_stats",
    "quick_validator",
    "stored_event",
    "validate_event",
]
