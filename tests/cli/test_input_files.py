"""A file a user names is read only if it is a regular file: a FIFO or a device is
refused with a stable code at once, never waited on (a typo must not hang CI)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_process import run_cli_text

from session_contracts.errors import UsageError
from session_contracts.input_files import open_regular_file, read_regular_file


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_not_waited_on(fifo: Path) -> None:
    with pytest.raises(UsageError) as caught:
        open_regular_file(str(fifo))
    assert caught.value.findings[0].code == "input_not_regular"


@pytest.mark.parametrize(
    ("name", "code"),
    [("missing.json", "input_not_found"), (".", "input_is_directory")],
)
def test_missing_files_and_folders(tmp_path: Path, name: str, code: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_regular_file(str(tmp_path / name), 10)
    assert caught.value.findings[0].code == code


def test_a_device_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        read_regular_file("/dev/zero", 10)
    assert caught.value.findings[0].code == "input_not_regular"


def test_a_regular_file_is_read_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"0123456789")
    assert read_regular_file(str(path), 4) == b"0123"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli_text(*args, cwd=cwd, timeout=60)  # a hang fails the test, not the suite


def test_every_command_refuses_a_fifo_with_exit_2(fifo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "captured"
    folder.mkdir()
    os.mkfifo(folder / "inside.jsonl")
    for args in (
        ["validate", "session-recap.query", str(fifo)],
        ["roundtrip", "session-recap.query", str(fifo)],
        ["canonicalize", str(fifo)],
        ["hash", str(fifo)],
        ["verify", "session-recap.snapshot", str(fifo)],
        ["check", str(fifo)],
        ["check", str(folder)],
        ["certify", "--replay", str(fifo)],
        ["certify", "--check", "schema.output", "--baseline", str(fifo)],
        ["recap", "--journal", str(tmp_path / "j.sqlite"), "--session", "s", "--policy", str(fifo)],
    ):
        run = _cli(*args, cwd=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        said = run.stdout + run.stderr
        assert "input_not_regular" in said or "not a regular file" in said, args


def test_a_baseline_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.txt"
    baseline.write_bytes(b"\xff\xfe not text")
    run = _cli(
        "certify", "--check", "schema.output", "--examples", "1", "--baseline", str(baseline),
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert "baseline_unreadable" in run.stdout + run.stderr
    assert "internal error" not in run.stderr
