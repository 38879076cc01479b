"""The reference session-health reducer (seed 000): one test per rule, then properties.

Every fact a test produces is checked against ``session-health.fact`` (see
``run``); the property tests also decode each one through the generated bindings.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from session_contracts.conformance import health
from session_contracts.conformance.health import (
    A2A_DOCUMENT_TYPE,
    ACP_DOCUMENT_TYPE,
    FACT_DOCUMENT_TYPE,
    OBSERVATION_DOCUMENT_TYPE,
    STREAM_DOCUMENT_TYPE,
    Fact,
    _reducer,
    a2a_status_update,
    acp_notification,
    initial_state,
    reduce,
    step,
)
from session_contracts.generated import health_observation

from session_contracts import InvalidDocument
from session_contracts._validator import default_validator
from session_contracts._xkeywords import json_equal
from session_contracts.bindings import decode, encode

SESSION = "sess-health-1"
MAX_SAFE = 2**53 - 1
VALIDATOR = default_validator()
MEASUREMENTS = (
    "tool_call_success_rate",
    "nonzero_command_exit_rate",
    "edits_since_verification",
    "diagnostic_trend",
    "turn_wall_time",
    "prose_to_tool_balance",
    "last_stop_class",
)
GAUGES = ("edits_since_verification", "diagnostic_trend", "last_stop_class")

# ----------------------------------------------------------------------------- observations


def started(iteration: int) -> dict[str, Any]:
    return {"kind": "iteration_started", "iteration": iteration}


def finished(iteration: int, wall_time_ms: int | None = None) -> dict[str, Any]:
    return {"kind": "iteration_finished", "iteration": iteration, "wall_time_ms": wall_time_ms}


def call(
    call_id: str, iteration: int, *, success: bool = True, candidate: bool = False
) -> dict[str, Any]:
    return {
        "kind": "tool_call_completed",
        "call_id": call_id,
        "iteration": iteration,
        "success": success,
        "streaming_parse_candidate": candidate,
    }


def abandoned(call_id: str, iteration: int) -> dict[str, Any]:
    return {"kind": "tool_call_abandoned", "call_id": call_id, "iteration": iteration}


def exited(call_id: str, iteration: int, exit_code: int | None) -> dict[str, Any]:
    return {
        "kind": "command_exit",
        "call_id": call_id,
        "iteration": iteration,
        "exit_code": exit_code,
    }


def mutation(iteration: int = 1) -> dict[str, Any]:
    return {"kind": "tool_mutation_applied", "iteration": iteration}


def collection(fingerprint: str, count: int, *, complete: bool = True) -> dict[str, Any]:
    return {"complete": complete, "fingerprint": fingerprint, "count": count}


def verification(
    diagnostics: dict[str, Any] | None = None, *, passed: bool = True, iteration: int = 1
) -> dict[str, Any]:
    return {
        "kind": "verification_completed",
        "iteration": iteration,
        "passed": passed,
        "diagnostics": diagnostics,
    }


def prose(iteration: int, characters: int) -> dict[str, Any]:
    return {"kind": "prose_measured", "iteration": iteration, "characters": characters}


def terminal(
    stop_class: str = "completed", *, outcome: bool = True, call_id: str | None = None
) -> dict[str, Any]:
    return {
        "kind": "terminal_classified",
        "call_id": call_id,
        "stop_class": stop_class,
        "terminal_outcome": outcome,
    }


RESET: dict[str, Any] = {"kind": "transcript_reset"}


def history(count: int = 12) -> dict[str, Any]:
    return {"kind": "historical_messages_loaded", "count": count}


def run(*observations: dict[str, Any]) -> list[Fact]:
    """Reduce a session and check every fact it emits against the v1 contract."""
    facts = reduce(SESSION, observations)
    for fact in facts:
        assert VALIDATOR.validate(FACT_DOCUMENT_TYPE, fact) == []
    return facts


def last(*observations: dict[str, Any]) -> Fact:
    facts = run(*observations)
    assert facts, "the session emitted no fact"
    return facts[-1]


def rate(numerator: int, denominator: int) -> dict[str, Any]:
    return {"numerator": numerator, "denominator": denominator, "value": numerator / denominator}


# ----------------------------------------------------------------------------- emission


def test_fact_after_each_iteration_and_terminal_outcome() -> None:
    facts = run(
        started(1),
        call("a", 1),
        finished(1, 10),
        started(2),
        mutation(2),
        prose(2, 40),
        finished(2, 20),
        terminal("completed"),
    )
    assert [fact["iteration"] for fact in facts] == [1, 2, 2]
    assert facts[2]["turn"]["last_stop_class"] == "completed"
    assert facts[1]["turn"]["last_stop_class"] is None


def test_no_fact_between_snapshots() -> None:
    silent = run(
        started(1),
        call("a", 1),
        exited("a", 1, 0),
        mutation(1),
        verification(collection("fp", 0)),
        prose(1, 12),
        terminal("tool_error", outcome=False),
        RESET,
        history(),
    )
    assert silent == []


def test_fact_holds_session_id_iteration_turn_rolling_and_heuristics() -> None:
    fact = last(started(4), finished(4, 7))
    assert list(fact) == ["session_id", "iteration", "turn", "rolling", "heuristics"]
    assert fact["session_id"] == SESSION
    assert fact["iteration"] == 4
    assert tuple(fact["turn"]) == MEASUREMENTS
    assert tuple(fact["rolling"]) == MEASUREMENTS


def test_late_tool_call_resolution_emits_updated_fact() -> None:
    facts = run(started(1), call("a", 1), finished(1, 10), call("late", 1, success=False))
    assert len(facts) == 2
    snapshot, updated = facts
    assert snapshot["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert updated["iteration"] == 1
    assert updated["turn"]["tool_call_success_rate"] == rate(1, 2)
    assert updated["rolling"]["tool_call_success_rate"] == rate(1, 2)


def test_late_command_exit_emits_updated_fact() -> None:
    facts = run(started(1), call("a", 1), finished(1, 10), exited("a", 1, 2))
    assert len(facts) == 2
    assert facts[0]["turn"]["nonzero_command_exit_rate"] is None
    assert facts[1]["turn"]["nonzero_command_exit_rate"] == rate(1, 1)


def test_call_abandoned_during_closeout_emits_updated_fact() -> None:
    facts = run(
        started(3),
        call("a", 3),
        finished(3, 5),
        terminal("completed"),
        abandoned("b", 3),
    )
    assert len(facts) == 3
    closeout = facts[2]
    assert closeout["iteration"] == 3
    assert closeout["turn"]["tool_call_success_rate"] == rate(1, 2)
    assert closeout["rolling"]["tool_call_success_rate"] == rate(1, 2)
    assert closeout["turn"]["last_stop_class"] == "completed"


def test_resolution_before_the_snapshot_emits_no_extra_fact() -> None:
    facts = run(started(1), call("a", 1), abandoned("b", 1), finished(1, 3), started(2))
    assert len(facts) == 1
    assert facts[0]["turn"]["tool_call_success_rate"] == rate(1, 2)


def test_terminal_outcome_before_any_iteration_reports_iteration_zero() -> None:
    fact = last(terminal("user_cancelled"))
    assert fact["iteration"] == 0
    assert fact["turn"]["last_stop_class"] == "user_cancelled"
    assert fact["turn"]["tool_call_success_rate"] is None


def test_restarted_iteration_opens_a_fresh_turn_population() -> None:
    facts = run(started(1), call("a", 1), finished(1, 8), started(1), finished(1, 4))
    assert facts[1]["turn"]["tool_call_success_rate"] is None
    assert facts[1]["turn"]["turn_wall_time"]["mean_ms"] == 4.0
    assert facts[1]["rolling"]["tool_call_success_rate"] == rate(1, 1)


# ----------------------------------------------------------------------------- rates


def test_rate_is_null_not_zero_without_qualifying_observations() -> None:
    fact = last(started(1), finished(1, 10))
    for view in ("turn", "rolling"):
        assert fact[view]["tool_call_success_rate"] is None
        assert fact[view]["nonzero_command_exit_rate"] is None
    measured_zero = last(started(1), call("a", 1, success=False), finished(1, 10))
    assert measured_zero["turn"]["tool_call_success_rate"] == {
        "numerator": 0,
        "denominator": 1,
        "value": 0.0,
    }


def test_tool_call_success_rate_is_successful_over_completed_calls() -> None:
    fact = last(
        started(1),
        call("a", 1),
        call("b", 1, success=False),
        call("c", 1),
        finished(1, 10),
    )
    assert fact["turn"]["tool_call_success_rate"] == {
        "numerator": 2,
        "denominator": 3,
        "value": 2 / 3,
    }


def test_streaming_parse_candidates_are_excluded() -> None:
    fact = last(
        started(1),
        call("a", 1, success=False, candidate=True),
        call("b", 1),
        prose(1, 90),
        finished(1, 10),
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["turn"]["prose_to_tool_balance"] == {
        "prose_characters": 90,
        "tool_calls": 1,
        "characters_per_call": 90.0,
    }
    # The candidate does not use up its call: the real completion still counts.
    fact = last(started(1), call("c", 1, candidate=True), call("c", 1, success=False), finished(1))
    assert fact["turn"]["tool_call_success_rate"] == rate(0, 1)


def test_nonzero_command_exit_rate_is_nonzero_over_reported_exits() -> None:
    fact = last(
        started(1),
        exited("a", 1, 0),
        exited("b", 1, 1),
        exited("c", 1, -9),
        finished(1, 10),
    )
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(2, 3)


def test_absent_exit_code_is_excluded() -> None:
    fact = last(started(1), exited("a", 1, None), exited("b", 1, 0), finished(1, 10))
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(0, 1)
    only_absent = last(started(1), exited("a", 1, None), finished(1, 10))
    assert only_absent["turn"]["nonzero_command_exit_rate"] is None
    # An absent code is no reported exit, so the call's later reported exit counts.
    fact = last(started(1), exited("a", 1, None), exited("a", 1, 3), finished(1, 10))
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(1, 1)


# ----------------------------------------------------------------------------- edit count


def test_edits_since_verification_is_null_before_any_edit_or_verification() -> None:
    fact = last(started(1), call("a", 1), exited("a", 1, 0), finished(1, 10))
    assert fact["turn"]["edits_since_verification"] is None
    assert fact["rolling"]["edits_since_verification"] is None
    assert last(started(1), verification(), finished(1))["turn"]["edits_since_verification"] == 0
    assert last(started(1), mutation(), finished(1))["turn"]["edits_since_verification"] == 1


def test_edits_since_verification_counts_mutations_since_observation_began() -> None:
    fact = last(
        started(1), mutation(), mutation(), finished(1), started(2), mutation(2), finished(2)
    )
    assert fact["turn"]["edits_since_verification"] == 3


def test_edits_since_verification_counts_since_the_most_recent_verification() -> None:
    fact = last(
        started(1),
        mutation(),
        mutation(),
        verification(),
        mutation(),
        verification(),
        mutation(),
        mutation(),
        finished(1),
    )
    assert fact["turn"]["edits_since_verification"] == 2


def test_verification_resets_edit_count_even_when_it_fails() -> None:
    fact = last(
        started(1),
        mutation(),
        mutation(),
        verification(collection("fp-4", 4), passed=False),
        finished(1),
    )
    assert fact["turn"]["edits_since_verification"] == 0


# ----------------------------------------------------------------------------- diagnostic trend


def trends(*collections: dict[str, Any] | None) -> list[str | None]:
    """The trend after each verification (one iteration per verification)."""
    observations: list[dict[str, Any]] = []
    for number, diagnostics in enumerate(collections):
        observations += [started(number), verification(diagnostics), finished(number)]
    return [fact["turn"]["diagnostic_trend"] for fact in run(*observations)]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (collection("a", 3), collection("b", 1), "improving"),
        (collection("a", 1), collection("b", 3), "regressing"),
        (collection("a", 2), collection("b", 2), "flat"),
        (collection("a", 2), collection("a", 2), "flat"),
    ],
)
def test_diagnostic_trend_compares_cardinality(
    before: dict[str, Any], after: dict[str, Any], expected: str
) -> None:
    assert trends(before, after) == [None, expected]


def test_diagnostic_trend_oscillating() -> None:
    a, b = collection("set-a", 2), collection("set-b", 2)
    assert trends(a, b, a) == [None, "flat", "oscillating"]
    assert trends(a, b, a, b) == [None, "flat", "oscillating", "oscillating"]


def test_oscillation_takes_precedence_over_cardinality() -> None:
    a, b = collection("set-a", 3), collection("set-b", 1)
    assert trends(a, b, b, a, b) == [None, "improving", "flat", "regressing", "oscillating"]
    assert trends(a, b, a) == [None, "improving", "oscillating"]


def test_returning_without_a_different_set_between_is_not_oscillating() -> None:
    a = collection("set-a", 2)
    assert trends(a, a, a) == [None, "flat", "flat"]


def test_single_collection_is_insufficient_for_a_trend() -> None:
    assert trends(collection("a", 5)) == [None]


def test_incomplete_collection_is_ignored() -> None:
    partial = collection("partial", 0, complete=False)
    assert trends(collection("a", 3), partial) == [None, None]
    assert trends(collection("a", 3), partial, collection("b", 4)) == [None, None, "regressing"]


def test_empty_complete_collection_measures_a_trend() -> None:
    assert trends(collection("a", 2), collection("empty", 0)) == [None, "improving"]


def test_verification_without_diagnostics_measures_no_trend() -> None:
    assert trends(None, None) == [None, None]
    assert trends(collection("a", 1), None, collection("b", 1)) == [None, None, "flat"]


@pytest.mark.parametrize("member", ["messages", "paths", "advisory"])
def test_diagnostic_telemetry_keeps_only_fingerprint_and_count(member: str) -> None:
    leaky = collection("a", 1) | {member: ["src/app.py: unused import"]}
    with pytest.raises(InvalidDocument) as caught:
        run(started(1), verification(leaky))
    assert [(f.path, f.code) for f in caught.value.findings] == [
        (f"$.observations[1].diagnostics.{member}", "unknown_field")
    ]


# ----------------------------------------------------------------------------- wall time


def test_turn_wall_time_is_mean_elapsed_and_sample_count() -> None:
    fact = last(
        started(1), finished(1, 10), started(2), finished(2, 20), started(3), finished(3, 60)
    )
    assert fact["turn"]["turn_wall_time"]["mean_ms"] == 60.0
    assert fact["turn"]["turn_wall_time"]["sample_count"] == 1
    assert fact["rolling"]["turn_wall_time"]["mean_ms"] == 30.0
    assert fact["rolling"]["turn_wall_time"]["sample_count"] == 3


def test_turn_wall_time_expected_is_mean_of_prior_iterations() -> None:
    fact = last(
        started(1), finished(1, 10), started(2), finished(2, 20), started(3), finished(3, 60)
    )
    expected = {"mean_ms": 15.0, "source": "prior_measured_turns", "sample_count": 2}
    assert fact["turn"]["turn_wall_time"] == {
        "mean_ms": 60.0,
        "sample_count": 1,
        "expected": expected,
        "actual_to_expected": 4.0,
    }
    assert fact["rolling"]["turn_wall_time"] == {
        "mean_ms": 30.0,
        "sample_count": 3,
        "expected": expected,
        "actual_to_expected": 2.0,
    }


def test_turn_wall_time_is_null_without_a_measured_iteration() -> None:
    facts = run(started(1), finished(1, None), started(2), finished(2, 30))
    assert facts[0]["turn"]["turn_wall_time"] is None
    assert facts[0]["rolling"]["turn_wall_time"] is None
    # The unmeasured iteration is no sample of the expectation either.
    assert facts[1]["turn"]["turn_wall_time"] == {
        "mean_ms": 30.0,
        "sample_count": 1,
        "expected": None,
    }


def test_actual_to_expected_absent_until_positive_expectation() -> None:
    facts = run(
        started(1), finished(1, 0), started(2), finished(2, 10), started(3), finished(3, 30)
    )
    first, second, third = (fact["turn"]["turn_wall_time"] for fact in facts)
    assert first == {"mean_ms": 0.0, "sample_count": 1, "expected": None}
    assert second == {
        "mean_ms": 10.0,
        "sample_count": 1,
        "expected": {"mean_ms": 0.0, "source": "prior_measured_turns", "sample_count": 1},
    }
    assert third["expected"]["mean_ms"] == 5.0
    assert third["actual_to_expected"] == 6.0


def test_repeated_iteration_finish_samples_wall_time_once() -> None:
    facts = run(started(1), finished(1, 10), finished(1, 50))
    assert len(facts) == 2
    assert facts[1]["turn"]["turn_wall_time"]["mean_ms"] == 10.0
    assert facts[1]["rolling"]["turn_wall_time"]["sample_count"] == 1


# ----------------------------------------------------------------------------- prose balance


def test_prose_to_tool_balance_is_null_without_prose_measurement() -> None:
    fact = last(started(1), call("a", 1), finished(1, 10))
    assert fact["turn"]["prose_to_tool_balance"] is None
    assert fact["rolling"]["prose_to_tool_balance"] is None


def test_characters_per_call_is_null_without_tool_call() -> None:
    fact = last(started(1), prose(1, 120), call("x", 1, candidate=True), finished(1, 10))
    assert fact["turn"]["prose_to_tool_balance"] == {
        "prose_characters": 120,
        "tool_calls": 0,
        "characters_per_call": None,
    }
    zero = last(started(1), prose(1, 0), finished(1, 10))
    assert zero["turn"]["prose_to_tool_balance"] == {
        "prose_characters": 0,
        "tool_calls": 0,
        "characters_per_call": None,
    }


def test_prose_to_tool_balance_is_characters_over_completed_calls() -> None:
    fact = last(
        started(1),
        prose(1, 100),
        call("a", 1),
        call("b", 1, success=False),
        abandoned("c", 1),
        prose(1, 50),
        finished(1, 10),
    )
    assert fact["turn"]["prose_to_tool_balance"] == {
        "prose_characters": 150,
        "tool_calls": 3,
        "characters_per_call": 50.0,
    }


def test_counts_stay_within_the_safe_integer_range() -> None:
    fact = last(started(1), prose(1, MAX_SAFE), prose(1, MAX_SAFE), call("a", 1), finished(1, 1))
    assert fact["turn"]["prose_to_tool_balance"]["prose_characters"] == MAX_SAFE
    assert fact["rolling"]["prose_to_tool_balance"]["characters_per_call"] == float(MAX_SAFE)


# ----------------------------------------------------------------------------- stop class, gauges


def test_last_stop_class_is_the_most_recent_classification() -> None:
    facts = run(
        started(1),
        finished(1, 5),
        terminal("tool_error", outcome=False, call_id="a"),
        started(2),
        finished(2, 5),
        terminal("max_iterations"),
    )
    assert [fact["turn"]["last_stop_class"] for fact in facts] == [
        None,
        "tool_error",
        "max_iterations",
    ]


def test_session_gauges_are_shared_by_turn_and_rolling() -> None:
    fact = last(
        started(1),
        verification(collection("a", 4)),
        mutation(),
        verification(collection("b", 2)),
        mutation(),
        terminal("tool_error", outcome=False),
        finished(1, 10),
        started(2),
        finished(2, 10),
    )
    gauges = {name: fact["turn"][name] for name in GAUGES}
    assert gauges == {
        "edits_since_verification": 1,
        "diagnostic_trend": "improving",
        "last_stop_class": "tool_error",
    }
    assert {name: fact["rolling"][name] for name in GAUGES} == gauges


def test_counts_and_rates_use_their_own_population() -> None:
    fact = last(
        started(1),
        call("a", 1),
        call("b", 1),
        exited("b", 1, 0),
        prose(1, 60),
        finished(1, 10),
        started(2),
        call("c", 2, success=False),
        exited("c", 2, 1),
        finished(2, 30),
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(0, 1)
    assert fact["rolling"]["tool_call_success_rate"] == rate(2, 3)
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(1, 1)
    assert fact["rolling"]["nonzero_command_exit_rate"] == rate(1, 2)
    assert fact["turn"]["prose_to_tool_balance"] is None
    assert fact["rolling"]["prose_to_tool_balance"] == {
        "prose_characters": 60,
        "tool_calls": 3,
        "characters_per_call": 20.0,
    }


def test_repeated_terminal_update_counts_once() -> None:
    fact = last(
        started(1),
        call("a", 1),
        call("a", 1, success=False),
        abandoned("a", 1),
        exited("a", 1, 1),
        exited("a", 1, 0),
        finished(1, 10),
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["rolling"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(1, 1)
    # A repeat after the snapshot changes nothing, so it updates nothing either.
    facts = run(started(1), call("a", 1), finished(1, 10), call("a", 1), abandoned("a", 1))
    assert len(facts) == 1


def test_transcript_reset_resets_rolling() -> None:
    facts = run(
        started(1),
        call("a", 1),
        exited("a", 1, 0),
        prose(1, 80),
        finished(1, 10),
        RESET,
        started(2),
        call("b", 2, success=False),
        finished(2, 20),
    )
    rolling = facts[1]["rolling"]
    assert rolling["tool_call_success_rate"] == rate(0, 1)
    assert rolling["nonzero_command_exit_rate"] is None
    assert rolling["prose_to_tool_balance"] is None
    # The iteration before the reset is no longer a prior measured iteration.
    assert rolling["turn_wall_time"] == {"mean_ms": 20.0, "sample_count": 1, "expected": None}


def test_transcript_reset_keeps_session_gauges() -> None:
    fact = last(
        started(1),
        verification(collection("a", 3)),
        verification(collection("b", 5)),
        mutation(),
        terminal("tool_error", outcome=False),
        RESET,
        started(2),
        finished(2, 5),
    )
    assert fact["rolling"]["edits_since_verification"] == 1
    assert fact["rolling"]["diagnostic_trend"] == "regressing"
    assert fact["rolling"]["last_stop_class"] == "tool_error"


def test_historical_messages_invent_no_telemetry() -> None:
    session = [started(1), call("a", 1), prose(1, 30), finished(1, 10), terminal("completed")]
    with_history = [history(400), *session[:2], history(3), *session[2:], history(1)]
    assert run(*with_history) == run(*session)
    state = initial_state(SESSION)
    after, facts = step(state, history(50))
    assert (after, facts) == (state, ())
    assert run(history(9)) == []


def test_heuristics_is_a_separate_empty_object() -> None:
    facts = run(
        started(1),
        call("a", 1, success=False),
        mutation(),
        mutation(),
        finished(1, 999),
        terminal("max_iterations"),
    )
    assert [fact["heuristics"] for fact in facts] == [{}, {}]


def test_step_is_pure() -> None:
    empty = initial_state(SESSION)
    opened, _ = step(empty, started(1))
    one_call, _ = step(opened, call("a", 1))
    _, facts = step(one_call, finished(1, 10))
    # A later step never changes an earlier state: branch from `opened` again.
    other_call, _ = step(opened, call("b", 1, success=False))
    _, branched = step(other_call, finished(1, 10))
    assert facts[0]["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert branched[0]["turn"]["tool_call_success_rate"] == rate(0, 1)
    assert step(one_call, finished(1, 10)) == step(one_call, finished(1, 10))
    assert step(one_call, finished(1, 10))[1] == facts
    assert empty == initial_state(SESSION)
    with pytest.raises(dataclasses.FrozenInstanceError):
        empty.session_id = "other"  # type: ignore[misc]


def test_step_rejects_an_unknown_kind() -> None:
    with pytest.raises(InvalidDocument) as caught:
        step(initial_state(SESSION), {"kind": "model_vibes"})
    assert [(f.path, f.code) for f in caught.value.findings] == [("$.kind", "not_allowed_value")]


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (finished(2, 10) | {"iteration": "2"}, {("$.observations[2].iteration", "wrong_type")}),
        (finished(2, 10) | {"iteration": -2}, {("$.observations[2].iteration", "minimum")}),
        (
            finished(2, 1) | {"wall_time_ms": 1.5},
            {("$.observations[2].wall_time_ms", "wrong_type")},
        ),
        (
            finished(2, 1) | {"wall_time_ms": 10.0},
            {("$.observations[2].wall_time_ms", "integer_literal_required")},
        ),
        (call("a", 2) | {"exit_code": 0}, {("$.observations[2].exit_code", "unknown_field")}),
        (
            exited("a", 2, 0) | {"exit_code": 2**53},
            {("$.observations[2].exit_code", "unsafe_integer")},
        ),
        (
            {"kind": "iteration_started"},
            {("$.observations[2].iteration", "required")},
        ),
    ],
)
def test_malformed_observation_is_rejected_with_its_path(
    bad: dict[str, Any], expected: set[tuple[str, str]]
) -> None:
    with pytest.raises(InvalidDocument) as caught:
        reduce(SESSION, [started(1), finished(1, 10), bad])
    assert {(f.path, f.code) for f in caught.value.findings} == expected


def test_unknown_observation_kind_is_rejected_at_its_observation() -> None:
    with pytest.raises(InvalidDocument) as caught:
        reduce(SESSION, [started(1), finished(1, 10), {"kind": "model_vibes"}])
    # The discriminator names the member when the validator resolves it; the
    # observation itself otherwise.
    assert [f.path for f in caught.value.findings] in (
        ["$.observations[2].kind"],
        ["$.observations[2]"],
    )


def test_malformed_stream_emits_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    folded: list[Any] = []

    def spy(state: Any, observation: Any) -> Any:
        folded.append(observation)
        return step(state, observation)

    monkeypatch.setattr(_reducer, "step", spy)
    assert len(reduce(SESSION, [started(1), finished(1, 10)])) == 1
    folded.clear()
    with pytest.raises(InvalidDocument):
        reduce(SESSION, [started(1), finished(1, 10), started(2), finished(-2, 10)])
    assert folded == [], "no observation is folded before the whole stream is checked"


def test_empty_session_id_is_rejected() -> None:
    with pytest.raises(InvalidDocument) as caught:
        reduce("", [started(1)])
    assert [f.path for f in caught.value.findings] == ["$.session_id"]


def test_observation_binding_is_a_tagged_union() -> None:
    model = decode(OBSERVATION_DOCUMENT_TYPE, exited("a", 1, None))
    assert isinstance(model, health_observation.HealthObservation)
    assert isinstance(model.root, health_observation.CommandExit)
    assert encode(model) == exited("a", 1, None)
    stream = decode(STREAM_DOCUMENT_TYPE, {"session_id": SESSION, "observations": [RESET]})
    assert isinstance(stream, health_observation.HealthObservationStream)
    assert isinstance(stream.observations[0], health_observation.TranscriptReset)


# ----------------------------------------------------------------------------- transports


def a_fact() -> Fact:
    return last(started(2), call("a", 2), prose(2, 10), finished(2, 12))


def test_acp_notification_payload_is_the_fact() -> None:
    fact = a_fact()
    notification = acp_notification(fact)
    assert VALIDATOR.validate(ACP_DOCUMENT_TYPE, notification) == []
    assert notification == {
        "jsonrpc": "2.0",
        "method": "_harn/agentEvent",
        "params": {"sessionId": SESSION, "kind": "session_health", "payload": fact},
    }
    notification["params"]["payload"]["heuristics"]["x"] = 1
    assert fact["heuristics"] == {}, "the notification holds a copy of the fact"


@pytest.mark.parametrize(
    "state",
    [
        "submitted",
        "working",
        "input-required",
        "completed",
        "canceled",
        "failed",
        "rejected",
        "auth-required",
        "unknown",
    ],
)
def test_a2a_update_preserves_task_state(state: str) -> None:
    fact = a_fact()
    task = {
        "kind": "task",
        "id": "task-7",
        "contextId": "ctx-1",
        "status": {"state": state, "timestamp": "2026-01-02T03:04:05Z"},
        "history": [],
    }
    before = copy.deepcopy(task)
    update = a2a_status_update(fact, task)
    assert VALIDATOR.validate(A2A_DOCUMENT_TYPE, update) == []
    assert update == {
        "kind": "status-update",
        "taskId": "task-7",
        "contextId": "ctx-1",
        "status": {"state": state, "timestamp": "2026-01-02T03:04:05Z"},
        "final": False,
        "metadata": {"harn": {"sessionHealth": fact}},
    }
    assert task == before


def test_a2a_update_needs_the_task_current_state() -> None:
    with pytest.raises(InvalidDocument) as caught:
        a2a_status_update(a_fact(), {"id": "task-7", "contextId": "ctx-1"})
    assert [f.path for f in caught.value.findings] == ["$.status.state"]
    with pytest.raises(InvalidDocument) as caught:
        a2a_status_update(a_fact(), {"id": "t", "contextId": "c", "status": {"state": "paused"}})
    assert [f.path for f in caught.value.findings] == ["$.status.state"]


def test_public_api_is_small() -> None:
    assert sorted(health.__all__) == sorted(
        [
            "A2A_DOCUMENT_TYPE",
            "ACP_DOCUMENT_TYPE",
            "FACT_DOCUMENT_TYPE",
            "OBSERVATION_DOCUMENT_TYPE",
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
    )


# ----------------------------------------------------------------------------- properties

_ITERATIONS = st.integers(0, 4)
_CALL_IDS = st.sampled_from(["call-1", "call-2", "call-3", "call-4", "call-5", "call-6"])
_AMOUNTS = st.integers(0, 5_000) | st.sampled_from([0, 1, MAX_SAFE])
_DIAGNOSTICS = st.none() | st.fixed_dictionaries(
    {
        "complete": st.booleans(),
        "fingerprint": st.sampled_from(["fp-a", "fp-b", "fp-c"]),
        "count": st.integers(0, 4) | st.just(MAX_SAFE),
    }
)

OBSERVATIONS = st.one_of(
    st.builds(started, _ITERATIONS),
    st.builds(finished, _ITERATIONS, st.none() | _AMOUNTS),
    st.builds(call, _CALL_IDS, _ITERATIONS, success=st.booleans(), candidate=st.booleans()),
    st.builds(abandoned, _CALL_IDS, _ITERATIONS),
    st.builds(exited, _CALL_IDS, _ITERATIONS, st.none() | st.integers(-(2**53) + 1, MAX_SAFE)),
    st.builds(mutation, _ITERATIONS),
    st.builds(verification, _DIAGNOSTICS, passed=st.booleans(), iteration=_ITERATIONS),
    st.builds(prose, _ITERATIONS, _AMOUNTS),
    st.builds(
        terminal,
        st.sampled_from(["completed", "max_iterations", "tool_error", "user_cancelled"]),
        outcome=st.booleans(),
        call_id=st.none() | _CALL_IDS,
    ),
    st.just(RESET),
    st.builds(history, st.integers(0, 1_000)),
)
STREAMS = st.lists(OBSERVATIONS, max_size=60)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SILENT_KINDS = {
    "iteration_started",
    "tool_mutation_applied",
    "verification_completed",
    "prose_measured",
    "transcript_reset",
    "historical_messages_loaded",
}


def _rates(fact: Fact) -> list[dict[str, Any]]:
    return [
        fact[view][name]
        for view in ("turn", "rolling")
        for name in ("tool_call_success_rate", "nonzero_command_exit_rate")
        if fact[view][name] is not None
    ]


@PROPERTY
@given(STREAMS)
def test_generated_observations_follow_the_contract(observations: list[dict[str, Any]]) -> None:
    stream = {"session_id": SESSION, "observations": observations}
    assert VALIDATOR.validate(STREAM_DOCUMENT_TYPE, stream) == []


@PROPERTY
@given(STREAMS)
def test_every_fact_validates_through_the_bindings(observations: list[dict[str, Any]]) -> None:
    for fact in reduce(SESSION, observations):
        assert json_equal(encode(decode(FACT_DOCUMENT_TYPE, fact)), fact)


@PROPERTY
@given(STREAMS)
def test_rate_value_is_numerator_over_a_positive_denominator(
    observations: list[dict[str, Any]],
) -> None:
    for fact in reduce(SESSION, observations):
        for measured in _rates(fact):
            assert measured["denominator"] >= 1, "no zero-denominator rate"
            assert measured["numerator"] <= measured["denominator"]
            assert measured["value"] == measured["numerator"] / measured["denominator"]
        for view in ("turn", "rolling"):
            balance = fact[view]["prose_to_tool_balance"]
            if balance is not None and balance["tool_calls"] == 0:
                assert balance["characters_per_call"] is None
            wall = fact[view]["turn_wall_time"]
            if wall is not None:
                positive = wall["expected"] is not None and wall["expected"]["mean_ms"] > 0
                assert ("actual_to_expected" in wall) == positive


@PROPERTY
@given(STREAMS)
def test_reducer_is_deterministic(observations: list[dict[str, Any]]) -> None:
    snapshot = copy.deepcopy(observations)
    first = reduce(SESSION, observations)
    assert reduce(SESSION, observations) == first
    assert observations == snapshot, "the reducer does not touch its input"
    state = initial_state(SESSION)
    folded: list[Fact] = []
    for observation in observations:
        state, emitted = step(state, observation)
        folded.extend(emitted)
    assert folded == first


@PROPERTY
@given(STREAMS)
def test_heuristics_is_always_empty(observations: list[dict[str, Any]]) -> None:
    assert all(fact["heuristics"] == {} for fact in reduce(SESSION, observations))


@PROPERTY
@given(STREAMS)
def test_facts_are_emitted_only_at_the_seed_moments(observations: list[dict[str, Any]]) -> None:
    state = initial_state(SESSION)
    for observation in observations:
        state, emitted = step(state, observation)
        kind = observation["kind"]
        if kind == "iteration_finished":
            assert len(emitted) == 1
            assert emitted[0]["iteration"] == observation["iteration"]
        elif kind == "terminal_classified":
            assert len(emitted) == int(observation["terminal_outcome"])
        elif kind in SILENT_KINDS:
            assert emitted == ()
        else:  # a tool call's resolution: an update of its iteration's snapshot, or nothing
            assert len(emitted) <= 1
            assert all(fact["iteration"] == observation["iteration"] for fact in emitted)


@PROPERTY
@given(STREAMS, st.data())
def test_historical_messages_never_change_a_fact(
    observations: list[dict[str, Any]], data: st.DataObject
) -> None:
    where = data.draw(st.integers(0, len(observations)), label="insert at")
    loaded = [*observations[:where], history(7), *observations[where:]]
    assert reduce(SESSION, loaded) == reduce(SESSION, observations)
