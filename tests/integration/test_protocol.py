"""The producer protocol harness survives producers that crash, hang, flood or lie."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from session_contracts.conformance.judge.runner import HarnessError, ProducerProcess

PRODUCERS = Path(__file__).resolve().parents[1] / "producers"
EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"
REFERENCE = [sys.executable, "-m", "session_contracts", "reference-producer"]
CASE = {"operation": "health.reduce", "input": {"session_id": "s", "observations": []}}


def misbehaving(mode: str) -> list[str]:
    return [sys.executable, str(PRODUCERS / "misbehaving.py"), mode]


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("crash", "producer_crashed"),
        ("hang", "timeout"),
        ("partial_line", "timeout"),
        ("huge_line", "line_too_long"),
        ("invalid_json", "invalid_json"),
        ("wrong_seq", "wrong_seq"),
        ("bad_outcome", "invalid_response"),
    ],
)
def test_each_fault_is_an_errored_outcome_with_its_code(mode: str, code: str) -> None:
    with ProducerProcess(misbehaving(mode), timeout=1.5, max_line_bytes=1 << 20) as producer:
        producer.start()
        outcome = producer.run(1, CASE)
    assert (outcome.outcome, outcome.error_code) == ("errored", code)
    assert outcome.message


def test_a_broken_producer_is_restarted_for_the_next_case() -> None:
    with ProducerProcess(misbehaving("crash"), timeout=2) as producer:
        producer.start()
        first = producer.run(1, CASE)
        second = producer.run(2, CASE)
    assert [first.error_code, second.error_code] == ["producer_crashed", "producer_crashed"]
    assert producer.restarts == 1


def test_stderr_flood_neither_blocks_nor_grows_without_bound() -> None:
    with ProducerProcess(misbehaving("flood_stderr"), timeout=20) as producer:
        producer.start()
        outcome = producer.run(1, CASE)
        tail = producer.stderr_tail()
    assert outcome.outcome == "result"
    assert len(tail) <= 64 * 1024


def test_skips_keep_their_reason() -> None:
    with ProducerProcess(misbehaving("polite"), timeout=5) as producer:
        producer.start()
        outcome = producer.run(7, CASE)
    assert (outcome.outcome, outcome.reason) == ("skipped", "not implemented yet")


def test_a_producer_that_never_answers_start_is_a_harness_error() -> None:
    producer = ProducerProcess(misbehaving("no_start"), timeout=1, start_timeout=1.5)
    with pytest.raises(HarnessError) as caught:
        producer.start()
    assert caught.value.findings[0].code == "producer_start_failed"
    assert caught.value.exit_status == 2


def test_a_missing_program_is_a_harness_error() -> None:
    with pytest.raises(HarnessError) as caught:
        ProducerProcess("/no/such/producer --flag").start()
    assert caught.value.findings[0].code == "producer_not_started"


def test_the_whole_process_group_is_ended(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    env = dict(os.environ, CHILD_PID_FILE=str(pid_file))
    with ProducerProcess(misbehaving("spawns_child"), timeout=1, env=env) as producer:
        producer.start()
        assert producer.run(1, CASE).error_code == "timeout"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        # A zombie still answers kill(0); check its state.
        status = Path(f"/proc/{child}/status")
        if not status.exists() or "zombie" in status.read_text():
            return
        time.sleep(0.05)
    pytest.fail(f"grandchild {child} survived the producer's end")


def test_the_reference_producer_speaks_the_protocol() -> None:
    stream = json.loads((EXAMPLES / "health-observation.stream.json").read_text())
    with ProducerProcess(REFERENCE, timeout=30) as producer:
        info = producer.start()
        assert "health.reduce" in info.operations
        outcome = producer.run(1, {"operation": "health.reduce", "input": stream})
        rejected = producer.run(
            2,
            {
                "operation": "document.roundtrip",
                "input": {"doctype": "run-record.span", "document": {"span_id": 1}},
            },
        )
    assert outcome.outcome == "result"
    assert [fact["iteration"] for fact in outcome.output["facts"]] == [1, 1]
    assert rejected.outcome == "rejected"
    assert rejected.rejection is not None
    assert rejected.rejection["path"] == "$.document.duration_ms"
