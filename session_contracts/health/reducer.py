"""The reference session-health reducer (seed 000): observations in, facts out.

Pure: :func:`step` takes a state and one observation
(``schemas/health-observation.schema.json``) and returns the next state and the
facts (``session-health.fact``) that observation emits.  States are frozen; the
counted call and command ids are ``rpds`` persistent sets, so an old state stays
valid without copying the session's history.  The reducer has no output
besides facts: a measurement never feeds back into loop policy.

The semantics follow Harn's own session-health reducer (``SessionHealth`` in
``crates/harn-vm/src/agent_events/session_health/reducer.rs``), described in
our own words in ``docs/health.md`` and implemented here independently.

``docs/health.md`` specifies every measurement and each decision taken where
the seed is silent; the comments here say why, the document says what.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from rpds import HashTrieSet

from session_contracts.doctypes import (
    A2A_DOCUMENT_TYPE,
    ACP_DOCUMENT_TYPE,
    FACT_DOCUMENT_TYPE,
    OBSERVATION_DOCUMENT_TYPE,
    STREAM_DOCUMENT_TYPE,
)
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.validation.validator import default_validator

__all__ = [
    "A2A_DOCUMENT_TYPE",
    "ACP_DOCUMENT_TYPE",
    "FACT_DOCUMENT_TYPE",
    "OBSERVATION_DOCUMENT_TYPE",
    "SCHEMA_VERSION",
    "STREAM_DOCUMENT_TYPE",
    "Fact",
    "HealthState",
    "Observation",
    "a2a_status_update",
    "acp_notification",
    "initial_state",
    "reduce",
    "step",
]
# The package exports __all__; the state's parts (Counts, Expectation, DiagnosticSet) and
# diagnostic_trend and fact_of stay public for tests and other reducers, outside its API.

SCHEMA_VERSION: Final = 1
_EXPECTATION_SOURCE: Final = "prior_measured_turns"

Fact = dict[str, Any]
Observation = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Counts:
    """The counted observations of one population: the current iteration's, or the rolling one."""

    tool_calls: int = 0
    successful_calls: int = 0
    reported_exits: int = 0
    nonzero_exits: int = 0
    prose_characters: int = 0
    prose_samples: int = 0
    elapsed_ms: int = 0
    timed_iterations: int = 0

    # Positional constructors rather than dataclasses.replace: these run
    # several times per observation, and replace() costs over twice as much.
    def with_call(self, success: bool, exit_code: int | None) -> Counts:
        exited = exit_code is not None
        return Counts(
            self.tool_calls + 1,
            self.successful_calls + int(success),
            self.reported_exits + int(exited),
            self.nonzero_exits + int(exited and exit_code != 0),
            self.prose_characters,
            self.prose_samples,
            self.elapsed_ms,
            self.timed_iterations,
        )

    def with_finish(self, elapsed_ms: int | None, prose_characters: int | None) -> Counts:
        return Counts(
            self.tool_calls,
            self.successful_calls,
            self.reported_exits,
            self.nonzero_exits,
            self.prose_characters + (prose_characters or 0),
            self.prose_samples + int(prose_characters is not None),
            self.elapsed_ms + (elapsed_ms or 0),
            self.timed_iterations + int(elapsed_ms is not None),
        )


@dataclass(frozen=True, slots=True)
class Expectation:
    """The expected wall time of an iteration: the rolling mean when it started."""

    milliseconds: float
    sample_count: int


@dataclass(frozen=True, slots=True)
class DiagnosticSet:
    """A complete diagnostic collection as telemetry keeps it: identity and cardinality."""

    fingerprint: str
    count: int


@dataclass(frozen=True, slots=True)
class HealthState:
    """Everything the reducer remembers about one session (immutable)."""

    session_id: str
    # The latest iteration started; None before any (the fact then says null).
    iteration: int | None = None
    # The current iteration's snapshot is out (it finished, or the terminal
    # outcome was published): a call counted from now on re-emits the fact.
    turn_closed: bool = False
    # The current iteration's population, and the retained (rolling) one.
    turn: Counts = Counts()
    rolling: Counts = Counts()
    # Call ids counted since the current iteration started.
    counted_calls: HashTrieSet[str] = field(default_factory=HashTrieSet)
    # Command ids whose exit counted, session-wide.
    counted_commands: HashTrieSet[str] = field(default_factory=HashTrieSet)
    # Fixed when the current iteration started; both views report it.
    expected: Expectation | None = None
    # Session gauges, shared by the turn and rolling views.
    edits_since_verification: int | None = None
    # The last two complete diagnostic collections, oldest first.
    diagnostics: tuple[DiagnosticSet, ...] = ()
    diagnostic_trend: str | None = None
    last_stop_class: str | None = None


def initial_state(session_id: str) -> HealthState:
    """The state of a session before any observation."""
    return HealthState(session_id=session_id)


# ----------------------------------------------------------------------------- measurements


def diagnostic_trend(
    held: tuple[DiagnosticSet, ...], latest: DiagnosticSet, current: str | None
) -> str | None:
    """The trend after ``latest`` arrives, given the (at most two) collections held before it.

    One collection measures nothing: the trend stays as it was (``current``).
    ``oscillating`` when two were held, the older equals ``latest`` (fingerprint
    and count) and the newer differs from it; otherwise the counts decide.
    """
    if not held:
        return current
    previous = held[-1]
    if len(held) == 2 and held[0] == latest and previous != latest:
        return "oscillating"
    if latest.count < previous.count:
        return "improving"
    if latest.count > previous.count:
        return "regressing"
    return "flat"


def _rate(numerator: int, denominator: int) -> dict[str, Any] | None:
    # No qualifying observation is unmeasured (null), never a zero rate.
    if denominator == 0:
        return None
    return {
        "numerator": numerator,
        "denominator": denominator,
        "value": float(numerator) / float(denominator),
    }


def _wall_time(counts: Counts, expected: Expectation | None) -> dict[str, Any] | None:
    if counts.timed_iterations == 0:
        return None
    # Whole milliseconds: the summed time divided by the samples, truncated.
    milliseconds = counts.elapsed_ms // counts.timed_iterations
    return {
        "milliseconds": milliseconds,
        "sample_count": counts.timed_iterations,
        "expected": None
        if expected is None
        else {
            "milliseconds": expected.milliseconds,
            "source": _EXPECTATION_SOURCE,
            "sample_count": expected.sample_count,
        },
        "actual_to_expected": float(milliseconds) / expected.milliseconds
        if expected is not None and expected.milliseconds > 0
        else None,
    }


def _prose_balance(counts: Counts) -> dict[str, Any] | None:
    if counts.prose_samples == 0:
        return None
    calls = counts.tool_calls
    return {
        "prose_characters": counts.prose_characters,
        "tool_calls": calls,
        "characters_per_tool_call": float(counts.prose_characters) / float(calls)
        if calls
        else None,
    }


def _measurements(counts: Counts, state: HealthState) -> dict[str, Any]:
    return {
        "tool_call_success_rate": _rate(counts.successful_calls, counts.tool_calls),
        "nonzero_command_exit_rate": _rate(counts.nonzero_exits, counts.reported_exits),
        "edits_since_verification": state.edits_since_verification,
        "diagnostic_trend": state.diagnostic_trend,
        "turn_wall_time": _wall_time(counts, state.expected),
        "prose_to_tool_balance": _prose_balance(counts),
        "last_stop_class": state.last_stop_class,
    }


def fact_of(state: HealthState) -> Fact:
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": state.session_id,
        "iteration": state.iteration,
        "turn": _measurements(state.turn, state),
        "rolling": _measurements(state.rolling, state),
        "heuristics": {},
    }


# ----------------------------------------------------------------------------- transitions

Transition = tuple[HealthState, tuple[Fact, ...]]


def _iteration_started(state: HealthState, observation: Observation) -> Transition:
    rolling = state.rolling
    expected = (
        Expectation(
            float(rolling.elapsed_ms) / float(rolling.timed_iterations), rolling.timed_iterations
        )
        if rolling.timed_iterations
        else None
    )
    return replace(
        state,
        iteration=observation["iteration"],
        turn_closed=False,
        turn=Counts(),
        counted_calls=HashTrieSet(),
        expected=expected,
    ), ()


def _iteration_finished(state: HealthState, observation: Observation) -> Transition:
    # A terminal path can finish the same iteration twice: each measurement
    # joins the populations once, the first one given.
    elapsed_ms: int | None = observation["wall_time_ms"]
    if state.turn.timed_iterations or state.iteration is None:
        # Before any iteration started there is no start time to measure
        # from, as in Harn's reducer: the given wall time is no sample.
        elapsed_ms = None
    prose: int | None = observation["prose_characters"]
    if state.turn.prose_samples:
        prose = None
    state = replace(
        state,
        turn_closed=True,
        turn=state.turn.with_finish(elapsed_ms, prose),
        rolling=state.rolling.with_finish(elapsed_ms, prose),
    )
    return state, (fact_of(state),)


def _count_call(
    state: HealthState,
    call_id: str,
    success: bool,
    mutation_applied: bool,
    telemetry: Mapping[str, Any] | None,
) -> Transition:
    if call_id in state.counted_calls:
        return state, ()  # a repeated terminal update: the iteration counts a call once
    telemetry = telemetry or {}
    exit_code: int | None = telemetry.get("command_exit_code")
    command_id: str | None = telemetry.get("command_id")
    counted_commands = state.counted_commands
    repeated_command = False
    if exit_code is not None and command_id is not None:
        # A command receipt seen before counts nothing, its verification included.
        repeated_command = command_id in counted_commands
        counted_commands = counted_commands.insert(command_id)
    if repeated_command:
        exit_code = None
    edits = state.edits_since_verification
    if mutation_applied:
        edits = (edits or 0) + 1
    collections, trend = state.diagnostics, state.diagnostic_trend
    verification: Mapping[str, Any] | None = telemetry.get("verification")
    if verification is not None and not repeated_command:
        # A completed declared verification resets the count, passed or failed.
        edits = 0
        measured: Mapping[str, Any] | None = verification.get("diagnostics")
        if measured is not None:
            latest = DiagnosticSet(measured["set_fingerprint"], measured["count"])
            trend = diagnostic_trend(collections, latest, trend)
            collections = (*collections, latest)[-2:]
    state = replace(
        state,
        turn=state.turn.with_call(success, exit_code),
        rolling=state.rolling.with_call(success, exit_code),
        counted_calls=state.counted_calls.insert(call_id),
        counted_commands=counted_commands,
        edits_since_verification=edits,
        diagnostics=collections,
        diagnostic_trend=trend,
    )
    # Resolved after the iteration's snapshot (closeout included): publish the update.
    return state, ((fact_of(state),) if state.turn_closed else ())


def _tool_call_completed(state: HealthState, observation: Observation) -> Transition:
    if observation["streaming_parse_candidate"]:
        # Not a call yet: it neither counts nor uses up the call's update.
        return state, ()
    return _count_call(
        state,
        observation["call_id"],
        bool(observation["success"]),
        bool(observation.get("mutation_applied", False)),
        observation.get("telemetry"),
    )


def _tool_call_abandoned(state: HealthState, observation: Observation) -> Transition:
    return _count_call(state, observation["call_id"], False, False, None)


def _terminal_outcome(state: HealthState, observation: Observation) -> Transition:
    state = replace(state, turn_closed=True, last_stop_class=observation["stop_class"])
    return state, (fact_of(state),)


def _transcript_reset(state: HealthState, observation: Observation) -> Transition:
    # Only the retained (rolling) observations go; gauges describe the
    # workspace and the loop, not the transcript.
    return replace(state, rolling=Counts()), ()


def _historical_messages_loaded(state: HealthState, observation: Observation) -> Transition:
    return state, ()  # history carries no execution telemetry: nothing is invented


_TRANSITIONS: Final[Mapping[str, Callable[[HealthState, Observation], Transition]]] = {
    "iteration_started": _iteration_started,
    "iteration_finished": _iteration_finished,
    "tool_call_completed": _tool_call_completed,
    "tool_call_abandoned": _tool_call_abandoned,
    "terminal_outcome": _terminal_outcome,
    "transcript_reset": _transcript_reset,
    "historical_messages_loaded": _historical_messages_loaded,
}


def step(state: HealthState, observation: Observation) -> Transition:
    """The next state and the facts ``observation`` emits (zero or one).

    ``observation`` must be a valid ``health-observation.observation``;
    :func:`reduce` checks that first.  A kind this reducer does not know
    raises :class:`InvalidDocument`.
    """
    kind = observation.get("kind")
    transition = _TRANSITIONS.get(kind) if isinstance(kind, str) else None
    if transition is None:
        raise InvalidDocument(
            [
                Finding(
                    "$.kind",
                    "not_allowed_value",
                    f"{kind!r} is not an observation kind",
                    "use one of: " + ", ".join(sorted(_TRANSITIONS)),
                )
            ]
        )
    return transition(state, observation)


def reduce(session_id: str, observations: Iterable[Observation]) -> list[Fact]:
    """Every fact a session's observations emit, in order.

    All or nothing: the whole stream is checked against
    ``health-observation.stream`` first, so a malformed observation raises
    :class:`InvalidDocument` (paths such as ``$.observations[3].iteration``)
    before any fact exists.
    """
    checked = list(observations)
    stream = {"session_id": session_id, "observations": checked}
    findings = default_validator().validate(STREAM_DOCUMENT_TYPE, stream)
    if findings:
        raise InvalidDocument(findings)
    state = initial_state(session_id)
    facts: list[Fact] = []
    for observation in checked:
        state, emitted = step(state, observation)
        facts.extend(emitted)
    return facts


# ----------------------------------------------------------------------------- transports


def acp_notification(fact: Fact) -> dict[str, Any]:
    """The ACP notification ``_harn/agentEvent``, kind ``session_health``, payload the fact.

    As Harn's ACP adapter writes it (``emit_agent_event_ext``): the payload's members
    directly under ``params``, with ``sessionId`` (the fact's ``session_id``) and ``kind``
    stamped beside them. The reference neither replays nor answers a prompt, so it writes
    no ``_harn.replayed`` and no ``promptCorrelation`` (docs/health.md section 5).
    """
    params = copy.deepcopy(dict(fact))
    params["sessionId"] = params["session_id"]
    params["kind"] = "session_health"
    return {"jsonrpc": "2.0", "method": "_harn/agentEvent", "params": params}


def _task_findings(task: Any) -> list[Finding]:
    if not isinstance(task, Mapping):
        return [Finding("$", "wrong_type", "an A2A task is a JSON object", "pass the task object")]
    findings = [
        Finding(
            f"$.{name}",
            "required",
            f"the task has no {name} string",
            f"give the task its {name}",
        )
        for name in ("id", "contextId")
        if not isinstance(task.get(name), str) or not task[name]
    ]
    status = task.get("status")
    if not isinstance(status, Mapping) or not isinstance(status.get("state"), str):
        findings.append(
            Finding(
                "$.status.state",
                "required",
                "the task has no current status.state to preserve",
                "pass the task as it is now, with its status",
            )
        )
    return findings


def a2a_status_update(fact: Fact, task: Mapping[str, Any]) -> dict[str, Any]:
    """A standard A2A status update for ``task`` carrying ``fact`` in metadata.harn.sessionHealth.

    The update preserves the task's current status (its state, and its
    timestamp when it has one): emitting health never moves a task.  It is
    never ``final``: a health fact does not end the task's stream.  Raises
    :class:`InvalidDocument` when the task lacks an id, a contextId or a
    current state, or the update would break ``session-health.a2a-status-update``.
    """
    findings = _task_findings(task)
    if findings:
        raise InvalidDocument(findings)
    current = task["status"]
    status = {"state": current["state"]}
    if "timestamp" in current:
        status["timestamp"] = current["timestamp"]
    update = {
        "kind": "status-update",
        "taskId": task["id"],
        "contextId": task["contextId"],
        "status": status,
        "final": False,
        "metadata": {"harn": {"sessionHealth": copy.deepcopy(fact)}},
    }
    findings = default_validator().validate(A2A_DOCUMENT_TYPE, update)
    if findings:
        raise InvalidDocument(findings)
    return update
