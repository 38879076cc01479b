"""An ASGI app served by a real uvicorn in a thread, for tests of HTTP adapters."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_socket() -> socket.socket:
    """A socket bound to a free local port (not listening yet)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn in a thread on a free port; yields its base URL and
    asserts, on the way out, that the server shut down."""
    sock = free_socket()
    config = uvicorn.Config(app, log_level="warning", ws="none", http="h11", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start in 20 s"
            assert thread.is_alive(), "uvicorn stopped while starting"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
    assert not thread.is_alive(), "uvicorn did not shut down in 20 s"
