"""Explicit cases of ``recap.stored-events``: every pointer of Harn's fact readers, reached.

docs/recap.md section 11 lists, for each fact the recap reads from a stored
event, the JSON pointers tried in order: a *string* fact takes the first that
holds a non-blank string, a *value* fact the first that exists (a JSON null
included). The table below restates that list from the docs (not from the
reference, so a pointer the reference forgot is still sent), and one case is
built for each pointer of each fact: the earlier pointers hold what must be
passed over (blank or non-string text; nothing for a value), the pointer holds
the fact. Values also get a present null before a value, which Harn reads as
the value null. Beside them: the ``tool_call_id`` header before the payload's
id, and reads whose ``pending`` is an id distance, not a count of events.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.conformance.judge.cases.operations import recap_event

__all__ = ["stored_event_cases"]

_SECTION = "docs/recap.md section 11"
_TOOL_OUTPUT = (
    "/transcript_event/metadata/output",
    "/raw_message/content",
    "/transcript_event/text",
)

# fact -> (event kind, "string" or "value", pointers in the order Harn tries them)
STORED_POINTERS: dict[str, tuple[dict[str, str], str, tuple[str, ...]]] = {
    "message role": (
        {"kind": "message"},
        "string",
        ("/transcript_event/role", "/raw_message/role"),
    ),
    "message visibility": ({"kind": "message"}, "string", ("/transcript_event/visibility",)),
    "message text": (
        {"kind": "message"},
        "string",
        ("/transcript_event/text", "/raw_message/content"),
    ),
    "tool name": (
        {"kind": "tool_call"},
        "string",
        (
            "/transcript_event/metadata/tool_name",
            "/raw_message/name",
            "/raw_message/tool_calls/0/name",
        ),
    ),
    "tool input": (
        {"kind": "tool_call"},
        "value",
        (
            "/transcript_event/metadata/input",
            "/raw_message/input",
            "/raw_message/tool_calls/0/arguments",
            "/transcript_event/metadata/raw_input",
        ),
    ),
    "tool output": ({"kind": "tool_result"}, "value", _TOOL_OUTPUT),
    **{
        f"terminal {name}": (
            {"kind": "custom", "type": "agent_run_terminal"},
            "string",
            (f"/transcript_event/metadata/{name}",),
        )
        for name in ("final_status", "stop_reason", "terminal/kind", "terminal/owner")
    },
}

# What a string fact's reader must pass over before the pointer that holds the fact.
_PASSED_OVER: tuple[Any, ...] = ("", " \t\u3000", 7)
_FACT_TEXT = {
    "message role": " assistant ",
    "message visibility": " public\n",
    "message text": "\u00a0done ",
    "tool name": " grep ",
    "terminal final_status": " completed ",
    "terminal stop_reason": "\tstop ",
    "terminal terminal/kind": " natural ",
    "terminal terminal/owner": " agent\u2003",
}
_FACT_VALUE: dict[str, Any] = {"q": 1.0, "n": [0, -0.0]}


def _put(payload: dict[str, Any], pointer: str, value: Any) -> None:
    """Set ``pointer`` (RFC 6901, without escapes: the table needs none) in ``payload``."""
    *parents, last = pointer.strip("/").split("/")
    node: Any = payload
    for part, following in zip(parents, [*parents[1:], last], strict=True):
        child: Any = [] if following.isdigit() else {}
        if part.isdigit():
            while len(node) <= int(part):
                node.append(child)
            node = node[int(part)]
        else:
            node = node.setdefault(part, child)
    if last.isdigit():
        node.append(value)
    else:
        node[last] = value


def _stored(
    event_id: int,
    kind: dict[str, str],
    payload: dict[str, Any],
    session: str = "sess-1",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A stored event of ``kind`` holding ``payload``, every other member as Harn writes it."""
    from session_contracts.journal import stored_event

    journal_event = {
        **recap_event(event_id, session, "run-1", "turn-1", None, "other", {}),
        "topic": None,
        "recordedAtUnixMs": 1_760_000_000_000 + event_id,
    }
    previous = None if event_id == 1 else f"sha256:{event_id - 1:064x}"
    event = stored_event(journal_event, record_hash=f"sha256:{event_id:064x}", prev_hash=previous)
    event.update(kind=kind, payload=payload)
    if headers is not None:
        event["headers"] = headers
    return event


def _checkpoint(label: str) -> tuple[dict[str, str], dict[str, Any]]:
    payload = {"transcript_event": {"metadata": {"kind": label, "iteration": 1}}}
    return {"kind": "custom", "type": "loop_checkpoint"}, payload


def _session(
    *facts: tuple[dict[str, str], dict[str, Any]], probe_headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """A prompt, then ``facts`` inside iteration 1 of its turn; the last fact's headers
    gain ``probe_headers``."""
    prompt = {"transcript_event": {"role": "user", "text": "do it"}}
    events = [_stored(1, {"kind": "message"}, prompt), _stored(2, *_checkpoint("iteration_start"))]
    events += [_stored(number, kind, payload) for number, (kind, payload) in enumerate(facts, 3)]
    events[-1]["headers"].update(probe_headers or {})
    return [*events, _stored(len(events) + 1, *_checkpoint("iteration_end"))]


def _fact_event(fact: str, fills: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The session holding the fact's event with ``fills`` (pointer, value) set in order."""
    kind, _, _ = STORED_POINTERS[fact]
    payload: dict[str, Any] = {}
    if fact.startswith("message"):
        message = {"role": "assistant", "visibility": "public", "text": "ok"}
        payload = {"transcript_event": message}
        for pointer, _ in fills:
            if pointer.startswith("/transcript_event/"):
                payload["transcript_event"].pop(pointer.rsplit("/", 1)[1], None)
    elif fact.startswith("tool"):
        payload = {"transcript_event": {"metadata": {"tool_call_id": "c1", "tool_name": "read"}}}
        if fact == "tool name":
            del payload["transcript_event"]["metadata"]["tool_name"]
    for pointer, value in fills:
        _put(payload, pointer, copy.deepcopy(value))
    facts = [(kind, payload)]
    if kind == {"kind": "tool_result"}:
        call = {"transcript_event": {"metadata": {"tool_call_id": "c1", "input": {"a": 1}}}}
        facts.insert(0, ({"kind": "tool_call"}, call))
    return _session(*facts)


def _case(why: str, events: list[dict[str, Any]], **query: Any) -> ExplicitCase:
    return ExplicitCase(
        "recap.project", {"storedEvents": events, "query": {"sessionId": "sess-1", **query}}, why
    )


def _pointer_cases() -> list[ExplicitCase]:
    cases = []
    for fact, (_, reading, pointers) in STORED_POINTERS.items():
        for index, pointer in enumerate(pointers):
            if reading == "string":
                fills = [(p, _PASSED_OVER[i % 3]) for i, p in enumerate(pointers[:index])]
                fills.append((pointer, _FACT_TEXT[fact]))
                why = f"{fact} read at {pointer}, trimmed, after {index} pointer(s) passed over"
            else:
                fills = [(pointer, _FACT_VALUE)]
                why = f"{fact} read at {pointer} when the earlier pointer(s) are absent"
            cases.append(_case(f"{why} ({_SECTION})", _fact_event(fact, fills)))
        if reading == "value":
            fills = [(pointers[0], None), (pointers[1], _FACT_VALUE)]
            why = f"{fact}: a JSON null at {pointers[0]} is the value, {pointers[1]} is not read"
            cases.append(_case(f"{why} ({_SECTION})", _fact_event(fact, fills)))
    return cases


def _call_id_cases() -> list[ExplicitCase]:
    """The call id: header (verbatim) > payload id (trimmed) > raw `_harn` id (verbatim)."""
    call = {"kind": "tool_call"}
    result = {"kind": "tool_result"}
    cases = []
    for header, metadata_id, raw_id, why in (
        (" h ", "c1", None, "the tool_call_id header, verbatim, before the payload's id"),
        ("", "c1", None, "a blank tool_call_id header is the id, verbatim"),
        (None, " c1 ", " r ", "the payload's id, trimmed, before the raw message's"),
        (None, "  ", " r ", "a blank payload id passes to the raw message's, verbatim"),
        (None, None, "", "a blank raw message id is the id, verbatim"),
    ):
        probe: dict[str, Any] = {"transcript_event": {"metadata": {"output": "probed"}}}
        if metadata_id is not None:
            probe["transcript_event"]["metadata"]["tool_call_id"] = metadata_id
        if raw_id is not None:
            probe["raw_message"] = {"_harn": {"tool_call_id": raw_id}}
        events = _session(
            (call, {"transcript_event": {"metadata": {"tool_call_id": "c1", "tool_name": "read"}}}),
            (call, {"transcript_event": {"metadata": {"tool_call_id": " h ", "input": {}}}}),
            (result, {"transcript_event": {"metadata": {"tool_call_id": "r", "output": "x"}}}),
            (result, probe),
            probe_headers={} if header is None else {"tool_call_id": header},
        )
        cases.append(_case(f"tool call id: {why} ({_SECTION})", events))
    return cases


def _pending_cases() -> list[ExplicitCase]:
    """Reads whose ``pending`` is the id distance to the session's last event: ids with
    gaps, another session's events between them (memory.rs: tail id - last id read)."""
    message = {"kind": "message"}
    ids = (1, 2, 5, 9, 14)
    events = []
    for event_id in ids:
        text = {"transcript_event": {"role": "user", "text": f"prompt {event_id}"}}
        events.append(_stored(event_id, message, text))
        other = _stored(event_id + 1, message, copy.deepcopy(text), session="sess-2")
        events.append(other)
    cases = []
    for limit, start in ((1, None), (2, None), (2, 3), (1, 9), (5, 15)):
        query: dict[str, Any] = {"limit": limit}
        if start is not None:
            query["fromEventId"] = start
        why = f"pending is the id distance to the last event (limit {limit}, from {start})"
        cases.append(_case(f"{why} ({_SECTION})", copy.deepcopy(events), **query))
    return cases


def stored_event_cases() -> list[ExplicitCase]:
    return [*_pointer_cases(), *_call_id_cases(), *_pending_cases()]
