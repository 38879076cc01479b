"""What a store's engine failing at one step means to its caller: an error of one finding.

The session journal (``journal/sqlite.py``) and the feedback store (``feedback/store.py``)
each name, for a step (opening the file, preparing it, a write, a read), the error a SQLite
failure there becomes, and run the step within :meth:`StoreFailure.raised_for`.  Only those
two stores speak SQL, so each names the failure it catches (``sqlite3.Error`` or a narrower
one); this module knows it only as an exception class.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass

from session_contracts.errors import Finding, SessionContractsError

__all__ = ["RaisedFor", "StoreFailure"]


@dataclass(frozen=True, slots=True)
class StoreFailure:
    """A ``caught`` failure leaves as ``error`` with one finding: ``code``, the message
    "``what``: the failure's own message", and ``hint``."""

    code: str
    what: str
    hint: str
    error: type[SessionContractsError]
    caught: type[Exception]

    def raised_for(self, source: str) -> RaisedFor:
        """Within ``with``: a ``caught`` failure leaves as this error, its finding's source
        ``source`` (``""`` for none)."""
        return RaisedFor(self, source)


class RaisedFor(AbstractContextManager[None]):
    """:meth:`StoreFailure.raised_for`.  A class, not a generator: it wraps every read and
    write, where a generator's cost shows."""

    __slots__ = ("_failure", "_source")

    def __init__(self, failure: StoreFailure, source: str) -> None:
        self._failure = failure
        self._source = source

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        failure = self._failure
        if isinstance(exc, failure.caught):
            finding = Finding(
                "$", failure.code, f"{failure.what}: {exc}", failure.hint, source=self._source
            )
            raise failure.error([finding]) from None
