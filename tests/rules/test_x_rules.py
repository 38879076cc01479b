"""Edge cases of every x- rule, on both sides of each limit, in both engines."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from session_contracts.validation.validator import DocumentValidator

EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"
VALIDATOR = DocumentValidator()
ENGINES = [pytest.param(False, id="fast"), pytest.param(True, id="reference")]


def example(doctype: str) -> Any:
    return json.loads((EXAMPLES / f"{doctype}.json").read_text())


def renamed_codes(
    doctype: str, member: str, written_as: str, reference: bool
) -> set[tuple[str, str]]:
    """The findings for the doctype's example with its ``member`` written as ``written_as``."""
    document = example(doctype)
    document[written_as] = document.pop(member)
    return codes(doctype, document, reference)


def codes(doctype: str, document: Any, reference: bool) -> set[tuple[str, str]]:
    return {(f.path, f.code) for f in VALIDATOR.validate(doctype, document, reference=reference)}


@pytest.fixture(params=ENGINES)
def reference(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


# -- x-maxUtf8Bytes: "Summary is at most 2,048 UTF-8 bytes" (seed 001) -------------------------
@pytest.mark.sentence("feedback.summary-limit")
@pytest.mark.parametrize(
    ("summary", "valid"),
    [
        ("a" * 2048, True),
        ("a" * 2049, False),
        ("é" * 1024, True),  # 2 bytes each: 2,048 bytes in 1,024 characters
        ("é" * 1024 + "a", False),  # 1,025 characters, 2,049 bytes
        ("\U0001f602" * 512, True),
        ("\U0001f602" * 512 + "a", False),
    ],
)
def test_progress_summary_limit_counts_utf8_bytes(
    summary: str, valid: bool, reference: bool
) -> None:
    document = example("session-feedback.progress") | {"summary": summary}
    expected = set() if valid else {("$.summary", "max_utf8_bytes")}
    assert codes("session-feedback.progress", document, reference) == expected


@pytest.mark.sentence("feedback.list-and-entry-limits")
@pytest.mark.parametrize(
    ("field", "limit"),
    [("completed", 1024), ("blockers", 1024)],
)
def test_completed_and_blocker_text_limit_is_1024_bytes(
    field: str, limit: int, reference: bool
) -> None:
    document = example("session-feedback.progress")
    document[field] = ["ü" * (limit // 2)]
    assert codes("session-feedback.progress", document, reference) == set()
    document[field] = ["ü" * (limit // 2) + "x"]
    assert codes("session-feedback.progress", document, reference) == {
        (f"$.{field}[0]", "max_utf8_bytes")
    }


@pytest.mark.sentence("feedback.list-and-entry-limits")
def test_label_test_name_and_reference_limits(reference: bool) -> None:
    document = example("session-feedback.progress")
    document["artifacts"] = [{"label": "x" * 256, "reference": "r" * 1024}]
    document["tests"] = [{"name": "n" * 256, "outcome": "passed", "reference": "r" * 1024}]
    assert codes("session-feedback.progress", document, reference) == set()
    document["artifacts"] = [{"label": "x" * 257, "reference": "r" * 1025}]
    document["tests"] = [{"name": "n" * 257, "outcome": "failed", "reference": "r" * 1025}]
    assert codes("session-feedback.progress", document, reference) == {
        ("$.artifacts[0].label", "max_utf8_bytes"),
        ("$.artifacts[0].reference", "max_utf8_bytes"),
        ("$.tests[0].name", "max_utf8_bytes"),
        ("$.tests[0].reference", "max_utf8_bytes"),
    }


@pytest.mark.sentence("feedback.list-and-entry-limits")
def test_each_list_has_at_most_eight_entries(reference: bool) -> None:
    document = example("session-feedback.progress")
    document["completed"] = ["done"] * 8
    assert codes("session-feedback.progress", document, reference) == set()
    document["completed"] = ["done"] * 9
    assert codes("session-feedback.progress", document, reference) == {("$.completed", "max_items")}


@pytest.mark.sentence("feedback.usage-label-limits")
def test_usage_labels_limit(reference: bool) -> None:
    document = example("session-feedback.usage")
    document |= {"source": "s" * 128, "counter_id": "c" * 128, "source_ref": "r" * 1024}
    assert codes("session-feedback.usage", document, reference) == set()
    document |= {"source": "s" * 129, "counter_id": "ç" * 65, "source_ref": "r" * 1025}
    assert codes("session-feedback.usage", document, reference) == {
        ("$.source", "max_utf8_bytes"),
        ("$.counter_id", "max_utf8_bytes"),
        ("$.source_ref", "max_utf8_bytes"),
    }


# -- x-jsSafeInteger: "Integers must fit JavaScript's safe integer range" ------------------------
@pytest.mark.sentence("feedback.safe-integers")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (9007199254740991, set()),
        (9007199254740992, {"unsafe_integer"}),  # "maximum" says the same: reported once
        (2**63, {"unsafe_integer"}),
        (4000.0, {"integer_literal_required"}),
        (0, set()),
        (-1, {"minimum"}),
        (True, {"wrong_type"}),
        ("4000", {"wrong_type"}),
    ],
)
def test_token_counts_are_safe_integer_literals(
    value: Any, expected: set[str], reference: bool
) -> None:
    document = example("session-feedback.usage")
    document["output_tokens"] = value
    found = codes("session-feedback.usage", document, reference)
    assert {code for path, code in found if path == "$.output_tokens"} == expected


# -- cross-field rules of usage --------------------------------------------------------------------
@pytest.mark.sentence("feedback.input-or-output-required")
def test_at_least_one_of_input_and_output_tokens(reference: bool) -> None:
    document = example("session-feedback.usage")
    for key in ("input_tokens", "output_tokens", "cached_input_tokens"):
        del document[key]
    assert codes("session-feedback.usage", document, reference) == {("$", "require_any_of")}
    assert codes("session-feedback.usage", document | {"output_tokens": 0}, reference) == set()
    assert codes("session-feedback.usage", document | {"input_tokens": 1}, reference) == set()


@pytest.mark.sentence("feedback.input-or-output-required")
@pytest.mark.parametrize(("cached", "valid"), [(4000, True), (4001, False), (0, True)])
def test_cached_input_is_a_subset_of_input(cached: int, valid: bool, reference: bool) -> None:
    document = example("session-feedback.usage") | {"cached_input_tokens": cached}
    expected = set() if valid else {("$.cached_input_tokens", "not_greater_than")}
    assert codes("session-feedback.usage", document, reference) == expected


@pytest.mark.sentence("feedback.input-or-output-required")
def test_cached_input_needs_input(reference: bool) -> None:
    document = example("session-feedback.usage")
    del document["input_tokens"]
    assert codes("session-feedback.usage", document, reference) == {("$.input_tokens", "required")}


# -- x-ratio: "A rate contains its numerator, denominator, and value" ------------------------------
def fact_with(view: str, member: str, value: Any) -> Any:
    document = example("session-health.fact")
    document[view][member] = value
    return document


@pytest.mark.sentence("health.rate-null-not-zero")
@pytest.mark.parametrize(
    ("rate", "expected"),
    [
        ({"numerator": 1, "denominator": 3, "value": 1 / 3}, set()),
        ({"numerator": 1, "denominator": 3, "value": 0.3333}, {"ratio_mismatch"}),
        ({"numerator": 0, "denominator": 5, "value": 0}, set()),
        ({"numerator": 0, "denominator": 0, "value": 0}, {"ratio_undefined"}),  # no zero rates
        ({"numerator": 4, "denominator": 3, "value": 1}, {"not_greater_than", "ratio_mismatch"}),
    ],
)
def test_rate_value_is_numerator_over_denominator(
    rate: dict[str, Any], expected: set[str], reference: bool
) -> None:
    document = fact_with("turn", "tool_call_success_rate", rate)
    found = {c for _, c in codes("session-health.fact", document, reference)}
    assert found == expected


@pytest.mark.sentence("health.rate-null-not-zero")
def test_a_zero_denominator_rate_is_refused_at_its_denominator(reference: bool) -> None:
    document = fact_with(
        "rolling", "nonzero_command_exit_rate", {"numerator": 0, "denominator": 0, "value": 0.0}
    )
    assert codes("session-health.fact", document, reference) == {
        ("$.rolling.nonzero_command_exit_rate.denominator", "ratio_undefined")
    }


@pytest.mark.sentence("health.actual-to-expected-absent")
def test_actual_to_expected_is_null_until_a_positive_expectation(reference: bool) -> None:
    wall = {"milliseconds": 10, "sample_count": 1, "expected": None, "actual_to_expected": 1.0}
    document = fact_with("turn", "turn_wall_time", wall)
    assert codes("session-health.fact", document, reference) == {
        ("$.turn.turn_wall_time.actual_to_expected", "ratio_must_be_null")
    }
    zero = {"milliseconds": 0.0, "source": "prior_measured_turns", "sample_count": 2}
    document = fact_with("turn", "turn_wall_time", dict(wall, expected=zero))
    assert codes("session-health.fact", document, reference) == {
        ("$.turn.turn_wall_time.actual_to_expected", "ratio_must_be_null")
    }
    # Null (Harn's writer) and absent (Harn's schema allows it) are both unmeasured.
    for unmeasured in ({"actual_to_expected": None}, {}):
        loose = {"milliseconds": 10, "sample_count": 1, "expected": zero} | unmeasured
        document = fact_with("turn", "turn_wall_time", loose)
        assert codes("session-health.fact", document, reference) == set()
    positive = {"milliseconds": 5.0, "source": "prior_measured_turns", "sample_count": 2}
    missing = {"milliseconds": 10, "sample_count": 1, "expected": positive}
    document = fact_with("turn", "turn_wall_time", missing)
    assert codes("session-health.fact", document, reference) == {
        ("$.turn.turn_wall_time.actual_to_expected", "ratio_missing")
    }
    document = fact_with("turn", "turn_wall_time", dict(missing, actual_to_expected=2.0))
    assert codes("session-health.fact", document, reference) == set()


@pytest.mark.sentence("health.prose-balance-nulls")
def test_characters_per_tool_call_is_null_without_a_tool_call(reference: bool) -> None:
    balance = {"prose_characters": 10, "tool_calls": 0, "characters_per_tool_call": 0}
    document = fact_with("rolling", "prose_to_tool_balance", balance)
    assert codes("session-health.fact", document, reference) == {
        ("$.rolling.prose_to_tool_balance.characters_per_tool_call", "ratio_must_be_null")
    }


@pytest.mark.sentence("health.heuristics-empty", "health.no-default-steering")
def test_heuristics_is_an_empty_object(reference: bool) -> None:
    document = example("session-health.fact") | {"heuristics": {"steer": True}}
    assert codes("session-health.fact", document, reference) == {
        ("$.heuristics.steer", "unknown_field")
    }


# -- x-sameValue ----------------------------------------------------------------------------------
@pytest.mark.sentence("health.acp-envelope")
def test_acp_notification_session_id_matches_its_payload(reference: bool) -> None:
    document = example("session-health.acp-notification")
    document["params"]["sessionId"] = "other"
    assert codes("session-health.acp-notification", document, reference) == {
        ("$.params.session_id", "same_value")
    }


@pytest.mark.sentence("health.acp-envelope", "health.session-gauges")
def test_acp_params_keep_the_facts_shared_gauges(reference: bool) -> None:
    document = example("session-health.acp-notification")
    document["params"]["rolling"]["diagnostic_trend"] = "regressing"
    assert codes("session-health.acp-notification", document, reference) == {
        ("$.params.rolling.diagnostic_trend", "same_value")
    }


def test_acp_replay_markers_agree(reference: bool) -> None:
    # Harn's replay marks both (write_jsonrpc_notification, mark_replayed_params).
    document = example("session-health.acp-notification")
    document["_harn"] = {"replayed": True}
    document["params"]["replayed"] = False
    assert codes("session-health.acp-notification", document, reference) == {
        ("$.params.replayed", "same_value")
    }


@pytest.mark.sentence("runrecord.tape-envelope")
def test_tape_envelope_execution_id_matches_its_payload(reference: bool) -> None:
    document = example("run-record.tape-entry")
    document["execution_id"] = None
    assert codes("run-record.tape-entry", document, reference) == {
        ("$.payload.execution_id", "same_value")
    }


# -- x-preferReference and the parsed_tool_calls rules (seed 003) ---------------------------------
@pytest.mark.sentence("runrecord.parsed-ref-when-identical", "runrecord.parsed-inline")
def test_identical_inline_parse_must_be_a_reference(reference: bool) -> None:
    document = example("run-record.provider-call-response")
    del document["parsed_tool_calls_ref"]
    document["tool_calls"] = [{"id": "t1", "name": "run", "arguments": {}}]
    document["parsed_tool_calls"] = copy.deepcopy(document["tool_calls"])
    assert codes("run-record.provider-call-response", document, reference) == {
        ("$.parsed_tool_calls", "prefer_reference")
    }
    document["parsed_tool_calls"][0]["arguments"] = {"x": 1}  # distinct: stays inline
    assert codes("run-record.provider-call-response", document, reference) == set()
    document["parsed_tool_calls"] = []  # empty: stays inline
    assert codes("run-record.provider-call-response", document, reference) == set()


@pytest.mark.sentence("runrecord.parsed-tool-calls")
def test_reference_and_inline_parse_together_are_refused(reference: bool) -> None:
    document = example("run-record.provider-call-response") | {"parsed_tool_calls": []}
    assert ("$", "not") in codes("run-record.provider-call-response", document, reference)


@pytest.mark.sentence("runrecord.parsed-ref-when-identical")
def test_reference_needs_non_empty_tool_calls(reference: bool) -> None:
    document = example("run-record.provider-call-response") | {"tool_calls": []}
    assert ("$.tool_calls", "min_items") in codes(
        "run-record.provider-call-response", document, reference
    )


# -- x-spanTree ------------------------------------------------------------------------------
@pytest.mark.sentence("runrecord.span-tree-join")
def test_span_tree_rules(reference: bool) -> None:
    document = example("run-record.evidence")
    spans = document["trace_spans"]
    spans[0]["parent_span_id"] = 8  # 3 -> 8 -> 3
    assert codes("run-record.evidence", document, reference) == {
        ("$.trace_spans[0].parent_span_id", "span_cycle")
    }
    spans[0]["parent_span_id"] = 99  # an open parent (seed 003: spans are completed spans)
    assert codes("run-record.evidence", document, reference) == set()
    spans[0]["parent_span_id"] = None
    spans[1]["span_id"] = 3
    found = codes("run-record.evidence", document, reference)
    assert ("$.trace_spans[1].span_id", "span_id_duplicate") in found


@pytest.mark.sentence("runrecord.execution-identity-gap")
def test_null_execution_id_needs_an_execution_identity_gap(reference: bool) -> None:
    document = example("run-record.evidence") | {"execution_id": None}
    assert codes("run-record.evidence", document, reference) == {("$.gaps", "contains")}
    document["gaps"] = [
        {"component": "flight_recording", "code": "persist_failed", "message": "disk full"}
    ]
    assert codes("run-record.evidence", document, reference) == {("$.gaps", "contains")}
    document["gaps"].append(
        {"component": "execution_identity", "code": "projection_invalid", "message": "old record"}
    )
    assert codes("run-record.evidence", document, reference) == set()


def test_flight_artifact_belongs_to_the_evidence_execution(reference: bool) -> None:
    """execution_id is the owner used by the run record, local spans, OpenTelemetry, and an
    optional flight artifact."""
    document = example("run-record.evidence")
    artifact = {
        "schema_version": 1,
        "execution_id": document["execution_id"],
        "format": "harn.flight.v1+json",
        "path": None,
        "content_hash": "blake3:" + "0f" * 32,
        "byte_length": 10,
        "retained_events": 1,
        "dropped_events": 0,
        "value_policy": "omitted",
    }
    document["flight_recording"] = artifact
    assert codes("run-record.evidence", document, reference) == set()
    artifact["execution_id"] = "hxe-another"
    assert codes("run-record.evidence", document, reference) == {
        ("$.flight_recording.execution_id", "same_value")
    }


@pytest.mark.sentence("runrecord.new-records-parent-span-id")
def test_legacy_parent_id_is_refused_by_the_write_contract(reference: bool) -> None:
    assert renamed_codes("run-record.span", "parent_span_id", "parent_id", reference) == {
        ("$.parent_id", "unknown_field"),
        ("$.parent_span_id", "required"),
    }


# -- x-inputAliases: "Both accept snake-case aliases for query fields" -----------------------------
def test_query_accepts_snake_case_aliases(reference: bool) -> None:
    query = {"session_id": "s", "run_id": "r", "turn_id": "t", "from_event_id": 3, "limit": 9}
    assert codes("session-recap.query", query, reference) == set()


def test_query_refuses_both_spellings_of_one_field(reference: bool) -> None:
    query = {"sessionId": "s", "session_id": "s"}
    assert codes("session-recap.query", query, reference) == {("$.session_id", "alias_conflict")}


def test_query_requires_session_id(reference: bool) -> None:
    assert codes("session-recap.query", {"limit": 3}, reference) == {("$.sessionId", "required")}


def test_snapshot_refuses_snake_case(reference: bool) -> None:
    assert renamed_codes("session-recap.snapshot", "contentHash", "content_hash", reference) == {
        ("$.content_hash", "unknown_field"),
        ("$.contentHash", "required"),
    }


def test_coverage_counts_are_not_bounded_by_one_another(reference: bool) -> None:
    """Harn's schema states no order between the counts, and its runtime writes pending > matched
    (rows beyond the read) and unassigned > matched: no x- rule may refuse them."""
    document = example("session-recap.snapshot")
    document["coverage"] = {
        "scanned": 2,
        "matched": 3,
        "pending": 4,
        "unassigned": 5,
        "truncated": True,
    }
    assert codes("session-recap.snapshot", document, reference) == set()


# -- seed rules no plain schema can say ---------------------------------------------------------
@pytest.mark.parametrize(
    ("gauge", "turn_value", "rolling_value"),
    [
        ("edits_since_verification", 2, 3),
        ("diagnostic_trend", "flat", "improving"),
        ("last_stop_class", "natural", None),
    ],
)
def test_health_gauges_are_shared_by_the_two_views(
    gauge: str, turn_value: Any, rolling_value: Any, reference: bool
) -> None:
    """Seed 000: "Edit count, diagnostic trend, and stop class are session gauges shared
    by the two views"."""
    document = example("session-health.fact")
    document["turn"][gauge] = turn_value
    document["rolling"][gauge] = turn_value
    assert codes("session-health.fact", document, reference) == set()
    document["rolling"][gauge] = rolling_value
    assert codes("session-health.fact", document, reference) == {
        (f"$.rolling.{gauge}", "same_value")
    }


def test_counts_and_rates_keep_their_own_population(reference: bool) -> None:
    """Only the three gauges are shared: a rate may differ between the views."""
    document = example("session-health.fact")
    document["turn"]["tool_call_success_rate"] = {"numerator": 1, "denominator": 1, "value": 1.0}
    document["rolling"]["tool_call_success_rate"] = {
        "numerator": 1,
        "denominator": 2,
        "value": 0.5,
    }
    assert codes("session-health.fact", document, reference) == set()


BOTH_STALE_CODES = {"stale_inconsistent", "stale_reasons_inconsistent"}


def _report_meta(**members: Any) -> dict[str, Any]:
    document = example("session-feedback.observation")
    document["progress"]["report"].update(members)
    return document


@pytest.mark.parametrize(
    ("match", "age", "stale", "reasons", "expected"),
    [
        (True, 900_000, False, [], set()),  # exactly 15 minutes is not beyond
        (True, 900_001, True, ["age_exceeded"], set()),
        (False, 0, True, ["contract_mismatch"], set()),
        (False, 900_001, True, ["age_exceeded", "contract_mismatch"], set()),  # any order
        (True, 900_001, False, [], {"stale_inconsistent", "stale_reasons_inconsistent"}),
        (
            True,
            60_000,
            True,
            ["age_exceeded"],
            {"stale_inconsistent", "stale_reasons_inconsistent"},
        ),
        (False, 0, True, [], {"stale_reasons_inconsistent"}),
        (True, 60_000, False, ["contract_mismatch"], {"stale_reasons_inconsistent"}),
    ],
)
def test_stale_is_a_contract_mismatch_or_an_age_beyond_15_minutes(
    match: bool, age: int, stale: bool, reasons: list[str], expected: set[str], reference: bool
) -> None:
    """Seed 001: "A contract mismatch or age beyond 15 minutes marks the report stale"."""
    document = _report_meta(contract_match=match, age_ms=age, stale=stale, stale_reasons=reasons)
    found = codes("session-feedback.observation", document, reference)
    assert {code for _, code in found} == expected
    assert all(path.startswith("$.progress.report.stale") for path, _ in found)


def test_a_span_names_the_execution_that_owns_the_evidence(reference: bool) -> None:
    """Seed 003: "execution_id is the owner used by the run record, local spans,
    OpenTelemetry, and an optional flight artifact"."""
    document = example("run-record.evidence")
    owner = document["execution_id"]
    assert isinstance(owner, str)
    for span in document["trace_spans"]:
        span["metadata"]["harn.execution.id"] = owner
    assert codes("run-record.evidence", document, reference) == set()
    document["trace_spans"][1]["metadata"]["harn.execution.id"] = "hxe-another"
    assert codes("run-record.evidence", document, reference) == {
        ("$.trace_spans[1].metadata['harn.execution.id']", "same_value")
    }
    del document["trace_spans"][1]["metadata"]["harn.execution.id"]  # a span may omit it
    assert codes("run-record.evidence", document, reference) == set()
