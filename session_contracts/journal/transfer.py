"""Moving a journal between its two stores: JSON Lines tape and SQLite; importing files.

Both stores hold the same canonical bytes per stored event, so a round trip
(SQLite -> tape -> SQLite) reproduces every event and every stored byte.  An
imported file holds Harn stored events (kept as they are) or events of the
journal's own model (each stored as its stored form).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from session_contracts.errors import Finding, InvalidDocument, SessionContractsError
from session_contracts.input_files import open_regular_file
from session_contracts.journal.model import (
    EVENT_DOCUMENT_TYPE,
    STORED_EVENT_DOCUMENT_TYPE,
    JournalError,
    SessionEvent,
    corrupt,
    event_findings,
    stored_findings,
)
from session_contracts.journal.sqlite import (
    SQLITE_HEADER,
    SqliteJournal,
    journal_file_items,
)
from session_contracts.journal.tape import JsonlTape
from session_contracts.jsontext.strict import MAX_DOCUMENT_BYTES, loads_strict

__all__ = ["FileImport", "export_tape", "import_files", "import_tape", "journal_stats"]


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
        return journal.append_stored(events)


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


@dataclass(frozen=True, slots=True)
class FileImport:
    """What importing one file did: ``imported`` events, or the findings that stopped it."""

    path: str
    imported: int = 0
    findings: tuple[Finding, ...] = ()


def _form(item: Any) -> str:
    """The document type an imported item is meant as: a stored event has ``event_id``."""
    if isinstance(item, dict) and "event_id" in item:
        return STORED_EVENT_DOCUMENT_TYPE
    return EVENT_DOCUMENT_TYPE


def _items(path: str) -> list[tuple[str, Any]]:
    """(place, parsed value) of each event of a file: JSON Lines, one event a line (blank
    lines skipped); for a ``.json`` file, one event or an array of events; a SQLite
    journal (of this layout or the one before) gives its events."""
    with open_regular_file(path) as handle:  # a FIFO or device is refused, never waited on
        if handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
            return journal_file_items(path)
        handle.seek(0)
        if path.endswith(".json"):
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
            try:
                value: Any = loads_strict(data)
            except InvalidDocument as exc:
                raise corrupt(exc.findings, source=path) from None
            if isinstance(value, list):
                return [(f"$[{index}]", item) for index, item in enumerate(value)]
            return [("$", value)]
        items = []
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                items.append((f"{path}:{number}", loads_strict(line)))
            except InvalidDocument as exc:
                raise corrupt(exc.findings, source=f"{path}:{number}", line=number) from None
        return items


def _read_events(path: str) -> tuple[str, list[Any], list[str]]:
    """The events of one file, their form (``session-event.stored`` or
    ``session-event.event``, decided by the first; every event must have it) and each
    one's place in the file, checked whole; nothing is written here."""
    items = _items(path)
    form = _form(items[0][1]) if items else STORED_EVENT_DOCUMENT_TYPE
    events: list[Any] = []
    for place, item in items:
        if _form(item) != form:
            found: tuple[Finding, ...] = (
                Finding(
                    "$",
                    "mixed_event_forms",
                    f"this event is not a {form} like the file's first event",
                    "import Harn stored events and journal-model events from separate files",
                ),
            )
        elif form == STORED_EVENT_DOCUMENT_TYPE:
            found = stored_findings(item)
        else:
            found = event_findings(item)
        if found:
            if place.startswith("$"):
                findings = [Finding(place + f.path[1:], f.code, f.message, f.hint) for f in found]
                raise corrupt(findings, source=f"{path}#{place}") from None
            raise corrupt(found, source=place) from None
        events.append(SessionEvent.from_json(item) if form == EVENT_DOCUMENT_TYPE else item)
    return form, events, [place for place, _ in items]


_BATCH_INDEX = re.compile(r"\$\[([0-9]+)\]")


def _in_file(finding: Finding, path: str, places: Sequence[str]) -> Finding:
    """A refusal of the journal, located at the batch index ``$[i]``, restated at the
    event's place in the file (``PATH:LINE`` for JSON Lines, ``$[i]`` in a ``.json``
    array, ``PATH#SESSION/event-ID`` in a journal)."""
    if finding.source:
        return finding
    found = _BATCH_INDEX.match(finding.path)
    if found is None or int(found.group(1)) >= len(places):
        return finding.at(path)
    place, rest = places[int(found.group(1))], finding.path[found.end() :]
    if place.startswith("$"):
        return Finding(place + rest, finding.code, finding.message, finding.hint, source=path)
    return Finding("$" + rest, finding.code, finding.message, finding.hint, source=place)


def import_files(paths: Sequence[str], journal_path: str | os.PathLike[str]) -> list[FileImport]:
    """Import each file into the SQLite journal (created if missing), atomically per file.

    Every event of a file is read and checked before the journal is touched,
    then appended in one transaction: a file with one bad line (or an id
    already in the journal) imports nothing, and its findings name the file
    and the line. The other files are still imported.
    """
    results = []
    for path in paths:
        try:
            places: list[str] = []
            form, events, places = _read_events(path)
            with SqliteJournal.open(journal_path, create=True) as journal:
                if form == STORED_EVENT_DOCUMENT_TYPE:
                    count = journal.append_stored(events)
                else:
                    count = journal.append(events)
        except (JournalError, SessionContractsError) as exc:
            findings = tuple(_in_file(f, path, places) for f in exc.findings)
            results.append(FileImport(path, findings=findings))
        else:
            results.append(FileImport(path, imported=count))
    return results


def journal_stats(journal_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Sessions, events, the id range and the file size of a SQLite journal (read-only)."""
    with SqliteJournal.open(journal_path) as journal:
        sessions, events, low, high = journal.statistics()
        path = journal.path
    return {
        "journal": str(path),
        "sessions": sessions,
        "events": events,
        "firstEventId": low,
        "lastEventId": high,
        "bytes": os.path.getsize(path),
    }
