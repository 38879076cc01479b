"""Benchmark: a full recap of a 32,768-event session from the SQLite journal.

    python bench/bench_recap.py [repeats]

Builds the journal benchmark's session (``bench_journal.make_session``),
appends it to a fresh SQLite journal, then times, as the median of
``repeats`` runs each:

* **recap**: ``RecapService.answer`` with limit 32,768: open the journal
  read-only, read and check every row, project, redact, hash, check the
  envelope against the contract (the full snapshot, not yet serialized);
* **read + hash**: merely reading the same rows (the same SQL) and hashing
  each (``orjson.loads`` then ``content_hash``: RFC 8785 and SHA-256), the
  floor of reading and hashing the same rows;
* **serialize**: ``envelope_bytes`` of the recap's envelope (reported apart).

Targets: the recap under 1 s on a 2-core machine, and at most 3 times the
read + hash floor.  Both measurements hold the garbage collector off the same
way (``paused_gc``), so the ratio compares work, not collector luck.

Then the HTTP adapter (``create_app``, through starlette's ``TestClient``, in
process) on a 4,096-event session: ``GET /sessions/{id}/recap?limit=4096``
against the same recap in process (``RecapService.answer`` + ``envelope_bytes``,
the bytes the adapter sends); target: the adapter adds at most 50 %.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from session_contracts.accel import paused_gc
from session_contracts.journal import SessionEvent, SqliteJournal
from session_contracts.jsontext.canonical import content_hash
from session_contracts.recap import RecapService, envelope_bytes, query_echo

if not __package__:  # run as a script (python bench/bench_recap.py): find the bench package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_journal import EVENTS, SESSION_ID, make_session

TARGET_MS = 1_000.0
TARGET_RATIO = 3.0


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


@contextmanager
def _journal_of(events: list[SessionEvent], prefix: str) -> Iterator[Path]:
    """A SQLite journal holding ``events``, in a temporary folder gone on leaving."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        path = Path(folder) / "events.sqlite"
        with SqliteJournal.open(path, create=True) as writer:
            writer.append(events)
        yield path


def _read_and_hash(path: Path) -> list[str]:
    """The floor: the recap's rows, parsed and hashed (RFC 8785, SHA-256), nothing else.
    Returns each row's stored record hash, which the recap must list."""
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        with paused_gc():
            rows = connection.execute(
                "SELECT seq, session_id, event_id, kind, run_id, turn_id, execution_id, topic, "
                "record_hash, prev_hash, CAST(event AS BLOB) FROM session_events "
                "WHERE session_id = ? AND event_id >= 1 ORDER BY event_id LIMIT ?",
                (SESSION_ID, EVENTS + 1),
            ).fetchall()
            events = [orjson.loads(row[-1]) for row in rows[:EVENTS]]
            for event in events:
                content_hash(event)
            return [event["record_hash"] for event in events]
    finally:
        connection.close()


def run(repeats: int = 5) -> dict[str, float]:
    """Time the recap and its floor; print and return the medians in ms and their ratio."""
    events = make_session()
    recaps: list[float] = []
    floors: list[float] = []
    serials: list[float] = []
    with _journal_of(events, "bench-recap-") as path:
        service = RecapService(path)
        query = query_echo({"sessionId": SESSION_ID, "limit": EVENTS})
        service.answer(query)  # warm up: compiled validators, the policy's detector gates
        _read_and_hash(path)
        outcome: Any = None
        body: Any = None
        for _ in range(repeats):
            # Drop the previous recap first: a run should not pay for keeping
            # the last one's hundred megabytes of objects alive.
            outcome = body = None
            # Alternate the two, so load on the machine falls on both alike.
            seconds, outcome = _timed(lambda: service.answer(query))
            recaps.append(seconds)
            seconds, hashes = _timed(lambda: _read_and_hash(path))
            floors.append(seconds)
            seconds, body = _timed(partial(envelope_bytes, outcome.envelope))
            serials.append(seconds)
        snapshot = outcome.envelope.get("snapshot", {})
        if outcome.status != "available" or snapshot["coverage"]["scanned"] != EVENTS:
            raise AssertionError(f"the recap did not cover the session: {outcome.status}")
        if [s["recordHash"] for s in snapshot["source"]["events"]] != hashes:
            raise AssertionError("the recap's record hashes differ from the floor's")
        service.close()
    recap_ms = statistics.median(recaps) * 1000
    floor_ms = statistics.median(floors) * 1000
    figures = {
        "events": float(len(events)),
        "recap_ms": recap_ms,
        "read_hash_ms": floor_ms,
        # The median of the ratios of back-to-back runs: a slow spell of the machine
        # falls on both runs of a pair.
        "ratio": statistics.median(r / f for r, f in zip(recaps, floors, strict=True)),
        "serialize_ms": statistics.median(serials) * 1000,
        "envelope_mb": len(body) / 1e6,
    }
    verdict = "MET" if figures["ratio"] <= TARGET_RATIO else "MISSED"
    time_verdict = "MET" if recap_ms < TARGET_MS else "MISSED"
    print(f"session recap benchmark: {len(events):,} events, median of {repeats} runs")
    print(f"  full recap (read, project, redact, hash, check)  {recap_ms:8.1f} ms")
    print(f"  read rows + record hashes (floor)                {floor_ms:8.1f} ms")
    print(f"  ratio {figures['ratio']:.2f} (target <= {TARGET_RATIO:.0f}) {verdict}")
    print(f"  recap target < {TARGET_MS:.0f} ms: {time_verdict}")
    print(
        f"  serialize envelope (RFC 8785)                    {figures['serialize_ms']:8.1f} ms"
        f"  ({figures['envelope_mb']:.1f} MB)"
    )
    return figures


HTTP_EVENTS = 4_096
HTTP_TARGET_RATIO = 1.5


def run_http(repeats: int = 7) -> dict[str, float]:
    """The HTTP adapter against the in-process recap of the same 4,096-event session."""
    from session_contracts.recap import create_app

    with warnings.catch_warnings():  # starlette's notice about httpx, not about us
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    events = make_session(HTTP_EVENTS)
    in_process: list[float] = []
    over_http: list[float] = []
    with _journal_of(events, "bench-recap-http-") as path:
        service = RecapService(path)
        query = query_echo({"sessionId": SESSION_ID, "limit": HTTP_EVENTS})
        with TestClient(create_app(RecapService(path))) as client:
            url = f"/sessions/{SESSION_ID}/recap"
            params = {"limit": str(HTTP_EVENTS)}

            def local() -> bytes:
                return envelope_bytes(service.answer(query).envelope)

            def remote() -> bytes:
                response = client.get(url, params=params)
                if response.status_code != 200:
                    raise AssertionError(f"the adapter answered {response.status_code}")
                return response.content

            if local() != remote():  # also the warm-up
                raise AssertionError("the adapter's bytes differ from the in-process recap")
            for number in range(repeats):
                order = (local, remote) if number % 2 else (remote, local)
                for action in order:
                    seconds, _ = _timed(action)
                    (in_process if action is local else over_http).append(seconds)
        service.close()
    local_ms = statistics.median(in_process) * 1000
    http_ms = statistics.median(over_http) * 1000
    ratio = http_ms / local_ms
    verdict = "MET" if ratio <= HTTP_TARGET_RATIO else "MISSED"
    print(f"recap over HTTP: {HTTP_EVENTS:,} events, median of {repeats} runs")
    print(f"  in process (answer + envelope bytes)             {local_ms:8.1f} ms")
    print(f"  HTTP adapter (TestClient GET, whole response)    {http_ms:8.1f} ms")
    print(
        f"  ratio {ratio:.2f} (adds {100 * (ratio - 1):.0f} %; target <= "
        f"{HTTP_TARGET_RATIO:.1f}, at most +50 %) {verdict}"
    )
    return {"in_process_ms": local_ms, "http_ms": http_ms, "ratio": ratio}


def main(argv: list[str]) -> int:
    run(int(argv[1]) if len(argv) > 1 else 5)
    run_http()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
