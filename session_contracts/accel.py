"""The speed machinery, in one place: the optional C census and the collector pause.

``speedups`` is the built C module ``session_contracts_c._speedups`` (the census of the
canonical-JSON fast path and Harn's form written in C, docs/hashing.md section 5), or
None where it was not built or where the environment sets
``SESSION_CONTRACTS_PURE_PYTHON=1``.  This is its only importer; every caller keeps its
Python twin beside the call, and the answers are the same either way (``nox -s
pure_python`` runs the unit tests so).  ``paused_gc`` holds off the cyclic collector
around work that makes many objects and no cycles.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PURE_PYTHON_VARIABLE", "paused_gc", "speedups", "switched_off"]

PURE_PYTHON_VARIABLE = "SESSION_CONTRACTS_PURE_PYTHON"


def switched_off() -> bool:
    """Whether the environment asks for the Python twins only."""
    return os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0")


try:
    from session_contracts_c import _speedups as speedups
except ImportError:  # built without a C compiler
    speedups = None  # type: ignore[assignment,unused-ignore]
if switched_off():
    speedups = None  # type: ignore[assignment,unused-ignore]


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Hold off the cyclic garbage collector while, for example, a recap projection builds
    its objects.

    Parsing 32,768 events makes hundreds of thousands of containers, and
    CPython 3.11 runs full collections over all of them along the way (a
    projection spent a third of its time there).  Nothing here makes cycles,
    so reference counting frees everything; the collector is restored when
    the last concurrent pause ends, and only if it was on before the first.
    """
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()
