"""A producer written from docs/ alone, in JavaScript, passes our recap fixtures.

tests/producers/js/ was written by an engineer who read only README.md, docs/,
schemas/ and the public fixtures (docs/third-party-findings.md lists what the
docs lacked then). It keeps our protocol docs honest: a change to the recap
rules that the docs do not carry breaks this test. Without node on the
machine the test says so and skips; under CI it fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # certifies a Node.js producer process

PRODUCER = Path(__file__).resolve().parents[1] / "producers" / "js" / "producer.mjs"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed (CI needs it for the JavaScript producer)")
        pytest.skip("node is not installed: the JavaScript producer cannot run")
    return node


def test_the_javascript_producer_passes_every_recap_fixture(tmp_path: Path) -> None:
    node = _node()
    report = tmp_path / "golden.json"
    done = subprocess.run(
        [sys.executable, "-m", "session_contracts", "golden", "check",
         "--producer", f"{node} {PRODUCER}", "--report-json", str(report)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = json.loads(report.read_text())["summary"]
    assert summary["failed"] == summary["errored"] == 0, summary
    assert summary["passed"] >= 60, summary  # every recap fixture, not a skipped run
