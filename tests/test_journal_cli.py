"""`session-contracts journal import` and `journal stats` (issue 13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from session_contracts.conformance.reference.journal import (
    JsonlTape,
    SqliteJournal,
    import_files,
    journal_stats,
)

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "session_contracts", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def tape_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    sys.path.insert(0, str(ROOT))
    try:
        from bench.bench_journal import make_session
    finally:
        sys.path.remove(str(ROOT))
    path = tmp_path_factory.mktemp("tape") / "session.jsonl"
    JsonlTape(path).write(make_session(40))
    return path.read_text().splitlines()


def test_import_and_stats(tmp_path: Path, tape_lines: list[str]) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.json"
    first.write_text("\n".join(tape_lines[:30]) + "\n")
    second.write_text("[" + ",".join(tape_lines[30:]) + "]")
    journal = tmp_path / "j.sqlite"
    result = cli("journal", "import", str(first), str(second), "--journal", str(journal))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{first}: imported 30 event(s)" in result.stdout
    assert f"{second}: imported 10 event(s)" in result.stdout
    stats = cli("journal", "stats", "--journal", str(journal), "--format", "json")
    assert stats.returncode == 0
    figures = json.loads(stats.stdout)
    assert figures["sessions"] == 1
    assert figures["events"] == 40
    assert (figures["firstEventId"], figures["lastEventId"]) == (1, 40)
    assert figures["bytes"] == journal.stat().st_size
    text = cli("journal", "stats", "--journal", str(journal))
    assert "events    40" in text.stdout


def test_a_file_with_one_bad_line_imports_nothing(tmp_path: Path, tape_lines: list[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    broken = json.loads(tape_lines[2])
    del broken["kind"]
    bad.write_text("\n".join([*tape_lines[:2], json.dumps(broken), *tape_lines[3:10]]) + "\n")
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(tape_lines[10:20]) + "\n")
    journal = tmp_path / "j.sqlite"
    result = cli("journal", "import", str(bad), str(good), "--journal", str(journal))
    assert result.returncode == 1
    assert f"{bad}:3" in result.stdout
    assert "[journal_corrupt]" in result.stdout
    assert f"{bad}: nothing imported" in result.stdout
    assert f"{good}: imported 10 event(s)" in result.stdout
    with SqliteJournal.open(journal) as opened:
        ids = [event.id for event in opened.iter_events()]
    assert ids == list(range(11, 21))


def test_a_bad_member_of_a_json_array_names_its_index(
    tmp_path: Path, tape_lines: list[str]
) -> None:
    broken = json.loads(tape_lines[1])
    broken["surprise"] = 1
    path = tmp_path / "events.json"
    path.write_text(json.dumps([json.loads(tape_lines[0]), broken]))
    (result,) = import_files([str(path)], tmp_path / "j.sqlite")
    assert result.imported == 0
    assert result.findings[0].path.startswith("$[1]")


def test_ids_already_present_import_nothing(tmp_path: Path, tape_lines: list[str]) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_text("\n".join(tape_lines[:5]) + "\n")
    journal = tmp_path / "j.sqlite"
    first, again = import_files([str(tape), str(tape)], journal)
    assert first.imported == 5
    assert again.imported == 0
    assert again.findings[0].code == "journal_write_rejected"
    assert journal_stats(journal)["events"] == 5


def test_stats_of_a_missing_journal_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("journal", "stats", "--journal", str(tmp_path / "none.sqlite"))
    assert result.returncode == 2
    assert "[journal_unavailable]" in result.stderr


def test_import_refuses_a_fifo(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    (result,) = import_files([str(fifo)], tmp_path / "j.sqlite")
    assert result.findings[0].code == "input_not_regular"
