"""Opening a file a user named: only regular files, never a wait on a FIFO or a device.

``open()`` on a FIFO blocks until a writer appears, and a character device
(``/dev/zero``) never ends: a user's typo must not hang a CI job.  The file is
opened without blocking, checked with ``fstat``, and only then read normally.
"""

from __future__ import annotations

import fcntl
import os
import stat
from typing import BinaryIO

from session_contracts._errors import Finding, UsageError

__all__ = ["open_regular_file", "read_regular_file"]


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
