"""The journal's batch path: events checked as one batch, each event's canonical text cut out
of one encoding of the batch, against the same work done one event at a time."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts.errors import InvalidDocument
from session_contracts.journal import SessionEvent, SqliteJournal, check_events, event_findings
from session_contracts.journal.batch import element_forms
from session_contracts.jsontext.canonical import canonical_bytes, hash_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

_KEYS = st.sampled_from(["a", "actor", "executionId", "id", "b", "é", "\U0001f600", "\ue000"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)


def _nested_boundaries(key: str) -> Any:
    """A value whose text holds ``,{"key":`` as structure, nested: a cut must not split it."""
    return [{}, {key: 1}, [1, {key: {key: 2}}]]


@st.composite
def _items(draw: st.DrawFn) -> list[dict[str, Any]]:
    key = draw(st.sampled_from(["actor", "executionId", "a"]))
    items = []
    for _ in range(draw(st.integers(0, 5))):
        item = {key: draw(_JSON)}
        item.update(draw(st.dictionaries(st.sampled_from(["z", "zz", key + "x"]), _JSON)))
        if draw(st.booleans()):
            item["zz"] = _nested_boundaries(key)
        items.append(item)
    if items and draw(st.booleans()):  # one item whose least key differs
        items[draw(st.integers(0, len(items) - 1))][draw(_KEYS)] = 0
    return items


@settings(max_examples=300, deadline=None)
@given(items=_items())
def test_a_cut_gives_each_items_own_text_or_declines(items: list[dict[str, Any]]) -> None:
    for encode in (canonical_bytes, harn_canonical_bytes):
        try:
            whole = encode(items)
        except InvalidDocument:
            continue
        forms = element_forms(items, whole)
        if forms is not None:
            assert forms == [encode(item) for item in items]


def test_a_cut_declines_where_a_boundary_is_nested_or_missing() -> None:
    items = [{"actor": 1}, {"actor": [{}, {"actor": 2}]}]  # one nested: one too many
    assert element_forms(items, harn_canonical_bytes(items)) is None
    # The second item's least key is not the first's: no boundary opens it, and the nested
    # boundary inside it must not stand in for the missing one.
    items = [{"actor": 1}, {"a": 0, "actor": [{}, {"actor": 2}]}]
    assert element_forms(items, harn_canonical_bytes(items)) is None
    items = [{"actor": 1}, {"actor": [{"actor": 2}]}]  # after a bracket, not a comma: cut
    assert element_forms(items, harn_canonical_bytes(items)) == [
        b'{"actor":1}',
        b'{"actor":[{"actor":2}]}',
    ]


def _event(event_id: int, **members: Any) -> dict[str, Any]:
    event = {
        "id": event_id,
        "sessionId": "sess-1",
        "runId": "run-1",
        "turnId": None,
        "iteration": None,
        "executionId": None,
        "topic": "session",
        "kind": "other",
        "recordedAtUnixMs": 1_700_000_000_000 + event_id,
        "payload": {},
    }
    event.update(members)
    return event


_PAYLOADS = st.dictionaries(
    st.sampled_from(["executionId", "x", "deep"]),
    _JSON
    | st.just(2**60)  # beyond RFC 8785's safe integers: no record hash covers it
    | st.just(1.5)
    | st.just(5.0)
    | st.just([{}, {"executionId": 1}]),
    max_size=3,
)


@st.composite
def _batches(draw: st.DrawFn) -> list[Any]:
    events: list[Any] = [
        _event(index + 1, payload=draw(_PAYLOADS)) for index in range(draw(st.integers(0, 6)))
    ]
    if events and draw(st.booleans()):
        at = draw(st.integers(0, len(events) - 1))
        events[at] = draw(
            st.sampled_from([42, {**events[at], "extra": 1}, {**events[at], "id": "7"}, {"id": 1}])
        )
    return events


@settings(max_examples=300, deadline=None)
@given(raws=_batches())
def test_a_batch_is_checked_as_each_event_alone_is(raws: list[Any]) -> None:
    checked, found = check_events(raws)
    expected_found = []
    expected_hashes = []
    for index, raw in enumerate(raws):
        findings = event_findings(raw)
        if not findings:
            try:
                expected_hashes.append(hash_bytes(canonical_bytes(raw)))
                continue
            except InvalidDocument as exc:
                findings = exc.findings
        expected_found.extend((index, finding) for finding in findings)
    assert found == expected_found
    assert list(checked.record_hashes) == expected_hashes
    assert len(checked.events) == len(expected_hashes)


def _rows(path: Path) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute("SELECT * FROM session_events ORDER BY seq").fetchall()
    finally:
        connection.close()


def test_append_checked_writes_the_rows_append_writes(tmp_path: Path) -> None:
    events = [
        _event(1, payload={"executionId": [{}, {"executionId": 1}]}),
        _event(2, kind="transcript_reset", payload={}),
        _event(3, payload={"x": 1.5, "y": 5.0, "é": "\U0001f600"}),
        _event(4, sessionId="sess-2"),
        _event(5),
    ]
    with SqliteJournal.open(tmp_path / "one.sqlite", create=True) as journal:
        assert journal.append([SessionEvent.from_json(event) for event in events]) == 5
    checked, found = check_events(events)
    assert not found
    with SqliteJournal.open(tmp_path / "batch.sqlite", create=True) as journal:
        assert journal.append_checked(checked) == 5
    assert _rows(tmp_path / "batch.sqlite") == _rows(tmp_path / "one.sqlite")
