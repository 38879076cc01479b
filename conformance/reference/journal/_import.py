"""Moving a journal between its two stores: JSON Lines tape and SQLite.

Both stores hold the same canonical bytes per event, so a round trip
(SQLite -> tape -> SQLite) reproduces every event and every stored byte.
"""

from __future__ import annotations

import os

from session_contracts.conformance.reference.journal._jsonl import JsonlTape
from session_contracts.conformance.reference.journal._sqlite import SqliteJournal

__all__ = ["export_tape", "import_tape"]


def import_tape(tape_path: str | os.PathLike[str], sqlite_path: str | os.PathLike[str]) -> int:
    """Append every event of the tape to the SQLite journal, creating it if missing.

    The whole tape is read and checked before the journal is touched, then
    appended in one transaction: either all of it lands or none.  Returns the
    number of events imported.  Raises :class:`JournalUnavailable` or
    :class:`JournalCorrupt` for the tape, :class:`JournalWriteError` when the
    journal refuses the events (for example ids already present).
    """
    events = JsonlTape(tape_path).read()
    with SqliteJournal.open(sqlite_path, create=True) as journal:
        return journal.append(events)


def export_tape(
    sqlite_path: str | os.PathLike[str],
    tape_path: str | os.PathLike[str],
    session_id: str | None = None,
) -> int:
    """Write the journal's events (of one session, or all) to a tape; return the count.

    The journal is opened read-only.  Raises :class:`JournalUnavailable`,
    :class:`SessionMissing` for an unknown ``session_id``, :class:`JournalCorrupt`
    for a bad row (the previous tape is then left untouched) and
    :class:`JournalWriteError` when the tape cannot be written.
    """
    with SqliteJournal.open(sqlite_path) as journal:
        if session_id is not None and not journal.has_session(session_id):
            # Checked first so the error is SessionMissing, not a write of nothing.
            list(journal.iter_events(session_id=session_id))
        return JsonlTape(tape_path).write(journal.iter_events(session_id=session_id))
