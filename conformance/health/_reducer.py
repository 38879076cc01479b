"""The reference session-health reducer (seed 000): observations in, facts out.

Pure: :func:`step` takes a state and one observation
(``schemas/health-observation.schema.json``) and returns the next state and the
facts (``session-health.fact``) that observation emits.  States are frozen and
share structure (``rpds`` persistent maps), so an old state stays valid and a
10,000-iteration session never copies its history.  The reducer has no output
besides facts: a measurement never feeds back into loop policy.

``docs/health.md`` specifies every measurement and each decision taken where
the seed is silent; the comments here say why, the document says what.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from rpds import HashTrieMap, HashTrieSet

from session_contracts._errors import Finding, InvalidDocument
from session_contracts._validator import default_validator

__all__ = [
    "A2A_DOCUMENT_TYPE",
    "ACP_DOCUMENT_TYPE",
    "FACT_DOCUMENT_TYPE",
    "OBSERVATION_DOCUMENT_TYPE",
    "STREAM_DOCUMENT_TYPE",
    "Counts",
    "DiagnosticSet",
    "Expectation",
    "Fact",
    "HealthState",
    "Observation",
    "Turn",
    "a2a_status_update",
    "acp_notification",
    "diagnostic_trend",
    "initial_state",
    "reduce",
    "step",
]

OBSERVATION_DOCUMENT_TYPE: Final = "health-observation.observation"
ACP_DOCUMENT_TYPE: Final = "session-health.acp-notification"
A2A_DOCUMENT_TYPE: Final = "session-health.a2a-status-update"
STREAM_DOCUMENT_TYPE: Final = "health-observation.stream"
FACT_DOCUMENT_TYPE: Final = "session-health.fact"

# The contract's integers stay within JavaScript's safe range; a summed count
# that would leave it stays at the maximum instead of producing an invalid fact.
MAX_SAFE_INTEGER: Final = 2**53 - 1
_EXPECTATION_SOURCE: Final = "prior_measured_turns"
# Oscillation looks two complete collections back, so three are enough.
_DIAGNOSTIC_WINDOW: Final = 3

Fact = dict[str, Any]
Observation = Mapping[str, Any]


def _saturating(value: int) -> int:
    return min(value, MAX_SAFE_INTEGER)


@dataclass(frozen=True, slots=True)
class Counts:
    """The counted observations of one population: an iteration's, or the rolling one."""

    completed_calls: int = 0
    successful_calls: int = 0
    reported_exits: int = 0
    nonzero_exits: int = 0
    prose_measurements: int = 0
    prose_characters: int = 0
    measured_iterations: int = 0
    wall_time_total_ms: int = 0

    # Positional constructors rather than dataclasses.replace: these run
    # several times per observation, and replace() costs over twice as much.
    def with_call(self, success: bool) -> Counts:
        return Counts(
            self.completed_calls + 1,
            self.successful_calls + int(success),
            self.reported_exits,
            self.nonzero_exits,
            self.prose_measurements,
            self.prose_characters,
            self.measured_iterations,
            self.wall_time_total_ms,
        )

    def with_exit(self, nonzero: bool) -> Counts:
        return Counts(
            self.completed_calls,
            self.successful_calls,
            self.reported_exits + 1,
            self.nonzero_exits + int(nonzero),
            self.prose_measurements,
            self.prose_characters,
            self.measured_iterations,
            self.wall_time_total_ms,
        )

    def with_prose(self, characters: int) -> Counts:
        return Counts(
            self.completed_calls,
            self.successful_calls,
            self.reported_exits,
            self.nonzero_exits,
            self.prose_measurements + 1,
            _saturating(self.prose_characters + characters),
            self.measured_iterations,
            self.wall_time_total_ms,
        )

    def with_wall_time(self, elapsed_ms: int) -> Counts:
        # The total is never emitted (only its mean is), so it needs no saturation.
        return Counts(
            self.completed_calls,
            self.successful_calls,
            self.reported_exits,
            self.nonzero_exits,
            self.prose_measurements,
            self.prose_characters,
            self.measured_iterations + 1,
            self.wall_time_total_ms + elapsed_ms,
        )


@dataclass(frozen=True, slots=True)
class Expectation:
    """The measured iterations retained before an iteration began: its expected wall time."""

    total_ms: int
    sample_count: int

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.sample_count


@dataclass(frozen=True, slots=True)
class Turn:
    """One model iteration's population, its expectation, and whether its snapshot is out."""

    counts: Counts = Counts()
    expected: Expectation | None = None
    snapshot_emitted: bool = False


@dataclass(frozen=True, slots=True)
class DiagnosticSet:
    """A complete diagnostic collection as telemetry keeps it: identity and cardinality."""

    fingerprint: str
    count: int


@dataclass(frozen=True, slots=True)
class HealthState:
    """Everything the reducer remembers about one session (immutable)."""

    session_id: str
    # The iteration named by the latest iteration_started / iteration_finished.
    current_iteration: int | None = None
    # The turn population of each iteration number seen (the latest instance).
    turns: HashTrieMap[int, Turn] = field(default_factory=HashTrieMap)
    # The observations retained by the runtime session (a transcript reset empties it).
    rolling: Counts = Counts()
    # Calls whose first terminal update has counted; later ones change nothing.
    resolved_calls: HashTrieSet[str] = field(default_factory=HashTrieSet)
    exited_calls: HashTrieSet[str] = field(default_factory=HashTrieSet)
    # Session gauges, shared by the turn and rolling views.
    edits_since_verification: int | None = None
    diagnostics: tuple[DiagnosticSet, ...] = ()
    last_stop_class: str | None = None


def initial_state(session_id: str) -> HealthState:
    """The state of a session before any observation."""
    return HealthState(session_id=session_id)


# ----------------------------------------------------------------------------- measurements


def diagnostic_trend(collections: tuple[DiagnosticSet, ...]) -> str | None:
    """The trend of the latest complete collections (oldest first); None with fewer than two.

    Oscillation is checked first: a return to the set seen two collections
    earlier, after a different set, is ``oscillating`` even when the
    cardinality also changed.  Sets are compared by fingerprint.
    """
    if len(collections) < 2:
        return None
    previous, latest = collections[-2], collections[-1]
    if (
        len(collections) >= 3
        and collections[-3].fingerprint == latest.fingerprint
        and previous.fingerprint != latest.fingerprint
    ):
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
    return {"numerator": numerator, "denominator": denominator, "value": numerator / denominator}


def _wall_time(counts: Counts, expected: Expectation | None) -> dict[str, Any] | None:
    if counts.measured_iterations == 0:
        return None
    mean_ms = counts.wall_time_total_ms / counts.measured_iterations
    measured: dict[str, Any] = {
        "mean_ms": mean_ms,
        "sample_count": counts.measured_iterations,
        "expected": None,
    }
    if expected is not None:
        measured["expected"] = {
            "mean_ms": expected.mean_ms,
            "source": _EXPECTATION_SOURCE,
            "sample_count": expected.sample_count,
        }
        if expected.mean_ms > 0:
            measured["actual_to_expected"] = mean_ms / expected.mean_ms
    return measured


def _prose_balance(counts: Counts) -> dict[str, Any] | None:
    if counts.prose_measurements == 0:
        return None
    calls = counts.completed_calls
    return {
        "prose_characters": counts.prose_characters,
        "tool_calls": calls,
        "characters_per_call": counts.prose_characters / calls if calls else None,
    }


def _measurements(
    counts: Counts, expected: Expectation | None, state: HealthState
) -> dict[str, Any]:
    return {
        "tool_call_success_rate": _rate(counts.successful_calls, counts.completed_calls),
        "nonzero_command_exit_rate": _rate(counts.nonzero_exits, counts.reported_exits),
        "edits_since_verification": state.edits_since_verification,
        "diagnostic_trend": diagnostic_trend(state.diagnostics),
        "turn_wall_time": _wall_time(counts, expected),
        "prose_to_tool_balance": _prose_balance(counts),
        "last_stop_class": state.last_stop_class,
    }


def _fact(state: HealthState, iteration: int) -> Fact:
    turn = state.turns.get(iteration) or Turn()
    # Both views compare against the same expectation: the measured iterations
    # retained before this one began.
    return {
        "session_id": state.session_id,
        "iteration": iteration,
        "turn": _measurements(turn.counts, turn.expected, state),
        "rolling": _measurements(state.rolling, turn.expected, state),
        "heuristics": {},
    }


# ----------------------------------------------------------------------------- transitions

Transition = tuple[HealthState, tuple[Fact, ...]]


def _expectation(rolling: Counts) -> Expectation | None:
    if rolling.measured_iterations == 0:
        return None
    return Expectation(rolling.wall_time_total_ms, rolling.measured_iterations)


def _turn(state: HealthState, iteration: int) -> Turn:
    # An observation may name an iteration never started (a producer that
    # reports no iteration_started): it opens that iteration's population.
    existing = state.turns.get(iteration)
    return existing if existing is not None else Turn(expected=_expectation(state.rolling))


def _iteration_started(state: HealthState, observation: Observation) -> Transition:
    iteration: int = observation["iteration"]
    turn = Turn(expected=_expectation(state.rolling))
    return replace(
        state, current_iteration=iteration, turns=state.turns.insert(iteration, turn)
    ), ()


def _iteration_finished(state: HealthState, observation: Observation) -> Transition:
    iteration: int = observation["iteration"]
    elapsed_ms: int | None = observation["wall_time_ms"]
    turn = _turn(state, iteration)
    counts, rolling = turn.counts, state.rolling
    # A terminal path can finish the same iteration twice: its wall time joins
    # the populations once.
    if elapsed_ms is not None and counts.measured_iterations == 0:
        counts, rolling = counts.with_wall_time(elapsed_ms), rolling.with_wall_time(elapsed_ms)
    turn = Turn(counts, turn.expected, snapshot_emitted=True)
    state = replace(
        state,
        current_iteration=iteration,
        turns=state.turns.insert(iteration, turn),
        rolling=rolling,
    )
    return state, (_fact(state, iteration),)


def _resolve_call(state: HealthState, observation: Observation, success: bool) -> Transition:
    call_id: str = observation["call_id"]
    if call_id in state.resolved_calls:
        return state, ()  # a repeated terminal update: the population counts a call once
    iteration: int = observation["iteration"]
    turn = _turn(state, iteration)
    turn = Turn(turn.counts.with_call(success), turn.expected, turn.snapshot_emitted)
    state = replace(
        state,
        turns=state.turns.insert(iteration, turn),
        rolling=state.rolling.with_call(success),
        resolved_calls=state.resolved_calls.insert(call_id),
    )
    # Resolved after its iteration's snapshot (closeout included): update it.
    return state, ((_fact(state, iteration),) if turn.snapshot_emitted else ())


def _tool_call_completed(state: HealthState, observation: Observation) -> Transition:
    if observation["streaming_parse_candidate"]:
        # Not a call yet: it neither counts nor uses up the call's first update.
        return state, ()
    return _resolve_call(state, observation, bool(observation["success"]))


def _tool_call_abandoned(state: HealthState, observation: Observation) -> Transition:
    return _resolve_call(state, observation, False)


def _command_exit(state: HealthState, observation: Observation) -> Transition:
    call_id: str = observation["call_id"]
    exit_code: int | None = observation["exit_code"]
    if exit_code is None or call_id in state.exited_calls:
        return state, ()  # an absent exit code is no reported exit; a repeat counts once
    iteration: int = observation["iteration"]
    turn = _turn(state, iteration)
    turn = Turn(turn.counts.with_exit(exit_code != 0), turn.expected, turn.snapshot_emitted)
    state = replace(
        state,
        turns=state.turns.insert(iteration, turn),
        rolling=state.rolling.with_exit(exit_code != 0),
        exited_calls=state.exited_calls.insert(call_id),
    )
    return state, ((_fact(state, iteration),) if turn.snapshot_emitted else ())


def _tool_mutation_applied(state: HealthState, observation: Observation) -> Transition:
    edits = state.edits_since_verification or 0
    return replace(state, edits_since_verification=_saturating(edits + 1)), ()


def _verification_completed(state: HealthState, observation: Observation) -> Transition:
    # Any completed declared verification resets the count, passed or failed.
    diagnostics: Mapping[str, Any] | None = observation["diagnostics"]
    collections = state.diagnostics
    if diagnostics is not None and diagnostics["complete"]:
        latest = DiagnosticSet(diagnostics["fingerprint"], diagnostics["count"])
        collections = (*collections, latest)[-_DIAGNOSTIC_WINDOW:]
    return replace(state, edits_since_verification=0, diagnostics=collections), ()


def _prose_measured(state: HealthState, observation: Observation) -> Transition:
    iteration: int = observation["iteration"]
    characters: int = observation["characters"]
    turn = _turn(state, iteration)
    turn = Turn(turn.counts.with_prose(characters), turn.expected, turn.snapshot_emitted)
    return replace(
        state,
        turns=state.turns.insert(iteration, turn),
        rolling=state.rolling.with_prose(characters),
    ), ()


def _terminal_classified(state: HealthState, observation: Observation) -> Transition:
    state = replace(state, last_stop_class=observation["stop_class"])
    if not observation["terminal_outcome"]:
        return state, ()
    iteration = state.current_iteration if state.current_iteration is not None else 0
    turn = _turn(state, iteration)
    turn = Turn(turn.counts, turn.expected, snapshot_emitted=True)
    state = replace(state, turns=state.turns.insert(iteration, turn))
    return state, (_fact(state, iteration),)


def _transcript_reset(state: HealthState, observation: Observation) -> Transition:
    # Only the retained (rolling) observations go; gauges describe the
    # workspace and the loop, not the transcript, and the call registry keeps
    # a repeated update from counting again.
    return replace(state, rolling=Counts()), ()


def _historical_messages_loaded(state: HealthState, observation: Observation) -> Transition:
    return state, ()  # history carries no execution telemetry: nothing is invented


_TRANSITIONS: Final[Mapping[str, Callable[[HealthState, Observation], Transition]]] = {
    "iteration_started": _iteration_started,
    "iteration_finished": _iteration_finished,
    "tool_call_completed": _tool_call_completed,
    "tool_call_abandoned": _tool_call_abandoned,
    "command_exit": _command_exit,
    "tool_mutation_applied": _tool_mutation_applied,
    "verification_completed": _verification_completed,
    "prose_measured": _prose_measured,
    "terminal_classified": _terminal_classified,
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
    """The ACP notification ``_harn/agentEvent``, kind ``session_health``, payload the fact."""
    payload = copy.deepcopy(fact)
    return {
        "jsonrpc": "2.0",
        "method": "_harn/agentEvent",
        "params": {
            "sessionId": payload["session_id"],
            "kind": "session_health",
            "payload": payload,
        },
    }


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
