"""Benchmark: projecting and validating a 10,000-span run record.

    python -m bench.bench_runrecord [repeats]
    python -m bench.bench_runrecord [repeats]

A workflow run of 10,000 completed spans (one workflow root, stages, LLM
calls with and without an observed first token, tool calls under the LLM
calls) and a session of a few hundred events ending in a completion receipt.
Times, as the median of ``repeats`` runs:

* ``project``: :func:`project_run_record`, which joins the span tree, checks
  the execution owner of every span and validates the whole record
  (``run-record.record``, x- rules included) before returning it;
* ``validate``: the fast validator alone on the projected record, the share
  of the projection a producer's own check would cost;
* ``build_tree``: joining ``parent_span_id`` to ``span_id`` alone.

Everything is built before timing starts.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from bench._timing import median_seconds, run_from_command_line
from session_contracts.journal import SessionEvent
from session_contracts.runrecord import (
    RECORD_DOCUMENT_TYPE,
    RunSpec,
    Span,
    build_tree,
    project_run_record,
)
from session_contracts.validation.validator import default_validator

SPANS = 10_000
SESSION_ID = "sess-bench-0199"
EXECUTION_ID = "hxe-0199a2b4-c6d8-7e0f-8a1b-2c3d4e5f6071"  # Harn-owned: hxe- + a UUIDv7
TRACE_ID = "trace_0199a2b4c6d8e0f1"
_TOOLS = ("read_file", "write_file", "run_command", "search", "apply_patch")


def make_spans(n: int = SPANS, seed: int = 2026) -> list[Span]:
    """``n`` spans of one workflow, parents before children, ids in creation order."""
    rng = random.Random(seed)
    owner = {"harn.execution.id": EXECUTION_ID}
    spans = [
        Span(
            trace_id=TRACE_ID,
            span_id=1,
            parent_span_id=None,
            kind="workflow",
            name="build",
            start_ms=0,
            duration_ms=3_600_000,
            metadata=owner,
        )
    ]
    clock = 0
    stage: int | None = None
    llm: int | None = None
    while len(spans) < n:
        span_id = len(spans) + 1
        clock += rng.randint(1, 400)
        roll = rng.random()
        if stage is None or roll < 0.02:
            kind, name, parent, stage = "stage", f"stage-{span_id}", 1, span_id
        elif llm is None or roll < 0.45:
            kind, name, parent, llm = "llm_call", "llm_call", stage, span_id
        else:
            kind, name, parent = "tool_call", rng.choice(_TOOLS), llm
        duration = rng.randint(5, 30_000)
        first_token = rng.randint(0, min(duration, 2_000)) if kind == "llm_call" else None
        if kind == "llm_call" and rng.random() < 0.1:
            first_token = None  # a failed or cancelled call never saw a token
        spans.append(
            Span(
                trace_id=TRACE_ID,
                span_id=span_id,
                parent_span_id=parent,
                kind=kind,
                name=name,
                start_ms=clock,
                duration_ms=duration,
                ttft_ms=first_token,
                metadata={**owner, "harn.span.seq": span_id} if kind == "llm_call" else owner,
            )
        )
    return spans


def make_events(n: int = 400) -> list[SessionEvent]:
    """A session of ``n`` events; the receipt arrives last, after the run ended."""
    events = []
    for event_id in range(1, n):
        events.append(
            SessionEvent.from_json(
                {
                    "id": event_id,
                    "sessionId": SESSION_ID,
                    "runId": "wf-build-42",
                    "turnId": f"turn-{event_id // 20}",
                    "iteration": event_id % 20,
                    "executionId": EXECUTION_ID,
                    "topic": "agent.transcript",
                    "kind": "message",
                    "recordedAtUnixMs": 1_760_000_000_000 + event_id,
                    "payload": {
                        "role": "assistant",
                        "visibility": "public",
                        "text": f"step {event_id}",
                    },
                }
            )
        )
    receipt = {"owner": "ci", "verdict": "accepted", "checks": {"tests": 812, "lint": "clean"}}
    events.append(
        SessionEvent.from_json(
            {
                "id": n,
                "sessionId": SESSION_ID,
                "runId": None,
                "turnId": None,
                "iteration": None,
                "executionId": None,
                "topic": "session",
                "kind": "session_attribute",
                "recordedAtUnixMs": 1_760_000_000_000 + n,
                "payload": {"name": "completion_receipt", "value": receipt},
            }
        )
    )
    return events


def run(repeats: int = 5) -> dict[str, float]:
    """Time projection, validation and tree building; print and return the medians in ms."""
    spans = make_spans()
    events = make_events()
    spec = RunSpec(
        kind="workflow",
        id="wf-build-42",
        status="completed",
        session_id=SESSION_ID,
        execution_id=EXECUTION_ID,
        spans=spans,
    )
    validator = default_validator()
    record: dict[str, Any] = project_run_record(spec, events)  # warms the validator up
    if validator.validate(RECORD_DOCUMENT_TYPE, record) != []:
        raise AssertionError("the projected record does not validate")
    if len(record["evidence"]["trace_spans"]) != SPANS:
        raise AssertionError("the record lost spans")

    def median_ms(action: Callable[[], object]) -> float:
        return median_seconds(action, repeats) * 1000

    figures = {
        "spans": float(SPANS),
        "project_ms": median_ms(lambda: project_run_record(spec, events)),
        "validate_ms": median_ms(lambda: validator.validate(RECORD_DOCUMENT_TYPE, record)),
        "build_tree_ms": median_ms(lambda: build_tree(spans)),
    }
    per_span = 1e3 / SPANS
    print(f"run-record benchmark: {SPANS:,} spans, median of {repeats} runs")
    print(
        f"  project (incl. validation)  {figures['project_ms']:9.1f} ms  "
        f"({figures['project_ms'] * per_span:.1f} us/span)"
    )
    print(
        f"  validate alone              {figures['validate_ms']:9.1f} ms  "
        f"({figures['validate_ms'] * per_span:.1f} us/span)"
    )
    print(f"  build_tree alone            {figures['build_tree_ms']:9.1f} ms")
    return figures


if __name__ == "__main__":
    raise SystemExit(run_from_command_line(run, sys.argv))
