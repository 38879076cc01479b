"""``serve`` bounds the projections running at once: the overflow is
answered 503 with Retry-After and a JSON body, small queries keep their lane."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import orjson
import uvicorn
from uvicorn_thread import free_socket, serving

from session_contracts.recap import RecapService
from session_contracts.recap.http import JsonErrorH11Protocol, create_app
from session_contracts.recap.service import RecapOutcome


class _HeldService(RecapService):
    """Answers only when released: a projection that takes as long as a test needs."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.release = threading.Event()
        self.started = threading.Semaphore(0)

    def answer(self, query: Mapping[str, Any]) -> RecapOutcome:
        self.started.release()
        self.release.wait(60)
        return super().answer(query)


def test_the_overflow_of_large_projections_is_503_with_retry_after(tmp_path: Path) -> None:
    service = _HeldService(tmp_path / "none.sqlite")
    with serving(create_app(service, max_concurrent=1)) as base:
        results: list[httpx.Response] = []

        def ask(path: str) -> None:
            with httpx.Client(base_url=base, timeout=60) as client:
                results.append(client.get(path))

        first = threading.Thread(target=ask, args=("/sessions/a/recap?limit=32768",))
        first.start()
        assert service.started.acquire(timeout=60)  # the one large slot is taken
        with httpx.Client(base_url=base, timeout=60) as client:
            refused = client.get("/sessions/b/recap?limit=5000")
            # A small query has its own lane: it still runs.
            small = threading.Thread(target=ask, args=("/sessions/c/recap",))
            small.start()
            assert service.started.acquire(timeout=60)
        service.release.set()
        first.join(60)
        small.join(60)
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["content-type"] == "application/json"
    assert refused.json()["error"]["code"] == "overloaded"
    assert "--max-concurrent" in refused.json()["error"]["hint"]
    assert sorted(r.status_code for r in results) == [200, 200]


def test_all_lanes_together_are_bounded(tmp_path: Path) -> None:
    service = _HeldService(tmp_path / "none.sqlite")
    with serving(create_app(service, max_concurrent=1)) as base:
        threads = []
        for index in range(4):  # 4 * max_concurrent small queries fill every slot
            path = f"{base}/sessions/s{index}/recap"
            thread = threading.Thread(target=httpx.get, args=(path,), kwargs={"timeout": 60})
            thread.start()
            threads.append(thread)
            assert service.started.acquire(timeout=60)
        refused = httpx.get(f"{base}/sessions/late/recap", timeout=60)
        service.release.set()
        for thread in threads:
            thread.join(60)
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "overloaded"


def test_serve_refuses_a_bound_below_one(tmp_path: Path) -> None:
    journal = str(tmp_path / "j.sqlite")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "session_contracts", "serve"),
            *("--journal", journal, "--max-concurrent", "0"),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert b"--max-concurrent must be at least 1" in result.stderr


def test_malformed_http_gets_the_json_error_body(tmp_path: Path) -> None:
    service = RecapService(tmp_path / "none.sqlite")
    listener = free_socket()
    config = uvicorn.Config(
        create_app(service), log_level="warning", ws="none", http=JsonErrorH11Protocol
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            time.sleep(0.02)
        with socket.create_connection(listener.getsockname(), timeout=30) as client:
            client.sendall(b"GARBAGE / HTTP/1.1\r\n\r\n")
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
    finally:
        server.should_exit = True
        thread.join(20)
        listener.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert b"content-type: application/json" in head
    assert orjson.loads(body)["error"]["code"] == "invalid_http"
