"""The speed machinery, in one place: the collector pause.

``paused_gc`` holds off the cyclic collector around work that makes many objects and
no cycles.  Everything else runs in Python over orjson, RE2 and jsonschema-rs, without a
compiled module of ours (docs/hashing.md, section 5, has the measurements that decided).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


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
