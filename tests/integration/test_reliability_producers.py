"""Hostile producers: descendants that escape the process group, and producers
that cannot be restarted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from session_contracts.conformance.judge.runner import ProducerProcess, descendants

pytestmark = pytest.mark.integration  # certifies misbehaving producer processes

CASE = {"operation": "health.reduce", "input": {"session_id": "s", "observations": []}}

# A well-behaved health producer, with a hook run before the loop and at each case.
PRODUCER = textwrap.dedent(
    """
    import json, os, subprocess, sys, time
    from pathlib import Path

    STATE = Path(sys.argv[1])
    MODE = sys.argv[2]

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    if MODE == "escapes":
        # A grandchild in its own session: not in our process group any more.
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
        )
        with open(STATE / "pids", "a") as handle:
            handle.write(f"{child.pid}\\n")
    if MODE == "orphans":
        # A double fork: the grandchild calls setsid and its parent exits at once.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open(STATE / "pids", "a") as handle:
                    handle.write(f"{os.getpid()}\\n")
                time.sleep(120)
            os._exit(0)
    starts = STATE / "starts"
    count = int(starts.read_text()) if starts.exists() else 0
    starts.write_text(str(count + 1))
    if MODE == "crash_then_mute" and count >= 1:
        time.sleep(120)  # never answers start again
    for raw in sys.stdin:
        command = json.loads(raw)
        if command["cmd"] == "start":
            send({"protocol_version": 1, "contracts": ["session-health"],
                  "operations": ["health.reduce"],
                  "implementation": {"name": MODE, "version": "0", "language": "python"}})
        elif command["cmd"] == "stop":
            sys.exit(0)
        elif MODE == "crash_then_mute":
            sys.exit(3)
        else:
            send({"seq": command["seq"], "outcome": "skipped", "reason": "test"})
    """
)


def producer_command(tmp_path: Path, mode: str) -> list[str]:
    script = tmp_path / "producer.py"
    script.write_text(PRODUCER)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    return [sys.executable, str(script), str(state), mode]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def wait_for_pids(path: Path) -> list[int]:
    for _ in range(500):
        if path.exists() and path.read_text().endswith("\n"):
            return [int(line) for line in path.read_text().split()]
        time.sleep(0.01)
    raise AssertionError("the producer never wrote its child's pid")


linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@linux_only
@pytest.mark.parametrize("mode", ["escapes", "orphans"])
def test_a_descendant_that_leaves_the_process_group_is_ended(tmp_path: Path, mode: str) -> None:
    command = producer_command(tmp_path, mode)
    with ProducerProcess(command, timeout=5) as producer:
        producer.start()
        assert producer.run(1, CASE).outcome == "skipped"
        (pid,) = wait_for_pids(tmp_path / "state" / "pids")
        assert alive(pid)
    for _ in range(100):  # a killed process may take a moment to vanish from /proc
        if not alive(pid):
            break
        time.sleep(0.01)
    assert not alive(pid)


@linux_only
def test_descendants_follow_parent_links_and_the_token() -> None:
    env = {**os.environ, "SESSION_CONTRACTS_PRODUCER_TOKEN": "t-123"}
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], env=env, start_new_session=True
    )
    try:
        assert child.pid in descendants(os.getpid())
        # A root with no children: only the token can find it.
        assert child.pid in descendants(-1, "t-123")
        assert child.pid not in descendants(-1, "another")
    finally:
        child.kill()
        child.wait()


def test_a_producer_that_cannot_restart_is_given_up_once(tmp_path: Path) -> None:
    command = producer_command(tmp_path, "crash_then_mute")
    with ProducerProcess(command, timeout=5, start_timeout=30) as producer:
        producer.start()
        first = producer.run(1, CASE)
        second = producer.run(2, CASE)
        third = producer.run(3, CASE)
    assert first.error_code == "producer_crashed"
    assert second.error_code == "producer_restart_failed"
    assert "could not be restarted" in second.message
    # No third start attempt: the rest is errored with the reason at once.
    assert third.error_code == "producer_gave_up"
    assert third.message == second.message
    assert (tmp_path / "state" / "starts").read_text() == "2"
    # A producer that started quickly once gets a short deadline for a restart.
    assert producer.restart_timeout() < 30


def test_restarts_are_bounded_per_run(tmp_path: Path) -> None:
    crash = [sys.executable, "-c", CRASH_EVERY_CASE]
    with ProducerProcess(crash, timeout=5) as producer:
        producer.max_restarts = 2
        producer.start()
        codes = [producer.run(seq, CASE).error_code for seq in range(1, 6)]
    assert codes[:3] == ["producer_crashed"] * 3
    assert codes[3:] == ["producer_gave_up"] * 2
    assert producer.restarts == 2


CRASH_EVERY_CASE = textwrap.dedent(
    """
    import json, sys
    for raw in sys.stdin:
        if json.loads(raw)["cmd"] == "start":
            print(json.dumps({"protocol_version": 1, "contracts": ["session-health"],
                              "operations": ["health.reduce"],
                              "implementation": {"name": "c", "version": "0",
                                                 "language": "python"}}), flush=True)
        else:
            sys.exit(3)
    """
)


def test_certify_writes_its_reports_when_the_producer_cannot_restart(tmp_path: Path) -> None:
    command = " ".join(producer_command(tmp_path, "crash_then_mute"))
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "session_contracts",
            "certify",
            "--producer",
            command,
            "--contract",
            "session-health",
            "--examples",
            "2",
            "--report-json",
            str(report),
            "--junit",
            str(junit),
            "--failures-dir",
            str(tmp_path / "failures"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert "NOT CERTIFIED" in run.stdout
    body = json.loads(report.read_bytes())
    assert junit.exists()
    ran = [c for c in body["checks"] if c["status"] != "skipped"]
    assert ran
    assert all(c["status"] == "errored" for c in ran)
    codes = {c["message"].split(":")[0] for c in ran}
    assert codes <= {"producer_crashed", "producer_restart_failed", "producer_gave_up"}
    assert "producer_gave_up" in codes
    assert (tmp_path / "state" / "starts").read_text() == "2"


@linux_only
def test_the_measure_at_a_case_start_finds_what_the_full_look_found(tmp_path: Path) -> None:
    # The quick measure every case takes reads the producer's own child lists; an
    # orphan that left its tree is measured once a full look (at a deadline) found it.
    with ProducerProcess(producer_command(tmp_path, "orphans"), timeout=5) as producer:
        producer.start()
        assert producer.run(1, CASE).outcome == "skipped"
        (orphan,) = wait_for_pids(tmp_path / "state" / "pids")
        assert orphan not in producer.measured_processes(every_process=False)
        full = producer.measured_processes()
        assert orphan in full
        assert producer.measured_processes(every_process=False) == full
    apart = tmp_path / "escapes"
    apart.mkdir()
    with ProducerProcess(producer_command(apart, "escapes"), timeout=5) as producer:
        producer.start()
        (child,) = wait_for_pids(apart / "state" / "pids")
        # Still a descendant by its parent link, though in a session of its own.
        assert child in producer.measured_processes(every_process=False)
        assert producer.measured_processes(every_process=False) == producer.measured_processes()
