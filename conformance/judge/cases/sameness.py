"""Explicit cases for the rules that decide whether two things are the same, and for
the less common paths of the state machines those rules feed.

A sameness rule compares two values member by member: a usage sample against
the one already accepted at the same time (seed 001, docs/feedback.md decision
6), a retried request's body against the first (decision 3), a diagnostic
collection against the ones held before it (seed 000, docs/health.md section
4), a normalized tool-call parse against the provider-native calls (seed 003,
docs/runrecord.md 3.2).  A producer that compares fewer members, or compares
serialized text instead of values, agrees on every input that differs in
several members at once or in none, which is all random cases hold.  So the
members come from the schema object each rule compares (:func:`object_members`),
and for each member there is a pair that differs in that member alone, with
another valid value the member's schema allows (:func:`other_value`), plus the
same members in another key order, which must still be the same.

The state paths (a diagnostic set repeated, an empty collection, an iteration
restarted or started out of order, history loaded after a snapshot, a start
retried, a checkpoint retried after a later one) are the seed's rules on the
inputs a few dozen random streams seldom hold.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

from session_contracts.conformance.judge.cases.explicit import ExplicitCase, completed_call
from session_contracts.conformance.judge.cases.operations import recap_event

__all__ = [
    "NO_OTHER_VALUE",
    "diagnostic_cases",
    "exchange_cases",
    "feedback_state_cases",
    "health_state_cases",
    "object_members",
    "other_value",
    "reordered",
    "replay_cases",
    "tool_call_cases",
    "tool_call_normalizations",
    "usage_sample_cases",
]

NO_OTHER_VALUE: Any = object()  # the member's schema allows one value only (a const)


# -- the schema objects the rules compare ---------------------------------------------------------
@functools.cache
def _schema(file: str) -> Mapping[str, Any]:
    text = resources.files("session_contracts.schemas").joinpath(file).read_text("utf-8")
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


def _resolve(file: str, node: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in node:
        # A reference into another schema file of the set names it before the "#".
        target, _, pointer = str(node["$ref"]).partition("#")
        file = target or file
        node = _schema(file)["$defs"][pointer.removeprefix("/$defs/")]
    return node


def object_members(file: str, definition: str) -> tuple[str, ...]:
    """The members of the schema object ``$defs/definition`` of ``file``, in schema order."""
    return tuple(_schema(file)["$defs"][definition]["properties"])


def other_value(file: str, definition: str, member: str, value: Any) -> Any:
    """A value of ``member`` other than ``value`` that its schema still allows, or
    :data:`NO_OTHER_VALUE`: the next enum value, a string with a suffix, an integer
    one higher (below its maximum), a list one item shorter or longer."""
    node = _resolve(file, _schema(file)["$defs"][definition]["properties"][member])
    if "const" in node:
        return NO_OTHER_VALUE
    if "enum" in node:
        values = list(node["enum"])
        return values[(values.index(value) + 1) % len(values)]
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "-2"
    if isinstance(value, int):
        return value + 1 if value < node.get("maximum", value + 1) else value - 1
    if isinstance(value, list):
        return value[:-1] if value else ["one more"]
    return NO_OTHER_VALUE


def reordered(value: Any) -> Any:
    """``value`` with every object's members in reverse order: the same JSON value."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def _one_member_variants(
    file: str, definition: str, base: Mapping[str, Any], skip: tuple[str, ...] = ()
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(member, how it differs, the variant) for each member of the schema object:
    another allowed value, and absent when the schema makes it optional."""
    node = _schema(file)["$defs"][definition]
    required = set(node.get("required", ()))
    # A member another present member depends on cannot be left out alone.
    for dependent, needs in node.get("dependentRequired", {}).items():
        if dependent in base:
            required.update(needs)
    for member in object_members(file, definition):
        if member in skip or member not in base:
            continue
        other = other_value(file, definition, member, base[member])
        if other is not NO_OTHER_VALUE:
            yield member, f"{member} {base[member]!r} -> {other!r}", {**base, member: other}
        if member not in required:
            yield member, f"{member} absent", {k: v for k, v in base.items() if k != member}


# -- feedback: the same usage sample, the same request body ---------------------------------------
_FEEDBACK = "session-feedback.schema.json"
_T = 1_700_000_000_000
_SESSION = "sess-same"


def _start(request_id: str = "r0", at: int = _T) -> dict[str, Any]:
    client = {"product": "Agent", "capabilities": {"usage": "supported", "progress": "supported"}}
    return {
        "at_unix_ms": at,
        "call": "start",
        "request": {"request_id": request_id, "session_id": _SESSION, "client_info": client},
    }


def _request(request_id: str, version: int, **members: Any) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "session_id": _SESSION,
        "session_version": version,
        "context_hash": "ctx",
        "next_action": "continue",
        "open_loops": ["check the store"],
        **members,
    }


def _checkpoint(at: int, request: Mapping[str, Any]) -> dict[str, Any]:
    return {"at_unix_ms": at, "call": "checkpoint", "request": dict(request)}


def _observe(at: int) -> dict[str, Any]:
    return {
        "at_unix_ms": at,
        "call": "observe",
        "session_id": _SESSION,
        "can_read_raw_receipts": True,
    }


def _feedback(why: str, *steps: dict[str, Any]) -> ExplicitCase:
    return ExplicitCase("feedback.run", {"steps": list(steps)}, why)


_SAMPLE: Mapping[str, Any] = {
    "source": "native_host_event",
    "source_ref": "logs/session.jsonl#event-3",
    "counter_id": "host-counter-1",
    "scope": "host_session",
    "coverage": "partial",
    "observed_at_unix_ms": _T + 500,
    "input_tokens": 400,
    "output_tokens": 50,
    "cached_input_tokens": 100,
}
# The member that pairs two samples: the rule compares samples at one time.
_SAMPLE_TIME = "observed_at_unix_ms"


def usage_sample_cases() -> list[ExplicitCase]:
    """A sample at the time of an accepted one that differs from it in one member of
    the schema's Usage object (another value, or absent) is a conflicting sample,
    whichever member; the accepted one again with its members in another order is
    the same sample (docs/feedback.md decision 6; seed 001: conflicting same-time
    samples are rejected across the session)."""
    same = reordered(_SAMPLE)
    cases = [
        _feedback(
            "the same usage sample sent again with its members in another order is the same "
            "sample, accepted (seed 001; docs/feedback.md decision 6: equal values, key order "
            "does not matter)",
            _start(),
            _checkpoint(_T + 1000, _request("r1", 0, usage=dict(_SAMPLE))),
            _checkpoint(_T + 2000, _request("r2", 1, usage=same)),
            _observe(_T + 3000),
        )
    ]
    for member, how, variant in _one_member_variants(
        _FEEDBACK, "Usage", _SAMPLE, skip=(_SAMPLE_TIME,)
    ):
        cases.append(
            _feedback(
                f"a usage sample at the time of the accepted one that differs only in {how} "
                "is a conflicting same-time sample, rejected; the accepted one again, reordered, "
                "is accepted (seed 001: conflicting same-time samples are rejected across the "
                f"session; docs/feedback.md decision 6, member {member})",
                _start(),
                _checkpoint(_T + 1000, _request("r1", 0, usage=dict(_SAMPLE))),
                _checkpoint(_T + 2000, _request("r2", 1, usage=variant)),
                _checkpoint(_T + 3000, _request("r3", 1, usage=same)),
                _observe(_T + 4000),
            )
        )
    return cases


# The members that pair two requests (the same request_id in the same session).
_REQUEST_KEY = ("request_id", "session_id")


def replay_cases() -> list[ExplicitCase]:
    """A retried request_id whose body differs from the first in one member of the
    schema's SessionCheckpointRequest is request_conflict; the same body with its
    members (nested ones too) in another order replays (seed 001: duplicate requests
    replay their original receipt; docs/feedback.md decision 3)."""
    first = _request(
        "r1",
        0,
        client_info={"product": "Agent", "capabilities": {"usage": "supported"}},
        progress={"phase": "testing", "summary": "half", "completed": ["a", "b"]},
        usage=dict(_SAMPLE),
    )
    cases = [
        _feedback(
            "a retried request whose members (nested ones too) come in another order is the "
            "same body: it replays its receipt (seed 001: duplicate requests replay their "
            "original receipt; docs/feedback.md decision 3: key order does not matter)",
            _start(),
            _checkpoint(_T + 1000, first),
            _checkpoint(_T + 2000, reordered(first)),
            _observe(_T + 3000),
        )
    ]
    for member, how, variant in _one_member_variants(
        _FEEDBACK, "SessionCheckpointRequest", first, skip=_REQUEST_KEY
    ):
        cases.append(
            _feedback(
                f"a retried request_id whose body differs only in {how} is request_conflict; "
                "the first body again, reordered, replays (seed 001: duplicate requests replay "
                f"their original receipt; docs/feedback.md decision 3, member {member})",
                _start(),
                _checkpoint(_T + 1000, first),
                _checkpoint(_T + 2000, variant),
                _checkpoint(_T + 3000, reordered(first)),
                _observe(_T + 4000),
            )
        )
    return cases


def feedback_state_cases() -> list[ExplicitCase]:
    """The store's less common orders: a read before the session exists, a start
    retried, a checkpoint retried after a later one was accepted."""
    return [
        _feedback(
            "a read before the session starts is no_session and creates nothing: the start "
            "after it is accepted at version 0 (seed 001: missing reasons distinguish "
            "no_session; docs/feedback.md decision 1)",
            _observe(_T),
            _start(at=_T + 1000),
            _checkpoint(_T + 2000, _request("r1", 0)),
            _observe(_T + 3000),
        ),
        _feedback(
            "a start retried with the same body replays its receipt; with the same request_id "
            "and another body it is request_conflict, not a version conflict (seed 001: "
            "duplicate requests replay their original receipt; docs/feedback.md rule order)",
            _start(),
            _start(at=_T + 1000),
            {
                **_start(at=_T + 2000),
                "request": {**_start()["request"], "client_info": {"product": "B"}},
            },
            _observe(_T + 3000),
        ),
        _feedback(
            "a checkpoint retried after a later one was accepted still replays its own "
            "receipt (version 1), not the session's latest (seed 001: duplicate requests "
            "replay their original receipt)",
            _start(),
            _checkpoint(_T + 1000, _request("r1", 0)),
            _checkpoint(_T + 2000, _request("r2", 1)),
            _checkpoint(_T + 3000, _request("r1", 0)),
            _checkpoint(_T + 4000, _request("r3", 2)),
            _observe(_T + 5000),
        ),
    ]


# -- health: diagnostic sets and the reducer's less common paths ----------------------------------
_OBSERVATION = "health-observation.schema.json"


def _verified(call_id: str, measured: Mapping[str, Any]) -> dict[str, Any]:
    """A call completing a declared verification with the collection ``measured``, its
    members in the order given."""
    call = completed_call(call_id, diagnostics=("", 0))
    call["telemetry"]["verification"]["diagnostics"] = dict(measured)
    return call


def _started(iteration: int) -> dict[str, Any]:
    return {"kind": "iteration_started", "iteration": iteration}


def _finished(wall: int = 1000, prose: int = 100) -> dict[str, Any]:
    return {"kind": "iteration_finished", "wall_time_ms": wall, "prose_characters": prose}


def _health(why: str, *observations: dict[str, Any]) -> ExplicitCase:
    return ExplicitCase(
        "health.reduce", {"session_id": "sess-h", "observations": list(observations)}, why
    )


def _collections(why: str, *sets: Mapping[str, Any]) -> ExplicitCase:
    """One verification per collection, each resolved after the iteration's snapshot,
    so that each emits a fact with the trend it leaves."""
    calls = [_verified(f"v{index}", measured) for index, measured in enumerate(sets)]
    return _health(why, _started(1), _finished(), *calls)


_SET: Mapping[str, Any] = {"set_fingerprint": "fp-a", "count": 2}
_BETWEEN: Mapping[str, Any] = {"set_fingerprint": "fp-b", "count": 5}
_OSCILLATING = "seed 000: returning to the set seen two observations earlier, after a different "
_OSCILLATING += "set, is oscillating; docs/health.md section 4: a set is each member of "
_OSCILLATING += "DiagnosticMeasurement"


def diagnostic_cases() -> list[ExplicitCase]:
    """A collection that returns to the set of two collections ago differs from it in
    one member of the schema's DiagnosticMeasurement (not oscillating), or the set
    between differs from it in one member only (oscillating); the same set with its
    members in another order is the same set."""
    cases = [
        _collections(
            f"back to the set two collections ago, its members in another order ({_OSCILLATING})",
            _SET,
            _BETWEEN,
            reordered(_SET),
        )
    ]
    for _member, how, variant in _one_member_variants(_OBSERVATION, "DiagnosticMeasurement", _SET):
        cases.append(
            _collections(
                f"a collection like the set two collections ago but for {how} is another set: "
                f"the counts decide, not oscillating ({_OSCILLATING})",
                _SET,
                _BETWEEN,
                variant,
            )
        )
        cases.append(
            _collections(
                f"the set between differs from the returning one only in {how}: that is a "
                f"different set, so the return is oscillating ({_OSCILLATING})",
                _SET,
                variant,
                _SET,
            )
        )
    return cases


def health_state_cases() -> list[ExplicitCase]:
    """The reducer's less common paths (seed 000; docs/health.md sections 3 and 4)."""
    empty = {"set_fingerprint": "fp-empty", "count": 0}
    late = "seed 000: a tool call resolved after that snapshot emits an updated fact"
    return [
        _collections(
            "an empty collection (count 0) is a measurement: improving from 2 (seed 000: "
            "diagnostic measurement requires an explicit complete collection, including an "
            "empty collection)",
            _SET,
            empty,
            empty,
        ),
        _collections(
            "the same set twice is flat, and the repeat is held: going back to the first "
            "set two collections later compares with the repeat (seed 000: equal is flat; "
            "docs/health.md section 4: the latest two measurements are held)",
            _BETWEEN,
            _SET,
            _SET,
            _BETWEEN,
        ),
        _health(
            "history loaded after a snapshot emits nothing and does not reopen the turn: a "
            f"call resolved after it still emits an updated fact ({late}; seed 000: loading "
            "historical messages does not invent missing execution telemetry)",
            _started(1),
            completed_call("c1"),
            _finished(),
            {"kind": "historical_messages_loaded", "count": 3},
            completed_call("c2", success=False),
            {"kind": "terminal_outcome", "stop_class": "natural"},
            {"kind": "historical_messages_loaded", "count": 1},
            completed_call("c3"),
        ),
        _health(
            "an iteration started again under the same number is a new round trip: its turn "
            "population starts empty and its call ids count again (seed 000: turn contains "
            "the current model iteration's measurements)",
            _started(1),
            completed_call("c1", success=False),
            _started(1),
            completed_call("c1"),
            completed_call("c2"),
            _finished(),
        ),
        _health(
            "iterations started out of numeric order: the fact names the latest started, "
            "not the highest (seed 000: the fact contains iteration; docs/health.md section 5)",
            _started(3),
            completed_call("c1"),
            _finished(),
            _started(2),
            completed_call("c2"),
            _finished(),
            _started(5),
            _started(4),
            _finished(),
        ),
    ]


# -- run records: a parse identical to the provider-native calls ----------------------------------
_RUN_RECORD = "run-record.schema.json"
_NATIVE: Mapping[str, Any] = {
    "id": "tc-1",
    "name": "search",
    "arguments": {"query": "store", "limit": 3, "filters": {"lang": "py", "exact": True}},
}


def tool_call_normalizations() -> dict[str, tuple[tuple[str, dict[str, Any]], ...]]:
    """For each member of the schema's ParsedToolCall, native spellings that normalize
    to another value of that member alone (docs/runrecord.md 3.1: a missing, null or
    empty id is null; missing, null or "" arguments are {}; arguments as JSON text are
    parsed); a member no spelling changes (the name) has none."""
    spellings: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {}
    for member in object_members(_RUN_RECORD, "ParsedToolCall"):
        without = {k: v for k, v in _NATIVE.items() if k != member}
        if member == "id":
            spellings[member] = (("absent", without), ('""', {**_NATIVE, "id": ""}))
        elif member == "arguments":
            text = json.dumps(_NATIVE["arguments"])
            spellings[member] = (
                ("absent", without),
                ("null", {**_NATIVE, "arguments": None}),
                ("JSON text", {**_NATIVE, "arguments": text}),
            )
        else:
            spellings[member] = ()
    return spellings


def _provider(why: str, tool_calls: list[Any], text: str = "done") -> ExplicitCase:
    response = {
        "call_id": "call-same",
        "iteration": 1,
        "span_id": None,
        "text": text,
        "tool_calls": tool_calls,
    }
    return ExplicitCase(
        "runrecord.provider_call_response", {"response": response, "execution_id": None}, why
    )


def tool_call_cases() -> list[ExplicitCase]:
    """Native calls already in Harn's normalized shape, members in another order
    (identical: the reference); one member of ParsedToolCall spelled so that its
    normalization changes it, or a member ParsedToolCall does not have (distinct:
    inline)."""
    rule = "seed 003: when a non-empty view is structurally identical to the provider-native "
    rule += "tool_calls array, the response stores parsed_tool_calls_ref; docs/runrecord.md 3.2"
    second = {**_NATIVE, "id": "tc-2", "arguments": {}}
    cases = [
        _provider(
            f"native calls already normalized, members and argument members in another order, "
            f"are structurally identical to their parse ({rule}: key order does not matter)",
            [reordered(_NATIVE), reordered(second)],
        ),
        _provider(
            f"a native call with a null id is already normalized: identical ({rule})",
            [{**_NATIVE, "id": None}],
        ),
    ]
    for member, spellings in tool_call_normalizations().items():
        for how, native in spellings:
            cases.append(
                _provider(
                    f"a native call whose {member} is {how} normalizes to another {member}: "
                    f"the parse is distinct and stays inline ({rule}, member {member})",
                    [copy.deepcopy(native), dict(second)],
                )
            )
    extra = {**_NATIVE, "index": 0}
    cases.append(
        _provider(
            f"a native call with a member ParsedToolCall does not have (index) is not its "
            f"parse: distinct, inline ({rule})",
            [extra],
        )
    )
    return cases


# -- recaps: a tool call and its result joined by call id -----------------------------------------
def _recap_rows(*rows: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        recap_event(index + 1, "sess-join", "run-1", turn, None, kind, payload)
        for index, (turn, kind, payload) in enumerate(rows)
    ]


def _loop(turn: str, label: str, iteration: int) -> tuple[str, str, dict[str, Any]]:
    return turn, "loop_checkpoint", {"checkpoint": f"iteration_{label}", "iteration": iteration}


def _tool(
    turn: str, kind: str, call_id: str, tool: str = "read"
) -> tuple[str, str, dict[str, Any]]:
    if kind == "tool_call":
        return turn, kind, {"callId": call_id, "toolName": tool, "input": {"path": "a.py"}}
    result = {"callId": call_id, "toolName": tool, "isError": False, "output": "ok"}
    return turn, kind, {**result, "verification": None}


def exchange_cases() -> list[ExplicitCase]:
    """A call and its result joined by call id across the whole turn, in either order,
    whichever iteration holds each; the same id in another turn is another exchange
    (seed 002: a recap groups tool exchanges by prompt turn; docs/recap.md 4.4)."""
    rule = "seed 002: a recap groups tool exchanges by prompt turn and agent-loop iteration; "
    rule += "docs/recap.md 4.4: exchanges are joined by tool call id across the whole turn"
    prompt = ("turn-1", "message", {"role": "user", "visibility": None, "text": "go"})
    paths = {
        "a result in a later iteration than its call joins the call's exchange": (
            _loop("turn-1", "start", 1),
            _tool("turn-1", "tool_call", "c1"),
            _loop("turn-1", "end", 1),
            _loop("turn-1", "start", 2),
            _tool("turn-1", "tool_result", "c1"),
            _loop("turn-1", "end", 2),
        ),
        "a result before its call creates the exchange; the call merges in": (
            _loop("turn-1", "start", 1),
            _tool("turn-1", "tool_result", "c1"),
            _tool("turn-1", "tool_call", "c1"),
            _loop("turn-1", "end", 1),
        ),
        "a second call with the same id merges into the same exchange": (
            _loop("turn-1", "start", 1),
            _tool("turn-1", "tool_call", "c1"),
            _tool("turn-1", "tool_call", "c1", tool="write"),
            _tool("turn-1", "tool_result", "c1"),
            _loop("turn-1", "end", 1),
        ),
        "the same call id in another turn is another exchange": (
            _loop("turn-1", "start", 1),
            _tool("turn-1", "tool_call", "c1"),
            _loop("turn-1", "end", 1),
            ("turn-2", "message", {"role": "user", "visibility": None, "text": "again"}),
            _loop("turn-2", "start", 1),
            _tool("turn-2", "tool_result", "c1"),
            _loop("turn-2", "end", 1),
        ),
    }
    return [
        ExplicitCase(
            "recap.project",
            {"events": _recap_rows(prompt, *rows), "query": {"sessionId": "sess-join"}},
            f"{what} ({rule})",
        )
        for what, rows in paths.items()
    ]
