"""The protocol expresses what the seeds make observable.

An operation builds the A2A status update from a live task (seed 000), and a
recap case presents a journal that is not available, a runtime that refuses
the read and damaged rows (seed 002). Each defect in tests/producers/conditions.py
is caught by certify at default settings, by the check that names its rule,
and by a golden fixture; the reference passes both.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from producers import conditions

from session_contracts.conformance.judge.golden import (
    default_fixtures_dir,
    judge,
    load_corpus,
)
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.protocol import Rejected
from session_contracts.conformance.reference.producer import HANDLERS

pytestmark = pytest.mark.integration  # certifies and golden-checks producer processes

FIXTURES = default_fixtures_dir()
CORPUS = load_corpus(FIXTURES)
CONDITIONS = Path(__file__).resolve().parents[1] / "producers" / "conditions.py"
CHECK_OF = {
    "health.a2a_status_update": "health.a2a-preserves-state",
    "recap.project": "recap.unavailable-states",
}


def _outcome_of(handler: Callable[[Any], Any], case_input: Any) -> CaseOutcome:
    try:
        output = handler(copy.deepcopy(case_input))
    except Rejected as rejected:
        return CaseOutcome(0, "rejected", rejection={"code": rejected.code, "path": rejected.path})
    return CaseOutcome(0, "result", output=json.loads(json.dumps(output)))


def test_the_reference_answers_each_condition_with_the_seed_reason() -> None:
    base = next(c for c in CORPUS.cases if c.name == "recap/journal-unavailable").input
    healthy = {key: base[key] for key in ("events", "query")}
    assert HANDLERS["recap.project"](healthy)["state"] == "available"
    reasons = {
        "journal": HANDLERS["recap.project"]({**healthy, "journal": "unavailable"}),
        "admission": HANDLERS["recap.project"]({**healthy, "admission": "refused"}),
        "damaged": HANDLERS["recap.project"]({**healthy, "damagedEventIds": [1]}),
    }
    assert {k: v.get("reason") for k, v in reasons.items()} == {
        "journal": "journal_unavailable",
        "admission": "admission_terminal",
        "damaged": "projection_failed",
    }


@pytest.mark.parametrize(
    ("member", "value", "path"),
    [
        ("journal", "gone", "$.journal"),
        ("admission", "maybe", "$.admission"),
        ("damagedEventIds", [0], "$.damagedEventIds[0]"),
        ("damagedEventIds", "3", "$.damagedEventIds"),
    ],
)
def test_an_unknown_condition_is_rejected(member: str, value: Any, path: str) -> None:
    base = next(c for c in CORPUS.cases if c.name == "recap/journal-unavailable").input
    with pytest.raises(Rejected) as caught:
        HANDLERS["recap.project"]({"events": base["events"], "query": base["query"], member: value})
    assert caught.value.path == path


def test_the_update_keeps_the_task_state_and_the_fact() -> None:
    case = next(c for c in CORPUS.cases if c.name == "health/a2a-preserves-task-state").input
    update = HANDLERS["health.a2a_status_update"](copy.deepcopy(case))
    assert update["status"] == case["task"]["status"]
    assert update["metadata"]["harn"]["sessionHealth"] == case["fact"]
    assert update["final"] is False


@pytest.mark.parametrize("defect", sorted(conditions.DEFECTS))
def test_golden_catches_the_defect(defect: str) -> None:
    operation, handler = conditions.DEFECTS[defect]
    caught = [
        case.name
        for case in CORPUS.cases
        if case.operation == operation
        and judge(case, _outcome_of(handler, case.input), root=FIXTURES).code
        in ("answer_differs", "wrong_outcome")
    ]
    assert caught, f"no {operation} fixture catches {defect}"


def _certify(producer: list[str], check: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "session_contracts", "certify", "--check", check,
         "--report-json", str(report), "--failures-dir", str(tmp_path / "failures"),
         *(["--producer", " ".join(producer)] if producer else [])],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert report.is_file(), done.stdout + done.stderr
    return done.returncode, json.loads(report.read_text())


@pytest.mark.parametrize("defect", sorted(conditions.DEFECTS))
def test_certify_catches_the_defect_with_the_check_of_its_rule(defect: str, tmp_path: Path) -> None:
    operation, _ = conditions.DEFECTS[defect]
    check = CHECK_OF[operation]
    status, report = _certify([sys.executable, str(CONDITIONS), defect], check, tmp_path)
    assert status == 1, report
    (result,) = [r for r in report["checks"] if r["id"] == check]
    assert result["status"] == "failed", result


@pytest.mark.parametrize("check", sorted(CHECK_OF.values()))
def test_the_reference_passes_the_condition_checks(check: str, tmp_path: Path) -> None:
    status, report = _certify([], check, tmp_path)
    assert status == 0, report
    (result,) = [r for r in report["checks"] if r["id"] == check]
    assert result["status"] == "passed"
    assert result["evidence"]["agreed"] == result["evidence"]["judged"] > 0
