"""A verdict depends only on the producer: flaky answers are failed as flaky, every answer a
producer can send gets a verdict and a report, a passing run prints no error, and a loaded
machine does not change the certificate (docs/checks.md, "Outcomes", "Time budgets")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cli_process import run_cli_text

from session_contracts.conformance.judge.runner import ProducerProcess

pytestmark = pytest.mark.integration  # certifies producer processes

PRODUCERS = Path(__file__).resolve().parents[1] / "producers"
UNRELIABLE = PRODUCERS / "unreliable.py"
HARN_LIKE = PRODUCERS / "harn_like.py"
from unreliable import HOSTILE_ENDINGS, HOSTILE_LINES  # noqa: E402


def unreliable(mode: str) -> str:
    return f"{sys.executable} {UNRELIABLE} {mode}"


def certify(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "report.json"
    done = run_cli_text("certify", *args, "--report-json", str(report), cwd=tmp_path, timeout=900)
    assert "internal error" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert report.exists(), done.stdout + done.stderr
    return done, json.loads(report.read_text(encoding="utf-8"))


def test_an_input_answered_wrongly_the_first_time_only_is_flaky(tmp_path: Path) -> None:
    done, report = certify(
        tmp_path, "--producer", unreliable("first_time_wrong"), "--contract", "session-health",
        "--examples", "2", "--report-html", str(tmp_path / "report.html"),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "NOT CERTIFIED" in done.stdout
    flaky = [check for check in report["checks"] if check["status"] == "flaky"]
    assert {check["id"] for check in flaky} >= {"health.semantics", "determinism.same-bytes"}
    assert report["summary"]["flaky"] == len(flaky)
    assert report["summary"]["failed"] == 0
    for check in flaky:
        # The evidence is the faulty call: its wrong answer, not the later right one.
        assert check["answer"]["outcome"] == "result"
        assert check["answer"]["output"].get("wrong") is True, check["id"]
        assert "wrong" not in check["later_answer"]["output"]
        assert check["reference_answer"] != check["answer"]
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "status-flaky" in page
    assert "later answer to the same case" in page
    assert "no difference at any JSON path" not in page


def test_a_flaky_case_that_passes_when_replayed_is_not_fixed(tmp_path: Path) -> None:
    _done, report = certify(
        tmp_path, "--producer", unreliable("first_time_wrong"), "--check", "health.semantics",
        "--examples", "1",
    )  # fmt: skip
    saved = next(c["saved_case"] for c in report["checks"] if c["id"] == "health.semantics")
    assert json.loads(Path(tmp_path, saved).read_text(encoding="utf-8"))["status"] == "flaky"
    # The reference answers it rightly: the fault does not repeat, and that is no fix.
    replayed = run_cli_text("certify", "--replay", saved, cwd=tmp_path, timeout=300)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "NOT REPRODUCED" in replayed.stdout
    assert "FIXED" not in replayed.stdout


def test_every_seventh_answer_wrong_is_not_certified(tmp_path: Path) -> None:
    done, report = certify(
        tmp_path, "--producer", unreliable("every_seventh_wrong"), "--contract", "session-health",
        "--examples", "2",
    )  # fmt: skip
    assert done.returncode == 1
    statuses = {check["status"] for check in report["checks"]}
    assert "flaky" in statuses, statuses


def test_integers_beyond_64_bits_changed_fail_extensions_verbatim(tmp_path: Path) -> None:
    done, report = certify(
        tmp_path, "--producer", unreliable("big_integers_off_by_one"),
        "--check", "extensions.verbatim",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    (check,) = report["checks"]
    assert check["status"] == "failed", check
    assert "extensions changed" in check["message"]


@pytest.mark.parametrize("kind", sorted(HOSTILE_LINES) + list(HOSTILE_ENDINGS))
def test_every_hostile_answer_gets_a_verdict_and_a_report(tmp_path: Path, kind: str) -> None:
    done, report = certify(
        tmp_path, "--producer", unreliable(f"hostile:{kind}"), "--check", "schema.output",
        "--check", "extensions.verbatim", "--check", "recap.semantics", "--examples", "1",
        "--report-html", str(tmp_path / "report.html"), "--junit", str(tmp_path / "junit.xml"),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert not report["summary"]["certified"]
    assert all(check["status"] != "passed" for check in report["checks"]), report["checks"]
    assert (tmp_path / "report.html").exists()
    assert (tmp_path / "junit.xml").exists()


def test_a_passing_run_prints_no_error_or_warning(tmp_path: Path) -> None:
    # The recap checks send damaged and unavailable journals: the reference's logs of them
    # while computing the expected answers are the harness's business.
    done, _report = certify(tmp_path, "--contract", "session-recap", "--examples", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    for line in done.stdout.splitlines():
        lowered = line.lower()
        assert not lowered.startswith(("error", "warning")), line
        assert "journal corrupt" not in lowered, line
        assert "journal unavailable" not in lowered, line


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """``count`` processes that burn a core each, always stopped."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


def test_a_loaded_machine_does_not_change_the_certificate(tmp_path: Path) -> None:
    # Twice the cores in busy loops: the 32,770-event case of recap.limit needs several
    # seconds of the reference then, and the budget follows the reference's time.
    with busy_loops(2 * (os.cpu_count() or 1)):
        done, report = certify(
            tmp_path, "--check", "recap.limit", "--check", "health.semantics", "--examples", "2"
        )
        harn, harn_report = certify(
            tmp_path, "--producer", f"{sys.executable} {HARN_LIKE}", "--contract", "session-health",
            "--examples", "2",
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["summary"]["errored"] == 0
    assert harn.returncode == 0, harn.stdout + harn.stderr
    assert harn_report["summary"]["errored"] == 0


MISBEHAVING = PRODUCERS / "misbehaving.py"
CASE = {"operation": "health.reduce", "input": {}}


def test_a_budget_is_cpu_time_for_a_producer_that_computes() -> None:
    # Six busy loops on the machine: 1.5 s of CPU takes several seconds of wall time, and a
    # 2 s budget still holds; a producer that waits instead is timed out at 2 s.
    with busy_loops(3 * (os.cpu_count() or 1)):
        command = [sys.executable, str(MISBEHAVING), "computes_1_5_s"]
        with ProducerProcess(command, timeout=2.0) as producer:
            producer.start()
            computed = producer.run(1, CASE)
        with ProducerProcess([sys.executable, str(MISBEHAVING), "hang"], timeout=2.0) as producer:
            producer.start()
            waited = producer.run(1, CASE)
    assert computed.outcome == "result", computed
    assert (waited.outcome, waited.error_code) == ("errored", "timeout")


def test_a_case_past_the_floor_gets_its_whole_budget_asked_for_then() -> None:
    # The whole budget (the reference's time for the case) is asked for only when the
    # producer has not answered within the first timeout, and the wait runs to it.
    asked: list[float] = []

    def full_budget(seconds: float) -> Callable[[], float]:
        def ask() -> float:
            asked.append(seconds)
            return seconds

        return ask

    command = [sys.executable, str(MISBEHAVING), "computes_1_5_s"]
    with ProducerProcess(command, timeout=0.5) as producer:
        producer.start()
        slow = producer.run(1, CASE, timeout=0.5, full_budget=full_budget(20.0))
        too_slow = producer.run(2, CASE, timeout=0.5, full_budget=full_budget(0.2))
    with ProducerProcess([sys.executable, str(MISBEHAVING), "polite"], timeout=5) as producer:
        producer.start()
        fast = producer.run(1, CASE, timeout=5, full_budget=full_budget(99.0))
    assert slow.outcome == "result", slow
    # A whole budget below the first timeout does not shorten it.
    assert (too_slow.outcome, too_slow.error_code) == ("errored", "timeout")
    assert "within 0.5 s" in too_slow.message
    assert fast.outcome != "errored", fast
    assert asked == [20.0, 0.2]
