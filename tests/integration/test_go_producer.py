"""A run-record producer written from docs/ alone, in Go, passes our fixtures and certify.

tests/producers/go_runrecord/ was written by an engineer who read only README.md, docs/,
schemas/ and the public fixtures, and probed the reference as a black box
(tests/producers/go_runrecord/FINDINGS.md lists what the docs lacked). It plants one
defect at a time (GO_RUNRECORD_DEFECT); every one of its twelve is asserted caught at
default settings, under the check of the rule it breaks (five were missed at first: the
rules were reached only through document.roundtrip and redaction.apply, which it does not
declare). Without go on the machine the test says so and skips; under CI it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_process import producer_report

pytestmark = pytest.mark.integration  # builds and certifies a Go producer process

SOURCE = Path(__file__).resolve().parents[1] / "producers" / "go_runrecord"
# How many golden fixtures of its declared operations it must pass, so that a run
# skipping everything cannot pass.
DECLARED_FIXTURES = 79
# The planted defects certify catches at default settings, and the check that fails.
CAUGHT_DEFECTS = {
    "workflow_empty_id_accepted": "runrecord.semantics",
    "run_id_relabel_allowed": "runrecord.semantics",
    "spans_drop_links": "runrecord.semantics",
    "span_cycle_at_last_walked": "runrecord.semantics",
    "null_receipt_skipped": "runrecord.semantics",
    "loop_state_first_block": "runrecord.response-semantics",
    "ref_compared_as_text": "runrecord.reference-when-identical",
    "execution_id_uppercase_accepted": "runrecord.semantics",
    "span_owner_non_string_ignored": "runrecord.semantics",
    "sensitive_key_suffix_apikey_missing": "runrecord.response-semantics",
    "ascii_word_boundary": "runrecord.response-semantics",
    "call_id_limit_off_by_one": "runrecord.response-semantics",
}


@pytest.fixture(scope="module")
def producer(tmp_path_factory: pytest.TempPathFactory) -> str:
    go = shutil.which("go")
    if go is None:
        if os.environ.get("CI"):
            pytest.fail("go is not installed (CI needs it for the Go producer)")
        pytest.skip("go is not installed: the Go producer cannot be built")
    out = tmp_path_factory.mktemp("go_runrecord")
    binary = out / "go_runrecord"
    built = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=SOURCE, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-4000:]
    return str(binary)


def _without_defect() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "GO_RUNRECORD_DEFECT"}


def test_the_go_producer_passes_its_golden_fixtures(producer: str, tmp_path: Path) -> None:
    summary = producer_report("golden check", producer, tmp_path, env=_without_defect())["summary"]
    assert summary["failed"] == summary["errored"] == 0, summary
    assert summary["passed"] >= DECLARED_FIXTURES, summary


def test_the_go_producer_is_certified(producer: str, tmp_path: Path) -> None:
    result = producer_report("certify", producer, tmp_path, env=_without_defect())
    assert result["summary"]["certified"] is True, result["summary"]
    assert result["summary"]["evidence"]["agreed"] >= 300, result["summary"]


@pytest.mark.parametrize("defect", sorted(CAUGHT_DEFECTS))
def test_certify_catches_a_planted_defect(producer: str, defect: str, tmp_path: Path) -> None:
    env = _without_defect() | {"GO_RUNRECORD_DEFECT": defect}
    result = producer_report("certify", producer, tmp_path, exit_status=1, env=env)
    assert result["summary"]["certified"] is False, result["summary"]
    failed = {check["id"] for check in result["checks"] if check["status"] == "failed"}
    assert CAUGHT_DEFECTS[defect] in failed, failed
