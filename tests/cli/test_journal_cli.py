"""`session-contracts journal import`, `journal export` and `journal stats`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_cli_text as cli

from session_contracts.journal import (
    JsonlTape,
    SessionEvent,
    SqliteJournal,
    harn_record_hash,
    import_files,
    journal_stats,
    stored_events_of,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def session() -> list[SessionEvent]:
    """A 40-event session of the journal's own model (ids 1..40)."""
    sys.path.insert(0, str(ROOT))
    try:
        from bench.bench_journal import make_session
    finally:
        sys.path.remove(str(ROOT))
    events: list[SessionEvent] = make_session(40)
    return events


@pytest.fixture(scope="module")
def tape_lines(tmp_path_factory: pytest.TempPathFactory, session: list[SessionEvent]) -> list[str]:
    """The session's tape: one stored event a line."""
    path = tmp_path_factory.mktemp("tape") / "session.jsonl"
    JsonlTape(path).write(session)
    return path.read_text().splitlines()


def stored_in(journal: Path) -> list[dict[str, Any]]:
    with SqliteJournal.open(journal) as opened:
        return [dict(event) for event in opened.iter_events()]


def test_import_and_stats(tmp_path: Path, tape_lines: list[str]) -> None:
    """journal import takes JSON Lines and .json arrays; journal stats reports the journal."""
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
    """Import is atomic per file: one bad line imports nothing of its file, others still land."""
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
    assert [event["event_id"] for event in stored_in(journal)] == list(range(11, 21))


def test_a_bad_member_of_a_json_array_names_its_index(
    tmp_path: Path, tape_lines: list[str]
) -> None:
    """A bad member of a .json array is named by its index."""
    broken = json.loads(tape_lines[1])
    broken["surprise"] = 1
    path = tmp_path / "events.json"
    path.write_text(json.dumps([json.loads(tape_lines[0]), broken]))
    (result,) = import_files([str(path)], tmp_path / "j.sqlite")
    assert result.imported == 0
    assert result.findings[0].path.startswith("$[1]")


def test_ids_already_present_import_nothing(tmp_path: Path, tape_lines: list[str]) -> None:
    """A file whose ids the session already holds imports nothing."""
    tape = tmp_path / "t.jsonl"
    tape.write_text("\n".join(tape_lines[:5]) + "\n")
    journal = tmp_path / "j.sqlite"
    first, again = import_files([str(tape), str(tape)], journal)
    assert first.imported == 5
    assert again.imported == 0
    assert again.findings[0].code == "journal_write_rejected"
    assert journal_stats(journal)["events"] == 5


def test_stats_of_a_missing_journal_is_a_usage_error(tmp_path: Path) -> None:
    """journal stats of a path that is not a journal is journal_unavailable, exit 2."""
    result = cli("journal", "stats", "--journal", str(tmp_path / "none.sqlite"))
    assert result.returncode == 2
    assert "[journal_unavailable]" in result.stderr


def test_import_refuses_a_fifo(tmp_path: Path) -> None:
    """A FIFO is refused, never waited on."""
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    (result,) = import_files([str(fifo)], tmp_path / "j.sqlite")
    assert result.findings[0].code == "input_not_regular"


def test_a_stored_event_file_is_imported_verbatim(tmp_path: Path, tape_lines: list[str]) -> None:
    """A file of Harn stored events is imported as it is, Harn's own hashes included."""
    harn = json.loads(tape_lines[0]) | {"session_id": "harn-1", "tenant_id": "t", "tags": ["x"]}
    harn["record_hash"] = harn_record_hash(harn)
    path = tmp_path / "stored.jsonl"
    path.write_text("\n".join([*tape_lines[:5], json.dumps(harn)]) + "\n")
    journal = tmp_path / "j.sqlite"
    (result,) = import_files([str(path)], journal)
    assert (result.imported, result.findings) == (6, ())
    assert stored_in(journal) == [*(json.loads(line) for line in tape_lines[:5]), harn]


def test_a_journal_model_file_is_imported_as_stored_forms(
    tmp_path: Path, session: list[SessionEvent], tape_lines: list[str]
) -> None:
    """Journal-model events are stored as their stored forms, chained across files."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.json"
    first.write_text("".join(json.dumps(e.to_json()) + "\n" for e in session[:25]))
    second.write_text(json.dumps([e.to_json() for e in session[25:]]))
    journal = tmp_path / "j.sqlite"
    results = import_files([str(first), str(second)], journal)
    assert [(r.imported, r.findings) for r in results] == [(25, ()), (15, ())]
    stored = stored_in(journal)
    assert stored == list(stored_events_of([e.to_json() for e in session]))
    assert stored == [json.loads(line) for line in tape_lines]
    assert stored[25]["prev_hash"] == stored[24]["record_hash"]


def test_mixed_event_forms_import_nothing(tmp_path: Path, session: list[SessionEvent]) -> None:
    """A file mixing stored and journal-model events is mixed_event_forms and imports nothing."""
    stored = list(stored_events_of([e.to_json() for e in session[:2]]))
    lines = tmp_path / "mixed.jsonl"
    lines.write_text(json.dumps(stored[0]) + "\n" + json.dumps(session[1].to_json()) + "\n")
    array = tmp_path / "mixed.json"
    array.write_text(json.dumps([session[0].to_json(), stored[1]]))
    journal = tmp_path / "j.sqlite"
    by_line, by_index = import_files([str(lines), str(array)], journal)
    for result in (by_line, by_index):
        assert result.imported == 0
        (finding,) = result.findings
        assert finding.code == "journal_corrupt"
        assert finding.message.endswith("(mixed_event_forms)")
    assert by_line.findings[0].source == f"{lines}:2"
    assert by_index.findings[0].path == "$[1]"
    assert not journal.exists(), "a file is checked whole before the journal is touched"


def _layout_one_journal(path: Path, events: list[SessionEvent]) -> None:
    """A journal as the layout before this one held it (docs/journal.md, user_version 1):
    journal-model events, RFC 8785 text, one row each."""
    import sqlite3

    from session_contracts.jsontext.canonical import canonical_bytes

    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA application_id = 1397378636")  # 0x534A4E4C, "SJNL"
        connection.execute("PRAGMA user_version = 1")
        connection.execute(
            "CREATE TABLE session_events (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, "
            "run_id TEXT, turn_id TEXT, iteration INTEGER, execution_id TEXT, "
            "topic TEXT NOT NULL, kind TEXT NOT NULL, event TEXT NOT NULL) STRICT"
        )
        connection.executemany(
            "INSERT INTO session_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    e.id,
                    e.session_id,
                    e.run_id,
                    e.turn_id,
                    e.iteration,
                    e.execution_id,
                    e.topic,
                    e.kind,
                    canonical_bytes(e.to_json()).decode(),
                )
                for e in events
            ],
        )
        connection.commit()
    finally:
        connection.close()


def test_an_old_journal_imports_into_a_new_one(tmp_path: Path, session: list[SessionEvent]) -> None:
    """A layout-1 journal is refused with a hint to import it; importing it stores every
    event as its stored form, as appending the same events would."""
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    _layout_one_journal(old, session)
    refused = cli("journal", "stats", "--journal", str(old))
    assert refused.returncode == 2
    assert "journal import OLD --journal NEW" in refused.stdout + refused.stderr
    (result,) = import_files([str(old)], new)
    assert (result.imported, result.findings) == (len(session), ())
    assert stored_in(new) == list(stored_events_of([e.to_json() for e in session]))
    # A journal of this layout imports too: its stored events, as they are.
    (again,) = import_files([str(new)], tmp_path / "copy.sqlite")
    assert again.imported == len(session)
    assert stored_in(tmp_path / "copy.sqlite") == stored_in(new)


def test_a_refused_id_is_named_at_its_line(tmp_path: Path, session: list[SessionEvent]) -> None:
    """docs/journal.md "Commands": a file's findings name the file and line, also for what
    the journal refuses (an id already there), blank lines counted."""
    journal = tmp_path / "j.sqlite"
    first, second = session[0].to_json(), session[1].to_json()
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(first) + "\n\n" + json.dumps(second) + "\n")
    assert import_files([str(path)], journal)[0].imported == 2
    again = tmp_path / "again.jsonl"
    again.write_text(
        "\n" + json.dumps(dict(second, id=second["id"] + 1)) + "\n\n" + json.dumps(second) + "\n"
    )
    (result,) = import_files([str(again)], journal)
    assert result.imported == 0
    assert [(f.source, f.path, f.code) for f in result.findings] == [
        (f"{again}:4", "$.id", "journal_write_rejected")
    ]


def test_export_writes_the_tape_import_reads(tmp_path: Path, tape_lines: list[str]) -> None:
    """`journal export` writes the stored events as a tape; importing it reproduces them;
    an unknown session is exit 1 and writes nothing, a missing journal exit 2."""
    source = tmp_path / "session.jsonl"
    source.write_text("\n".join(tape_lines) + "\n")
    journal, tape = tmp_path / "j.sqlite", tmp_path / "out.jsonl"
    assert cli("journal", "import", str(source), "--journal", str(journal)).returncode == 0
    exported = cli("journal", "export", str(tape), "--journal", str(journal))
    assert exported.returncode == 0, exported.stderr
    assert tape.read_text().splitlines() == tape_lines
    missing = cli(
        "journal",
        "export",
        str(tmp_path / "x.jsonl"),
        "--journal",
        str(journal),
        "--session",
        "no-such-session",
    )
    assert missing.returncode == 1
    assert "[session_missing]" in missing.stdout + missing.stderr
    assert not (tmp_path / "x.jsonl").exists()
    absent = cli("journal", "export", str(tape), "--journal", str(tmp_path / "absent.sqlite"))
    assert absent.returncode == 2
    assert "[journal_unavailable]" in absent.stdout + absent.stderr
