"""GitHub workflow annotations: escaping, location, and the CLI's github format."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from session_contracts.ci_annotations import (
    annotations_wanted,
    finding_annotation,
    github_annotation,
)
from session_contracts.errors import Finding


def test_annotation_escapes_data_and_properties() -> None:
    line = github_annotation("error", "50% done\nnext", title="a:b,c", file="x,y.json", line=3)
    assert line == "::error file=x%2Cy.json,line=3,title=a%3Ab%2Cc::50%25 done%0Anext"


def test_annotation_without_properties() -> None:
    assert github_annotation("warning", "careful") == "::warning::careful"
    assert github_annotation("info", "fyi") == "::notice::fyi"


def test_finding_annotation_locates_file_and_line() -> None:
    finding = Finding("$.summary", "max_utf8_bytes", "too long", "shorten it").at("out.jsonl:12")
    line = finding_annotation(finding)
    assert line.startswith("::error file=out.jsonl,line=12,title=max_utf8_bytes at $.summary::")
    assert line.endswith("too long%0Ahint: shorten it")


def test_finding_from_stdin_has_no_file() -> None:
    finding = Finding("$", "invalid_json", "bad").at("-:4")
    assert finding_annotation(finding) == "::error title=invalid_json at $::bad"


def test_annotations_follow_github_actions_unless_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert annotations_wanted()
    assert not annotations_wanted("none")
    monkeypatch.delenv("GITHUB_ACTIONS")
    assert not annotations_wanted()
    assert annotations_wanted("github")


def test_check_prints_github_annotations(tmp_path: Path) -> None:
    captured = tmp_path / "captured.jsonl"
    captured.write_text('{"sessionId": 5}\n', encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "session_contracts",
            "check",
            str(captured),
            "--annotations",
            "github",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert lines, result.stdout
    assert all(f"file={captured}" in line and ",line=1," in line for line in lines)
