"""Benchmark: the SQLite session journal with a 32,768-event session.

    python -m bench.bench_journal [repeats]

Times, as the median of ``repeats`` runs on a fresh journal each: appending
the whole session in one durable transaction, reading all of it back in one
bounded read (32,768 is the recap's largest bound), and reading it in pages of
4,096 (the recap's default bound).  Every read parses, checks and compares
each row with its header columns, as a projection's read does.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._timing import run_from_command_line
from session_contracts.journal import (
    JsonlTape,
    SessionEvent,
    SqliteJournal,
    stored_events_of,
)

EVENTS = 32_768
PAGE = 4_096
SESSION_ID = "sess-0199a2b4c6d8e0f1"
_WORDS = (
    "read", "the", "store", "module", "then", "write", "atomic", "rename", "fsync",
    "directory", "test", "durability", "failing", "case", "retry", "lock", "journal",
    "session", "recap", "projection", "cursor", "bounded", "event", "tool", "result",
    "patch", "applied", "diagnostic", "cleared", "next", "step", "verify", "build",
)  # fmt: skip
_TOOLS = ("read_file", "write_file", "run_command", "search", "apply_patch")
_PHASES = ("starting", "implementing", "testing", "waiting_user", "blocked", "ready_for_review")


class _Session:
    """Builds one session's events in order, numbering ids and timestamps."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.events: list[SessionEvent] = []
        self.clock = 1_760_000_000_000

    def text(self, low: int = 200, high: int = 500) -> str:
        words: list[str] = []
        size = self.rng.randint(low, high)
        while sum(len(w) + 1 for w in words) < size:
            words.append(self.rng.choice(_WORDS))
        return " ".join(words).capitalize() + "."

    def add(
        self,
        kind: str,
        topic: str,
        payload: dict[str, Any],
        *,
        run: str | None,
        turn: str | None,
        iteration: int | None,
        execution: str | None,
    ) -> None:
        self.clock += self.rng.randint(5, 900)
        self.events.append(
            SessionEvent.from_json(
                {
                    "id": len(self.events) + 1,
                    "sessionId": SESSION_ID,
                    "runId": run,
                    "turnId": turn,
                    "iteration": iteration,
                    "executionId": execution,
                    "topic": topic,
                    "kind": kind,
                    "recordedAtUnixMs": self.clock,
                    "payload": payload,
                }
            )
        )


def _turn(session: _Session, run: str, execution: str, turn: str) -> None:
    """One prompt turn: the prompt, 2-6 agent-loop iterations, the terminal fact."""
    rng = session.rng
    scope: dict[str, Any] = {"run": run, "turn": turn, "execution": execution}
    prompt = {"role": "user", "visibility": None, "text": session.text()}
    session.add("message", "session", prompt, iteration=None, **scope)
    steps = [
        {"id": f"step-{n}", "content": session.text(30, 80), "status": "pending"}
        for n in range(rng.randint(2, 5))
    ]
    for iteration in range(rng.randint(2, 6)):
        at: dict[str, Any] = {**scope, "iteration": iteration}
        start = {"checkpoint": "iteration_start", "iteration": iteration}
        session.add("loop_checkpoint", "agent.loop", start, **at)
        calls = [
            {"id": f"call-{turn}-{iteration}-{n}", "name": rng.choice(_TOOLS)}
            for n in range(rng.randint(1, 3))
        ]
        session.add(
            "provider_call_response",
            "agent.transcript.llm",
            {
                "call_id": f"llm-{turn}-{iteration}",
                "iteration": iteration,
                "span_id": len(session.events),
                "execution_id": execution,
                "text": session.text(),
                "tool_calls": calls,
                "parsed_tool_calls_ref": "tool_calls",
                "loop_state": {"step": iteration, "done": False},
            },
            **at,
        )
        text = {"role": "assistant", "visibility": "public", "text": session.text()}
        session.add("message", "agent.transcript", text, **at)
        if iteration < len(steps):
            steps[iteration]["status"] = "in_progress"
            plan = {
                "documentId": f"plan-{turn}",
                "revisionId": f"rev-{turn}-{iteration}",
                "title": "Plan",
                "summary": session.text(30, 80),
                "steps": [dict(s) for s in steps],
                "event": None,
            }
            session.add("plan", "agent.plan", plan, **at)
            steps[iteration]["status"] = "completed"
        for call in calls:
            arguments = {"path": f"src/{rng.choice(_WORDS)}.py", "line": rng.randint(1, 900)}
            session.add(
                "tool_call",
                "agent.tool",
                {"callId": call["id"], "toolName": call["name"], "input": arguments},
                **at,
            )
            session.add(
                "tool_result",
                "agent.tool",
                {
                    "callId": call["id"],
                    "toolName": None,
                    "isError": rng.random() >= 0.9,
                    "output": session.text(),
                    "verification": None,
                },
                **at,
            )
        if rng.random() < 0.5:
            entry = {"content": rng.choice(_PHASES), "status": "in_progress", "priority": None}
            progress = {"message": session.text(100, 300), "entries": [entry], "replace": None}
            session.add("progress", "agent.progress", progress, **at)
        end = {"checkpoint": "iteration_end", "iteration": iteration}
        session.add("loop_checkpoint", "agent.loop", end, **at)
    stop = rng.choice(("natural", "natural", "policy_budget", "user_cancelled"))
    terminal = {
        "kind": stop,
        "owner": "agent",
        "finalStatus": None,
        "stopReason": stop,
        "reason": session.text(100, 200),
    }
    session.add("terminal", "agent.loop", terminal, iteration=None, **scope)


def make_session(n: int = EVENTS, seed: int = 2026) -> list[SessionEvent]:
    """A realistic session of exactly ``n`` events (ids 1..n), every turn closed.

    Runs of eight prompt turns, each turn a prompt, agent-loop iterations
    (model response, assistant text, plan updates, tool calls and results,
    progress) and a terminal fact; a session attribute (the completion
    receipt) after each run.  ASCII keys, text of a few hundred bytes.
    """
    session = _Session(random.Random(seed))
    turn_number = 0
    while len(session.events) < n:
        run_number = turn_number // 8
        run, execution = f"run-{run_number}", f"hxe-{run_number:04d}"
        turn_number += 1
        _turn(session, run, execution, f"turn-{turn_number}")
        if turn_number % 8 == 0:
            receipt = {"status": "completed", "turns": 8, "run": run}
            session.add(
                "session_attribute",
                "session",
                {"name": "completion_receipt", "value": receipt},
                run=run,
                turn=None,
                iteration=None,
                execution=None,
            )
    events = session.events[: n - 1]
    last = events[-1]
    closing = SessionEvent.from_json(
        {
            **last.to_json(),
            "id": n,
            "iteration": None,
            "topic": "agent.loop",
            "kind": "terminal",
            "recordedAtUnixMs": last.recorded_at_unix_ms + 1,
            "payload": {
                "kind": "natural",
                "owner": "agent",
                "finalStatus": None,
                "stopReason": "session_closed",
                "reason": None,
            },
        }
    )
    return [*events, closing]


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _read_all(journal: SqliteJournal) -> list[Any]:
    return list(journal.read(SESSION_ID, limit=EVENTS).events)


def _read_pages(journal: SqliteJournal) -> list[Any]:
    return list(journal.iter_events(session_id=SESSION_ID, page_size=PAGE))


def run(repeats: int = 5) -> dict[str, float]:
    """Time append, whole read and paged read; print and return the medians in ms."""
    started = time.perf_counter()
    events = make_session()
    build_s = time.perf_counter() - started
    appends: list[float] = []
    reads: list[float] = []
    paged: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-journal-") as folder:
        for repeat in range(repeats):
            path = Path(folder) / f"events-{repeat}.sqlite"
            with SqliteJournal.open(path, create=True) as writer:
                appends.append(_timed(lambda: writer.append(events)))
            with SqliteJournal.open(path) as reader:
                reads.append(_timed(lambda: _read_all(reader)))
                paged.append(_timed(lambda: _read_pages(reader)))
                if repeat == 0 and _read_all(reader) != list(
                    stored_events_of([event.to_json() for event in events])
                ):
                    raise AssertionError("the journal did not read back what was appended")
        database_mb = path.stat().st_size / 1e6
        tape = JsonlTape(Path(folder) / "events.jsonl")
        tape_write = _timed(lambda: tape.write(events))
        tape_mb = tape.path.stat().st_size / 1e6
    figures = {
        "events": float(len(events)),
        "build_ms": build_s * 1000,
        "append_ms": _median_ms(appends),
        "read_all_ms": _median_ms(reads),
        "read_paged_ms": _median_ms(paged),
        "tape_write_ms": tape_write * 1000,
        "database_mb": database_mb,
        "tape_mb": tape_mb,
    }
    per_event = 1e3 / len(events)
    print(f"session journal benchmark: {len(events):,} events, median of {repeats} runs")
    print(f"  build session (from_json)   {figures['build_ms']:9.1f} ms  (once)")
    print(
        f"  append, one transaction     {figures['append_ms']:9.1f} ms  "
        f"({figures['append_ms'] * per_event:.1f} us/event)"
    )
    print(
        f"  read all, limit {EVENTS:,}     {figures['read_all_ms']:9.1f} ms  "
        f"({figures['read_all_ms'] * per_event:.1f} us/event)"
    )
    print(f"  read in pages of {PAGE:,}      {figures['read_paged_ms']:9.1f} ms")
    print(f"  tape write                  {figures['tape_write_ms']:9.1f} ms  (once)")
    print(f"  sizes: SQLite {database_mb:.1f} MB, tape {tape_mb:.1f} MB")
    return figures


if __name__ == "__main__":
    raise SystemExit(run_from_command_line(run, sys.argv))
