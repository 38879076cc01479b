"""Explicit cases: rare but decisive inputs every check sends before its random ones.

A check's random cases come from ``cases.operations`` strategies; the inputs that
decide a rule (a limit at its boundary and one past it, a reset with a trend
in flight, an exactly full page, a secret behind a label) are too rare to
leave to chance at the default number of examples. A check's explicit cases
(the same shape as its strategy draws, with the operation named) are sent
first, in order, at every setting; the seed never changes them.

To add cases: write (or extend) one builder function per check family that
returns a list of :class:`ExplicitCase`, and name it in the check's ``explicit``
in :mod:`session_contracts.conformance.judge.checks`. Each builder runs once,
the first time a check asks for its cases.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from session_contracts.conformance.judge.cases.operations import (
    EXPLICIT_EPOCH_MS,
    attribute_event,
    span,
    usage_sample,
)

__all__ = [
    "BUILTIN_MEMBER_NAMES",
    "HARN_READS_OFF",
    "ExplicitCase",
    "builtin_members",
    "completed_call",
    "extension_values",
    "feedback_runs",
    "golden",
    "has_reset",
    "health_streams",
    "is_stored",
    "provider_canaries",
    "provider_responses",
    "rate_streams",
    "recap_aliases",
    "recap_blank_ids",
    "recap_canaries",
    "recap_harn_read_numbers",
    "recap_numbers",
    "recap_pages",
    "recap_stored_harn_read_numbers",
    "recap_text",
    "reset_streams",
    "run_projections",
    "unknown_members",
    "usage_runs",
]


@dataclass(frozen=True, slots=True)
class ExplicitCase:
    """One explicit case: the operation, its input, and the rule it decides."""

    operation: str
    input: Mapping[str, Any]
    why: str
    fixture: str = ""  # the golden fixture it is (area/name), "" for a hand-written case


# -- documents ------------------------------------------------------------------------------------
def unknown_members() -> list[ExplicitCase]:
    """One unknown member at every closed object of every bundled example.

    Array items are visited once (the first item stands for the others):
    an unknown member below a recap turn, inside a health fact's (empty,
    closed) ``heuristics``, in a run record's evidence, each gets a case.
    """
    from session_contracts.conformance.judge.cases.operations import (
        UNKNOWN_KEY,
        bundled_examples,
        closed_objects,
    )

    cases = []
    for doctype in sorted(bundled_examples()):
        shapes: set[tuple[str | int, ...]] = set()
        for where in closed_objects(doctype):
            shape = tuple(0 if isinstance(part, int) else part for part in where)
            if shape in shapes:
                continue
            shapes.add(shape)
            document = copy.deepcopy(bundled_examples()[doctype])
            node = document
            for part in where:
                node = node[part]
            node[UNKNOWN_KEY] = 1
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where)
            cases.append(
                ExplicitCase(
                    "document.roundtrip",
                    {"doctype": doctype, "document": document, "injected_at": list(where)},
                    f"{doctype}: an unknown member at {path} is rejected (the contract is closed)",
                )
            )
    return cases


# Members every object seems to have in some language: JavaScript's Object.prototype
# (`name in known` is true for each), Python's object attributes (hasattr), and members
# of arrays, functions and promises a table lookup may find.
BUILTIN_MEMBER_NAMES = (
    "__proto__",
    "constructor",
    "__class__",
    "toString",
    "__dict__",
    "hasOwnProperty",
    "__init__",
    "valueOf",
    "prototype",
    "isPrototypeOf",
    "__module__",
    "propertyIsEnumerable",
    "length",
    "toLocaleString",
    "__doc__",
    "__defineGetter__",
    "then",
    "__lookupGetter__",
    "__slots__",
    "__defineSetter__",
    "__lookupSetter__",
    "__getattr__",
)


def builtin_members() -> list[ExplicitCase]:
    """A member named like a built-in one at every closed object, the names taken in turn.

    An allow-list that answers yes to a built-in name (JavaScript's ``in`` on a plain
    object, Python's ``hasattr`` on a model) does so at every object, so one name per
    object finds it; taking the names in turn puts each at several depths of every
    contract for as many cases as the ordinary unknown member costs.
    """
    from session_contracts.conformance.judge.cases.operations import UNKNOWN_KEY

    cases = []
    for index, case in enumerate(unknown_members()):
        name = BUILTIN_MEMBER_NAMES[index % len(BUILTIN_MEMBER_NAMES)]
        where = case.input["injected_at"]
        document = copy.deepcopy(case.input["document"])
        node = document
        for part in where:
            node = node[part]
        node[name] = node.pop(UNKNOWN_KEY)
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where)
        why = f"{case.input['doctype']}: a member named {name!r} at {path} is unknown, rejected"
        cases.append(ExplicitCase(case.operation, {**case.input, "document": document}, why))
    return cases


def extension_values() -> list[ExplicitCase]:
    from session_contracts.conformance.judge.cases.operations import bundled_examples

    values: list[tuple[str, dict[str, Any]]] = [
        ("an empty extensions object", {}),
        ("nulls at every depth", {"a": None, "b": {"c": None, "d": [None, {"e": None}]}}),
        ("empty containers and odd keys", {"": [], "é/ü~1": {}, "0": [[]], "x.y": ""}),
        ("numbers at the edges", {"max": 2**53 - 1, "min": -(2**53) + 1, "f": 0.1, "z": -0.5}),
        (
            "integers a double would round (docs/protocol.md, Framing)",
            {"a": 2**53 + 1, "b": 2**64 + 1, "c": -(2**63) - 1, "d": 10**30 + 7, "e": [-0.0, 1.0]},
        ),
    ]
    cases = []
    for doctype in ("session-recap.snapshot", "session-recap.envelope"):
        for what, extensions in values:
            document = copy.deepcopy(bundled_examples()[doctype])
            snapshot = document["snapshot"] if doctype.endswith("envelope") else document
            snapshot["extensions"] = extensions
            cases.append(
                ExplicitCase(
                    "document.roundtrip",
                    {"doctype": doctype, "document": document},
                    f"{doctype}: extensions with {what} survive verbatim",
                )
            )
    return cases


# -- health ---------------------------------------------------------------------------------------
def completed_call(
    call_id: str,
    success: bool = True,
    *,
    candidate: bool = False,
    edit: bool = False,
    command: str | None = None,
    exit_code: int | None = None,
    diagnostics: tuple[str, int] | None = None,
    verified: bool = False,
) -> dict[str, Any]:
    """A tool_call_completed observation; telemetry only when a command, an exit code, a
    diagnostic collection or a verification is given."""
    telemetry: dict[str, Any] | None = None
    if command is not None or exit_code is not None or diagnostics is not None or verified:
        verification = None
        if diagnostics is not None or verified:
            measured = diagnostics and {"set_fingerprint": diagnostics[0], "count": diagnostics[1]}
            verification = {"diagnostics": measured}
        telemetry = {
            "command_id": command,
            "command_exit_code": exit_code,
            "verification": verification,
        }
    return {
        "kind": "tool_call_completed",
        "call_id": call_id,
        "success": success,
        "streaming_parse_candidate": candidate,
        "mutation_applied": edit,
        "telemetry": telemetry,
    }


def _started(iteration: int) -> dict[str, Any]:
    return {"kind": "iteration_started", "iteration": iteration}


def _finished(wall: int | None = 1000, prose: int | None = 100) -> dict[str, Any]:
    return {"kind": "iteration_finished", "wall_time_ms": wall, "prose_characters": prose}


_RESET = {"kind": "transcript_reset"}


def _terminal(stop_class: str) -> dict[str, Any]:
    return {"kind": "terminal_outcome", "stop_class": stop_class}


def _health(why: str, *observations: dict[str, Any]) -> ExplicitCase:
    return ExplicitCase(
        "health.reduce", {"session_id": "sess-h", "observations": list(observations)}, why
    )


def reset_streams() -> list[ExplicitCase]:
    """The seed's reset rule, which Harn's runtime does not have: judged by the
    recommended ``health.transcript-reset`` only."""
    trend = [
        completed_call("c1", diagnostics=("fp-a", 5)),
        completed_call("c2", diagnostics=("fp-b", 3)),  # improving
    ]
    return [
        _health(
            "a transcript reset keeps the diagnostic trend, the edit count and the stop class "
            "(session gauges); only the rolling population restarts",
            _started(1),
            *trend,
            completed_call("c3", edit=True),
            _terminal("policy_budget"),
            _RESET,
            _finished(),
            _started(2),
            completed_call("c1", success=False),
            _finished(),
        ),
        _health(
            "a reset in the middle of an iteration does not forget the calls it already "
            "counted: the same call id completing again after it counts nothing",
            _started(1),
            completed_call("c1"),
            completed_call("c2", success=False),
            _RESET,
            completed_call("c1", success=False),
            completed_call("c2"),
            _finished(),
        ),
        _health(
            "a command id counted before a reset is still a repeat after it (exit and "
            "verification not counted again)",
            _started(1),
            completed_call("c1", command="cmd-1", exit_code=1, verified=True),
            completed_call("c2", edit=True),
            _RESET,
            completed_call("c3", command="cmd-1", exit_code=0, verified=True),
            _finished(),
        ),
        _health(
            "a reset empties the rolling population: its rates are null until a call counts again",
            _started(1),
            completed_call("c1", command="cmd-1", exit_code=0),
            _RESET,
            _finished(),
            _started(2),
            _finished(),
        ),
    ]


def health_streams() -> list[ExplicitCase]:
    return [
        _health(
            "an iteration end before any iteration started measures no wall time (Harn's "
            "reducer has no start time then); its prose is still a sample",
            _finished(wall=500, prose=10),
            _started(1),
            _finished(wall=100, prose=0),
        ),
        _health(
            "the same call id counts again in a later iteration; a streaming parse candidate "
            "never counts and does not use up its id",
            _started(1),
            completed_call("c1", candidate=True),
            completed_call("c1"),
            _finished(),
            _started(2),
            completed_call("c1", success=False),
            _finished(),
        ),
        _health(
            "an oscillation: back to the set two collections ago, unlike the one between",
            _started(1),
            completed_call("c1", diagnostics=("fp-a", 2)),
            completed_call("c2", diagnostics=("fp-b", 5)),
            completed_call("c3", diagnostics=("fp-a", 2)),
            _finished(),
        ),
        _health(
            "calls resolving after the terminal outcome (closeout) each emit a fact, once",
            _started(1),
            completed_call("c1"),
            _finished(),
            _terminal("natural"),
            completed_call("c2", success=False),
            completed_call("c2"),
            {"kind": "tool_call_abandoned", "call_id": "c3"},
            _terminal("natural"),
        ),
        _health(
            "historical messages loaded do not count as calls; wall time and prose samples "
            "of null are not samples",
            _started(1),
            {"kind": "historical_messages_loaded", "count": 40},
            _finished(wall=None, prose=None),
            _started(2),
            completed_call("c1"),
            _finished(wall=0, prose=0),
        ),
    ]


def rate_streams() -> list[ExplicitCase]:
    return [
        _health(
            "no call at all: both rates are null in both views",
            _started(1),
            _finished(),
        ),
        _health(
            "only streaming parse candidates and calls without an exit code: the success "
            "rate of the first iteration and every exit rate are null",
            _started(1),
            completed_call("c1", candidate=True),
            _finished(),
            _started(2),
            completed_call("c2"),
            _finished(),
        ),
        _health("a terminal outcome before any iteration", _terminal("runtime_error")),
    ]


# -- feedback -------------------------------------------------------------------------------------
_T = EXPLICIT_EPOCH_MS


def _start(at: int, session: str = "sess-a", usage: str = "supported") -> dict[str, Any]:
    client = {"product": "Agent", "capabilities": {"usage": usage, "progress": "supported"}}
    return {
        "at_unix_ms": at,
        "call": "start",
        "request": {"request_id": "r0", "session_id": session, "client_info": client},
    }


def _checkpoint(
    at: int, request_id: str, version: int, session: str = "sess-a", **feedback: Any
) -> dict[str, Any]:
    request = {
        "request_id": request_id,
        "session_id": session,
        "session_version": version,
        "context_hash": "ctx",
        "next_action": "continue",
        "open_loops": [],
        **feedback,
    }
    return {"at_unix_ms": at, "call": "checkpoint", "request": request}


def _observe(at: int, session: str = "sess-a", reader_version: int | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "at_unix_ms": at,
        "call": "observe",
        "session_id": session,
        "can_read_raw_receipts": True,
    }
    if reader_version is not None:
        step["reader_contract_version"] = reader_version
    return step


def _feedback(why: str, *steps: dict[str, Any]) -> ExplicitCase:
    return ExplicitCase("feedback.run", {"steps": list(steps)}, why)


def feedback_runs() -> list[ExplicitCase]:
    return [
        _feedback(
            "usage observed exactly 300,000 ms ahead of the server clock is accepted, "
            "300,001 ms ahead is usage_future_timestamp (a tolerance of minutes, not "
            "milliseconds)",
            _start(_T),
            _checkpoint(_T + 1000, "r1", 0, usage=usage_sample(_T + 1000 + 300, 100)),
            _checkpoint(_T + 2000, "r2", 1, usage=usage_sample(_T + 2000 + 300_000, 200)),
            _checkpoint(_T + 3000, "r3", 2, usage=usage_sample(_T + 3000 + 300_001, 300)),
            _observe(_T + 4000),
        ),
        _feedback(
            "a report exactly 900,000 ms old is fresh, 900,001 ms old is stale; usage ages "
            "from the host's observation time",
            _start(_T),
            _checkpoint(
                _T,
                "r1",
                0,
                usage=usage_sample(_T - 5000, 100),
                progress={"phase": "testing", "summary": "步骤"},
            ),
            _observe(_T + 895_000),
            _observe(_T + 900_000),
            _observe(_T + 900_001),
        ),
        _feedback(
            "a reader of another contract version sees every report stale (contract_mismatch)",
            _start(_T),
            _checkpoint(_T, "r1", 0, usage=usage_sample(_T, 100)),
            _observe(_T + 1000, reader_version=2),
        ),
        _feedback(
            "the decrease rule is kept per (source, counter): another source's counter of the "
            "same id is not a decrease; every token field is checked, not input_tokens alone",
            _start(_T),
            _checkpoint(_T + 1000, "r1", 0, usage=usage_sample(_T + 1000, 500, 50, cached=100)),
            _checkpoint(
                _T + 2000, "r2", 1, usage=usage_sample(_T + 2000, 100, 5, source="host_estimate")
            ),
            _checkpoint(_T + 3000, "r3", 2, usage=usage_sample(_T + 3000, 600, 40)),
            _checkpoint(_T + 4000, "r4", 2, usage=usage_sample(_T + 4000, 600, 60, cached=90)),
            _observe(_T + 5000),
        ),
        _feedback(
            "older usage and another sample at the same time are refused across counters; the "
            "identical sample again is accepted",
            _start(_T),
            _checkpoint(_T + 1000, "r1", 0, usage=usage_sample(_T + 1000, 100)),
            _checkpoint(_T + 2000, "r2", 1, usage=usage_sample(_T + 999, 200, counter="c2")),
            _checkpoint(_T + 3000, "r3", 1, usage=usage_sample(_T + 1000, 200, counter="c2")),
            _checkpoint(_T + 4000, "r4", 1, usage=usage_sample(_T + 1000, 100)),
            _observe(_T + 5000),
        ),
        _feedback(
            "a retried request replays its receipt although it names an older version; a "
            "checkpoint for an unknown session is session_missing",
            _start(_T),
            _checkpoint(_T + 1000, "r1", 0, progress={"phase": "testing", "summary": "a"}),
            _checkpoint(_T + 2000, "r1", 0, progress={"phase": "testing", "summary": "a"}),
            _checkpoint(_T + 3000, "r9", 0, session="sess-b"),
            _observe(_T + 4000),
            _observe(_T + 4000, session="sess-b"),
        ),
    ]


def usage_runs() -> list[ExplicitCase]:
    return [
        _feedback(
            "snapshots of two counters: observe shows the latest one, never their sum",
            _start(_T),
            _checkpoint(_T + 1000, "r1", 0, usage=usage_sample(_T + 1000, 100, 10, cached=50)),
            _checkpoint(_T + 2000, "r2", 1, usage=usage_sample(_T + 2000, 40, 4, counter="c2")),
            _observe(_T + 3000),
            _checkpoint(_T + 4000, "r3", 2, usage=usage_sample(_T + 4000, 150, 20)),
            _observe(_T + 5000),
        ),
        _feedback(
            "a later checkpoint without usage keeps the latest snapshot",
            _start(_T),
            _checkpoint(_T + 1000, "r1", 0, usage=usage_sample(_T + 1000, 100)),
            _checkpoint(_T + 2000, "r2", 1),
            _observe(_T + 3000),
        ),
    ]


# -- run records ----------------------------------------------------------------------------------


def _projection(why: str, events: list[dict[str, Any]], spans: Sequence[Any] = ()) -> ExplicitCase:
    run = {
        "kind": "session",
        "status": "completed",
        "session_id": "sess-r",
        "execution_id": None,
        "spans": list(spans),
    }
    return ExplicitCase("runrecord.project", {"run": run, "events": events}, why)


def run_projections() -> list[ExplicitCase]:
    return [
        _projection(
            "an explicitly null receipt stored after a value is the receipt: null, not the "
            "earlier value",
            [
                attribute_event(1, "completion_receipt", {"ok": True}),
                attribute_event(2, "completion_receipt", None),
            ],
        ),
        _projection(
            "an explicitly null receipt alone projects as null",
            [attribute_event(1, "completion_receipt", None)],
        ),
        _projection(
            "the latest receipt is the highest event id, whatever order the events come in",
            [
                attribute_event(3, "completion_receipt", {"n": 3}),
                attribute_event(1, "completion_receipt", 1),
            ],
        ),
        _projection(
            "a child listed before its parent is a valid span tree",
            [],
            [span(2, 1, 5), span(1, None), span(3, 2, 7)],
        ),
    ]


def _owned_run(execution_id: str, owner: Any) -> dict[str, Any]:
    """A plain run of ``execution_id`` with a flight artifact and a span naming ``owner``."""
    named = span(1, None, metadata={"harn.execution.id": owner})
    artifact = {
        "execution_id": execution_id,
        "content_hash": "blake3:" + "5e" * 32,
        "byte_length": 4096,
        "retained_events": 12,
    }
    return {
        "run": {
            "kind": "run",
            "status": "completed",
            "session_id": "sess-r",
            "execution_id": execution_id,
            "spans": [named],
            "flight_recording": artifact,
        },
        "events": [],
    }


def run_identities() -> list[ExplicitCase]:
    """``runrecord.semantics``: each execution id of Harn's own vectors (docs/runrecord.md 1.3)
    as a plain run's owner, its span and its flight artifact naming it (a Harn-owned id keeps
    all three, any other is dropped with the ``projection_invalid`` gap); and a span whose
    ``harn.execution.id`` is not a string, beside an owner and beside none."""
    from session_contracts.runrecord import HARN_EXECUTION_ID_VECTORS

    cases = [
        ExplicitCase(
            "runrecord.project",
            _owned_run(candidate, candidate),
            f"execution id {candidate!r} ({'Harn-owned' if owned else 'not Harn-owned'}: "
            "Harn's identity rule, docs/runrecord.md 1.3) as a run's owner, span and artifact",
        )
        for candidate, owned in HARN_EXECUTION_ID_VECTORS
    ]
    owned_id = next(candidate for candidate, owned in HARN_EXECUTION_ID_VECTORS if owned)
    for owner in (5, True, None, [owned_id]):
        cases.append(
            ExplicitCase(
                "runrecord.project",
                _owned_run(owned_id, owner),
                f"a span's harn.execution.id of {json.dumps(owner)} beside a Harn-owned "
                "execution id: only the id itself names the owner",
            )
        )
        cases.append(
            _projection(
                f"a span's harn.execution.id of {json.dumps(owner)} in a session record without "
                "an owner",
                [],
                [span(1, None, metadata={"harn.execution.id": owner})],
            )
        )
    return cases


def _provider(why: str, text: str, tool_calls: Sequence[Any] = ()) -> ExplicitCase:
    response = {
        "call_id": "call-1",
        "iteration": 1,
        "span_id": None,
        "text": text,
        "tool_calls": list(tool_calls),
    }
    return ExplicitCase(
        "runrecord.provider_call_response", {"response": response, "execution_id": None}, why
    )


_NATIVE = {"id": "tc-1", "name": "search", "arguments": {"query": "x"}}


def provider_responses() -> list[ExplicitCase]:
    inline = f"<tool_call>{json.dumps(_NATIVE)}</tool_call>"
    return [
        _provider(
            "a text-protocol call identical to the native tool_calls is stored as a reference",
            inline,
            [_NATIVE],
        ),
        _provider(
            "a parse that differs from tool_calls stays inline",
            inline,
            [dict(_NATIVE, id="tc-2")],
        ),
        _provider("no tool call at all: an empty parse is never a reference", "prose only", []),
        _provider(
            "LOOP_STATE values: booleans, numbers, null and nil (any case) become primitives",
            "## LOOP_STATE\ndone: true\nstep: -2.5\nretry: nil\nnote: NIL\n## END_LOOP_STATE",
        ),
        _provider(
            "an unterminated LOOP_STATE block gives null",
            "## LOOP_STATE\ndone: true\nstep: 3",
        ),
    ]


def provider_canaries() -> list[ExplicitCase]:
    from session_contracts.redaction.canaries import canaries

    cases = []
    for kind, canary in sorted(canaries().items()):
        arguments = {"config": {"auth": {"value": canary}}, "password": canary, "note": canary}
        text_call = {"id": "tc-9", "name": "search", "arguments": arguments}
        text = f"{canary}\n<tool_call>{json.dumps(text_call)}</tool_call>"
        if "\n" not in canary:
            text += f"\n## LOOP_STATE\nnote: {canary}\n## END_LOOP_STATE"
        cases.append(
            _provider(
                f"a {kind} secret in prose, behind labels at every depth of tool arguments "
                "(native and text-protocol) and in a LOOP_STATE value is redacted",
                text,
                [{"id": "tc-1", "name": "search", "arguments": arguments}],
            )
        )
    return cases


# -- recaps ---------------------------------------------------------------------------------------
def _journal(
    *rows: tuple[str, str | None, str | None, str, dict[str, Any]], first_id: int = 1
) -> list[dict[str, Any]]:
    from session_contracts.conformance.judge.cases.operations import recap_event

    return [
        recap_event(first_id + index, session, run, turn, None, kind, payload)
        for index, (session, run, turn, kind, payload) in enumerate(rows)
    ]


def _prompt(session: str, turn: str, text: str = "do it") -> tuple[Any, ...]:
    return (session, "run-1", turn, "message", {"role": "user", "visibility": None, "text": text})


def _loop(session: str, turn: str, label: str, iteration: int | None) -> tuple[Any, ...]:
    return (
        session,
        "run-1",
        turn,
        "loop_checkpoint",
        {"checkpoint": label, "iteration": iteration},
    )


def _recap(why: str, events: list[dict[str, Any]], **query: Any) -> ExplicitCase:
    return ExplicitCase(
        "recap.project", {"events": events, "query": {"sessionId": "sess-1", **query}}, why
    )


def _interleaved() -> list[dict[str, Any]]:
    """sess-1 holds ids 1, 3, 5, 7; sess-2 holds 2, 4, 6."""
    rows = []
    for index in range(4):
        rows.append(_prompt("sess-1", f"turn-{index}"))
        if index < 3:
            rows.append(_prompt("sess-2", f"turn-{index}"))
    return _journal(*rows)


def recap_pages() -> list[ExplicitCase]:
    events = _interleaved()
    return [
        _recap(
            "an exactly full page (limit = the session's events) has nothing after it: "
            "nextEventId null, not truncated",
            events,
            limit=4,
        ),
        _recap(
            "one short of full: nextEventId is lastEventId + 1 although another session's "
            "event holds that id",
            events,
            limit=3,
        ),
        _recap("limit 0 is clamped up to 1", events, limit=0),
        _recap("limit 1 reads one event", events, limit=1),
        _recap("limit 32,768 (the clamp) is kept", events, limit=32768),
        _recap("limit 32,769 is clamped; the echo keeps 32,769", events, limit=32769),
        _recap("no limit: 4,096 by default; the echo has none", events),
        _recap(
            "fromEventId between two of the session's events starts at the next one",
            events,
            fromEventId=4,
            limit=2,
        ),
        _recap(
            "fromEventId past the session's last event: available, nothing read",
            events,
            fromEventId=8,
        ),
        _recap(
            "iterations that appear out of numeric order are listed as docs/recap.md 4.2 says "
            "(order of first appearance)",
            _journal(
                _prompt("sess-1", "turn-0"),
                _loop("sess-1", "turn-0", "iteration_start", 2),
                _loop("sess-1", "turn-0", "iteration_end", 2),
                _loop("sess-1", "turn-0", "iteration_start", 1),
                _loop("sess-1", "turn-0", "iteration_end", 1),
            ),
        ),
    ]


def recap_canaries() -> list[ExplicitCase]:
    from session_contracts.redaction.canaries import canaries

    cases = []
    for kind, canary in sorted(canaries().items()):
        arguments = {"path": canary, "auth": {"password": canary, "headers": [canary]}}
        events = _journal(
            _prompt("sess-1", "turn-0", f"label: {canary}"),
            _loop("sess-1", "turn-0", "iteration_start", 0),
            (
                "sess-1",
                "run-1",
                "turn-0",
                "message",
                {"role": "assistant", "visibility": "public", "text": canary},
            ),
            (
                "sess-1",
                "run-1",
                "turn-0",
                "tool_call",
                {"callId": "c1", "toolName": "edit", "input": arguments},
            ),
            (
                "sess-1",
                "run-1",
                "turn-0",
                "tool_result",
                {
                    "callId": "c1",
                    "toolName": "edit",
                    "isError": False,
                    "output": canary,
                    "verification": {
                        "schema": "harn.agent_tool_postcondition.v1",
                        "status": "passed",
                        "verifiedPaths": [canary],
                    },
                },
            ),
            (
                "sess-1",
                "run-1",
                "turn-0",
                "plan",
                {
                    "documentId": "plan-1",
                    "revisionId": "rev-1",
                    "title": canary,
                    "summary": canary,
                    "steps": [{"id": "step-1", "content": canary, "status": "pending"}],
                    "event": None,
                },
            ),
            (
                "sess-1",
                "run-1",
                "turn-0",
                "progress",
                {
                    "message": canary,
                    "entries": [{"content": canary, "status": "pending", "priority": None}],
                    "replace": None,
                },
            ),
            _loop("sess-1", "turn-0", "iteration_end", 0),
            (
                "sess-1",
                "run-1",
                "turn-0",
                "terminal",
                {
                    "kind": "natural",
                    "owner": "agent",
                    "finalStatus": canary,
                    "stopReason": "completed",
                    "reason": canary,
                },
            ),
        )
        cases.append(
            _recap(
                f"a {kind} secret in every public text, behind a label and at every depth of "
                "tool input, is redacted",
                events,
            )
        )
    return cases


# Padding around a text: each class of Unicode White_Space Rust's str::trim removes,
# and characters other languages call whitespace that it keeps.
_WHITE_SPACE_PADS = (" ", "\t", "\n", "\u0085", "\u00a0", "\u2028", "\u3000", " \u2003\t")
_NOT_WHITE_SPACE_PADS = ("\u001f", "\u001c", "\ufeff", "\u200b")


def _text_session(kind: str, payload: dict[str, Any], turn: str = "turn-1") -> list[dict[str, Any]]:
    """One turn with one iteration around a single fact event, a call's result after it."""
    rows = [
        _prompt("sess-1", turn, "go"),
        _loop("sess-1", turn, "iteration_start", 1),
        ("sess-1", "run-1", turn, kind, payload),
    ]
    if kind == "tool_call":
        result = {"callId": "c1", "toolName": None, "isError": False, "output": None}
        rows.append(("sess-1", "run-1", turn, "tool_result", {**result, "verification": None}))
    rows.append(_loop("sess-1", turn, "iteration_end", 1))
    return _journal(*rows)


# Every member Harn reads through semantic_string, with a payload that holds it
# (docs/recap.md 4.1), and the members it reads verbatim.
_TERMINAL = {
    "kind": "natural",
    "owner": "agent",
    "finalStatus": "done",
    "stopReason": "completed",
    "reason": "ok",
}
_TRIMMED_MEMBERS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("message", "text", {"role": "user", "visibility": None, "text": "hi"}),
    ("message", "text", {"role": "assistant", "visibility": "public", "text": "hi"}),
    ("message", "visibility", {"role": "assistant", "visibility": "public", "text": "hi"}),
    ("message", "visibility", {"role": "user", "visibility": "public", "text": "hi"}),
    ("tool_call", "callId", {"callId": "c1", "toolName": "read", "input": None}),
    ("tool_call", "toolName", {"callId": "c1", "toolName": "read", "input": None}),
    *(("terminal", member, _TERMINAL) for member in _TERMINAL),
)
_PLAN = {
    "documentId": "plan-1",
    "revisionId": "rev-1",
    "title": "Plan",
    "summary": "Sum",
    "steps": [{"id": "step-1", "content": "Step", "status": "pending"}],
    "event": None,
}
_VERBATIM_MEMBERS: tuple[tuple[str, tuple[str | int, ...], dict[str, Any]], ...] = (
    ("plan", ("title",), _PLAN),
    ("plan", ("summary",), _PLAN),
    ("plan", ("steps", 0, "content"), _PLAN),
    ("progress", ("message",), {"message": "half", "entries": [], "replace": None}),
    (
        "progress",
        ("entries", 0, "content"),
        {
            "message": None,
            "entries": [{"content": "a", "status": "pending", "priority": None}],
            "replace": None,
        },
    ),
)


def _set(payload: dict[str, Any], where: Sequence[str | int], value: Any) -> dict[str, Any]:
    copied = copy.deepcopy(payload)
    node: Any = copied
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    return copied


def recap_text() -> list[ExplicitCase]:
    """Each member Harn reads through semantic_string, padded with each kind of White_Space
    (shown trimmed), blank (read as absent), and padded with characters that are not
    White_Space (kept); each member it reads verbatim, padded (kept)."""
    cases = []
    for kind, member, payload in _TRIMMED_MEMBERS:
        where = f"{kind}.{member}"
        core = payload[member]
        variants = [
            (pad + core + pad[::-1], "padded with White_Space") for pad in _WHITE_SPACE_PADS
        ]
        variants += [
            (pad + core, "led by a character that is not White_Space")
            for pad in _NOT_WHITE_SPACE_PADS
        ]
        variants += [(" \t", "blank"), ("\u3000", "blank (U+3000)")]
        if member not in ("callId", "toolName"):
            variants.append(("", "empty"))
        for value, what in variants:
            cases.append(
                _recap(
                    f"{where} {what} ({value!r}): Harn reads it through semantic_string, "
                    "trimmed of White_Space and absent when blank (docs/recap.md 4.1)",
                    _text_session(kind, {**payload, member: value}),
                )
            )
    for kind, path, payload in _VERBATIM_MEMBERS:
        for pad in (" ", "\u3000", "\t"):
            value = f"{pad}text{pad}"
            cases.append(
                _recap(
                    f"{kind}.{'.'.join(map(str, path))} padded ({value!r}): Harn reads it "
                    "verbatim, not through semantic_string (docs/recap.md 4.1)",
                    _text_session(kind, _set(payload, path, value)),
                )
            )
    cases.append(
        _recap(
            "a padded turn id is another turn: ids in events are read verbatim (docs/recap.md 4.1)",
            _text_session("message", {"role": "user", "visibility": None, "text": "x"})
            + _journal(_prompt("sess-1", " turn-1 ", "y"), first_id=6),
        )
    )
    return cases


# Unicode White_Space, spelled here from the Unicode data (PropList.txt), not taken from the
# reference: the 25 characters Rust's str::trim removes (docs/recap.md 4.1).
_WHITE_SPACE_CHARACTERS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
# Near misses: characters other sets call white space, or that merely look blank, and that
# are not White_Space: Python's str.isspace adds U+001C..U+001F, ECMAScript's \s adds U+FEFF,
# U+180E was White_Space before Unicode 6.3, U+200B and U+2060 are format characters.
_BLANK_NEAR_MISSES = ("\x1c", "\x1d", "\x1e", "\x1f", "\ufeff", "\u180e", "\u200b", "\u2060")


def _blank_id_session(characters: Sequence[str]) -> list[dict[str, Any]]:
    """One iteration with, for each character, a tool call whose callId is that character
    alone and one whose toolName is."""
    rows: list[tuple[Any, ...]] = [_prompt("sess-1", "turn-1", "go")]
    rows.append(_loop("sess-1", "turn-1", "iteration_start", 1))
    for index, character in enumerate(characters):
        call = {"callId": character, "toolName": "read", "input": None}
        named = {"callId": f"c{index}", "toolName": character, "input": None}
        rows += [("sess-1", "run-1", "turn-1", "tool_call", payload) for payload in (call, named)]
    rows.append(_loop("sess-1", "turn-1", "iteration_end", 1))
    return _journal(*rows)


def recap_blank_ids() -> list[ExplicitCase]:
    """Ids made of one character: each White_Space character (blank: an event's call id or
    tool name read as absent, docs/recap.md 4.1; a query's sessionId refused, as Harn's
    query_session_recap refuses one whose trim is empty, docs/recap.md "Query") and each near
    miss (not blank to either)."""
    cases = [
        _recap(
            f"a call id and a tool name that are only {what}, each character in turn "
            "(docs/recap.md 4.1: semantic_string trims White_Space; blank is absent)",
            _blank_id_session(characters),
        )
        for what, characters in (
            ("one White_Space character (blank)", _WHITE_SPACE_CHARACTERS),
            ("one character that is not White_Space (kept)", _BLANK_NEAR_MISSES),
        )
    ]
    for character in (*_WHITE_SPACE_CHARACTERS, *_BLANK_NEAR_MISSES):
        cases.append(
            ExplicitCase(
                "recap.project",
                {
                    "events": _journal(_prompt(character, "turn-1")),
                    "query": {"sessionId": character},
                },
                f"a sessionId that is only U+{ord(character):04X}: refused when it is "
                "White_Space, as Harn's str::trim (docs/recap.md, Query inputs)",
            )
        )
    return cases


# Numbers whose kind RFC 8785 would lose: integral floats, and their integer twins.
_INTEGRAL_FLOATS = (1.0, -0.0, 0.0, 2.0, -7.0, 1e20, 2.0**53, 1e300, 123456789.0)


def recap_numbers() -> list[ExplicitCase]:
    """Tool input and output values holding integral floats: Harn keeps them floats in the
    snapshot and in projectionHash (docs/recap.md section 4), each alone and nested."""
    cases = []
    for number in _INTEGRAL_FLOATS:
        for member in ("input", "output"):
            value = {"n": number, "list": [number, 1], "nested": {"deep": [number]}}
            call = {"callId": "c1", "toolName": "calc", "input": value if member == "input" else 1}
            rows = [
                _prompt("sess-1", "turn-1", "go"),
                _loop("sess-1", "turn-1", "iteration_start", 1),
                ("sess-1", "run-1", "turn-1", "tool_call", call),
                (
                    "sess-1",
                    "run-1",
                    "turn-1",
                    "tool_result",
                    {
                        "callId": "c1",
                        "toolName": "calc",
                        "isError": False,
                        "output": value if member == "output" else 0.5,
                        "verification": None,
                    },
                ),
                _loop("sess-1", "turn-1", "iteration_end", 1),
            ]
            cases.append(
                _recap(
                    f"the tool {member} holds the float {number!r}: it stays a float in the "
                    "snapshot and projectionHash (docs/recap.md section 4)",
                    _journal(*rows),
                )
            )
    return cases


def recap_aliases() -> list[ExplicitCase]:
    return [
        _recap(
            "every query field spelled in camelCase (the check sends the snake-case twin)",
            _interleaved(),
            runId="run-1",
            turnId="turn-1",
            fromEventId=2,
            limit=2,
        )
    ]


# -- numbers as Harn's build reads them (docs/recap.md section 4.0) ------------------------------
# Floats that serde_json without float_roundtrip (Harn's build) reads one unit in the
# last place off (docs/vectors/serde-json-default-floats.json), beside one it reads
# exactly: the judges accept the reference's answer to the exact input or to the input
# as Harn reads it, never a mixture (trials.as_harn_reads).
HARN_READS_OFF = (0.9202898550724637, 108.33333333333333, 3e23, 7e-300)


def _harn_read_session(value: Any, other: Any) -> list[dict[str, Any]]:
    """A turn whose tool call has ``value`` as input and output, and an `other` event
    (listed in source only: its number reaches the record hash alone) holding ``other``."""
    call = {"callId": "c1", "toolName": "calc", "input": {"x": value, "list": [value, 0.5]}}
    result = {
        "callId": "c1",
        "toolName": "calc",
        "isError": False,
        "output": {"y": value},
        "verification": None,
    }
    return _journal(
        _prompt("sess-1", "turn-1", "go"),
        _loop("sess-1", "turn-1", "iteration_start", 1),
        ("sess-1", "run-1", "turn-1", "tool_call", call),
        ("sess-1", "run-1", "turn-1", "tool_result", result),
        ("sess-1", "run-1", "turn-1", "other", {"reading": other}),
        _loop("sess-1", "turn-1", "iteration_end", 1),
    )


def recap_harn_read_numbers() -> list[ExplicitCase]:
    """recap.project with floats Harn's build reads off, in journal events (tool values
    reach projectionHash, every number the record hashes and so contentHash)."""
    cases = [
        _recap(
            f"the float {number!r} in a tool's input and output: kept as given, or read "
            "as Harn's build reads it (serde_json without float_roundtrip), the snapshot and "
            "every hash of one reading (docs/recap.md section 4)",
            _harn_read_session(number, 0.1),
        )
        for number in HARN_READS_OFF
    ]
    cases.append(
        _recap(
            f"the float {HARN_READS_OFF[0]!r} only in an `other` event: the record hash and "
            "contentHash of either reading (docs/recap.md section 4)",
            _harn_read_session(0.5, HARN_READS_OFF[0]),
        )
    )
    return cases


def recap_stored_harn_read_numbers() -> list[ExplicitCase]:
    """The same numbers in Harn's stored events: the record hashes are given, so only the
    snapshot's values and projectionHash depend on the reading (docs/recap.md section 4)."""
    from session_contracts.journal import stored_events_of

    return [
        ExplicitCase(
            "recap.project",
            {
                "storedEvents": list(stored_events_of(_harn_read_session(number, number))),
                "query": {"sessionId": "sess-1"},
            },
            f"stored events whose tool values hold {number!r}: projectionHash of either "
            "reading, contentHash the same (docs/recap.md section 4)",
        )
        for number in HARN_READS_OFF
    ]


# -- the table ------------------------------------------------------------------------------------
@functools.cache
def golden_corpus() -> tuple[tuple[str, str, str, Mapping[str, Any]], ...]:
    """(operation, name, description, input) of every packaged golden fixture, read once
    (every user copies an input before changing it)."""
    from session_contracts.conformance.judge.golden import default_fixtures_dir, load_corpus

    corpus = load_corpus(default_fixtures_dir())
    return tuple((c.operation, c.name, c.description, c.input) for c in corpus.cases)


def has_reset(case_input: Mapping[str, Any]) -> bool:
    observations = case_input.get("observations")
    return isinstance(observations, list) and any(
        isinstance(o, Mapping) and o.get("kind") == "transcript_reset" for o in observations
    )


def is_stored(case_input: Mapping[str, Any]) -> bool:
    return "storedEvents" in case_input


def golden(
    operation: str, keep: Callable[[Mapping[str, Any]], bool] = lambda case_input: True
) -> Callable[[], list[ExplicitCase]]:
    """The golden fixtures of ``operation`` as explicit cases: one evidence pool, so a
    certificate implies that `golden check` passes for the checks that judge them."""

    def build() -> list[ExplicitCase]:
        return [
            ExplicitCase(
                operation, copy.deepcopy(case_input), f"golden fixture {name}: {why}", name
            )
            for fixture_operation, name, why, case_input in golden_corpus()
            if fixture_operation == operation and keep(case_input)
        ]

    return build
