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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal.batch import checked_for_writing, stored_forms
from session_contracts.journal.harn_stored import unheld_integer
from session_contracts.journal.model import (
    MAX_FINDINGS,
    WRITE_FAILED,
    JournalCorrupt,
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    SessionIdOrder,
    corrupt,
    decode_stored_form,
    rejected,
    stored_refusals,
    unheld_refusal,
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
                count, problems = _write_lines(handle, _stored_forms(events))
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


def _stored_forms(events: Iterable[Mapping[str, Any] | SessionEvent]) -> list[Mapping[str, Any]]:
    """Each event as a stored event, a journal-model one as its stored form chained on the
    previous one of its session; :class:`JournalWriteError` when a journal-model event is
    refused, located in the whole batch."""
    batch = list(events)
    at = [index for index, event in enumerate(batch) if isinstance(event, SessionEvent)]
    raws = [event.to_json() for event in batch if isinstance(event, SessionEvent)]
    stored = iter(stored_forms(checked_for_writing(raws, at=at), {}))
    return [next(stored) if isinstance(event, SessionEvent) else event for event in batch]


def _write_lines(
    handle: IO[bytes], events: Sequence[Mapping[str, Any]]
) -> tuple[int, list[Finding]]:
    """Write each event's canonical line; stop writing, but keep checking, after a refusal.
    An event is refused as ``append_stored`` refuses it (docs/journal.md, "The tape")."""
    problems: list[Finding] = []
    ids = SessionIdOrder({})
    count = 0
    # One look at the whole batch for integers Harn's store cannot hold (the usual answer).
    all_held = unheld_integer(list(events)) is None
    for index, event in enumerate(events):
        if len(problems) >= MAX_FINDINGS:
            break
        found = stored_refusals(event, index=index)
        if found:
            problems.extend(found)
            continue
        session, event_id = event["session_id"], event["event_id"]
        try:
            line = harn_canonical_bytes(dict(event))
        except InvalidDocument as exc:
            problems.extend(rejected(exc.findings, index=index, event_id=event_id))
            continue
        unheld = None if all_held else unheld_refusal(event, index=index)
        if unheld is not None:
            problems.append(unheld)
            continue
        order = ids.refusal(session, event_id, index=index)
        if order is not None:
            problems.append(order)
            continue
        if not problems:
            handle.write(line + b"\n")
            count += 1
    return count, problems[:MAX_FINDINGS]


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable: on POSIX a new directory entry needs its own fsync."""
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
