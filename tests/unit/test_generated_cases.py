"""The generated explicit cases (conformance/judge/cases/limits.py, cases/redaction.py and
the built-in member names of cases/explicit.py) reach the rules they name.

A case is decisive only if a producer that gets the rule wrong answers it differently:
these tests check that from the cases themselves (a text past a byte limit is within
it in characters, a canary matches its own pattern only, every built-in name is sent),
and tests/integration/test_defects.py checks it against producers with one rule broken.
"""

from __future__ import annotations

import re

import pytest

from session_contracts.conformance.judge.cases.explicit import (
    BUILTIN_MEMBER_NAMES,
)
from session_contracts.conformance.judge.cases.limits import (
    WIDTHS,
    feedback_limit_cases,
    sized_texts,
)
from session_contracts.conformance.judge.cases.redaction import alone_canaries
from session_contracts.conformance.judge.checks import check_by_id
from session_contracts.jsontext.wire import dumps_wire, loads_wire
from session_contracts.redaction.canaries import canary_secrets
from session_contracts.redaction.engine import redact_text
from session_contracts.redaction.policy import default_policy


@pytest.mark.parametrize("limit", [1, 2, 64, 128, 256, 1024, 2048])
def test_sized_texts_meet_and_pass_the_limit_in_bytes_not_characters(limit: int) -> None:
    # feedback.list-and-entry-limits: "completed/blocker text is at most 1,024 bytes;
    # labels/test names 256 bytes" (bytes of UTF-8, not characters).
    texts = sized_texts(limit)
    for what, text, within in texts:
        size = len(text.encode("utf-8"))
        assert (size <= limit) == within, what
        assert size in ((limit,) if within else (limit + 1, limit + 2, limit + 3)), what
    past = [text for _, text, within in texts if not within]
    # Every width is present; all but the ASCII text fit the limit in characters, and
    # the 4-byte one (two UTF-16 units a character) in UTF-16 units too.
    assert {max(len(c.encode("utf-8")) for c in text) for text in past} == set(WIDTHS)
    if limit >= 4:
        in_characters = [t for t in past if len(t) <= limit]
        assert len(in_characters) == len(past) - 1
        emoji = next(t for t in past if WIDTHS[4] in t and not t.startswith("a" * (limit - 1)))
        assert len(emoji.encode("utf-16-le")) // 2 <= limit


# (member path of a checkpoint request, its limit in bytes) as seed 001 states them.
_SEED_LIMITS = {
    ("$.progress.summary", 2048),  # feedback.summary-limit
    ("$.progress.completed[0]", 1024),  # feedback.list-and-entry-limits
    ("$.progress.artifacts[0].label", 256),
    ("$.progress.artifacts[0].reference", 1024),
    ("$.progress.tests[0].name", 256),
    ("$.usage.source", 128),  # feedback.usage-label-limits
    ("$.usage.counter_id", 128),
    ("$.usage.source_ref", 1024),
}
_WHY = re.compile(r"session-feedback\.checkpoint (\S+) \(x-maxUtf8Bytes (\d+)\)")


def test_every_byte_limit_the_feedback_seed_states_is_found_in_the_checkpoint() -> None:
    # feedback.summary-limit, feedback.list-and-entry-limits, feedback.usage-label-limits.
    found = {
        (match.group(1), int(match.group(2)))
        for case in feedback_limit_cases()
        if (match := _WHY.match(case.why))
    }
    assert found >= _SEED_LIMITS


def test_every_item_limit_of_progress_is_met_and_passed() -> None:
    # feedback.list-and-entry-limits: "Each list has at most eight entries".
    whys = [case.why for case in feedback_limit_cases() if "maxItems" in case.why]
    for member in ("completed", "blockers", "artifacts", "tests"):
        for count in (8, 9):
            assert any(f"$.progress.{member} (maxItems 8): {count} items" in w for w in whys)


def test_every_phase_is_sent_and_near_misses_are_refused() -> None:
    # feedback.phases: "Phases: starting, implementing, testing, waiting_user, blocked,
    # ready_for_review."
    whys = [case.why for case in feedback_limit_cases() if "$.progress.phase = " in case.why]
    for phase in ("starting", "implementing", "testing", "waiting_user", "blocked"):
        assert any(f"= {phase!r}: a value of its enum" in w for w in whys), phase
    assert any("'Testing'" in w and "not a value" in w for w in whys)
    assert any("' testing'" in w and "not a value" in w for w in whys)


def test_each_default_pattern_has_a_canary_no_other_pattern_catches() -> None:
    # recap.redaction / runrecord.redaction: redacted "through Harn's active redaction
    # policy": a producer lacking any one pattern of it must leak that pattern's canary.
    policy = default_policy()
    alone = alone_canaries()
    assert set(alone) == set(policy.kinds)
    for kind, canary in alone.items():
        assert canary_secrets()[kind] in redact_text(canary, policy.disable(kind)).text, kind


@pytest.mark.parametrize("check_id", ["redaction.canaries", "redaction.recap-canaries"])
def test_each_pattern_alone_is_a_case_of_both_canary_checks(check_id: str) -> None:
    whys = [case.why for case in check_by_id(check_id).explicit_cases()]
    for kind in default_policy().kinds:
        assert any(w.startswith(f"the {kind} pattern alone") for w in whys), kind


def test_every_built_in_name_is_sent_and_every_closed_object_gets_one() -> None:
    # recap.reject-unknown-fields: "A writer must reject unknown fields".
    cases = check_by_id("closed.unknown-field-rejected").explicit_cases()
    ordinary = [c for c in cases if "an unknown member at" in c.why]
    built_in = [c for c in cases if "a member named" in c.why]
    assert len(built_in) == len(ordinary)
    sent = {name for name in BUILTIN_MEMBER_NAMES for c in built_in if repr(name) in c.why}
    assert sent == set(BUILTIN_MEMBER_NAMES)


def test_a_proto_member_survives_the_wire_as_a_plain_member() -> None:
    # A JSON writer that assigned members (obj[key] = value) would drop __proto__.
    document = {"coverage": {"__proto__": {"polluted": True}, "constructor": 1}}
    assert b'"__proto__":{"polluted":true}' in dumps_wire(document)
    assert loads_wire(dumps_wire(document)) == document
