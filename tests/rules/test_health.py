"""The reference session-health reducer (seed 000, Harn's runtime): a test per rule; properties.

Every fact a test produces is checked against ``session-health.fact`` (see
``run``); the property tests also decode each one through the generated
bindings.  Where the seed leaves a choice open the tests pin Harn's runtime
behaviour (docs/health.md section 7 lists each decision).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_contracts import InvalidDocument, health
from session_contracts.bindings import decode, encode
from session_contracts.generated import health_observation
from session_contracts.health import (
    A2A_DOCUMENT_TYPE,
    ACP_DOCUMENT_TYPE,
    FACT_DOCUMENT_TYPE,
    OBSERVATION_DOCUMENT_TYPE,
    STREAM_DOCUMENT_TYPE,
    Fact,
    a2a_status_update,
    acp_notification,
    initial_state,
    reduce,
    step,
)
from session_contracts.health import reducer as _reducer
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

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


def finished(wall_time_ms: int | None = None, *, prose: int | None = None) -> dict[str, Any]:
    return {"kind": "iteration_finished", "wall_time_ms": wall_time_ms, "prose_characters": prose}


def call(
    call_id: str,
    *,
    success: bool = True,
    candidate: bool = False,
    edit: bool = False,
    **telemetry: Any,
) -> dict[str, Any]:
    """A completed tool call; ``telemetry`` its telemetry members by their wire names
    (command_id, command_exit_code, verification): when one is not None, the telemetry
    with those given and the others null; else no telemetry."""
    observation: dict[str, Any] = {
        "kind": "tool_call_completed",
        "call_id": call_id,
        "success": success,
        "streaming_parse_candidate": candidate,
    }
    if edit:
        observation["mutation_applied"] = True
    if any(value is not None for value in telemetry.values()):
        unset = {"command_id": None, "command_exit_code": None, "verification": None}
        observation["telemetry"] = unset | telemetry
    return observation


def balance(prose: int, tool_calls: int, per_call: float | None) -> dict[str, Any]:
    """A prose-to-tool balance as a fact holds it."""
    return {
        "prose_characters": prose,
        "tool_calls": tool_calls,
        "characters_per_tool_call": per_call,
    }


def exited(call_id: str, exit_code: int | None, command: str | None = None) -> dict[str, Any]:
    return call(call_id, command_id=command, command_exit_code=exit_code)


def edit(call_id: str) -> dict[str, Any]:
    return call(call_id, edit=True)


def collection(fingerprint: str, count: int) -> dict[str, Any]:
    return {"set_fingerprint": fingerprint, "count": count}


def verify(
    call_id: str, diagnostics: dict[str, Any] | None = None, *, success: bool = True
) -> dict[str, Any]:
    return call(call_id, success=success, verification={"diagnostics": diagnostics})


def abandoned(call_id: str) -> dict[str, Any]:
    return {"kind": "tool_call_abandoned", "call_id": call_id}


def terminal(stop_class: str = "natural") -> dict[str, Any]:
    return {"kind": "terminal_outcome", "stop_class": stop_class}


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


def wall(
    milliseconds: int,
    samples: int,
    expected: tuple[float, int] | None = None,
    ratio: float | None = None,
) -> dict[str, Any]:
    return {
        "milliseconds": milliseconds,
        "sample_count": samples,
        "expected": None
        if expected is None
        else {
            "milliseconds": expected[0],
            "source": "prior_measured_turns",
            "sample_count": expected[1],
        },
        "actual_to_expected": ratio,
    }


# ----------------------------------------------------------------------------- emission


@pytest.mark.sentence("health.fact-after-iteration")
def test_fact_after_each_iteration_and_terminal_outcome() -> None:
    facts = run(
        started(1),
        call("a"),
        finished(10),
        started(2),
        edit("b"),
        finished(20, prose=40),
        terminal("natural"),
    )
    assert [fact["iteration"] for fact in facts] == [1, 2, 2]
    assert facts[2]["turn"]["last_stop_class"] == "natural"
    assert facts[1]["turn"]["last_stop_class"] is None


@pytest.mark.sentence("health.fact-after-iteration")
def test_no_fact_while_the_iteration_is_open() -> None:
    silent = run(
        started(1),
        call("a", command_id="cmd-a", command_exit_code=0),
        edit("b"),
        verify("c", collection("fp", 0)),
        abandoned("d"),
        call("e", candidate=True),
        RESET,
        history(),
    )
    assert silent == []


@pytest.mark.sentence("health.fact-members", "health.schema-version")
def test_fact_holds_harns_members_in_order() -> None:
    fact = last(started(4), finished(7))
    assert list(fact) == [
        "schema_version",
        "session_id",
        "iteration",
        "turn",
        "rolling",
        "heuristics",
    ]
    assert fact["schema_version"] == 1
    assert fact["session_id"] == SESSION
    assert fact["iteration"] == 4
    assert tuple(fact["turn"]) == MEASUREMENTS
    assert tuple(fact["rolling"]) == MEASUREMENTS


@pytest.mark.sentence("health.fact-after-iteration")
def test_fact_iteration_is_the_latest_started() -> None:
    # The finish names no iteration: the fact is the latest started one's.
    facts = run(started(3), finished(1), started(8), finished(1), started(5), finished(1))
    assert [fact["iteration"] for fact in facts] == [3, 8, 5]


@pytest.mark.sentence("health.late-resolution-updates-fact")
def test_late_tool_call_resolution_emits_updated_fact() -> None:
    facts = run(started(1), call("a"), finished(10), call("late", success=False))
    assert len(facts) == 2
    snapshot, updated = facts
    assert snapshot["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert updated["iteration"] == 1
    assert updated["turn"]["tool_call_success_rate"] == rate(1, 2)
    assert updated["rolling"]["tool_call_success_rate"] == rate(1, 2)


@pytest.mark.sentence("health.late-resolution-updates-fact")
def test_late_command_exit_emits_updated_fact() -> None:
    facts = run(started(1), call("a"), finished(10), exited("b", 2))
    assert len(facts) == 2
    assert facts[0]["turn"]["nonzero_command_exit_rate"] is None
    assert facts[1]["turn"]["nonzero_command_exit_rate"] == rate(1, 1)


@pytest.mark.sentence("health.late-resolution-updates-fact")
def test_call_abandoned_during_closeout_emits_updated_fact() -> None:
    facts = run(started(3), call("a"), finished(5), terminal("natural"), abandoned("b"))
    assert len(facts) == 3
    closeout = facts[2]
    assert closeout["iteration"] == 3
    assert closeout["turn"]["tool_call_success_rate"] == rate(1, 2)
    assert closeout["rolling"]["tool_call_success_rate"] == rate(1, 2)
    assert closeout["turn"]["last_stop_class"] == "natural"


@pytest.mark.sentence("health.late-resolution-updates-fact")
def test_resolution_before_the_snapshot_emits_no_extra_fact() -> None:
    facts = run(started(1), call("a"), abandoned("b"), finished(3), started(2), call("c"))
    assert len(facts) == 1
    assert facts[0]["turn"]["tool_call_success_rate"] == rate(1, 2)


@pytest.mark.sentence("health.turn-view")
def test_a_call_during_a_later_iteration_counts_there() -> None:
    # Attribution is positional: the call completes while iteration 2 runs.
    facts = run(started(1), finished(10), started(2), call("from-1"), finished(10))
    assert len(facts) == 2
    assert facts[0]["turn"]["tool_call_success_rate"] is None
    assert facts[1]["iteration"] == 2
    assert facts[1]["turn"]["tool_call_success_rate"] == rate(1, 1)


@pytest.mark.sentence("health.fact-after-iteration", "health.late-resolution-updates-fact")
def test_terminal_outcome_before_any_iteration_reports_a_null_iteration() -> None:
    fact = last(terminal("user_cancelled"))
    assert fact["iteration"] is None
    assert fact["turn"]["last_stop_class"] == "user_cancelled"
    assert fact["turn"]["tool_call_success_rate"] is None
    # A call resolved then is a late resolution too: the turn is closed.
    facts = run(terminal("user_cancelled"), call("a"))
    assert [f["turn"]["tool_call_success_rate"] for f in facts] == [None, rate(1, 1)]


@pytest.mark.sentence("health.turn-view", "health.rolling-view")
def test_calls_before_any_iteration_count_silently() -> None:
    facts = run(call("early", success=False), started(1), finished(4))
    assert facts[0]["turn"]["tool_call_success_rate"] is None
    assert facts[0]["rolling"]["tool_call_success_rate"] == rate(0, 1)


@pytest.mark.sentence("health.turn-view", "health.populations")
def test_restarted_iteration_opens_a_fresh_turn_population() -> None:
    facts = run(started(1), call("a"), finished(8), started(1), finished(4))
    assert facts[1]["turn"]["tool_call_success_rate"] is None
    assert facts[1]["turn"]["turn_wall_time"]["milliseconds"] == 4
    assert facts[1]["rolling"]["tool_call_success_rate"] == rate(1, 1)


# ----------------------------------------------------------------------------- rates


@pytest.mark.sentence("health.rate-null-not-zero")
def test_rate_is_null_not_zero_without_qualifying_observations() -> None:
    fact = last(started(1), finished(10))
    for view in ("turn", "rolling"):
        assert fact[view]["tool_call_success_rate"] is None
        assert fact[view]["nonzero_command_exit_rate"] is None
    measured_zero = last(started(1), call("a", success=False), finished(10))
    assert measured_zero["turn"]["tool_call_success_rate"] == {
        "numerator": 0,
        "denominator": 1,
        "value": 0.0,
    }


@pytest.mark.sentence("health.success-rate")
def test_tool_call_success_rate_is_successful_over_completed_calls() -> None:
    fact = last(started(1), call("a"), call("b", success=False), call("c"), finished(10))
    assert fact["turn"]["tool_call_success_rate"] == {
        "numerator": 2,
        "denominator": 3,
        "value": 2 / 3,
    }


@pytest.mark.sentence("health.streaming-parse-excluded")
def test_streaming_parse_candidates_are_excluded() -> None:
    fact = last(
        started(1),
        call("a", success=False, candidate=True, edit=True, command_exit_code=1),
        call("b"),
        finished(10, prose=90),
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["turn"]["nonzero_command_exit_rate"] is None
    assert fact["turn"]["edits_since_verification"] is None
    assert fact["turn"]["prose_to_tool_balance"] == balance(90, 1, 90.0)
    # The candidate does not use up its call: the real completion still counts.
    fact = last(started(1), call("c", candidate=True), call("c", success=False), finished())
    assert fact["turn"]["tool_call_success_rate"] == rate(0, 1)


@pytest.mark.sentence("health.exit-rate")
def test_nonzero_command_exit_rate_is_nonzero_over_reported_exits() -> None:
    fact = last(started(1), exited("a", 0), exited("b", 1), exited("c", -9), finished(10))
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(2, 3)
    assert fact["turn"]["tool_call_success_rate"] == rate(3, 3)


@pytest.mark.sentence("health.absent-exit-excluded")
def test_absent_exit_code_is_excluded() -> None:
    fact = last(started(1), exited("a", None, "cmd-a"), exited("b", 0), finished(10))
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(0, 1)
    only_absent = last(started(1), exited("a", None), finished(10))
    assert only_absent["turn"]["nonzero_command_exit_rate"] is None
    # An absent code does not use up its command id: a later receipt with a code counts.
    fact = last(started(1), exited("a", None, "cmd"), exited("b", 3, "cmd"), finished(10))
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(1, 1)


@pytest.mark.sentence("health.repeated-update-once")
def test_a_repeated_command_id_counts_its_exit_once_session_wide() -> None:
    facts = run(
        started(1),
        exited("a", 1, "cmd-1"),
        finished(10),
        started(2),
        exited("b", 0, "cmd-1"),
        exited("c", 0),
        exited("d", 0),
        finished(10),
    )
    # Without a command id an exit is never a repeat; with one, once per session.
    assert facts[1]["turn"]["nonzero_command_exit_rate"] == rate(0, 2)
    assert facts[1]["turn"]["tool_call_success_rate"] == rate(3, 3)
    assert facts[1]["rolling"]["nonzero_command_exit_rate"] == rate(1, 3)


# ----------------------------------------------------------------------------- edit count


def edits_since(*observations: dict[str, Any]) -> Any:
    """edits_since_verification of the turn of one iteration holding ``observations``."""
    return last(started(1), *observations, finished())["turn"]["edits_since_verification"]


@pytest.mark.sentence("health.edits-null-before")
def test_edits_since_verification_is_null_before_any_edit_or_verification() -> None:
    fact = last(started(1), call("a"), exited("b", 0), finished(10))
    assert fact["turn"]["edits_since_verification"] is None
    assert fact["rolling"]["edits_since_verification"] is None
    assert edits_since(verify("v")) == 0
    assert edits_since(edit("e")) == 1


@pytest.mark.sentence("health.edits-since-verification")
def test_edits_since_verification_counts_mutations_since_observation_began() -> None:
    fact = last(started(1), edit("a"), edit("b"), finished(), started(2), edit("c"), finished())
    assert fact["turn"]["edits_since_verification"] == 3


@pytest.mark.sentence("health.edits-since-verification")
def test_edits_since_verification_counts_since_the_most_recent_verification() -> None:
    edits = (edit("a"), edit("b"), verify("v1"), edit("c"), verify("v2"), edit("d"), edit("e"))
    assert edits_since(*edits) == 2


@pytest.mark.sentence("health.verification-resets-edits")
def test_verification_resets_edit_count_even_when_it_fails() -> None:
    failed = verify("v", collection("fp-4", 4), success=False)
    assert edits_since(edit("a"), edit("b"), failed) == 0


@pytest.mark.sentence("health.verification-resets-edits")
def test_an_edit_and_a_verification_in_one_call_leave_zero() -> None:
    both = call("a", edit=True, verification={"diagnostics": None})
    assert edits_since(edit("x"), both) == 0


@pytest.mark.sentence("health.repeated-update-once")
def test_a_repeated_command_receipt_carries_no_verification() -> None:
    fact = last(
        started(1),
        call(
            "a",
            command_id="cmd",
            command_exit_code=0,
            verification={"diagnostics": collection("p", 2)},
        ),
        edit("b"),
        call(
            "c",
            command_id="cmd",
            command_exit_code=0,
            verification={"diagnostics": collection("q", 0)},
        ),
        finished(),
    )
    assert fact["turn"]["edits_since_verification"] == 1
    assert fact["turn"]["diagnostic_trend"] is None
    # Its edit still counts: only the receipt's exit and verification repeat.
    fact = last(
        started(1),
        call("a", command_id="cmd", command_exit_code=0, verification={"diagnostics": None}),
        call(
            "c",
            edit=True,
            command_id="cmd",
            command_exit_code=0,
            verification={"diagnostics": None},
        ),
        finished(),
    )
    assert fact["turn"]["edits_since_verification"] == 1


# ----------------------------------------------------------------------------- diagnostic trend


def trends(*collections: dict[str, Any] | None) -> list[str | None]:
    """The trend after each verification (one iteration per verification)."""
    observations: list[dict[str, Any]] = []
    for number, diagnostics in enumerate(collections):
        observations += [started(number), verify(f"v{number}", diagnostics), finished()]
    return [fact["turn"]["diagnostic_trend"] for fact in run(*observations)]


@pytest.mark.sentence("health.trend-cardinality")
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


@pytest.mark.sentence("health.trend-oscillating")
def test_diagnostic_trend_oscillating() -> None:
    a, b = collection("set-a", 2), collection("set-b", 2)
    assert trends(a, b, a) == [None, "flat", "oscillating"]
    assert trends(a, b, a, b) == [None, "flat", "oscillating", "oscillating"]


@pytest.mark.sentence("health.trend-cardinality", "health.trend-oscillating")
def test_oscillation_takes_precedence_over_cardinality() -> None:
    a, b = collection("set-a", 3), collection("set-b", 1)
    assert trends(a, b, b, a, b) == [None, "improving", "flat", "regressing", "oscillating"]
    assert trends(a, b, a) == [None, "improving", "oscillating"]


@pytest.mark.sentence("health.trend-oscillating")
def test_a_set_is_its_fingerprint_and_its_count() -> None:
    # The fingerprint of two collections ago with another count is no return.
    assert trends(collection("a", 2), collection("b", 5), collection("a", 3)) == [
        None,
        "regressing",
        "improving",
    ]
    # Nor is the same fingerprint between with another count "the same set".
    assert trends(collection("a", 2), collection("a", 4), collection("a", 2)) == [
        None,
        "regressing",
        "oscillating",
    ]


@pytest.mark.sentence("health.trend-oscillating")
def test_returning_without_a_different_set_between_is_not_oscillating() -> None:
    a = collection("set-a", 2)
    assert trends(a, a, a) == [None, "flat", "flat"]


@pytest.mark.sentence("health.trend-one-collection")
def test_single_collection_is_insufficient_for_a_trend() -> None:
    assert trends(collection("a", 5)) == [None]


@pytest.mark.sentence("health.trend-complete-collections", "health.complete-collection-required")
def test_verification_without_a_collection_leaves_the_trend() -> None:
    assert trends(None, None) == [None, None]
    assert trends(collection("a", 1), None, collection("b", 1)) == [None, None, "flat"]
    # The trend measured stays while verifications without a collection pass.
    assert trends(collection("a", 3), collection("b", 1), None) == [None, "improving", "improving"]


@pytest.mark.sentence("health.complete-collection-required")
def test_empty_collection_measures_a_trend() -> None:
    assert trends(collection("a", 2), collection("empty", 0)) == [None, "improving"]


@pytest.mark.sentence("health.complete-collection-required", "health.diagnostic-fingerprint-count")
@pytest.mark.parametrize("member", ["messages", "paths", "advisory", "complete"])
def test_diagnostic_telemetry_keeps_only_fingerprint_and_count(member: str) -> None:
    leaky = collection("a", 1) | {member: ["src/app.py: unused import"]}
    with pytest.raises(InvalidDocument) as caught:
        run(started(1), verify("v", leaky))
    assert [(f.path, f.code) for f in caught.value.findings] == [
        (f"$.observations[1].telemetry.verification.diagnostics.{member}", "unknown_field")
    ]


# ----------------------------------------------------------------------------- wall time


@pytest.mark.sentence("health.wall-time-mean")
def test_turn_wall_time_is_mean_elapsed_and_sample_count() -> None:
    fact = last(started(1), finished(10), started(2), finished(20), started(3), finished(60))
    assert fact["turn"]["turn_wall_time"]["milliseconds"] == 60
    assert fact["turn"]["turn_wall_time"]["sample_count"] == 1
    assert fact["rolling"]["turn_wall_time"]["milliseconds"] == 30
    assert fact["rolling"]["turn_wall_time"]["sample_count"] == 3


@pytest.mark.sentence("health.wall-time-mean", "health.wall-time-expected")
def test_the_mean_is_truncated_to_whole_milliseconds_and_the_expectation_is_not() -> None:
    facts = run(started(1), finished(10), started(2), finished(11), started(3), finished(40))
    assert facts[1]["rolling"]["turn_wall_time"] == wall(10, 2, (10.0, 1), 1.0)
    assert facts[2]["turn"]["turn_wall_time"] == wall(40, 1, (10.5, 2), 40 / 10.5)
    # 61 / 3 = 20.33...: the mean is 20, and the ratio is taken from 20.
    assert facts[2]["rolling"]["turn_wall_time"] == wall(20, 3, (10.5, 2), 20 / 10.5)


@pytest.mark.sentence("health.wall-time-expected")
def test_turn_wall_time_expected_is_mean_of_prior_iterations() -> None:
    fact = last(started(1), finished(10), started(2), finished(20), started(3), finished(60))
    assert fact["turn"]["turn_wall_time"] == wall(60, 1, (15.0, 2), 4.0)
    assert fact["rolling"]["turn_wall_time"] == wall(30, 3, (15.0, 2), 2.0)


@pytest.mark.sentence("health.null-unmeasured", "health.wall-time-expected")
def test_turn_wall_time_is_null_without_a_measured_iteration() -> None:
    facts = run(started(1), finished(None), started(2), finished(30))
    assert facts[0]["turn"]["turn_wall_time"] is None
    assert facts[0]["rolling"]["turn_wall_time"] is None
    # The unmeasured iteration is no sample of the expectation either.
    assert facts[1]["turn"]["turn_wall_time"] == wall(30, 1)


@pytest.mark.sentence("health.null-unmeasured", "health.wall-time-mean")
def test_wall_time_before_the_first_iteration_is_not_measured() -> None:
    # Harn's crates/harn-vm/src/agent_events/session_health/reducer.rs has no
    # start time before an IterationStart, so that end measures no wall time
    # (seed 000: "Mean elapsed milliseconds"; "null means unmeasured").
    facts = run(finished(500, prose=10), started(1), finished(100, prose=0))
    assert facts[0]["iteration"] is None
    assert facts[0]["turn"]["turn_wall_time"] is None
    assert facts[0]["rolling"]["turn_wall_time"] is None
    # Its prose is still a sample: only the elapsed time needs a start.
    assert facts[0]["rolling"]["prose_to_tool_balance"]["prose_characters"] == 10
    # So the first started iteration has no prior measured iteration to expect from.
    assert facts[1]["turn"]["turn_wall_time"] == wall(100, 1)
    assert facts[1]["rolling"]["turn_wall_time"] == wall(100, 1)
    assert facts[1]["rolling"]["prose_to_tool_balance"]["prose_characters"] == 10


@pytest.mark.sentence("health.wall-time-mean")
def test_wall_time_after_the_first_iteration_ended_is_still_measured() -> None:
    # Harn keeps the latest iteration's start after its end: a terminal path
    # finishing it again (or late) measures from that start, once per iteration.
    facts = run(started(1), finished(None), terminal(), finished(40))
    assert facts[-1]["turn"]["turn_wall_time"] == wall(40, 1)


@pytest.mark.sentence("health.actual-to-expected-absent")
def test_actual_to_expected_null_until_positive_expectation() -> None:
    facts = run(started(1), finished(0), started(2), finished(10), started(3), finished(30))
    first, second, third = (fact["turn"]["turn_wall_time"] for fact in facts)
    assert first == wall(0, 1)
    assert second == wall(10, 1, (0.0, 1))
    assert third == wall(30, 1, (5.0, 2), 6.0)


@pytest.mark.sentence("health.wall-time-mean", "health.prose-balance")
def test_repeated_iteration_finish_samples_once_the_first_measurement() -> None:
    facts = run(started(1), finished(None), finished(10, prose=4), finished(50, prose=9))
    assert len(facts) == 3
    assert facts[0]["turn"]["turn_wall_time"] is None
    assert facts[2]["turn"]["turn_wall_time"] == wall(10, 1)
    assert facts[2]["rolling"]["prose_to_tool_balance"]["prose_characters"] == 4


@pytest.mark.sentence("health.wall-time-mean", "health.wall-time-expected")
def test_wall_time_counts_beyond_the_javascript_safe_range() -> None:
    # Harn's counts are uint64; a JavaScript reader would round, but the fact is valid.
    fact = last(started(1), finished(MAX_SAFE), started(2), finished(MAX_SAFE))
    assert fact["rolling"]["turn_wall_time"]["milliseconds"] == MAX_SAFE
    assert fact["turn"]["turn_wall_time"]["expected"]["milliseconds"] == float(MAX_SAFE)


# ----------------------------------------------------------------------------- prose balance


@pytest.mark.sentence("health.prose-balance-nulls")
def test_prose_to_tool_balance_is_null_without_prose_measurement() -> None:
    fact = last(started(1), call("a"), finished(10))
    assert fact["turn"]["prose_to_tool_balance"] is None
    assert fact["rolling"]["prose_to_tool_balance"] is None


@pytest.mark.sentence("health.prose-balance-nulls")
def test_characters_per_tool_call_is_null_without_tool_call() -> None:
    fact = last(started(1), call("x", candidate=True), finished(10, prose=120))
    assert fact["turn"]["prose_to_tool_balance"] == balance(120, 0, None)
    zero = last(started(1), finished(10, prose=0))
    assert zero["turn"]["prose_to_tool_balance"] == balance(0, 0, None)


@pytest.mark.sentence("health.prose-balance")
def test_prose_to_tool_balance_is_characters_over_completed_calls() -> None:
    fact = last(
        started(1), call("a"), call("b", success=False), abandoned("c"), finished(10, prose=150)
    )
    assert fact["turn"]["prose_to_tool_balance"] == balance(150, 3, 50.0)


@pytest.mark.sentence("health.prose-balance")
def test_rolling_prose_sums_one_sample_per_iteration() -> None:
    fact = last(started(1), call("a"), finished(1, prose=30), started(2), finished(1, prose=90))
    assert fact["turn"]["prose_to_tool_balance"] == balance(90, 0, None)
    assert fact["rolling"]["prose_to_tool_balance"] == balance(120, 1, 120.0)


# ----------------------------------------------------------------------------- stop class, gauges


@pytest.mark.sentence("health.last-stop-class")
def test_last_stop_class_is_the_most_recent_published_terminal_outcome() -> None:
    facts = run(
        started(1),
        finished(5),
        terminal("policy_budget"),
        started(2),
        finished(5),
        terminal("runtime_error"),
    )
    assert [fact["turn"]["last_stop_class"] for fact in facts] == [
        None,
        "policy_budget",
        "policy_budget",
        "runtime_error",
    ]


@pytest.mark.sentence("health.last-stop-class")
def test_a_stop_class_outside_harns_terminal_kinds_is_refused() -> None:
    with pytest.raises(InvalidDocument) as caught:
        run(started(1), terminal("completed"))
    assert [(f.path, f.code) for f in caught.value.findings] == [
        ("$.observations[1].stop_class", "not_allowed_value")
    ]


@pytest.mark.sentence("health.session-gauges")
def test_session_gauges_are_shared_by_turn_and_rolling() -> None:
    fact = last(
        started(1),
        verify("v1", collection("a", 4)),
        edit("e1"),
        verify("v2", collection("b", 2)),
        edit("e2"),
        finished(10),
        terminal("policy_stop"),
        started(2),
        finished(10),
    )
    gauges = {name: fact["turn"][name] for name in GAUGES}
    assert gauges == {
        "edits_since_verification": 1,
        "diagnostic_trend": "improving",
        "last_stop_class": "policy_stop",
    }
    assert {name: fact["rolling"][name] for name in GAUGES} == gauges


@pytest.mark.sentence("health.populations")
def test_counts_and_rates_use_their_own_population() -> None:
    fact = last(
        started(1),
        call("a"),
        exited("b", 0),
        finished(10, prose=60),
        started(2),
        call("c", success=False, command_exit_code=1),
        finished(30),
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(0, 1)
    assert fact["rolling"]["tool_call_success_rate"] == rate(2, 3)
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(1, 1)
    assert fact["rolling"]["nonzero_command_exit_rate"] == rate(1, 2)
    assert fact["turn"]["prose_to_tool_balance"] is None
    assert fact["rolling"]["prose_to_tool_balance"] == balance(60, 3, 20.0)


@pytest.mark.sentence("health.repeated-update-once")
def test_repeated_terminal_update_counts_once_within_an_iteration() -> None:
    fact = last(
        started(1),
        call("a", command_exit_code=1),
        call("a", success=False, command_exit_code=0),
        abandoned("a"),
        finished(10),
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["rolling"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["turn"]["nonzero_command_exit_rate"] == rate(1, 1)
    # A repeat after the snapshot changes nothing, so it updates nothing either.
    facts = run(started(1), call("a"), finished(10), call("a"), abandoned("a"))
    assert len(facts) == 1


@pytest.mark.sentence("health.repeated-update-once")
def test_a_call_id_counts_again_in_a_later_iteration() -> None:
    # The counted ids are forgotten at each iteration start, as in Harn's runtime.
    fact = last(
        started(1), call("a"), finished(10), started(2), call("a", success=False), finished(10)
    )
    assert fact["turn"]["tool_call_success_rate"] == rate(0, 1)
    assert fact["rolling"]["tool_call_success_rate"] == rate(1, 2)


@pytest.mark.sentence("health.reset-resets-rolling")
def test_transcript_reset_resets_rolling() -> None:
    facts = run(
        started(1),
        exited("a", 0),
        finished(10, prose=80),
        RESET,
        started(2),
        call("b", success=False),
        finished(20),
    )
    rolling = facts[1]["rolling"]
    assert rolling["tool_call_success_rate"] == rate(0, 1)
    assert rolling["nonzero_command_exit_rate"] is None
    assert rolling["prose_to_tool_balance"] is None
    # The iteration before the reset is no longer a prior measured iteration.
    assert rolling["turn_wall_time"] == wall(20, 1)


@pytest.mark.sentence("health.reset-resets-rolling")
def test_transcript_reset_keeps_gauges_and_the_current_iteration() -> None:
    facts = run(
        started(1),
        verify("v1", collection("a", 3)),
        verify("v2", collection("b", 5)),
        edit("e"),
        finished(10),
        terminal("suspended"),
        started(2),
        call("c"),
        RESET,
        finished(5),
    )
    fact = facts[-1]
    assert fact["rolling"]["edits_since_verification"] == 1
    assert fact["rolling"]["diagnostic_trend"] == "regressing"
    assert fact["rolling"]["last_stop_class"] == "suspended"
    assert fact["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert fact["rolling"]["tool_call_success_rate"] is None
    # The expectation was fixed when iteration 2 started, before the reset.
    assert fact["turn"]["turn_wall_time"] == wall(5, 1, (10.0, 1), 0.5)


@pytest.mark.sentence("health.reset-resets-rolling")
def test_transcript_reset_keeps_the_counted_command_ids() -> None:
    fact = last(started(1), exited("a", 1, "cmd"), RESET, exited("b", 1, "cmd"), finished())
    assert fact["rolling"]["nonzero_command_exit_rate"] is None
    assert fact["rolling"]["tool_call_success_rate"] == rate(1, 1)


@pytest.mark.sentence("health.history-invents-nothing")
def test_historical_messages_invent_no_telemetry() -> None:
    session = [started(1), call("a"), finished(10, prose=30), terminal("natural")]
    with_history = [history(400), *session[:2], history(3), *session[2:], history(1)]
    assert run(*with_history) == run(*session)
    state = initial_state(SESSION)
    after, facts = step(state, history(50))
    assert (after, facts) == (state, ())
    assert run(history(9)) == []


@pytest.mark.sentence("health.not-a-verdict", "health.heuristics-empty")
def test_heuristics_is_a_separate_empty_object() -> None:
    facts = run(
        started(1),
        call("a", success=False),
        edit("b"),
        edit("c"),
        finished(999),
        terminal("unknown"),
    )
    assert [fact["heuristics"] for fact in facts] == [{}, {}]


@pytest.mark.sentence("health.observes-not-policy")
def test_step_is_pure() -> None:
    empty = initial_state(SESSION)
    opened, _ = step(empty, started(1))
    one_call, _ = step(opened, call("a"))
    _, facts = step(one_call, finished(10))
    # A later step never changes an earlier state: branch from `opened` again.
    other_call, _ = step(opened, call("b", success=False))
    _, branched = step(other_call, finished(10))
    assert facts[0]["turn"]["tool_call_success_rate"] == rate(1, 1)
    assert branched[0]["turn"]["tool_call_success_rate"] == rate(0, 1)
    assert step(one_call, finished(10)) == step(one_call, finished(10))
    assert step(one_call, finished(10))[1] == facts
    assert empty == initial_state(SESSION)
    with pytest.raises(dataclasses.FrozenInstanceError):
        empty.session_id = "other"  # type: ignore[misc]


def test_step_rejects_an_unknown_kind() -> None:
    with pytest.raises(InvalidDocument) as caught:
        step(initial_state(SESSION), {"kind": "model_vibes"})
    assert [(f.path, f.code) for f in caught.value.findings] == [("$.kind", "not_allowed_value")]


# ----------------------------------------------------------------------------- bad input


@pytest.mark.sentence("health.normalized-command-outcomes")
@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (started(2) | {"iteration": "2"}, {("$.observations[2].iteration", "wrong_type")}),
        (started(2) | {"iteration": -2}, {("$.observations[2].iteration", "minimum")}),
        (finished(1) | {"wall_time_ms": 1.5}, {("$.observations[2].wall_time_ms", "wrong_type")}),
        (
            finished(1) | {"wall_time_ms": 10.0},
            {("$.observations[2].wall_time_ms", "integer_literal_required")},
        ),
        (finished(1) | {"iteration": 2}, {("$.observations[2].iteration", "unknown_field")}),
        (call("a") | {"exit_code": 0}, {("$.observations[2].exit_code", "unknown_field")}),
        (
            exited("a", 2**31),
            {("$.observations[2].telemetry.command_exit_code", "maximum")},
        ),
        (
            {"kind": "iteration_finished", "wall_time_ms": 1},
            {("$.observations[2].prose_characters", "required")},
        ),
    ],
)
def test_malformed_observation_is_rejected_with_its_path(
    bad: dict[str, Any], expected: set[tuple[str, str]]
) -> None:
    with pytest.raises(InvalidDocument) as caught:
        reduce(SESSION, [started(1), finished(10), bad])
    assert {(f.path, f.code) for f in caught.value.findings} == expected


def test_unknown_observation_kind_is_rejected_at_its_observation() -> None:
    with pytest.raises(InvalidDocument) as caught:
        reduce(SESSION, [started(1), finished(10), {"kind": "model_vibes"}])
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
    assert len(reduce(SESSION, [started(1), finished(10)])) == 1
    folded.clear()
    with pytest.raises(InvalidDocument):
        reduce(SESSION, [started(1), finished(10), started(2), finished(-2)])
    assert folded == [], "no observation is folded before the whole stream is checked"


def test_empty_session_id_is_rejected() -> None:
    with pytest.raises(InvalidDocument) as caught:
        reduce("", [started(1)])
    assert [f.path for f in caught.value.findings] == ["$.session_id"]


def test_observation_binding_is_a_tagged_union() -> None:
    observation = exited("a", None, "cmd")
    model = decode(OBSERVATION_DOCUMENT_TYPE, observation)
    assert isinstance(model, health_observation.HealthObservation)
    assert isinstance(model.root, health_observation.ToolCallCompleted)
    assert encode(model) == observation
    stream = decode(STREAM_DOCUMENT_TYPE, {"session_id": SESSION, "observations": [RESET]})
    assert isinstance(stream, health_observation.HealthObservationStream)
    assert isinstance(stream.observations[0], health_observation.TranscriptReset)


# ----------------------------------------------------------------------------- transports


def a_fact() -> Fact:
    return last(started(2), call("a"), finished(12, prose=10))


@pytest.mark.sentence("health.acp-envelope")
def test_acp_notification_payload_is_the_fact() -> None:
    fact = a_fact()
    notification = acp_notification(fact)
    assert VALIDATOR.validate(ACP_DOCUMENT_TYPE, notification) == []
    # Harn's wire (emit_agent_event_ext): the fact's members directly under params,
    # sessionId and kind stamped beside them.
    assert notification == {
        "jsonrpc": "2.0",
        "method": "_harn/agentEvent",
        "params": {**fact, "sessionId": SESSION, "kind": "session_health"},
    }
    notification["params"]["heuristics"]["x"] = 1
    assert fact["heuristics"] == {}, "the notification holds a copy of the fact"


@pytest.mark.sentence("health.a2a-envelope", "health.a2a-preserves-state")
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


@pytest.mark.sentence("health.a2a-preserves-state")
def test_a2a_update_needs_the_task_current_state() -> None:
    with pytest.raises(InvalidDocument) as caught:
        a2a_status_update(a_fact(), {"id": "task-7", "contextId": "ctx-1"})
    assert [f.path for f in caught.value.findings] == ["$.status.state"]
    with pytest.raises(InvalidDocument) as caught:
        a2a_status_update(a_fact(), {"id": "t", "contextId": "c", "status": {"state": "paused"}})
    assert [f.path for f in caught.value.findings] == ["$.status.state"]


def test_public_api_is_small() -> None:
    public = """
        A2A_DOCUMENT_TYPE ACP_DOCUMENT_TYPE FACT_DOCUMENT_TYPE OBSERVATION_DOCUMENT_TYPE
        SCHEMA_VERSION STREAM_DOCUMENT_TYPE Fact HealthState Observation
        a2a_status_update acp_notification initial_state reduce step
    """
    assert sorted(health.__all__) == sorted(public.split())


# ----------------------------------------------------------------------------- properties

_CALL_IDS = st.sampled_from(["call-1", "call-2", "call-3", "call-4"])
_AMOUNTS = st.integers(0, 5_000) | st.sampled_from([0, 1, MAX_SAFE])
_DIAGNOSTICS = st.none() | st.builds(
    collection, st.sampled_from(["fp-a", "fp-b", "fp-c"]), st.integers(0, 4) | st.just(MAX_SAFE)
)
_TELEMETRY = st.fixed_dictionaries(
    {
        "command_id": st.none() | st.sampled_from(["cmd-1", "cmd-2"]),
        "command_exit_code": st.none() | st.integers(-(2**31), 2**31 - 1),
        "verification": st.none() | st.builds(lambda d: {"diagnostics": d}, _DIAGNOSTICS),
    }
)
_STOP_CLASSES = st.sampled_from(["natural", "policy_budget", "runtime_error", "suspended"])

OBSERVATIONS = st.one_of(
    st.builds(started, st.integers(0, 4)),
    st.builds(finished, st.none() | _AMOUNTS, prose=st.none() | _AMOUNTS),
    st.builds(
        lambda call_id, success, candidate, edited, telemetry: call(
            call_id, success=success, candidate=candidate, edit=edited, **telemetry
        ),
        _CALL_IDS,
        st.booleans(),
        st.booleans(),
        st.booleans(),
        _TELEMETRY,
    ),
    st.builds(abandoned, _CALL_IDS),
    st.builds(terminal, _STOP_CLASSES),
    st.just(RESET),
    st.builds(history, st.integers(0, 1_000)),
)
STREAMS = st.lists(OBSERVATIONS, max_size=60)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SILENT_KINDS = {"iteration_started", "transcript_reset", "historical_messages_loaded"}


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


@pytest.mark.sentence("health.fact-members")
@PROPERTY
@given(STREAMS)
def test_every_fact_validates_through_the_bindings(observations: list[dict[str, Any]]) -> None:
    for fact in reduce(SESSION, observations):
        assert VALIDATOR.validate(FACT_DOCUMENT_TYPE, fact) == []
        assert json_equal(encode(decode(FACT_DOCUMENT_TYPE, fact)), fact)


@pytest.mark.sentence(
    "health.rate-null-not-zero", "health.actual-to-expected-absent", "health.prose-balance-nulls"
)
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
                assert balance["characters_per_tool_call"] is None
            timed = fact[view]["turn_wall_time"]
            if timed is not None:
                positive = timed["expected"] is not None and timed["expected"]["milliseconds"] > 0
                assert (timed["actual_to_expected"] is not None) == positive
                assert isinstance(timed["milliseconds"], int)


@pytest.mark.sentence("health.observes-not-policy")
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


@pytest.mark.sentence("health.heuristics-empty")
@PROPERTY
@given(STREAMS)
def test_heuristics_is_always_empty(observations: list[dict[str, Any]]) -> None:
    assert all(fact["heuristics"] == {} for fact in reduce(SESSION, observations))


@pytest.mark.sentence("health.fact-after-iteration", "health.late-resolution-updates-fact")
@PROPERTY
@given(STREAMS)
def test_facts_are_emitted_only_at_the_seed_moments(observations: list[dict[str, Any]]) -> None:
    state = initial_state(SESSION)
    latest_started: int | None = None
    closed = False
    for observation in observations:
        state, emitted = step(state, observation)
        kind = observation["kind"]
        if kind == "iteration_started":
            latest_started, closed = observation["iteration"], False
        if kind in ("iteration_finished", "terminal_outcome"):
            closed = True
            assert len(emitted) == 1
        elif kind in SILENT_KINDS:
            assert emitted == ()
        else:  # a tool call's resolution: an update of the closed snapshot, or nothing
            assert len(emitted) <= int(closed)
        assert all(fact["iteration"] == latest_started for fact in emitted)


@pytest.mark.sentence("health.history-invents-nothing")
@PROPERTY
@given(STREAMS, st.data())
def test_historical_messages_never_change_a_fact(
    observations: list[dict[str, Any]], data: st.DataObject
) -> None:
    where = data.draw(st.integers(0, len(observations)), label="insert at")
    loaded = [*observations[:where], history(7), *observations[where:]]
    assert reduce(SESSION, loaded) == reduce(SESSION, observations)


@pytest.mark.sentence("health.nullable")
@pytest.mark.parametrize("measurement", MEASUREMENTS)
def test_every_measurement_is_nullable(measurement: str) -> None:
    examples = Path(__file__).resolve().parents[2] / "schemas" / "examples"
    fact = json.loads((examples / "session-health.fact.json").read_text(encoding="utf-8"))
    for view in ("turn", "rolling"):  # gauges are the session's, the same in both views
        assert set(fact[view]) == set(MEASUREMENTS)
        fact[view][measurement] = None
    assert VALIDATOR.validate("session-health.fact", fact) == []
