"""The JSON Lines tape: a session journal as a text file, one stored event a line.

A line holds exactly the bytes a SQLite row's ``event`` column holds: a Harn
``StoredEvent`` in Harn's canonical JSON (sorted keys, no insignificant
whitespace, UTF-8, numbers as serde_json writes them), then ``\\n``.  Within
each session, ids increase from line to line.  A tape is written to a
temporary file beside its target and renamed over it, so a reader sees the
old tape or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal.harn_stored import stored_events_of
from session_contracts.journal.model import (
    MAX_FINDINGS,
    WRITE_FAILED,
    WRITE_REJECTED,
    JournalCorrupt,
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    corrupt,
    decode_stored_form,
    rejected,
    stored_findings,
    validate_event,
)
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

__all__ = ["JsonlTape"]


@dataclass(frozen=True, slots=True)
class JsonlTape:
    """The tape file at ``path``."""

    path: Path

    def __init__(self, path: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "path", Path(path))

    def read(self) -> tuple[dict[str, Any], ...]:
        """Every event of the tape, in order."""
        return tuple(self.iter_events())

    def iter_events(self) -> Iterator[dict[str, Any]]:
        """Each stored event in line order.

        A missing or unreadable file raises :class:`JournalUnavailable`; a
        line that does not parse, breaks the ``session-event.stored`` contract,
        or does not increase its session's id raises :class:`JournalCorrupt`
        naming the line.
        """
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise self._unavailable(f"the tape cannot be opened: {exc.strerror or exc}") from None
        with handle:
            previous: dict[str, int] = {}
            number = 0
            while True:
                try:
                    line = handle.readline()
                except OSError as exc:
                    raise self._unavailable(f"the tape cannot be read: {exc}") from None
                if not line:
                    return
                number += 1
                if not line.strip():
                    continue  # a blank line separates nothing and holds no event
                source = f"{self.path}:{number}"
                event = decode_stored_form(line, source=source, line=number)
                session, event_id = event["session_id"], event["event_id"]
                before = previous.get(session)
                if before is not None and event_id <= before:
                    problem = Finding(
                        "$.event_id",
                        JournalCorrupt.code,
                        f"event id {event_id} does not follow the previous id {before} "
                        f"of session {session!r}",
                    )
                    raise corrupt([problem], source=source, event_id=event_id, line=number)
                previous[session] = event_id
                yield event

    def write(self, events: Iterable[Mapping[str, Any] | SessionEvent]) -> int:
        """Replace the tape with stored ``events``; return how many lines were written.

        A :class:`SessionEvent` (the journal's own model) is written as its stored
        form, chained on the previous one of its session, as the SQLite journal
        stores it (``SqliteJournal.append``).  Events are checked against
        ``session-event.stored`` and must increase in id within each session.  On a
        refusal (:class:`JournalWriteError`) the previous tape, if any, is left
        untouched.
        """
        directory = self.path.parent
        try:
            handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed or removed below
                "wb", dir=directory, prefix=f".{self.path.name}.", suffix=".tmp", delete=False
            )
        except OSError as exc:
            raise self._write_failed(f"cannot create a file beside the tape: {exc}") from None
        temporary = Path(handle.name)
        try:
            with handle:
                stored, problems = _stored_forms(events)
                if not problems:
                    count, problems = _write_lines(handle, stored)
                if problems:
                    raise JournalWriteError(problems)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            _fsync_directory(directory)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise self._write_failed(f"cannot write the tape: {exc}") from None
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        return count

    def _unavailable(self, message: str) -> JournalUnavailable:
        return JournalUnavailable(
            [
                Finding(
                    "$",
                    JournalUnavailable.code,
                    message,
                    "check the tape's path and permissions",
                    source=str(self.path),
                )
            ]
        )

    def _write_failed(self, message: str) -> JournalWriteError:
        return JournalWriteError(
            [
                Finding(
                    "$",
                    WRITE_FAILED,
                    message,
                    "check disk space and the directory's permissions",
                    source=str(self.path),
                )
            ]
        )


def _stored_forms(
    events: Iterable[Mapping[str, Any] | SessionEvent],
) -> tuple[list[Mapping[str, Any]], list[Finding]]:
    """Each event as a stored event (a journal-model one as its chained stored form), or
    the findings that refuse a journal-model event, located in the batch."""
    chain: dict[str, str] = {}
    out: list[Mapping[str, Any]] = []
    problems: list[Finding] = []
    for index, event in enumerate(events):
        if not isinstance(event, SessionEvent):
            out.append(event)
            continue
        raw = event.to_json()
        try:
            validate_event(raw)
            (stored,) = stored_events_of([raw], previous=chain)
        except InvalidDocument as exc:
            problems.extend(rejected(exc.findings, index=index, event_id=event.id))
            if len(problems) >= MAX_FINDINGS:
                break
            continue
        chain[event.session_id] = stored["record_hash"]
        out.append(stored)
    return out, problems[:MAX_FINDINGS]


def _write_lines(
    handle: IO[bytes], events: Iterable[Mapping[str, Any]]
) -> tuple[int, list[Finding]]:
    """Write each event's canonical line; stop writing, but keep checking, after a refusal."""
    problems: list[Finding] = []
    previous: dict[str, int] = {}
    count = 0
    for index, event in enumerate(events):
        found = stored_findings(event)
        event_id = event.get("event_id") if isinstance(event, Mapping) else None
        if found:
            problems.extend(rejected(found, index=index, event_id=event_id))
        else:
            session = event["session_id"]
            before = previous.get(session)
            previous[session] = event["event_id"]
            try:
                line = harn_canonical_bytes(dict(event))
            except InvalidDocument as exc:
                problems.extend(rejected(exc.findings, index=index, event_id=event_id))
            else:
                if before is not None and event["event_id"] <= before:
                    problems.append(
                        Finding(
                            f"$[{index}].event_id",
                            WRITE_REJECTED,
                            f"event id {event_id} does not follow the previous id {before} "
                            f"of session {session!r}",
                            "a session's ids increase along the tape; sort its events by id",
                        )
                    )
                elif not problems:
                    handle.write(line + b"\n")
                    count += 1
        if len(problems) >= MAX_FINDINGS:
            break
    return count, problems


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable: on POSIX a new directory entry needs its own fsync."""
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
