"""The JSON Lines tape: a session journal as a text file, one canonical event a line.

A line holds exactly the bytes a SQLite row's ``event`` column holds: the
event's RFC 8785 canonical JSON (sorted keys, no insignificant whitespace,
UTF-8), then ``\\n``.  Ids increase from line to line.  A tape is written to a
temporary file beside its target and renamed over it, so a reader sees the
old tape or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from session_contracts.conformance.reference.journal._model import (
    MAX_FINDINGS,
    WRITE_FAILED,
    WRITE_REJECTED,
    JournalCorrupt,
    JournalUnavailable,
    JournalWriteError,
    SessionEvent,
    canonical_event_bytes,
    corrupt,
    decode_stored_event,
    rejected,
)

from session_contracts._errors import Finding, InvalidDocument

__all__ = ["JsonlTape"]


@dataclass(frozen=True, slots=True)
class JsonlTape:
    """The tape file at ``path``."""

    path: Path

    def __init__(self, path: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "path", Path(path))

    def read(self) -> tuple[SessionEvent, ...]:
        """Every event of the tape, in order."""
        return tuple(self.iter_events())

    def iter_events(self) -> Iterator[SessionEvent]:
        """Each event in line order.

        A missing or unreadable file raises :class:`JournalUnavailable`; a
        line that does not parse, breaks the contract, or does not increase
        the id raises :class:`JournalCorrupt` naming the line.
        """
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise self._unavailable(f"the tape cannot be opened: {exc.strerror or exc}") from None
        with handle:
            previous: int | None = None
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
                event = decode_stored_event(line, source=source, line=number)
                if previous is not None and event.id <= previous:
                    problem = Finding(
                        "$.id",
                        JournalCorrupt.code,
                        f"event id {event.id} does not follow the previous line's id {previous}",
                    )
                    raise corrupt([problem], source=source, event_id=event.id, line=number)
                previous = event.id
                yield event

    def write(self, events: Iterable[SessionEvent]) -> int:
        """Replace the tape with ``events``; return how many lines were written.

        Events are checked against the contract and must increase in id.  On a
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
                count, problems = _write_lines(handle, events)
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


def _write_lines(handle: IO[bytes], events: Iterable[SessionEvent]) -> tuple[int, list[Finding]]:
    """Write each event's canonical line; stop writing, but keep checking, after a refusal."""
    problems: list[Finding] = []
    previous: int | None = None
    count = 0
    for index, event in enumerate(events):
        try:
            line = canonical_event_bytes(event)
        except InvalidDocument as exc:
            problems.extend(rejected(exc.findings, index=index, event_id=event.id))
        else:
            if previous is not None and event.id <= previous:
                problems.append(
                    Finding(
                        f"$[{index}].id",
                        WRITE_REJECTED,
                        f"event id {event.id} does not follow the previous id {previous}",
                        "ids are unique and increase along the tape; sort the events by id",
                    )
                )
            elif not problems:
                handle.write(line + b"\n")
                count += 1
        previous = event.id
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
