"""Targets for ``serve`` under load.

    python -m bench.bench_serve_load [--clients 16] [--rounds 2]

Builds a journal with one 32,768-event session (``bench_journal.make_session``)
and one small session (64 events), starts ``session-contracts serve`` on it in
a process of its own, then has ``--clients`` clients ask for the whole large
session at once (``limit=32768``), ``--rounds`` times each, while one more
client asks for the small session over and over. Prints, with targets:

* the server's peak RSS (``VmHWM`` from ``/proc``): target under 512 MiB;
* 500 answers: target none (503 with ``Retry-After`` is the bound at work);
* p99 latency of the small-session requests that were answered 200: target
  under 1 s, and the share of them answered 503.
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.bench_journal import make_session
from session_contracts.journal import SessionEvent, SqliteJournal

PEAK_TARGET_MIB = 512
SMALL_P99_TARGET_S = 1.0
LARGE = 32_768
SMALL = 64


def _small_session(first_id: int) -> list[SessionEvent]:
    events = []
    for offset, event in enumerate(make_session(SMALL, seed=7)):
        raw = event.to_json()
        raw["sessionId"] = "sess-small"
        raw["id"] = first_id + offset
        events.append(SessionEvent.from_json(raw))
    return events


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(port: int, path: str) -> tuple[int, float]:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status, time.perf_counter() - started
    except OSError:
        return 0, time.perf_counter() - started
    finally:
        connection.close()


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-serve-load-") as folder:
        journal = Path(folder) / "journal.sqlite"
        large = make_session(LARGE)
        large_id = str(large[0].to_json()["sessionId"])
        with SqliteJournal.open(journal, create=True) as opened:
            opened.append(large)
            opened.append(_small_session(LARGE + 1))
        del large
        port = _free_port()
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "session_contracts", "serve"),
                *("--journal", str(journal), "--port", str(port)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while _get(port, "/sessions/sess-small/recap")[0] != 200:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("the server did not start")
                    return 1
                time.sleep(0.2)
            baseline = _peak_kib(server.pid)
            statuses: list[int] = []
            small: list[tuple[int, float]] = []
            lock = threading.Lock()
            done = threading.Event()

            def big_client() -> None:
                for _ in range(args.rounds):
                    status, _ = _get(port, f"/sessions/{large_id}/recap?limit={LARGE}")
                    with lock:
                        statuses.append(status)

            def small_client() -> None:
                while not done.is_set():
                    answer = _get(port, "/sessions/sess-small/recap")
                    with lock:
                        small.append(answer)

            started = time.perf_counter()
            bigs = [threading.Thread(target=big_client) for _ in range(args.clients)]
            little = threading.Thread(target=small_client)
            little.start()
            for thread in bigs:
                thread.start()
            for thread in bigs:
                thread.join()
            done.set()
            little.join()
            seconds = time.perf_counter() - started
            peak = _peak_kib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)
    answered = sorted(t for status, t in small if status == 200)
    p99 = answered[min(len(answered) - 1, int(len(answered) * 0.99))] if answered else float("inf")
    counts = {code: statuses.count(code) for code in sorted(set(statuses))}
    errors = sum((status >= 500 and status != 503) or status == 0 for status, _ in small)
    errors += sum((status >= 500 and status != 503) or status == 0 for status in statuses)
    verdicts = [
        peak / 1024 < PEAK_TARGET_MIB,
        errors == 0,
        p99 < SMALL_P99_TARGET_S and bool(answered),
    ]
    print(
        f"{args.clients} clients x {args.rounds} requests for the {LARGE:,}-event session, "
        f"max-concurrent default ({os.cpu_count()} cores), {seconds:.1f} s; statuses {counts}"
    )
    print(
        f"server peak RSS {peak / 1024:,.0f} MiB (baseline {baseline / 1024:,.0f} MiB; "
        f"target < {PEAK_TARGET_MIB} MiB) {'MET' if verdicts[0] else 'MISSED'}"
    )
    print(f"500s or failed connections: {errors} (target 0) {'MET' if verdicts[1] else 'MISSED'}")
    refused = sum(status == 503 for status, _ in small)
    print(
        f"small-session requests: {len(small)}, {refused} answered 503; p99 of the 200s "
        f"{p99:.3f} s (target < {SMALL_P99_TARGET_S:g} s) {'MET' if verdicts[2] else 'MISSED'}"
    )
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
