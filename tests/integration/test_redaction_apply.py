"""The ``redaction.apply`` check: the reference passes it, and a producer missing any
one detector (tests/producers/redaction_defects.py) fails it at default settings
(25 examples, seed 0), with the detector named."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from redaction_defects import defective_handler

from session_contracts.conformance.judge.certify import Trial, run_check
from session_contracts.conformance.judge.checks import check_by_id
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.protocol import Handler, Rejected
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.redaction.policy import default_policy, extended_policy

DEFECTS = Path(__file__).resolve().parents[1] / "producers" / "redaction_defects.py"
CHECK = check_by_id("redaction.apply")
OPERATIONS = ("redaction.apply",)
CONTRACTS = ("session-recap",)
DETECTORS = sorted(
    [f"default/{kind}" for kind in (*default_policy().kinds, "url_credentials", "sensitive_key")]
    + [f"extended/{kind}" for kind in extended_policy().kinds]
)


def _in_process(handler: Handler) -> Any:
    """A runner that answers each trial with ``handler`` as the protocol would."""

    def runner(trial: Trial) -> CaseOutcome:
        try:
            return CaseOutcome(0, "result", output=handler(trial.input))
        except Rejected as rejected:
            rejection: Mapping[str, Any] = {
                "code": rejected.code,
                "path": rejected.path,
                "message": str(rejected),
            }
            return CaseOutcome(0, "rejected", rejection=rejection)

    return runner


def _run(handler: Handler, tmp_path: Path) -> Any:
    assert CHECK is not None
    return run_check(
        CHECK,
        _in_process(handler),
        contracts=CONTRACTS,
        operations=OPERATIONS,
        examples=25,
        seed=0,
        failures_dir=tmp_path,
    )


def test_the_reference_passes(tmp_path: Path) -> None:
    result = _run(HANDLERS["redaction.apply"], tmp_path)
    assert result.status == "passed", result
    assert result.evidence.agreed >= 300


@pytest.mark.parametrize("defect", DETECTORS)
def test_a_missing_detector_is_caught_and_named(defect: str, tmp_path: Path) -> None:
    result = _run(defective_handler(defect), tmp_path)
    assert result.status == "failed", (defect, result)
    policy, _, kind = defect.partition("/")
    assert f"{policy} policy" in result.message
    assert kind in result.message


def test_certify_catches_a_defect_end_to_end(tmp_path: Path) -> None:
    producer = shlex.join([sys.executable, str(DEFECTS), "extended/jwt"])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "session_contracts",
            "certify",
            "--producer",
            producer,
            "--check",
            "redaction.apply",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "redaction.apply" in done.stdout
    assert "jwt" in done.stdout
