"""An object that owns one connection until it is closed, and closes it on leaving ``with``.

The session journal (``journal/sqlite.py``) and the feedback store (``feedback/store.py``)
each hold a SQLite connection and close it the same way, on leaving ``with`` or when
preparing it for use fails (:func:`prepared`).  Only those two stores speak SQL,
so this module knows a connection only as something to close.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Generic, Protocol, Self, TypeVar

__all__ = ["ConnectionOwner", "prepared"]


class _Closable(Protocol):
    def close(self) -> None: ...


_Connection = TypeVar("_Connection", bound=_Closable)


class ConnectionOwner(AbstractContextManager["ConnectionOwner[_Connection]"], Generic[_Connection]):
    """Owns ``connection`` to the file at ``path`` until :meth:`close`."""

    def __init__(self, connection: _Connection, *, path: Path) -> None:
        self._connection: _Connection | None = connection
        self._path = path

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        """Close the connection; closing twice is harmless."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def prepared(connection: _Connection, prepare: Callable[[_Connection], object]) -> _Connection:
    """``connection`` once ``prepare(connection)`` has returned; closed when it raised
    anything (the exception goes on), so a store that cannot be opened holds no file."""
    try:
        prepare(connection)
    except BaseException:
        connection.close()
        raise
    return connection
