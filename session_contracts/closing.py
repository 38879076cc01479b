"""Objects that close once and close on leaving a ``with`` block.

The session journal (``journal/sqlite.py``) and the feedback store
(``feedback/store.py``) each hold a SQLite connection until closed, and close it
the same way; the recap service closes its admission.  Only the two stores speak
SQL, so this module knows a connection only as something to close.
"""

from __future__ import annotations

from pathlib import Path
from typing import Generic, Protocol, Self, TypeVar

__all__ = ["ClosesOnExit", "ConnectionOwner"]


class ClosesOnExit:
    """A context manager whose exit is :meth:`close`."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


class _Closable(Protocol):
    def close(self) -> None: ...


_Connection = TypeVar("_Connection", bound=_Closable)


class ConnectionOwner(ClosesOnExit, Generic[_Connection]):
    """Owns ``connection`` to the file at ``path`` until :meth:`close`."""

    def __init__(self, connection: _Connection, *, path: Path) -> None:
        self._connection: _Connection | None = connection
        self._path = path

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        """Close the connection; closing twice is harmless."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
