"""The command line: exit codes, JSON paths, never a traceback for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import run_cli as run

from session_contracts.cli import main
from session_contracts.conformance.judge.certify_cli import hypothesis_cache_directory

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "schemas" / "examples"


def test_doctypes_lists_every_document_type(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctypes"]) == 0
    out = capsys.readouterr().out
    assert "session-recap.snapshot" in out
    assert "run-record.tape-entry" in out
    assert main(["doctypes", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"name", "schema", "definition"} <= set(rows[0])


def test_validate_valid_file_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "session-feedback.usage.json"
    assert main(["validate", "session-feedback.usage", str(path)]) == 0


def test_validate_prints_every_error_with_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads((EXAMPLES / "session-feedback.usage.json").read_text())
    document |= {"cached_input_tokens": 5000, "source": "x" * 129, "surprise": 1}
    path = tmp_path / "usage.json"
    path.write_text(json.dumps(document))
    assert main(["validate", "session-feedback.usage", str(path)]) == 1
    out = capsys.readouterr().out
    said = [f"{path} $.cached_input_tokens:", "[not_greater_than]", "$.source:"]
    said += ["[max_utf8_bytes]", "$.surprise:", "[unknown_field]", "hint:"]
    assert [text for text in said if text not in out] == [], out


def test_validate_json_lines_and_json_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (EXAMPLES / "run-record.span.json").read_text().replace("\n", "")
    path = tmp_path / "spans.jsonl"
    path.write_text(f'{good}\n{{"span_id": "x"}}\n{good}\n')
    assert main(["validate", "run-record.span", str(path), "--format", "json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines
    assert all(line["source"] == f"{path}:2" for line in lines)
    assert {"code", "path", "message", "hint"} <= set(lines[0])


def test_validate_reads_stdin() -> None:
    result = run("validate", "session-recap.query", "-", stdin=b'{"session_id": "s", "limit": 9}')
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b'{"sessionId": "a", "sessionId": "b"}', "json_duplicate_key"),
        (b'{"sessionId": "a", "limit": NaN}', "json_non_finite_number"),
        (b'{"sessionId": "\\ud800"}', "json_lone_surrogate"),
        (b"[" * 10_000 + b"]" * 10_000, "json_too_deep"),
        (b'{"sessionId": ', "json_syntax"),
        (b"\xff\xfe", "json_not_utf8"),
    ],
)
def test_bad_input_is_a_finding_with_exit_1_and_no_traceback(payload: bytes, code: str) -> None:
    result = run("validate", "session-recap.query", "-", stdin=payload)
    assert result.returncode == 1
    assert f"[{code}]" in result.stdout.decode()
    assert b"Traceback" not in result.stderr + result.stdout


def test_a_50_mb_file_is_refused_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as handle:
        handle.write(b'{"sessionId": "')
        handle.write(b"a" * (50 * 1024 * 1024))
        handle.write(b'"}')
    result = run("validate", "session-recap.query", str(path))
    assert result.returncode == 1
    assert b"[json_too_large]" in result.stdout
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "no.such-type", "-"],
        ["validate", "session-recap.query", "/no/such/file.json"],
        ["validate"],
        ["roundtrip", "session-recap.query"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2_without_traceback(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert result.stderr.strip()


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "session-recap.envelope"],
        ["verify", "session-recap.envelope"],
        ["roundtrip", "session-recap.envelope"],
        ["canonicalize"],
        ["hash"],
    ],
)
def test_a_file_with_no_document_is_a_finding_that_says_so(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Zero documents never pass, and a failing job says why: the same finding everywhere.
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    assert main([*command, str(empty)]) == 1
    captured = capsys.readouterr()
    assert f"$: {empty} holds no document [no_documents]" in captured.out + captured.err
    assert "hint: give at least one JSON document" in captured.out + captured.err


def test_roundtrip_prints_the_re_encoded_json(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "session-recap.envelope.json"
    assert main(["roundtrip", "session-recap.envelope", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(path.read_text())


def test_roundtrip_rejects_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "span.json"
    document = json.loads((EXAMPLES / "run-record.span.json").read_text())
    document["parent_id"] = document.pop("parent_span_id")
    path.write_text(json.dumps(document))
    assert main(["roundtrip", "run-record.span", str(path)]) == 1
    assert "$.parent_id" in capsys.readouterr().err


def test_certify_leaves_the_working_directory_as_it_was(tmp_path: Path) -> None:
    """Hypothesis's caches go to the user's cache folder, not ./.hypothesis of the checkout
    certify runs in."""
    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir()
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("HYPOTHESIS_STORAGE_DIRECTORY", "XDG_CACHE_HOME", "LOCALAPPDATA")
    }
    certify = ["certify", "--check", "recap.semantics", "--examples", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "session_contracts", *certify],
        cwd=cwd,
        env={**env, "HOME": str(home)},
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert list(cwd.iterdir()) == []
    assert (home / ".cache" / "session-contracts" / "hypothesis").is_dir()


def test_the_hypothesis_cache_directory_follows_the_environment(tmp_path: Path) -> None:
    chosen = str(tmp_path / "chosen")
    assert hypothesis_cache_directory({"HYPOTHESIS_STORAGE_DIRECTORY": chosen}) == Path(chosen)
    assert hypothesis_cache_directory({"XDG_CACHE_HOME": str(tmp_path)}) == (
        tmp_path / "session-contracts" / "hypothesis"
    )
    assert hypothesis_cache_directory({}) == (
        Path.home() / ".cache" / "session-contracts" / "hypothesis"
    )


def test_quickstart_runs_the_main_job(tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="120")
    result = subprocess.run(
        [sys.executable, "-m", "session_contracts", "quickstart", "--root", str(REPO)],
        capture_output=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert b"example(s) valid and round-tripped" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["golden", "check", "--case", "health/*", "--junit"],
        ["check", "schemas/examples/run-record.span.json", "--junit"],
        ["golden", "check", "--case", "health/*", "--report-html"],
        ["certify", "--check", "recap.limit", "--examples", "1", "--report-html"],
    ],
)
def test_a_report_path_that_cannot_be_written_is_a_usage_error(
    args: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(repo)
    status = main([*args, str(tmp_path / "missing-folder" / "report.xml")])
    err = capsys.readouterr().err
    assert status == 2
    assert "[io_error]" in err
    assert "missing-folder" in err
    assert "internal error" not in err
