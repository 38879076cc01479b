"""Producers written from docs/ alone, in JavaScript, pass our fixtures and certify.

Each folder under tests/producers/ named ``js*`` was written by an engineer who read only
README.md, docs/, schemas/ and the public fixtures (docs/third-party-findings.md lists what
the docs lacked then, and the docs now say it). They keep our docs honest: a change to a
rule that the docs do not carry breaks this test. Without node on the machine the test
says so and skips; under CI it fails instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_process import producer_report

pytestmark = pytest.mark.integration  # certifies Node.js producer processes

PRODUCERS = Path(__file__).resolve().parents[1] / "producers"
# Each producer, and how many golden fixtures of its declared contracts it must pass, so
# that a run skipping everything cannot pass.
DECLARED_FIXTURES = {
    "js": 60,
    "js_feedback": 80,
    "js_health": 80,
    "js_redaction": 70,
    "js_runrecord": 70,
}


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed (CI needs it for the JavaScript producers)")
        pytest.skip("node is not installed: the JavaScript producers cannot run")
    return node


@pytest.mark.parametrize("folder", sorted(DECLARED_FIXTURES))
def test_a_producer_written_from_the_docs_passes_its_golden_fixtures(
    folder: str, tmp_path: Path
) -> None:
    producer = f"{_node()} {PRODUCERS / folder / 'producer.mjs'}"
    summary = producer_report("golden check", producer, tmp_path)["summary"]
    assert summary["failed"] == summary["errored"] == 0, summary
    assert summary["passed"] >= DECLARED_FIXTURES[folder], summary


@pytest.mark.parametrize("folder", sorted(DECLARED_FIXTURES))
def test_a_producer_written_from_the_docs_is_certified(folder: str, tmp_path: Path) -> None:
    producer = f"{_node()} {PRODUCERS / folder / 'producer.mjs'}"
    result = producer_report("certify", producer, tmp_path)
    assert result["summary"]["certified"] is True, result["summary"]
    assert result["summary"]["evidence"]["agreed"] >= 400, result["summary"]
