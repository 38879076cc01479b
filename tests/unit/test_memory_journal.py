"""MemoryJournal: a fresh journal after one append_checked, held in memory, reads exactly as
the SQLite file that append writes (the reference producer reads its recap cases so)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts.journal import (
    CheckedEvents,
    JournalCorrupt,
    JournalWriteError,
    MemoryJournal,
    SessionMissing,
    SqliteJournal,
    check_events,
)

_SESSIONS = ("s1", "s2", "s\x00x", "é")


def _nested(depth: int) -> Any:
    value: Any = 1
    for level in range(depth):
        value = {"k": value} if level % 2 else [value]
    return value


def _event(event_id: int, session: str, kind: str, value: Any, run: str, turn: str) -> Any:
    payloads = {
        "message": {"role": "user", "visibility": None, "text": f"m{event_id}"},
        "tool_call": {"callId": f"c{event_id}", "toolName": "t", "input": value},
        "other": {"z": value, "a": 1.0, "é": -0.0},
    }
    return {
        "id": event_id,
        "sessionId": session,
        "runId": run,
        "turnId": turn,
        "iteration": None,
        "executionId": None,
        "topic": "agent.loop",
        "kind": kind,
        "recordedAtUnixMs": 1_700_000_000_000 + event_id,
        "payload": payloads[kind],
    }


@st.composite
def _checked(draw: st.DrawFn) -> CheckedEvents:
    """Events of a few sessions, ids increasing through the list (with gaps); a tool
    input nested past what a stored row may hold (the read finds it corrupt) now and then."""
    events = []
    event_id = 0
    for _ in range(draw(st.integers(0, 12))):
        event_id += draw(st.integers(1, 3))
        events.append(
            _event(
                event_id,
                draw(st.sampled_from(_SESSIONS)),
                draw(st.sampled_from(["message", "tool_call", "other"])),
                draw(st.sampled_from([{"b": 2, "a": [1.5, 5.0]}, None, _nested(62)])),
                draw(st.sampled_from(["r1", "r2"])),
                draw(st.sampled_from(["t1", "t2"])),
            )
        )
    checked, found = check_events(events)
    assert not found
    return checked


def _outcome(read: Any) -> Any:
    """A read's result as bytes (members in their order), or its error's code and findings."""
    try:
        result = read()
    except (SessionMissing, JournalCorrupt) as exc:
        return type(exc).__name__, [(f.path, f.code, f.message) for f in exc.findings]
    events = orjson.dumps(result.events)
    return events, result.scanned, result.last_event_id, result.next_event_id, result.pending


def _file_journal(checked: CheckedEvents, folder: str) -> SqliteJournal:
    journal = SqliteJournal.open(Path(folder) / "journal.sqlite", create=True)
    if checked.events:
        journal.append_checked(checked)
    return journal


@settings(max_examples=150, deadline=None)
@given(
    checked=_checked(),
    session=st.sampled_from(_SESSIONS),
    start=st.sampled_from([None, 0, 1, 2, 5, 9, 2**53 - 1, 2**63]),
    limit=st.integers(1, 14),
    run_id=st.sampled_from([None, "r1"]),
    turn_id=st.sampled_from([None, "t2"]),
)
def test_a_memory_journal_reads_as_its_file(
    checked: CheckedEvents,
    session: str,
    start: int | None,
    limit: int,
    run_id: str | None,
    turn_id: str | None,
) -> None:
    memory = MemoryJournal.of_checked(checked, source="j")
    with tempfile.TemporaryDirectory() as folder, _file_journal(checked, folder) as journal:
        reads = [
            lambda j=j: j.read(
                session, run_id=run_id, turn_id=turn_id, from_event_id=start, limit=limit
            )
            for j in (journal, memory)
        ]
        on_file, in_memory = (_outcome(read) for read in reads)
    if on_file[0] == "JournalCorrupt":  # the source names the file or the memory journal
        assert in_memory[0] == "JournalCorrupt"
        assert [f[:2] for f in in_memory[1]] == [f[:2] for f in on_file[1]]
    else:
        assert in_memory == on_file


def test_a_memory_journal_refuses_what_the_append_refuses(tmp_path: Path) -> None:
    checked, found = check_events(
        [_event(2, "s1", "message", None, "r", "t"), _event(1, "s1", "message", None, "r", "t")]
    )
    assert not found
    with (
        SqliteJournal.open(tmp_path / "j.sqlite", create=True) as journal,
        pytest.raises(JournalWriteError) as on_file,
    ):
        journal.append_checked(checked)
    with pytest.raises(JournalWriteError) as in_memory:
        MemoryJournal.of_checked(checked)
    assert in_memory.value.findings == on_file.value.findings


def test_a_memory_journal_checks_every_row_it_reads() -> None:
    checked, _ = check_events([_event(1, "s1", "tool_call", _nested(62), "r", "t")])
    with pytest.raises(JournalCorrupt):
        MemoryJournal.of_checked(checked).read("s1", limit=1)
    with pytest.raises(SessionMissing):
        MemoryJournal.of_checked(checked).read("s2", limit=1)
