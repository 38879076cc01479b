"""The seeds' closed value sets and nullable members, as the validator holds them: each
allowed value accepted, a value outside the set refused at its JSON path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_contracts.validation.validator import default_validator

EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"


def _example(doctype: str) -> Any:
    return json.loads((EXAMPLES / f"{doctype}.json").read_text(encoding="utf-8"))


def _paths(doctype: str, document: Any) -> list[str]:
    return [finding.path for finding in default_validator().validate(doctype, document)]


@pytest.mark.sentence("feedback.test-outcomes")
@pytest.mark.parametrize("outcome", ["passed", "failed", "not_run"])
def test_a_test_outcome_is_passed_failed_or_not_run(outcome: str) -> None:
    progress = _example("session-feedback.progress")
    progress["tests"] = [{"name": "durability", "outcome": outcome}]
    assert _paths("session-feedback.progress", progress) == []
    progress["tests"][0]["reference"] = "ci/run/42"  # "with optional reference"
    assert _paths("session-feedback.progress", progress) == []


@pytest.mark.sentence("feedback.test-outcomes")
@pytest.mark.parametrize("outcome", ["skipped", "error", "PASSED", ""])
def test_any_other_test_outcome_is_refused_at_its_path(outcome: str) -> None:
    progress = _example("session-feedback.progress")
    progress["tests"] = [{"name": "durability", "outcome": outcome}]
    assert "$.tests[0].outcome" in _paths("session-feedback.progress", progress)


@pytest.mark.sentence("feedback.coverage-values")
@pytest.mark.parametrize("coverage", ["complete", "partial", "unknown"])
def test_usage_coverage_is_complete_partial_or_unknown(coverage: str) -> None:
    usage = _example("session-feedback.usage")
    usage["coverage"] = coverage
    assert _paths("session-feedback.usage", usage) == []


@pytest.mark.sentence("feedback.coverage-values")
@pytest.mark.parametrize("coverage", ["full", "none", "Partial"])
def test_any_other_coverage_is_refused_at_its_path(coverage: str) -> None:
    usage = _example("session-feedback.usage")
    usage["coverage"] = coverage
    assert "$.coverage" in _paths("session-feedback.usage", usage)


@pytest.mark.sentence("recap.schema-version")
@pytest.mark.parametrize("version", [0, 2, "1", 1.5])
def test_a_snapshot_schema_version_other_than_1_is_refused(version: Any) -> None:
    snapshot = _example("session-recap.snapshot")
    assert _paths("session-recap.snapshot", snapshot) == []
    snapshot["schemaVersion"] = version
    assert "$.schemaVersion" in _paths("session-recap.snapshot", snapshot)
