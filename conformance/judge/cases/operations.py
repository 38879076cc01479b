"""Case strategies per operation: what the suite sends a producer.

Documents come from the bundled examples and the schemas (through
:mod:`documents`); every draw goes through :mod:`draws` (the cases are a
function of the seed alone); observation streams and checkpoint sequences are built
for their purpose, so that the interesting rules (replays, counter resets,
stale reports, oscillating diagnostics) are reached in a few dozen cases.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from hypothesis import strategies as st

from session_contracts.conformance.judge.cases import draws
from session_contracts.conformance.judge.cases.documents import documents, object_paths
from session_contracts.contracts import CONTRACT_DOCTYPES
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER
from session_contracts.validation.schema_set import default_schema_set

__all__ = [
    "EXPLICIT_EPOCH_MS",
    "attribute_event",
    "bundled_examples",
    "extension_values",
    "feedback_steps",
    "health_streams",
    "provider_responses",
    "recap_cases",
    "recap_event",
    "recap_stored_cases",
    "reset_streams",
    "roundtrip_inputs",
    "run_projections",
    "snake_case_query",
    "span",
    "unknown_field_inputs",
    "usage_sample",
]

#: The epoch of the explicit cases' clocks (explicit.py keeps its cases' times after it).
EXPLICIT_EPOCH_MS = 1_700_000_000_000


def usage_sample(
    at: int,
    tokens: int,
    output: int = 10,
    *,
    counter: str = "c1",
    source: str = "native_host_event",
    cached: int | None = None,
) -> dict[str, Any]:
    usage = {
        "source": source,
        "counter_id": counter,
        "scope": "host_session",
        "coverage": "partial",
        "observed_at_unix_ms": at,
        "input_tokens": tokens,
        "output_tokens": output,
    }
    if cached is not None:
        usage["cached_input_tokens"] = cached
    return usage


def span(
    span_id: int,
    parent: int | None,
    start: int = 0,
    *,
    duration: int = 10,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A tool span of trace ``trace-1`` (the span trees of run records)."""
    return {
        "trace_id": "trace-1",
        "span_id": span_id,
        "parent_span_id": parent,
        "kind": "tool",
        "name": "step",
        "start_ms": start,
        "duration_ms": duration,
        "metadata": dict(metadata or {}),
    }


def attribute_event(event_id: int, name: str, value: Any) -> dict[str, Any]:
    """A stored session_attribute event of run ``run-r`` (receipts, for run records)."""
    payload = {"name": name, "value": value}
    return recap_event(event_id, "sess-r", "run-r", None, None, "session_attribute", payload)


UNKNOWN_KEY = "zz_not_in_the_contract"


@cache
def bundled_examples() -> dict[str, Any]:
    folder = resources.files("session_contracts.schemas").joinpath("examples")
    known = default_schema_set().document_types
    return {
        entry.name.removesuffix(".json"): json.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".json") and entry.name.removesuffix(".json") in known
    }


def _doctypes(contracts: tuple[str, ...]) -> list[str]:
    prefixes = tuple(p for c in contracts for p in CONTRACT_DOCTYPES.get(c, ()))
    return sorted(name for name in bundled_examples() if name.startswith(prefixes))


def roundtrip_inputs(contracts: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """A valid document of a contract the producer supports."""
    names = _doctypes(contracts)
    light = [n for n in names if n not in ("session-recap.snapshot", "session-recap.envelope")]
    bundled = draws.sampled(names).map(
        lambda name: {"doctype": name, "document": copy.deepcopy(bundled_examples()[name])}
    )
    if not light:
        return bundled
    generated = draws.sampled(light).flatmap(
        lambda name: documents(name).map(lambda doc: {"doctype": name, "document": doc})
    )
    return st.one_of(bundled, generated)


@cache
def closed_objects(name: str) -> tuple[tuple[str | int, ...], ...]:
    """Where the bundled example of ``name`` refuses an unknown member."""
    from session_contracts.validation.validator import default_validator

    document = bundled_examples()[name]
    closed = []
    for where in object_paths(document):
        # Closed means every value an unknown member may get is refused there: a map of
        # strings (Harn's headers) refuses 1 but takes "x", so it is open.
        refused = True
        for value in _UNKNOWN_VALUES:
            probe = copy.deepcopy(document)
            node = probe
            for part in where:
                node = node[part]
            node[UNKNOWN_KEY] = copy.deepcopy(value)
            refused = refused and not default_validator().is_valid(name, probe)
        if refused:
            closed.append(tuple(where))
    return tuple(closed)


_UNKNOWN_VALUES: tuple[Any, ...] = (1, None, "x", {"nested": [True]})


def unknown_field_inputs(contracts: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """A bundled example with one unknown member injected at a closed object.

    Document types without a closed object (the recap query, whose unknown
    members are ignored as Harn's runtime ignores them) are left out.
    """

    def inject(name: str, data: st.DataObject) -> dict[str, Any]:
        document = copy.deepcopy(bundled_examples()[name])
        where = list(data.draw(draws.sampled(closed_objects(name)), label="object path"))
        node = document
        for part in where:
            node = node[part]
        node[UNKNOWN_KEY] = copy.deepcopy(data.draw(draws.sampled(_UNKNOWN_VALUES)))
        return {"doctype": name, "document": document, "injected_at": where}

    names = [name for name in _doctypes(contracts) if closed_objects(name)]
    return st.tuples(draws.sampled(names), st.data()).map(lambda pair: inject(*pair))


_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | draws.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | draws.floats()
    | draws.text(max_size=20)
    # Extensions keep every JSON number: integers past 64 bits,
    # which a reader that parses numbers as doubles or 64-bit integers loses.
    | draws.sampled([2**64, -(2**63) - 1, 900719925474099312345678901234567890, -0.0, 1e21])
    | draws.integers(2**64, 10**40)
)


def _json_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # A function, not a lambda: hypothesis reads a lambda's source to see that it recurses.
    return st.lists(children, max_size=4) | st.dictionaries(
        draws.text(max_size=12), children, max_size=4
    )


extension_values = st.recursive(_JSON_LEAVES, _json_containers, max_leaves=12)


def extension_inputs() -> st.SearchStrategy[dict[str, Any]]:
    def build(doctype: str, extensions: dict[str, Any]) -> dict[str, Any]:
        document = copy.deepcopy(bundled_examples()[doctype])
        snapshot = document["snapshot"] if doctype.endswith("envelope") else document
        snapshot["extensions"] = extensions
        return {"doctype": doctype, "document": document}

    return st.builds(
        build,
        draws.sampled(["session-recap.snapshot", "session-recap.envelope"]),
        st.dictionaries(draws.text(min_size=1, max_size=16), extension_values, max_size=5),
    )


# Harn-owned execution ids (hxe- + a canonical UUIDv7): the run-record projection
# drops any other id, as Harn's evidence projection does (docs/runrecord.md 1.3).
_RUN_EXECUTION = "hxe-0199a2b4-c6d8-7e0f-8a1b-000000000077"
_RESPONSE_EXECUTION = "hxe-0199a2b4-c6d8-7e0f-8a1b-2c3d4e5f6071"


@st.composite
def _session_observations(draw: st.DrawFn, resets: bool = True) -> dict[str, Any]:
    """A plausible session: iterations with call ids repeated within and across
    iterations, late and abandoned calls, exits with and without codes and
    command ids (some repeated), edits, verifications cycling through a few
    diagnostic sets (so trends oscillate), resets (unless ``resets`` is false),
    historical loads, finishes revisited, and a terminal outcome before, between
    or after iterations."""
    observations: list[dict[str, Any]] = []
    calls = draws.sampled(["c1", "c2", "c3"])
    commands = st.none() | draws.sampled(["cmd-1", "cmd-2"])
    diagnostics = draws.sampled([("fp-a", 2), ("fp-b", 5), ("fp-c", 2), ("fp-a", 3), ("fp-e", 0)])
    collected: list[tuple[str, int]] = []  # diagnostic collections so far
    stop_classes = draws.sampled(["natural", "policy_budget", "runtime_error", "unknown"])

    def telemetry() -> dict[str, Any] | None:
        if draw(draws.integers(0, 2)) == 0:
            return None
        verification: dict[str, Any] | None = None
        if draw(st.booleans()):
            measured: dict[str, Any] | None = None
            if draw(draws.integers(0, 4)) > 0:
                fingerprint, count = draw(diagnostics)
                if len(collected) >= 2 and draw(st.booleans()):
                    # Back to the set two collections ago: an oscillation,
                    # unless the one between was the same set.
                    fingerprint, count = collected[-2]
                collected.append((fingerprint, count))
                measured = {"set_fingerprint": fingerprint, "count": count}
            verification = {"diagnostics": measured}
        return {
            "command_id": draw(commands),
            "command_exit_code": draw(st.none() | draws.sampled([0, 0, 1, 2, -9])),
            "verification": verification,
        }

    def call() -> dict[str, Any]:
        return {
            "kind": "tool_call_completed",
            "call_id": draw(calls),
            "success": draw(st.booleans()),
            "streaming_parse_candidate": draw(draws.integers(0, 4)) == 0,
            "mutation_applied": draw(st.booleans()),
            "telemetry": telemetry(),
        }

    if draw(draws.integers(0, 5)) == 0:
        observations.append({"kind": "terminal_outcome", "stop_class": draw(stop_classes)})
    for iteration in range(1, draw(draws.integers(1, 5)) + 1):
        observations.append({"kind": "iteration_started", "iteration": iteration})
        for _ in range(draw(draws.integers(0, 5))):
            moves = ["call", "call", "call", "abandon", "reset", "history", "terminal"]
            move = draw(draws.sampled(moves if resets else [m for m in moves if m != "reset"]))
            if move == "call":
                observations.append(call())
            elif move == "abandon":
                observations.append({"kind": "tool_call_abandoned", "call_id": draw(calls)})
            elif move == "reset":
                observations.append({"kind": "transcript_reset"})
            elif move == "history":
                observations.append(
                    {"kind": "historical_messages_loaded", "count": draw(draws.integers(0, 50))}
                )
            else:
                observations.append({"kind": "terminal_outcome", "stop_class": draw(stop_classes)})
        for _ in range(draw(draws.integers(1, 2))):  # a terminal path may finish it twice
            observations.append(
                {
                    "kind": "iteration_finished",
                    "wall_time_ms": draw(st.none() | draws.integers(0, 5000)),
                    "prose_characters": draw(st.none() | draws.integers(0, 2000)),
                }
            )
        # Calls resolving after the iteration's snapshot, repeated on purpose.
        for _ in range(draw(draws.integers(0, 2))):
            observations.append(call())
    if draw(st.booleans()):
        observations.append({"kind": "terminal_outcome", "stop_class": draw(stop_classes)})
        # Calls resolving after the terminal snapshot (closeout), repeated on purpose.
        for _ in range(draw(draws.integers(0, 2))):
            if draw(st.booleans()):
                observations.append({"kind": "tool_call_abandoned", "call_id": draw(calls)})
            else:
                observations.append(call())
    return {"session_id": "sess-h", "observations": observations}


def _without_resets(stream: Any) -> Any:
    if not isinstance(stream, dict) or not isinstance(stream.get("observations"), list):
        return stream
    kept = [
        o
        for o in stream["observations"]
        if not (isinstance(o, dict) and o.get("kind") == "transcript_reset")
    ]
    return {**stream, "observations": kept}


def health_streams() -> st.SearchStrategy[dict[str, Any]]:
    """Purpose-built sessions mostly, schema-generated streams for the odd shapes;
    never a transcript reset: that rule is ``health.transcript-reset``'s alone
    (recommended), so the required checks judge what Harn's runtime does too."""
    return st.one_of(
        _session_observations(resets=False),
        _session_observations(resets=False),
        documents("health-observation.stream").map(_without_resets),
    )


@st.composite
def reset_streams(draw: st.DrawFn) -> dict[str, Any]:
    """A purpose-built session with at least one transcript reset (seed 000:
    "Resetting the session transcript resets these observations.")."""
    stream = draw(_session_observations(resets=True))
    observations = list(stream["observations"])
    if not any(o["kind"] == "transcript_reset" for o in observations):
        at = draw(draws.integers(0, len(observations)))
        observations.insert(at, {"kind": "transcript_reset"})
    return {**stream, "observations": observations}


# -- feedback -------------------------------------------------------------------------------------
_BASE_MS = 1_700_000_000_000


@st.composite
def feedback_steps(draw: st.DrawFn) -> dict[str, Any]:
    """A session's start, checkpoints (some replays, some rule breakers) and reads."""
    session = "sess-" + draw(draws.sampled(["a", "b"]))
    clock = _BASE_MS
    capabilities = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "usage": draws.sampled(["supported", "unsupported", "unknown"]),
                "progress": draws.sampled(["supported", "unsupported", "unknown"]),
                "model": draws.sampled(["supported", "unsupported", "unknown"]),
            },
        )
    )
    client = {"product": "Agent", "capabilities": capabilities}
    steps: list[dict[str, Any]] = [
        {
            "at_unix_ms": clock,
            "call": "start",
            "request": {"request_id": "r0", "session_id": session, "client_info": client},
        },
    ]
    version = 0
    tokens = draw(draws.integers(0, 1000))
    last_usage_at = 0
    last_counter = ""
    sent: list[dict[str, Any]] = []
    for index in range(draw(draws.integers(0, 6))):
        clock += draw(draws.sampled([0, 1000, 60_000, 1_000_000]))
        move = draw(
            draws.sampled(
                [
                    "plain",
                    "usage",
                    "usage",
                    "progress",
                    "replay",
                    "stale_version",
                    "future",
                    "decrease",
                    "older",
                    "conflict",
                    "observe",
                ]
            )
        )
        if move == "observe":
            step = {
                "at_unix_ms": clock,
                "call": "observe",
                "session_id": session,
                "can_read_raw_receipts": draw(st.booleans()),
            }
            if draw(draws.integers(0, 3)) == 0:  # now and then a reader of another version
                step["reader_contract_version"] = draw(draws.sampled([1, 2]))
            steps.append(step)
            continue
        if move == "replay" and sent:
            steps.append(
                {
                    "at_unix_ms": clock,
                    "call": "checkpoint",
                    "request": copy.deepcopy(draw(st.sampled_from(sent))),
                }
            )
            continue
        request: dict[str, Any] = {
            "request_id": f"r{index + 1}",
            "session_id": session,
            "session_version": version + (1 if move == "stale_version" else 0),
            "context_hash": "ctx",
            "next_action": "continue",
            "open_loops": [],
        }
        counter = draw(draws.sampled(["c1", "c2"]))
        # The rule breakers aim at a counter that has a sample, when there is one.
        if move in ("older", "decrease", "conflict"):
            if not last_counter:
                # Nothing to break yet: without a sample these would be accepted,
                # and the version this strategy tracks would fall behind.
                move = "usage"
            else:
                counter = last_counter
        future_accepted = False
        if move == "usage":
            tokens += draw(draws.integers(1, 500))
            last_usage_at = max(last_usage_at + 1, clock - draw(draws.integers(0, 5000)))
            request["usage"] = usage_sample(last_usage_at, tokens, 10, counter=counter)
            last_counter = counter
        elif move == "older":
            request["usage"] = usage_sample(
                max(0, last_usage_at - 1), tokens + 1, 10, counter=counter
            )
        elif move == "conflict":  # another value at the time of the last sample
            request["usage"] = usage_sample(last_usage_at, tokens + 1, 10, counter=counter)
        elif move == "future":
            # Past the five minutes, or within them (accepted: a clock may lag the host's).
            ahead = draw(draws.sampled([300_001, 1, 1000, 300_000]))
            request["usage"] = usage_sample(clock + ahead, tokens + 1, 10, counter=counter)
            future_accepted = ahead <= 300_000 and clock + ahead > last_usage_at
            if future_accepted:
                tokens, last_usage_at, last_counter = tokens + 1, clock + ahead, counter
        elif move == "decrease":
            later = max(clock, last_usage_at + 1)
            request["usage"] = usage_sample(later, max(0, tokens - 1), 10, counter=counter)
        elif move == "progress":
            request["progress"] = {
                "phase": draw(draws.sampled(["testing", "blocked"])),
                "summary": "步骤" * draw(draws.integers(0, 3)),
                **draw(_progress_at_a_limit()),
            }
        if draw(st.booleans()):
            request["client_info"] = {
                "product": "Agent",
                "capabilities": {"usage": "supported", "progress": "supported"},
            }
        steps.append({"at_unix_ms": clock, "call": "checkpoint", "request": request})
        sent.append(request)
        if future_accepted or move not in (
            "stale_version",
            "future",
            "decrease",
            "older",
            "conflict",
        ):
            version += 1
    clock += draw(draws.sampled([0, 900_000, 900_001]))
    steps.append(
        {
            "at_unix_ms": clock,
            "call": "observe",
            "session_id": session,
            "can_read_raw_receipts": draw(st.booleans()),
        }
    )
    return {"steps": steps}


def _limited_text(limit: int, over: bool) -> str:
    """Exactly ``limit`` UTF-8 bytes (or one more) of three-byte characters: a byte
    limit counted in characters lets the longer one through."""
    size = limit + int(over)
    return "步" * (size // 3) + "a" * (size % 3)


@st.composite
def _progress_at_a_limit(draw: st.DrawFn) -> dict[str, Any]:
    """Progress members with one limited field at its bound, now and then one past it."""
    field = draw(
        draws.sampled(
            ["", "", "completed", "blockers", "label", "reference", "test", "items", "summary"]
        )
    )
    over = draw(draws.integers(0, 3)) == 0
    if field in ("completed", "blockers"):
        return {field: [_limited_text(1024, over)]}
    if field in ("label", "reference"):
        limit = 256 if field == "label" else 1024
        artifact = {"label": "l", "reference": "r", field: _limited_text(limit, over)}
        return {"artifacts": [artifact]}
    if field == "test":
        return {"tests": [{"name": _limited_text(256, over), "outcome": "passed"}]}
    if field == "items":
        member = draw(draws.sampled(["completed", "blockers", "artifacts", "tests"]))
        count = 9 if over else 8
        item: Any = {
            "completed": "done",
            "blockers": "stuck",
            "artifacts": {"label": "l", "reference": "r"},
            "tests": {"name": "t", "outcome": "not_run"},
        }[member]
        return {member: [copy.deepcopy(item) for _ in range(count)]}
    if field == "summary":
        return {"summary": _limited_text(2048, over)}
    return {}


# -- run records --------------------------------------------------------------------------------
_NAMES = draws.sampled(["run_tests", "edit_file", "search"])
_ARGS = st.dictionaries(
    draws.sampled(["path", "query", "n"]),
    draws.integers(0, 9) | draws.text(max_size=8),
    max_size=2,
)
_NATIVE_CALL = st.builds(
    lambda i, name, args: {"id": f"tc-{i}", "name": name, "arguments": args},
    draws.integers(0, 9),
    _NAMES,
    _ARGS,
)
_LOOP_VALUE = draws.sampled(
    ["true", "false", "null", "nil", "nil", "NIL", "3", "-2.5", "done", "1e3", "yes"]
)


@st.composite
def provider_responses(draw: st.DrawFn, canary: str | None = None) -> dict[str, Any]:
    """A model response: prose, maybe a LOOP_STATE block (complete or not), maybe
    text-protocol or legacy calls, and provider-native tool calls."""
    pieces = [draw(draws.text(max_size=40, exclude="\r"))]
    # A planted secret goes where a model may put one: its prose, a native
    # call's arguments, a text-protocol call, or (one-line ones) a LOOP_STATE value.
    where = "text"
    if canary is not None:
        places = ["text", "native_call", "text_call"]
        if "\n" not in canary:
            places.append("loop_state")
        where = draw(st.sampled_from(places))
        if where == "text":
            pieces.append(canary)
        elif where == "text_call":
            call = {"id": "tc-secret", "name": "search", "arguments": {"query": canary}}
            pieces.append(f"<tool_call>{json.dumps(call)}</tool_call>")
        elif where == "loop_state":
            pieces.append(f"## LOOP_STATE\nnote: {canary}\n## END_LOOP_STATE")
    if draw(draws.integers(0, 2)):  # a LOOP_STATE block in two responses out of three
        keys = draw(st.lists(draws.sampled(["done", "step", "retry", "note"]), max_size=3))
        block = ["## LOOP_STATE", *(f"{k}: {draw(_LOOP_VALUE)}" for k in keys)]
        if draw(draws.integers(0, 3)):  # mostly complete blocks
            block.append("## END_LOOP_STATE")
        pieces.append("\n".join(block))
    if draw(draws.integers(0, 3)) == 0:
        call = draw(_NATIVE_CALL)
        pieces.append(f"<tool_call>{json.dumps(call)}</tool_call>")
    if draw(draws.integers(0, 4)) == 0:
        pieces.append(f"{draw(_NAMES)}({json.dumps(draw(_ARGS))})")
    tool_calls = draw(st.lists(_NATIVE_CALL, max_size=3, unique_by=lambda c: c["id"]))
    if where == "native_call":
        tool_calls.append({"id": "tc-secret", "name": "search", "arguments": {"query": canary}})
    return {
        "response": {
            "call_id": f"call-{draw(draws.integers(0, 99))}",
            "iteration": draw(draws.integers(0, 20)),
            "span_id": draw(st.none() | draws.integers(0, 50)),
            "text": "\n".join(pieces),
            "tool_calls": tool_calls,
        },
        "execution_id": draw(st.none() | st.just(_RESPONSE_EXECUTION)),
    }


@st.composite
def run_projections(draw: st.DrawFn) -> dict[str, Any]:
    """A run description (kind, owner, spans, gaps) and the session's events."""
    kind = draw(draws.sampled(["run", "workflow", "session"]))
    execution_id = _RUN_EXECUTION if kind == "run" else draw(st.none() | st.just(_RUN_EXECUTION))
    count = draw(draws.integers(0, 6))
    spans = []
    for span_id in range(1, count + 1):
        parent = draw(st.none() | draws.integers(1, span_id - 1)) if span_id > 1 else None
        span: dict[str, Any] = {
            "trace_id": "trace-1",
            "span_id": span_id,
            "parent_span_id": parent,
            "kind": draw(draws.sampled(["llm_call", "tool", "workflow"])),
            "name": "step",
            "start_ms": draw(draws.integers(0, 1000)),
            "duration_ms": draw(draws.integers(0, 1000)),
            "metadata": {"harn.execution.id": execution_id} if execution_id else {},
        }
        if draw(st.booleans()):
            span["ttft_ms"] = draw(draws.integers(0, 100))
        spans.append(span)
    if len(spans) > 1 and draw(st.booleans()):
        # Listed in another order: a child may come before its parent.
        spans = draw(st.permutations(spans))
    children = [s for s in spans if s["parent_span_id"] is not None]
    if len(children) > 1 and draw(draws.integers(0, 4)) == 0:
        # A cycle between two non-root spans: the list is not a forest.
        a, b = draw(st.permutations(children))[:2]
        a["parent_span_id"], b["parent_span_id"] = b["span_id"], a["span_id"]
    events = []
    for event_id in range(1, draw(draws.integers(0, 4)) + 1):
        value = draw(st.none() | extension_values)
        name = draw(draws.sampled(["completion_receipt", "other"]))
        events.append(attribute_event(event_id, name, value))
    run: dict[str, Any] = {
        "kind": kind,
        "status": "completed",
        "session_id": "sess-r",
        "execution_id": execution_id,
        "spans": spans,
    }
    if kind == "workflow":
        run["id"] = "wf-build"
    if draw(st.booleans()):
        run["gaps"] = [
            {"component": "flight_recording", "code": "persist_failed", "message": "disk full"}
        ]
    return {"run": run, "events": events}


# -- recaps -------------------------------------------------------------------------------------
_SNAKE = {
    "sessionId": "session_id",
    "runId": "run_id",
    "turnId": "turn_id",
    "fromEventId": "from_event_id",
}


def recap_event(
    event_id: int,
    session: str,
    run: str | None,
    turn: str | None,
    iteration: int | None,
    kind: str,
    payload: dict[str, Any],
) -> dict[str, Any]:
    """A session event of the journal a ``recap.project`` case holds."""
    return {
        "id": event_id,
        "sessionId": session,
        "runId": run,
        "turnId": turn,
        "iteration": iteration,
        "executionId": None,
        "topic": "session",
        "kind": kind,
        "recordedAtUnixMs": 1_700_000_000_000 + event_id,
        "payload": payload,
    }


@st.composite
def recap_cases(draw: st.DrawFn, canary: str | None = None) -> dict[str, Any]:
    """A small journal and a query in either spelling, with limits below, at and above the clamp.

    The journal reaches every branch of the projection (docs/recap.md): turns
    keyed by (run, turn) with events lacking either id, iterations opened and
    closed by loop checkpoints (some left open, some never opened, unknown
    checkpoint labels), facts outside any iteration (the null segment), tool
    calls and results joined in either order (some without a call id, some
    never answered), verifications that pass or not, prompts and assistant
    text of every visibility, valid and invalid progress, terminals with and
    without kind and owner, events of other kinds and of another session.
    """
    text = draws.text(max_size=30, exclude="\r")
    if canary is not None:
        # Planted in every public text: prompts, assistant text, tool input and
        # output values, plan title, summary and steps, progress, terminal
        # strings and verified paths.
        text = text.map(lambda prefix: f"{prefix} {canary} ")
    # Drawn first, so that the journal's many draws do not crowd the limit's
    # values out of the first examples.
    limit = draw(draws.sampled([None, 0, 1, 2, 3, 5, 4096, 32768, 32769, 10**6]))
    events: list[dict[str, Any]] = []
    next_id = draw(draws.integers(0, 3))
    planted = False

    def add(session: str, run: str | None, turn: str | None, kind: str, payload: Any) -> None:
        nonlocal next_id
        events.append(recap_event(next_id, session, run, turn, None, kind, payload))
        next_id += 1

    for turn_index in range(draw(draws.sampled([0, 1, 1, 2, 2, 3]))):
        turn = f"turn-{turn_index}"
        run = draw(draws.sampled(["run-1", "run-1", "run-2", None]))
        session = "sess-1" if turn_index == 0 else draw(draws.sampled(["sess-1", "sess-2"]))
        prompt = draw(text)
        if canary is not None and not planted:
            prompt, planted = f"{prompt} {canary}", True
        visibility = draw(draws.sampled([None, None, "public", "internal"]))
        add(
            session,
            run,
            turn,
            "message",
            {"role": "user", "visibility": visibility, "text": prompt},
        )
        # Iteration numbers in any order: a turn lists them by first appearance.
        for iteration in draw(draws.integers(0, 3).flatmap(lambda n: st.permutations(range(n)))):
            opened = draw(draws.integers(0, 5)) > 0
            if opened:
                add(
                    session, run, turn, "loop_checkpoint", _checkpoint("iteration_start", iteration)
                )
            for _ in range(draw(draws.integers(0, 4))):
                kind, payload = draw(_recap_fact(text))
                scope = draw(draws.sampled([turn] * 6 + [None]))
                add(session, run, scope, kind, payload)
            closing = draw(draws.sampled(["iteration_end"] * 4 + ["none", "compacted"]))
            if closing != "none":
                label = draw(draws.sampled([iteration, iteration, None]))
                add(session, run, turn, "loop_checkpoint", _checkpoint(closing, label))
        if draw(st.booleans()):
            kind_, owner = draw(
                draws.sampled(
                    [
                        ("natural", "agent"),
                        ("policy_budget", None),
                        (" natural", "\u3000"),
                        ("natural\n", " agent "),
                    ]
                )
            )
            add(
                session,
                run,
                turn,
                "terminal",
                {
                    "kind": kind_,
                    "owner": owner,
                    "finalStatus": draw(st.none() | text),
                    "stopReason": draw(st.none() | st.just("completed")),
                    "reason": draw(st.none() | text),
                },
            )
        if draw(draws.integers(0, 3)) == 0:
            add(session, run, turn, "other", {"note": "not a recap kind"})
    if canary is not None and not planted:
        add(
            "sess-1",
            "run-x",
            "turn-x",
            "message",
            {"role": "user", "visibility": None, "text": canary},
        )
    if not any(event["sessionId"] == "sess-1" for event in events):
        # The queried session exists (session_missing is what "nobody" is for).
        add("sess-1", None, None, "other", {"note": "session opened"})
    query: dict[str, Any] = {"sessionId": draw(draws.sampled(["sess-1"] * 5 + ["nobody"]))}
    if draw(draws.integers(0, 3)) == 0:
        query["runId"] = draw(draws.sampled(["run-1", "run-2"]))
    if draw(draws.integers(0, 3)) == 0:
        query["turnId"] = draw(draws.sampled(["turn-0", "turn-1"]))
    if draw(draws.integers(0, 2)) == 0:
        query["fromEventId"] = draw(draws.integers(0, next_id + 1))
    if limit is not None:
        query["limit"] = limit
    return {"events": events, "query": query}


# Numbers of both kinds, integral floats among them: Harn keeps 1.0 a float (docs/recap.md 4).
_numbers = st.one_of(
    draws.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    draws.integers(-1000, 1000).map(float),
    draws.sampled([-0.0, 1e20, 2.0**53, 1e300]),
    draws.floats(),
)


def _checkpoint(label: str, iteration: int | None) -> dict[str, Any]:
    return {"checkpoint": label, "iteration": iteration}


@dataclass(frozen=True)
class _FactParts:
    """The strategies of :func:`_recap_fact` that hold its ``text``, built once for it: built
    at each draw, each was validated anew by Hypothesis (half of that validation in a run).
    The same strategies, so the same draws."""

    maybe_text: st.SearchStrategy[Any]
    tool_input: st.SearchStrategy[Any]
    verification: st.SearchStrategy[Any]
    tool_output: st.SearchStrategy[Any]
    progress_entries: st.SearchStrategy[Any]


# A recap case draws its facts from one ``text``; a case with a canary has a text of its own.
@lru_cache(maxsize=16)
def _fact_parts(text: st.SearchStrategy[str]) -> _FactParts:
    entry = st.fixed_dictionaries(
        {
            "content": text | draws.sampled(["", "  "]),
            "status": draws.sampled(["pending", "in_progress", "completed", "done"]),
            "priority": draws.sampled([None, "high", "low", "urgent"]),
        }
    )
    return _FactParts(
        maybe_text=st.none() | text,
        tool_input=st.none()
        | st.fixed_dictionaries({"path": text})
        | _secret_arguments(text)
        | st.fixed_dictionaries({"n": _numbers, "all": st.lists(_numbers, max_size=3)}),
        verification=st.none()
        | st.fixed_dictionaries(
            {
                "schema": draws.sampled(["harn.agent_tool_postcondition.v1", "other.v1"]),
                "status": draws.sampled(["passed", "passed", "failed"]),
                "verifiedPaths": st.lists(text, max_size=2),
            }
        ),
        tool_output=st.none()
        | text
        | st.fixed_dictionaries({"changed": st.booleans()})
        | st.lists(_numbers, max_size=3),
        progress_entries=st.lists(entry, max_size=2),
    )


@st.composite
def _recap_fact(draw: st.DrawFn, text: st.SearchStrategy[str]) -> tuple[str, dict[str, Any]]:
    """One fact event of an iteration: (kind, payload)."""
    parts = _fact_parts(text)
    kind = draw(
        draws.sampled(["assistant", "tool_call", "tool_call", "tool_result", "plan", "progress"])
    )
    # Padded and blank ids too: Harn trims them, so " c1" joins "c1" (docs/recap.md 4.1).
    call = draw(draws.sampled(["c1", "c1", "c2", "c3", None, " c1", "c2\u3000", "\t"]))
    if kind == "assistant":
        visibility = draw(draws.sampled(["public", "public", "internal", None]))
        body = draw(parts.maybe_text) if draw(draws.integers(0, 5)) == 0 else draw(text)
        return "message", {"role": "assistant", "visibility": visibility, "text": body}
    if kind == "tool_call":
        return kind, {
            "callId": call,
            "toolName": draw(draws.sampled(["edit", "read", None, " read "])),
            "input": draw(parts.tool_input),
        }
    if kind == "tool_result":
        verification = draw(parts.verification)
        return kind, {
            "callId": call,
            "toolName": draw(draws.sampled(["edit", None])),
            "isError": draw(st.booleans()),
            "output": draw(parts.tool_output),
            "verification": verification,
        }
    if kind == "plan":
        updated = draw(st.booleans())
        return kind, {
            "documentId": "plan-1",
            "revisionId": draw(draws.sampled(["rev-1", "rev-2"])),
            "title": draw(text),
            "summary": draw(text),
            "steps": [
                {
                    "id": "step-1",
                    "content": draw(text),
                    "status": draw(
                        draws.sampled(
                            ["pending", "in_progress", "completed", "blocked", "cancelled"]
                        )
                    ),
                }
            ],
            "event": draw(
                st.none()
                | st.just(
                    {
                        "kind": "updated" if updated else "created",
                        "eventId": "plan-event-1",
                        "inputRevisionId": "rev-1" if updated else None,
                    }
                )
            ),
        }
    return "progress", {
        "message": draw(parts.maybe_text),
        "entries": draw(parts.progress_entries),
        "replace": draw(draws.sampled([None, True, False])),
    }


# -- recaps of Harn's stored events (docs/recap.md section 11) -----------------------------------
@st.composite
def recap_stored_cases(draw: st.DrawFn, canary: str | None = None) -> dict[str, Any]:
    """A recap case of Harn's stored events: a drawn journal in its stored form
    (docs/journal.md "As Harn stores it"), then reshaped as Harn's emitters also
    write it, so every pointer of docs/recap.md section 11 is reached: the
    ``tool_call_id`` header (verbatim, before the payload's id, sometimes another
    id), ``raw_message`` fallbacks for role, text, call id, tool name, input,
    output and failure, present JSON nulls next to absent keys, unreadable plans
    and plan events, progress entries Harn refuses or reads, fractional and huge
    checkpoint iterations, ids numbered per session, redacted record hashes."""
    from session_contracts.journal import stored_event

    case = draw(recap_cases(canary=canary))
    per_session = draw(st.booleans())
    numbered: dict[str, int] = {}
    hashes: dict[str, str] = {}
    stored: list[dict[str, Any]] = []
    for index, event in enumerate(case["events"]):
        session = event["sessionId"]
        event_id = numbered.get(session, 0) + 1 if per_session else event["id"]
        numbered[session] = event_id
        record_hash = f"sha256:{index + 1:064x}"
        one = stored_event(
            {**event, "id": event_id}, record_hash=record_hash, prev_hash=hashes.get(session)
        )
        hashes[session] = record_hash
        if draw(draws.integers(0, 7)) == 0:
            one["record_hash"] = f"redacted:{record_hash}"
        if draw(draws.integers(0, 5)) == 0:
            one["tags"] = draw(st.lists(draws.sampled(["ui", "audit", " x "]), max_size=2))
            one["actor"] = draw(draws.sampled([None, "agent", "user"]))
            one["parent_event_id"] = draw(st.none() | draws.integers(0, 2**53 - 1))
        if not isinstance(event["payload"], dict) or event["kind"] not in _STORED_RESHAPES:
            stored.append(one)
            continue
        _STORED_RESHAPES[event["kind"]](draw, one)
        stored.append(one)
    if draw(draws.integers(0, 5)) == 0:
        named = draw(draws.sampled(["compaction", "receipt", "control", "system_reminder"]))
        stored.append(
            {
                **stored_event(
                    recap_event(0, "sess-1", None, None, None, "other", {"note": named}),
                    record_hash=f"sha256:{0:064x}",
                    prev_hash=None,
                ),
                "event_id": numbered.get("sess-1", 0) + 1,
                "kind": {"kind": named},
            }
        )
    return {"storedEvents": stored, "query": case["query"]}


def _metadata(stored: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = stored["payload"].setdefault("transcript_event", {})
    metadata: dict[str, Any] = event.setdefault("metadata", {})
    return metadata


def _raw(stored: dict[str, Any]) -> dict[str, Any]:
    raw: dict[str, Any] = stored["payload"].setdefault("raw_message", {})
    return raw


def _reshape_message(draw: st.DrawFn, stored: dict[str, Any]) -> None:
    event = stored["payload"]["transcript_event"]
    for member, fallback in (("role", "role"), ("text", "content")):
        where = draw(draws.sampled(["kept", "kept", "raw", "both", "blank"]))
        if member not in event or where == "kept":
            continue
        value = event.pop(member) if where != "both" else event[member]
        if where == "blank":
            event[member] = "  "  # blank at the first pointer: the fallback is read
        _raw(stored)[fallback] = value


def _reshape_tool(draw: st.DrawFn, stored: dict[str, Any]) -> None:
    metadata = _metadata(stored)
    call_id = metadata.get("tool_call_id")
    where = draw(draws.sampled(["kept", "kept", "header", "header-other", "raw", "raw-blank"]))
    if where == "header" and call_id is not None:
        stored["headers"]["tool_call_id"] = metadata.pop("tool_call_id")
    elif where == "header-other":
        stored["headers"]["tool_call_id"] = draw(draws.sampled(["c1", "c2", " c1", ""]))
    elif where == "raw" and call_id is not None:
        _raw(stored).setdefault("_harn", {})["tool_call_id"] = metadata.pop("tool_call_id")
    elif where == "raw-blank":
        _raw(stored).setdefault("_harn", {})["tool_call_id"] = " "
    name = metadata.get("tool_name")
    if name is not None and draw(draws.integers(0, 3)) == 0:
        if draw(st.booleans()):
            _raw(stored)["name"] = metadata.pop("tool_name")
        else:
            _raw(stored)["tool_calls"] = [{"name": metadata.pop("tool_name")}]
    value_member = "input" if stored["kind"] == {"kind": "tool_call"} else "output"
    shape = draw(draws.sampled(["kept", "kept", "null", "raw", "raw-and-null"]))
    if shape == "null" and value_member not in metadata:
        metadata[value_member] = None  # present null: Harn replaces an earlier value with it
    elif shape in ("raw", "raw-and-null") and value_member in metadata:
        value = metadata.pop(value_member)
        if value_member == "input":
            fallback = draw(draws.sampled(["raw_input", "input", "arguments"]))
            if fallback == "raw_input":
                metadata["raw_input"] = value
            elif fallback == "input":
                _raw(stored)["input"] = value
            else:
                calls = _raw(stored).setdefault("tool_calls", [{}])
                calls[0]["arguments"] = value
        elif draw(st.booleans()):
            _raw(stored)["content"] = value
        else:
            stored["payload"]["transcript_event"]["text"] = value
        if shape == "raw-and-null":
            metadata[value_member] = None  # the first pointer exists: the fallback is not read
    if value_member == "output" and draw(draws.integers(0, 3)) == 0:
        failed = metadata.pop("is_error", False)
        metadata["is_error"] = draw(draws.sampled([False, "yes", None]))
        _raw(stored)["is_error"] = failed


def _reshape_plan(draw: st.DrawFn, stored: dict[str, Any]) -> None:
    metadata = _metadata(stored)
    damage = draw(
        draws.sampled(
            ["kept", "kept", "kept", "no-title", "bad-status", "no-revision", "event-differs"]
        )
    )
    document = metadata["plan_document"]
    if damage == "no-title":
        del document["current_revision"]["plan"]["title"]
    elif damage == "bad-status":
        document["current_revision"]["plan"]["steps"][0]["status"] = "done"
    elif damage == "no-revision":
        plan_event = metadata.get("plan_document_event")
        if isinstance(plan_event, dict):
            plan_event.pop("input_revision_id", None)
            plan_event["kind"] = "updated"
    elif damage == "event-differs":
        plan_event = metadata.get("plan_document_event")
        if isinstance(plan_event, dict):
            plan_event["document"]["current_revision"]["plan"]["summary"] += "!"
            plan_event["document"]["extra"] = {"ignored": True}


def _reshape_progress(draw: st.DrawFn, stored: dict[str, Any]) -> None:
    metadata = _metadata(stored)
    entries = metadata.get("entries")
    if not isinstance(entries, list) or not entries:
        return
    shape = draw(draws.sampled(["kept", "kept", "no-priority", "extra", "bad-priority"]))
    if shape == "no-priority":
        entries[0].pop("priority", None)
    elif shape == "extra":
        entries[0]["note"] = "ignored"
    elif shape == "bad-priority":
        entries[0]["priority"] = 3


def _reshape_checkpoint(draw: st.DrawFn, stored: dict[str, Any]) -> None:
    metadata = _metadata(stored)
    if isinstance(metadata.get("iteration"), int) and draw(draws.integers(0, 5)) == 0:
        metadata["iteration"] = draw(draws.sampled([0.5, 2.9, -1.5, 1e30, "1"]))


_STORED_RESHAPES: Mapping[str, Callable[[st.DrawFn, dict[str, Any]], None]] = {
    "message": _reshape_message,
    "tool_call": _reshape_tool,
    "tool_result": _reshape_tool,
    "plan": _reshape_plan,
    "progress": _reshape_progress,
    "loop_checkpoint": _reshape_checkpoint,
}


def _secret_arguments(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Tool arguments with a value under a sensitive member name, at some depth."""
    name = draws.sampled(["password", "api_key", "token", "secret", "authorization"])
    return st.builds(
        lambda key, value, depth: _nest({key: value}, depth),
        name,
        draws.sampled(["hunter2", "k-123"]) | text,
        draws.integers(0, 3),
    )


def _nest(value: dict[str, Any], depth: int) -> dict[str, Any]:
    for level in range(depth):
        value = {"options": value} if level % 2 == 0 else {"items": [value]}
    return value


def snake_case_query(query: Mapping[str, Any]) -> dict[str, Any]:
    """The same query in the snake-case alias spelling."""
    return {_SNAKE.get(key, key): value for key, value in query.items()}


# -- runtime conditions the protocol can present ---------------------------------------------------
@cache
def _a2a_states() -> tuple[str, ...]:
    """The task states of an A2A status update, as the health schema lists them."""
    schema_set = default_schema_set()
    update = schema_set.document_type("session-health.a2a-status-update")
    status = schema_set.schemas[update.schema_id]["$defs"]["A2aTaskStatus"]
    return tuple(status["properties"]["state"]["enum"])


@st.composite
def a2a_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A fact the reference reducer emitted (or the bundled one) and a live task to carry it."""
    from session_contracts.errors import InvalidDocument
    from session_contracts.health import reduce

    stream = draw(_session_observations())
    try:
        facts = reduce(str(stream["session_id"]), stream["observations"])
    except InvalidDocument:
        facts = []
    fact = draw(st.sampled_from(facts)) if facts else bundled_examples()["session-health.fact"]
    status: dict[str, Any] = {"state": draw(draws.sampled(_a2a_states()))}
    if draw(st.booleans()):
        status["timestamp"] = draw(
            draws.sampled(["2026-12-01T15:04:05Z", "2026-12-01T15:04:05.123+02:00"])
        )
    task = {
        "id": draw(draws.text(min_size=1, max_size=12)),
        "contextId": draw(draws.text(min_size=1, max_size=12)),
        "status": status,
    }
    if draw(draws.integers(0, 9)) == 0:  # a task the update cannot be built for
        del task[draw(draws.sampled(["id", "contextId"]))]
    return {"fact": copy.deepcopy(fact), "task": task}


@st.composite
def recap_condition_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A recap case under one runtime condition: the journal is not available, the
    runtime refuses the read, or stored rows are damaged (read by the query or not)."""
    case = dict(draw(recap_cases()))
    condition = draw(draws.sampled(["journal", "admission", "damaged", "damaged-elsewhere"]))
    if condition == "journal":
        case["journal"] = "unavailable"
    elif condition == "admission":
        case["admission"] = "refused"
    else:
        ids = [event["id"] for event in case.get("events", []) if isinstance(event, dict)]
        session = case["query"].get("sessionId", case["query"].get("session_id"))
        if condition == "damaged":
            mine = [e["id"] for e in case.get("events", []) if e.get("sessionId") == session]
            pool = mine or ids or [1]
        else:
            others = [e["id"] for e in case.get("events", []) if e.get("sessionId") != session]
            pool = others or [max(ids, default=0) + 1]
        case["damagedEventIds"] = sorted(
            set(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3)))
        )
    return case
