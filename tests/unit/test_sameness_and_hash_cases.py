"""The generated explicit cases reach the rule each names: a pair meant to differ in one
member is decided by that rule (not refused by another), a reordered value is the same
value, and every hash case holds keys or numbers on which two forms write other bytes.
"""

from __future__ import annotations

from typing import Any

import pytest

from session_contracts.conformance.judge.cases import hashes, sameness
from session_contracts.conformance.judge.cases.operations import recap_event
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.hashes.snapshot import record_hash
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes


def _codes(case_input: Any) -> list[Any]:
    responses = HANDLERS["feedback.run"](case_input)["responses"]
    return [r.get("code") or r.get("replayed") for r in responses[:-1]]


def test_each_usage_member_pair_is_a_conflicting_same_time_sample() -> None:
    # Seed 001: "Older observations and conflicting same-time samples are rejected
    # across the session, including counter resets."
    same, *pairs = sameness.usage_sample_cases()
    assert _codes(same.input) == [False, False, False]
    members = set(sameness.object_members("session-feedback.schema.json", "Usage"))
    reached = {case.why.split("member ")[-1].rstrip(")") for case in pairs}
    assert reached == members - {"observed_at_unix_ms", "scope"}
    for case in pairs:
        assert _codes(case.input) == [False, False, "usage_conflicting_sample", False], case.why


def test_each_request_member_pair_conflicts_and_the_reordered_body_replays() -> None:
    # Seed 001: "Duplicate requests replay their original receipt."
    same, *pairs = sameness.replay_cases()
    assert _codes(same.input) == [False, False, True]
    for case in pairs:
        assert _codes(case.input) == [False, False, "request_conflict", True], case.why


def _trends(case_input: Any) -> list[Any]:
    return [f["turn"]["diagnostic_trend"] for f in HANDLERS["health.reduce"](case_input)["facts"]]


def test_each_diagnostic_member_decides_whether_a_return_oscillates() -> None:
    # Seed 000: "Returning to the set seen two observations earlier, after a different
    # set, is oscillating."
    same, *pairs = sameness.diagnostic_cases()
    assert _trends(same.input)[-1] == "oscillating"
    members = sameness.object_members("health-observation.schema.json", "DiagnosticMeasurement")
    assert len(pairs) == 2 * len(members)
    for returning, between in zip(pairs[::2], pairs[1::2], strict=True):
        assert _trends(returning.input)[-1] != "oscillating", returning.why
        assert _trends(between.input)[-1] == "oscillating", between.why


def test_each_tool_call_spelling_is_inline_and_the_reordered_calls_a_reference() -> None:
    # Seed 003: "When a non-empty view is structurally identical to the provider-native
    # tool_calls array, the response stores parsed_tool_calls_ref."
    cases = sameness.tool_call_cases()
    handler = HANDLERS["runrecord.provider_call_response"]
    referenced = ["parsed_tool_calls_ref" in handler(case.input) for case in cases]
    assert referenced == [True, True] + [False] * (len(cases) - 2)


def test_every_key_pair_sorts_differently_by_utf8_and_utf16() -> None:
    # docs/hashing.md section 2 (UTF-16 code units) against section 6 (UTF-8 bytes).
    clashes = hashes.order_clashes()
    assert clashes
    for first, second in clashes:
        value = {second: 1, first: 2}
        assert canonical_bytes(value) != harn_canonical_bytes(value).replace(b"2.0", b"2")
        assert first.encode("utf-8") < second.encode("utf-8")
        assert first.encode("utf-16-be") > second.encode("utf-16-be")


@pytest.mark.parametrize("number", hashes.numbers_where_forms_differ(), ids=repr)
def test_every_threshold_number_is_written_differently_by_some_form(number: float) -> None:
    # docs/hashing.md section 6, rule 5: the notation thresholds of Harn's form.
    named = any(repr(number) == repr(n) for n in hashes.NAMED_NUMBERS)
    assert named or len(set(hashes.number_forms(number).values())) > 1


def test_the_record_hash_vector_of_the_docs() -> None:
    # docs/hashing.md 4.1: a record hash is RFC 8785, UTF-16 key order, 2.0 written 2.
    payload = {"callId": "c1", "toolName": "calc", "input": {"\ue000": 1, "😀": 2.0, "n": 1e-7}}
    event = recap_event(3, "sess-hash", "run-1", "turn-1", None, "tool_call", payload)
    assert b'"input":{"n":1e-7,"\xf0\x9f\x98\x80":2,"\xee\x80\x80":1}' in canonical_bytes(event)
    assert record_hash(event) == (
        "sha256:46dcab4307979f7ced90a61a385ecca69402956ed06ad63f3c30af1ba9e00e21"
    )


def test_every_hash_case_is_a_valid_available_recap() -> None:
    # A case the reference refuses would judge nothing (recap.hashes skips it).
    for case in hashes.hash_cases():
        assert HANDLERS["recap.project"](case.input)["state"] == "available", case.why


def test_each_exchange_path_joins_by_call_id_across_the_turn_only() -> None:
    # Seed 002: "A recap groups visible prompts, assistant text, tool exchanges, plans,
    # progress, and terminal facts by prompt turn and agent-loop iteration."
    exchanges = []
    for case in sameness.exchange_cases():
        turns = HANDLERS["recap.project"](case.input)["snapshot"]["turns"]
        tools = [t for turn in turns for it in turn["iterations"] for t in it["tools"]]
        exchanges.append(len(tools))
    assert exchanges == [1, 1, 1, 2]
