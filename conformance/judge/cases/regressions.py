"""Regression cases: the decisive input of every wrong producer the suite has been shown
to catch (tests/producers/defects.py plants each defect; a certificate must catch it).

Sent with a check's explicit cases (before its random ones; the catalogue in
:mod:`session_contracts.conformance.judge.checks` names them): a byte limit at
its bound and one byte past it in three-byte text, for every limited field;
eight and nine items of every list; usage inside and past the five-minute
future window; every counter decreasing
alone; two sources sharing a counter name; resets with a trend, a stop class
and resolved calls in flight; iterations out of order; another session
interleaved in a page; secrets under sensitive names at every depth of tool
arguments; span cycles and children before parents; an explicit null receipt;
a read of more than 32,768 events.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.conformance.judge.cases.operations import attribute_event, span

__all__ = [
    "document_cases",
    "feedback_cases",
    "health_cases",
    "recap_cases",
    "recap_limit_cases",
    "runrecord_cases",
]

# -- builders of the decisive inputs -------------------------------------------------------------
_MS = 1_700_000_000_000
_WIDE = "步"  # three UTF-8 bytes, one character: byte limits counted in characters show


def _wide(limit: int, over: bool) -> str:
    """Text of exactly ``limit`` UTF-8 bytes (or one more) in as few characters as it takes."""
    size = limit + (1 if over else 0)
    return _WIDE * (size // 3) + "a" * (size % 3)


def _usage(
    counter: str, at: int, source: str = "native_host_event", **tokens: int
) -> dict[str, Any]:
    return {
        "source": source,
        "counter_id": counter,
        "scope": "host_session",
        "coverage": "partial",
        "observed_at_unix_ms": at,
        **tokens,
    }


def _feedback(*requests: Mapping[str, Any], ahead_ms: int = 0) -> dict[str, Any]:
    """A session's start, one checkpoint per request (versions in order), and a read."""
    session = "sess-x"
    steps: list[dict[str, Any]] = [
        {
            "at_unix_ms": _MS,
            "call": "start",
            "request": {
                "request_id": "r0",
                "session_id": session,
                "client_info": {
                    "product": "Agent",
                    "capabilities": {"usage": "supported", "progress": "supported"},
                },
            },
        }
    ]
    for index, extra in enumerate(requests):
        request = {
            "request_id": f"r{index + 1}",
            "session_id": session,
            "session_version": index,
            "context_hash": "ctx",
            "next_action": "continue",
            "open_loops": [],
            **extra,
        }
        steps.append(
            {"at_unix_ms": _MS + 1000 * (index + 1), "call": "checkpoint", "request": request}
        )
    steps.append(
        {
            "at_unix_ms": _MS + 1000 * (len(requests) + 1),
            "call": "observe",
            "session_id": session,
            "can_read_raw_receipts": True,
        }
    )
    return {"steps": steps}


def _progress(**members: Any) -> dict[str, Any]:
    return {"progress": {"phase": "testing", "summary": "步骤", **members}}


def feedback_cases() -> list[ExplicitCase]:
    cases: list[ExplicitCase] = []

    def add(why: str, *requests: Mapping[str, Any]) -> None:
        cases.append(ExplicitCase("feedback.run", _feedback(*requests), why))

    for over in (False, True):
        edge = "one byte past" if over else "exactly at"
        add(f"summary {edge} 2,048 UTF-8 bytes", _progress(summary=_wide(2048, over)))
        add(f"a completed item {edge} 1,024 bytes", _progress(completed=[_wide(1024, over)]))
        add(f"a blocker {edge} 1,024 bytes", _progress(blockers=[_wide(1024, over)]))
        add(
            f"an artifact label {edge} 256 bytes",
            _progress(artifacts=[{"label": _wide(256, over), "reference": "r"}]),
        )
        add(
            f"an artifact reference {edge} 1,024 bytes",
            _progress(artifacts=[{"label": "l", "reference": _wide(1024, over)}]),
        )
        add(
            f"a test name {edge} 256 bytes",
            _progress(tests=[{"name": _wide(256, over), "outcome": "passed"}]),
        )
        add(
            f"a test reference {edge} 1,024 bytes",
            _progress(tests=[{"name": "t", "outcome": "failed", "reference": _wide(1024, over)}]),
        )
        add(
            f"a usage source {edge} 128 bytes",
            {"usage": _usage("c1", _MS, source=_wide(128, over), input_tokens=1)},
        )
        add(
            f"a usage counter_id {edge} 128 bytes",
            {"usage": _usage(_wide(128, over), _MS, input_tokens=1)},
        )
        count = 9 if over else 8
        items = "nine" if over else "eight"
        add(f"{items} completed items", _progress(completed=["done"] * count))
        add(f"{items} blockers", _progress(blockers=["stuck"] * count))
        add(
            f"{items} artifacts",
            _progress(artifacts=[{"label": f"l{i}", "reference": "r"} for i in range(count)]),
        )
        add(
            f"{items} test reports",
            _progress(tests=[{"name": f"t{i}", "outcome": "passed"} for i in range(count)]),
        )
    add(
        "usage observed one second ahead of the server clock: within five minutes, accepted",
        {"usage": _usage("c1", _MS + 2000, input_tokens=5)},
    )
    add(
        "usage observed five minutes and one millisecond ahead: rejected",
        {"usage": _usage("c1", _MS + 1000 + 300_001, input_tokens=5)},
    )
    add(
        "output_tokens decreases while input_tokens grows: rejected for the same counter",
        {"usage": _usage("c1", _MS + 500, input_tokens=100, output_tokens=50)},
        {"usage": _usage("c1", _MS + 1500, input_tokens=200, output_tokens=30)},
    )
    add(
        "cached_input_tokens decreases while the others grow: rejected for the same counter",
        {
            "usage": _usage(
                "c1", _MS + 500, input_tokens=100, output_tokens=5, cached_input_tokens=40
            )
        },
        {
            "usage": _usage(
                "c1", _MS + 1500, input_tokens=200, output_tokens=6, cached_input_tokens=20
            )
        },
    )
    add(
        "two sources share a counter_id: a lower value from the other source is another counter",
        {"usage": _usage("c1", _MS + 500, source="host-a", input_tokens=500)},
        {"usage": _usage("c1", _MS + 1500, source="host-b", input_tokens=100)},
    )
    return cases


def _call(call_id: str, *, fingerprint: str | None = None, count: int = 0) -> dict[str, Any]:
    telemetry = None
    if fingerprint is not None:
        diagnostics = {"set_fingerprint": fingerprint, "count": count}
        telemetry = {
            "command_id": None,
            "command_exit_code": 0,
            "verification": {"diagnostics": diagnostics},
        }
    return {
        "kind": "tool_call_completed",
        "call_id": call_id,
        "success": True,
        "streaming_parse_candidate": False,
        "mutation_applied": False,
        "telemetry": telemetry,
    }


_FINISHED = {"kind": "iteration_finished", "wall_time_ms": 100, "prose_characters": 10}


def health_cases() -> list[ExplicitCase]:
    return [
        ExplicitCase(
            "health.reduce",
            {
                "session_id": "sess-h",
                "observations": [
                    {"kind": "iteration_started", "iteration": 1},
                    _call("c1", fingerprint="fp-a", count=2),
                    _call("c2", fingerprint="fp-b", count=5),
                    _FINISHED,
                    {"kind": "terminal_outcome", "stop_class": "policy_budget"},
                    {"kind": "iteration_started", "iteration": 2},
                    {"kind": "transcript_reset"},
                    _FINISHED,
                ],
            },
            "a transcript reset with a trend and a stop class in flight: both survive it",
        ),
        ExplicitCase(
            "health.reduce",
            {
                "session_id": "sess-h",
                "observations": [
                    {"kind": "iteration_started", "iteration": 1},
                    _call("c1"),
                    {"kind": "transcript_reset"},
                    _call("c1"),
                    _FINISHED,
                ],
            },
            "a repeated terminal update after a reset: the call still counts once",
        ),
    ]


def _event(
    event_id: int, kind: str, payload: Any, session: str = "sess-1", turn: str | None = "turn-0"
) -> dict[str, Any]:
    return {
        "id": event_id,
        "sessionId": session,
        "runId": "run-1",
        "turnId": turn,
        "iteration": None,
        "executionId": None,
        "topic": "session",
        "kind": kind,
        "recordedAtUnixMs": _MS + event_id,
        "payload": payload,
    }


def _checkpoint(event_id: int, label: str, iteration: int) -> dict[str, Any]:
    return _event(event_id, "loop_checkpoint", {"checkpoint": label, "iteration": iteration})


def _assistant(event_id: int, text: str) -> dict[str, Any]:
    return _event(event_id, "message", {"role": "assistant", "visibility": "public", "text": text})


SENSITIVE_ARGUMENTS = {
    "password": "hunter2",
    "path": "src/app.py",
    "options": {"api_key": "k-123", "retries": 2, "headers": [{"authorization": "Bearer abc"}]},
    "env": [{"name": "DB", "secret": "s3"}],
}


def recap_cases() -> list[ExplicitCase]:
    prompt = _event(1, "message", {"role": "user", "visibility": None, "text": "go"})
    out_of_order = [prompt]
    for iteration in (2, 0, 1):
        base = len(out_of_order) + 1
        out_of_order += [
            _checkpoint(base, "iteration_start", iteration),
            _assistant(base + 1, f"step {iteration}"),
            _checkpoint(base + 2, "iteration_end", iteration),
        ]
    interleaved = [
        prompt,
        _event(2, "message", {"role": "user", "visibility": None, "text": "x"}, session="sess-2"),
        _assistant(3, "one"),
        _event(4, "other", {"note": "x"}, session="sess-2"),
        _event(5, "other", {"note": "not a recap kind"}),
        _event(6, "message", {"role": "user", "visibility": None, "text": "y"}, session="sess-2"),
        _assistant(7, "two"),
        _assistant(8, "three"),
    ]
    tools = [
        prompt,
        _checkpoint(2, "iteration_start", 0),
        _event(3, "tool_call", {"callId": "c1", "toolName": "edit", "input": SENSITIVE_ARGUMENTS}),
        _event(
            4,
            "tool_result",
            {
                "callId": "c1",
                "toolName": "edit",
                "isError": False,
                "output": {"token": "t-1", "ok": True},
                "verification": None,
            },
        ),
        _checkpoint(5, "iteration_end", 0),
    ]
    return [
        ExplicitCase(
            "recap.project",
            {"events": out_of_order, "query": {"sessionId": "sess-1"}},
            "iterations 2, 0, 1 in journal order: listed in order of first appearance",
        ),
        ExplicitCase(
            "recap.project",
            {"events": interleaved, "query": {"sessionId": "sess-1", "limit": 3}},
            "another session interleaved and a page ending on an unmatched event: "
            "nextEventId follows the last event read",
        ),
        ExplicitCase(
            "recap.project",
            {"events": tools, "query": {"sessionId": "sess-1"}},
            "secrets under sensitive member names at every depth of tool arguments and output",
        ),
    ]


def recap_limit_cases() -> list[ExplicitCase]:
    # One session of 32,770 small events: only a read of more than 32,768
    # events shows whether 32,769 is clamped.
    events = [_event(i, "other", {}, turn=None) for i in range(1, 32_771)]
    return [
        ExplicitCase(
            "recap.project",
            {"events": events, "query": {"sessionId": "sess-1", "limit": limit}},
            f"a limit of {limit} over 32,770 events: the read is clamped to 32,768",
        )
        for limit in (32_769,)
    ]


_EXECUTION_ID = "hxe-0199a2b4-c6d8-7e0f-8a1b-000000000077"


def _span(span_id: int, parent: int | None) -> dict[str, Any]:
    """A span of the run's own execution."""
    return span(span_id, parent, duration=1, metadata={"harn.execution.id": _EXECUTION_ID})


def _run(spans: list[dict[str, Any]], events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    run = {
        "kind": "run",
        "status": "completed",
        "session_id": "sess-r",
        "execution_id": _EXECUTION_ID,
        "spans": spans,
    }
    return {"run": run, "events": events or []}


def runrecord_cases() -> list[ExplicitCase]:
    return [
        ExplicitCase(
            "runrecord.project",
            _run([_span(1, None), _span(2, 3), _span(3, 2)]),
            "spans 2 and 3 name each other as parent: a cycle, rejected",
        ),
        ExplicitCase(
            "runrecord.project",
            _run([_span(3, 2), _span(2, 1), _span(1, None)]),
            "children listed before their parents: a valid tree",
        ),
        ExplicitCase(
            "runrecord.project",
            _run(
                [_span(1, None)],
                [
                    attribute_event(1, "completion_receipt", {"ok": True}),
                    attribute_event(2, "completion_receipt", None),
                ],
            ),
            "an explicit null receipt after a recorded one: the latest (null) wins",
        ),
    ]


def _unknown_member(doctype: str, where: list[str | int]) -> ExplicitCase:
    from session_contracts.conformance.judge.cases.operations import UNKNOWN_KEY, bundled_examples

    document = copy.deepcopy(bundled_examples()[doctype])
    node = document
    for part in where:
        node = node[part]
    node[UNKNOWN_KEY] = 1
    return ExplicitCase(
        "document.roundtrip",
        {"doctype": doctype, "document": document, "injected_at": where},
        f"an unknown member inside {doctype} at {where}",
    )


def document_cases() -> list[ExplicitCase]:
    iteration: list[str | int] = ["turns", 0, "iterations", 0]
    return [
        _unknown_member("session-health.fact", ["heuristics"]),
        _unknown_member("session-recap.snapshot", iteration),
        _unknown_member("session-recap.snapshot", [*iteration, "tools", 0]),
        _unknown_member("session-recap.snapshot", ["turns", 0, "prompts", 0]),
    ]
