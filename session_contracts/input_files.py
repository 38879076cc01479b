"""Opening a file a user named: only regular files, never a wait on a FIFO or a device.

``open()`` on a FIFO blocks until a writer appears, and a character device
(``/dev/zero``) never ends: a user's typo must not hang a CI job.  The file is
opened without blocking, checked with ``fstat``, and only then read normally.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from collections.abc import Iterator
from typing import BinaryIO

from session_contracts.errors import Finding, InvalidDocument, UsageError
from session_contracts.jsontext.strict import (
    MAX_DOCUMENT_BYTES,
    JsonDocument,
    iter_documents,
    loads_strict,
)

__all__ = ["iter_input_documents", "open_regular_file", "read_regular_file"]


def _refusal(code: str, message: str, hint: str) -> UsageError:
    return UsageError([Finding("$", code, message, hint)])


def open_regular_file(path: str) -> BinaryIO:
    """Open ``path`` for binary reading; a usage error unless it is a regular file.

    Codes: ``input_not_found``, ``input_is_directory``, ``input_not_regular`` (a
    FIFO, socket or device), ``input_unreadable``.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _refusal("input_not_found", f"no such file: {path}", "check the path") from None
    except IsADirectoryError:
        raise _refusal("input_is_directory", f"{path} is a directory", "name a file") from None
    except OSError as exc:
        raise _refusal("input_unreadable", f"cannot read {path}: {exc.strerror}", "") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise _refusal("input_is_directory", f"{path} is a directory", "name a file")
        if not stat.S_ISREG(mode):
            raise _refusal(
                "input_not_regular",
                f"{path} is not a regular file (a FIFO, socket or device)",
                "name a regular file, or pipe the data to - (standard input)",
            )
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
        fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular_file(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path`` (see ``open_regular_file``)."""
    with open_regular_file(path) as handle:
        try:
            return handle.read(limit)
        except OSError as exc:
            raise _refusal("input_unreadable", f"cannot read {path}: {exc.strerror}", "") from None


#: Bytes read from a file or stdin at a time while streaming JSON Lines.
_CHUNK = 1 << 20


def _open_input(path: str) -> tuple[BinaryIO, str, bool]:
    """(handle, name, whether to close it) for a FILE argument; ``-`` is stdin."""
    if path == "-":
        return sys.stdin.buffer, "<stdin>", False
    return open_regular_file(path), path, True


def _read_up_to(handle: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes, reading again after short reads (pipes give a chunk at a time)."""
    parts: list[bytes] = []
    size = 0
    while size < limit:
        chunk = handle.read(min(_CHUNK, limit - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def _stream_lines(
    prefix: bytes, handle: BinaryIO, limit: int
) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of ``prefix`` then the rest of ``handle``; None for a line
    over ``limit`` bytes, which is skipped a chunk at a time, never held whole."""
    buffer = bytearray(prefix)
    number = 0
    skipping = eof = False
    while True:
        end = buffer.find(b"\n")
        if end >= 0:
            number += 1
            line = None if skipping or end > limit else bytes(buffer[:end])
            del buffer[: end + 1]  # deleting a bytearray's head is amortised O(1)
            skipping = False
            yield number, line
            continue
        if len(buffer) > limit:
            buffer.clear()
            skipping = True
        if eof:
            if buffer.strip() or skipping:
                yield number + 1, None if skipping else bytes(buffer)
            return
        chunk = handle.read(_CHUNK)
        if not chunk:
            eof = True
        buffer += chunk


def _starts_json_lines(head: bytes, max_bytes: int) -> bool:
    """Whether ``head``'s first line is a whole document and more follows it."""
    end = head.find(b"\n")
    if end < 0 or not head[end + 1 :].strip():
        return False
    try:
        loads_strict(head[:end], max_bytes=max_bytes)
    except InvalidDocument:
        return False
    return True


def _too_large(source: str, limit: int, what: str) -> JsonDocument:
    return JsonDocument(
        source,
        error=InvalidDocument(
            [
                Finding(
                    "$",
                    "json_too_large",
                    f"{what} is over the limit of {limit:,} bytes; it was not read whole",
                    "raise the limit with --max-document-bytes, or split the input into "
                    "JSON Lines of smaller documents",
                )
            ]
        ),
    )


def iter_input_documents(
    path: str, *, jsonl: bool | None = None, max_bytes: int = MAX_DOCUMENT_BYTES
) -> Iterator[JsonDocument]:
    """Each document of a FILE argument (``-`` for stdin), in bounded memory.

    A single document is read up to ``max_bytes``; one larger is refused
    (``json_too_large``) after reading ``max_bytes + 1`` bytes, never cut.
    JSON Lines are read a line at a time, each line up to ``max_bytes``; a
    longer line is a ``json_too_large`` finding at its line and the next line
    is read. ``jsonl=None`` decides as ``iter_documents`` does; input over the
    limit counts as JSON Lines when its first line is a whole document.
    """
    handle, name, owned = _open_input(path)
    try:
        if jsonl is None and name.endswith((".jsonl", ".ndjson")):
            jsonl = True
        head = b"" if jsonl else _read_up_to(handle, max_bytes + 1)
        if not jsonl and len(head) <= max_bytes:
            # The whole input is within the limit: read as before.
            yield from iter_documents(head, name, jsonl=jsonl, max_bytes=max_bytes)
            return
        if jsonl is None:
            jsonl = _starts_json_lines(head, max_bytes)
        if not jsonl:
            yield _too_large(name, max_bytes, "the document")
            return
        for number, line in _stream_lines(head, handle, max_bytes):
            source = f"{name}:{number}"
            if line is None:
                yield _too_large(source, max_bytes, "the line")
            elif line.strip():
                try:
                    yield JsonDocument(source, value=loads_strict(line, max_bytes=max_bytes))
                except InvalidDocument as exc:
                    yield JsonDocument(source, error=exc)
    except OSError as exc:
        raise _refusal("input_unreadable", f"cannot read {name}: {exc.strerror}", "") from None
    finally:
        if owned:
            handle.close()
