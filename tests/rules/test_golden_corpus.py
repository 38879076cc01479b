"""The shipped golden corpus (conformance/fixtures/) is fresh and complete.

These tests are the fixtures' drift check: an expected file that no longer
equals the reference producer's answer fails here, like stale generated code
fails tests/cli/test_generate.py.  Completeness: every rule-bearing seed sentence
is covered by a fixture or says why no output can show it; every required
edge case has a fixture; every known single-defect producer fails one.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from producers import faulty

from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.judge.golden import (
    GoldenCase,
    default_fixtures_dir,
    judge,
    load_corpus,
)
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.protocol import Rejected
from session_contracts.conformance.reference.producer import HANDLERS

FIXTURES = default_fixtures_dir()
REPO = Path(__file__).resolve().parents[2]
CORPUS = load_corpus(FIXTURES)

# The edge cases the corpus must hold, each as a tag on at least one case.
REQUIRED_TAGS = {
    # recap
    "query-camel-case",
    "query-snake-case",
    "limit-default",
    "limit-clamp-low",
    "limit-clamp-high",
    "cursor",
    "empty-session",
    "session-missing",
    "unassigned-events",
    "pending-events",
    "zero-matching-facts",
    "run-filter",
    "turn-filter",
    "unknown-query-field",
    "truncated",
    "null-iteration-segment",
    "either-order-tool-join",
    "tool-call-without-id",
    "message-visibility",
    "tool-verification",
    "terminal-states",
    "trim",
    "blank",
    "integral-float",
    "stored-events",
    # health
    "null-rates",
    "oscillating-trend",
    "improving-trend",
    "regressing-trend",
    "flat-trend",
    "late-resolution",
    "abandoned-during-closeout",
    "terminal-outcome",
    "streaming-parse-excluded",
    "absent-exit-code",
    "verification-resets-edits",
    "wall-time-expectation",
    "prose-balance",
    # feedback
    "duplicate-replay",
    "client-info-replaced",
    "client-info-preserved",
    "progress-limits",
    "stale-report",
    "contract-mismatch",
    "raw-receipts-restricted",
    "safe-integer",
    # run records
    "legacy-parent-id",
    "historical-alias",
    "loop-state-complete",
    "loop-state-incomplete",
    "parsed-tool-calls-ref",
    "parsed-tool-calls-inline",
    "completion-receipt-null",
    "completion-receipt-present",
    "execution-identity-gap",
    "span-tree",
    "ttft-omitted",
    # redaction and documents
    "redaction-lookalike",
    "unknown-field-rejected",
    "extensions-preserved",
}


def _required_tags() -> set[str]:
    """The fixed list, plus one tag per usage rejection code, per missing
    reason and per pattern of the default redaction policy: read from the schemas and the policy,
    so a new code or detector needs a fixture too."""
    from session_contracts.redaction.policy import default_policy

    schema = json.loads((REPO / "schemas" / "session-feedback.schema.json").read_text())
    codes = schema["$defs"]["RejectionCode"]["enum"]
    reasons = schema["$defs"]["MissingReason"]["enum"]
    tags = set(REQUIRED_TAGS)
    tags |= {f"usage-rejection:{code}" for code in codes if code.startswith("usage_")}
    tags |= {f"missing-reason:{reason}" for reason in reasons}
    tags |= {f"redaction:{kind}" for kind in default_policy().kinds}
    return tags


# ----------------------------------------------------------------------------- the shipped corpus


def test_the_corpus_reads_cleanly() -> None:
    assert CORPUS.cases, "no golden case found"
    assert not CORPUS.problems, [p.render() for p in CORPUS.problems]
    assert not CORPUS.orphans, f"expected files no case uses: {CORPUS.orphans}"


@pytest.mark.parametrize("case", CORPUS.cases, ids=lambda c: c.name)
def test_fixture_is_fresh(case: GoldenCase) -> None:
    result = judge(case, reference_outcome(case.operation, case.input), root=FIXTURES)
    assert result.status == "passed", (
        f"{case.name}: {result.code}: {result.message}\n"
        + "\n".join(d.render() for d in result.differences)
        + "\nrun `session-contracts golden update` and review the diff"
    )


def _sentences() -> list[dict[str, Any]]:
    catalogue = json.loads((FIXTURES / "sentences.json").read_text(encoding="utf-8"))
    sentences: list[dict[str, Any]] = catalogue["sentences"]
    return sentences


def _normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("`", "")).strip()


def test_every_catalogued_sentence_is_quoted_from_its_seed(shared: Path) -> None:
    catalogue = json.loads((FIXTURES / "sentences.json").read_text(encoding="utf-8"))
    texts = {
        seed: _normalized((shared / "seeds" / entry["file"]).read_text(encoding="utf-8"))
        for seed, entry in catalogue["seeds"].items()
    }
    misquoted = [
        s["id"] for s in _sentences() if _normalized(s["text"]) not in texts[str(s["seed"])]
    ]
    assert not misquoted


def test_every_sentence_is_covered_by_a_fixture_or_says_why_not() -> None:
    sentences = _sentences()
    ids = [s["id"] for s in sentences]
    assert len(ids) == len(set(ids)), "sentence ids repeat"
    covered = {sentence for case in CORPUS.cases for sentence in case.covers}
    unknown = covered - set(ids)
    assert not unknown, f"cases cover sentences the catalogue lacks: {sorted(unknown)}"
    uncovered = [
        s["id"] for s in sentences if s["id"] not in covered and not s.get("not_by_fixture")
    ]
    assert not uncovered, f"sentences no fixture covers: {uncovered}"
    excused_yet_covered = [
        s["id"] for s in sentences if s.get("not_by_fixture") and s["id"] in covered
    ]
    assert not excused_yet_covered, "a covered sentence needs no excuse"


def test_every_seed_has_covered_sentences() -> None:
    covered = {sentence for case in CORPUS.cases for sentence in case.covers}
    seeds = {str(s["seed"]) for s in _sentences() if s["id"] in covered}
    assert seeds == {"000", "001", "002", "003"}


def test_every_required_edge_case_is_in_the_corpus() -> None:
    present = {tag for case in CORPUS.cases for tag in case.tags}
    missing = sorted(_required_tags() - present)
    assert not missing, f"edge cases without a fixture: {missing}"


def test_every_operation_has_fixtures() -> None:
    assert {case.operation for case in CORPUS.cases} == set(HANDLERS)


def test_every_fixture_is_an_explicit_case_of_a_check_that_judges_its_operation() -> None:
    # One evidence pool (docs/checks.md): each fixture is sent by certify as an explicit
    # case of a check of its operation whose judge compares the whole answer with the
    # reference's, so a producer certify passes also passes golden check.
    from session_contracts.conformance.judge import judges
    from session_contracts.conformance.judge.checks import CHECKS

    whole_answer = {
        judges.judge_semantics,
        judges.judge_roundtrip_identity,
        judges.judge_redaction_apply,
    }
    sent: dict[str, list[str]] = {}
    for check in CHECKS:
        for explicit in check.explicit_cases():
            if explicit.fixture:
                assert check.judge in whole_answer, (check.id, explicit.fixture)
                assert explicit.operation == check.operation, (check.id, explicit.fixture)
                sent.setdefault(explicit.fixture, []).append(check.id)
    operations = {case.name: case.operation for case in CORPUS.cases}
    left_out = sorted(set(operations) - set(sent))
    assert not left_out, f"golden fixtures certify never sends: {left_out}"
    assert set(sent) == set(operations)
    assert all(len(checks) == 1 for checks in sent.values()), sent


def _outcome_of(handler: Callable[[Any], Any], case: GoldenCase) -> CaseOutcome:
    try:
        output = handler(copy.deepcopy(case.input))
    except Rejected as rejected:
        return CaseOutcome(0, "rejected", rejection={"code": rejected.code, "path": rejected.path})
    return CaseOutcome(0, "result", output=json.loads(json.dumps(output)))


@pytest.mark.parametrize(
    "defect", sorted(d for d, (_, handler) in faulty.DEFECTS.items() if handler is not None)
)
def test_the_corpus_catches_every_known_defect(defect: str) -> None:
    operation, handler = faulty.DEFECTS[defect]
    cases = [case for case in CORPUS.cases if case.operation == operation]
    # Caught means a wrong answer, not a broken fixture (a missing expected
    # file would fail every case and prove nothing).
    caught = [
        case.name
        for case in cases
        if judge(case, _outcome_of(handler, case), root=FIXTURES).code
        in (
            "answer_differs",
            "wrong_outcome",
            # a rejection for the wrong reason (docs/protocol.md, Rejections)
            "rejection_code_unknown",
            "rejection_path_differs",
            "rejection_class_differs",
        )
    ]
    assert caught, f"no {operation} fixture catches the defect {defect}"


def test_every_excuse_names_places_that_exist() -> None:
    missing = []
    for sentence in _sentences():
        why = sentence.get("not_by_fixture", "")
        for file, name in re.findall(r"(tests/[\w/]+\.py)::(\w+)", why):
            path = REPO / file
            if not path.is_file() or f"def {name}(" not in path.read_text(encoding="utf-8"):
                missing.append(f"{sentence['id']}: {file}::{name}")
        pattern = r"((?:docs|conformance|session_contracts|schemas)/[\w/.-]+\.(?:md|py|json))"
        for file in re.findall(pattern, why):
            if not (REPO / file).is_file():
                missing.append(f"{sentence['id']}: {file}")
    assert not missing


def test_the_sentence_coverage_page_is_current() -> None:
    from session_contracts.conformance.judge.golden import coverage_markdown

    catalogue = json.loads((FIXTURES / "sentences.json").read_text(encoding="utf-8"))
    page = REPO / "docs" / "sentence-coverage.md"
    assert page.read_text(encoding="utf-8") == coverage_markdown(CORPUS, catalogue), (
        "run `session-contracts golden coverage > docs/sentence-coverage.md`"
    )
