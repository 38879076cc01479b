"""A journal event as Harn's session store holds it: the ``StoredEvent`` it maps to.

Harn's recap reads ``StoredEvent`` values (``crates/harn-session-store/src/event.rs``):
a kind discriminator, string headers and an opaque payload in which
``crates/harn-vm/src/agent_sessions/event_facts.rs`` finds each fact at a JSON
pointer. :func:`stored_event` writes a journal event in that form, member for
member as docs/journal.md ("As Harn stores it") specifies; it is the mapping
the recorded answers of Harn's code were made with
(``conformance/recorded/README.md``), so the projection of a
journal event and of its stored form are the same facts. Pure: nothing is read
or written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from session_contracts.errors import json_path
from session_contracts.jsontext.canonical import canonical_bytes, hash_bytes
from session_contracts.jsontext.harn_canonical import harn_sha256

__all__ = [
    "HARN_EVENT_SCHEMA",
    "HARN_KINDS",
    "chained_stored_events",
    "discriminator",
    "harn_record_hash",
    "journal_event_of",
    "stored_event",
    "stored_events_of",
    "stored_kind_and_payload",
    "unheld_integer",
]

# The "schema" member of the bytes Harn's store hashes into an event's record hash.
HARN_EVENT_SCHEMA = "harn.session.event.v1"

# Journal kind -> Harn's SessionEventKind as serde tags it.
HARN_KINDS: Mapping[str, Mapping[str, str]] = {
    "message": {"kind": "message"},
    "tool_call": {"kind": "tool_call"},
    "tool_result": {"kind": "tool_result"},
    "plan": {"kind": "plan"},
    "loop_checkpoint": {"kind": "custom", "type": "loop_checkpoint"},
    "progress": {"kind": "custom", "type": "progress_reported"},
    "terminal": {"kind": "custom", "type": "agent_run_terminal"},
}


def _present(pairs: Mapping[str, Any]) -> dict[str, Any]:
    """The members whose value is not ``null``: the journal writes null for "none",
    Harn's emitters leave the key out (and Harn tells the two apart)."""
    return {key: value for key, value in pairs.items() if value is not None}


def _plan_document(payload: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "document_id": payload["documentId"],
        "current_revision": {
            "revision_id": payload["revisionId"],
            "plan": {
                "title": payload["title"],
                "summary": payload["summary"],
                "steps": payload["steps"],
            },
        },
    }


# Per journal kind whose transcript event carries only metadata: each metadata member
# (Harn's name) and the payload member it comes from, in the order Harn writes them.
_METADATA_MEMBERS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "loop_checkpoint": (("kind", "checkpoint"), ("iteration", "iteration")),
    "tool_call": (("tool_call_id", "callId"), ("tool_name", "toolName"), ("input", "input")),
    "tool_result": (
        ("tool_call_id", "callId"),
        ("tool_name", "toolName"),
        ("is_error", "isError"),
        ("output", "output"),
    ),
    "progress": (("message", "message"), ("entries", "entries"), ("replace", "replace")),
    "terminal": (("final_status", "finalStatus"), ("stop_reason", "stopReason")),
}


def stored_kind_and_payload(kind: str, payload: Mapping[str, Any]) -> tuple[Any, Any]:
    """Harn's ``kind`` and ``payload`` for a journal event's ``kind`` and ``payload``."""
    if kind == "message":
        event = _present(
            {"role": payload["role"], "visibility": payload["visibility"], "text": payload["text"]}
        )
        return HARN_KINDS[kind], {"transcript_event": event}
    if kind == "plan":
        document = _plan_document(payload)
        plan_metadata: dict[str, Any] = {"plan_document": document}
        plan_event = payload["event"]
        if isinstance(plan_event, Mapping):
            plan_metadata["plan_document_event"] = {
                **_present(
                    {
                        "kind": plan_event["kind"],
                        "event_id": plan_event["eventId"],
                        "input_revision_id": plan_event["inputRevisionId"],
                    }
                ),
                "document": _plan_document(payload),
            }
        return HARN_KINDS[kind], {"transcript_event": {"metadata": plan_metadata}}
    members = _METADATA_MEMBERS.get(kind)
    if members is None:
        # Kinds the recap does not read: a custom kind named after the journal kind.
        return {"kind": "custom", "type": kind}, dict(payload)
    metadata = _present({harn: payload[journal] for harn, journal in members})
    out: dict[str, Any] = {"transcript_event": {"metadata": metadata}}
    if kind == "tool_result":
        verification = payload["verification"]
        if isinstance(verification, Mapping):
            out["raw_message"] = {
                "_harn": {
                    "data": {
                        "verification": {
                            "schema": verification["schema"],
                            "status": verification["status"],
                            "verified_paths": verification["verifiedPaths"],
                        }
                    }
                }
            }
    elif kind == "terminal":
        metadata["terminal"] = _present(
            {"kind": payload["kind"], "owner": payload["owner"], "reason": payload["reason"]}
        )
    return HARN_KINDS[kind], out


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    # A BTreeMap: serde writes it in key order, the order these are added in.
    headers: dict[str, str] = {}
    execution_id = event["executionId"]
    if isinstance(execution_id, str):
        headers["execution_id"] = execution_id
    iteration = event["iteration"]
    if type(iteration) is int and iteration >= 0:
        headers["iteration"] = str(iteration)
    run_id, topic, turn_id = event["runId"], event["topic"], event["turnId"]
    if isinstance(run_id, str):
        headers["run_id"] = run_id
    if isinstance(topic, str):
        headers["topic"] = topic
    if isinstance(turn_id, str):
        headers["turn_id"] = turn_id
    return headers


def stored_event(
    event: Mapping[str, Any], *, record_hash: str, prev_hash: str | None
) -> dict[str, Any]:
    """The ``StoredEvent`` Harn's store holds for a journal event (wire form, checked),
    with every member Harn's serde writes, in its order; ``record_hash`` and
    ``prev_hash`` are the event's and its session predecessor's record hashes."""
    kind, payload = stored_kind_and_payload(event["kind"], event["payload"])
    return {
        "event_id": event["id"],
        "session_id": event["sessionId"],
        "tenant_id": None,
        "parent_event_id": None,
        "actor": None,
        "kind": kind,
        "payload": payload,
        "tags": [],
        "headers": _headers(event),
        "ts_ms": event["recordedAtUnixMs"],
        "ts": "",
        "record_hash": record_hash,
        "prev_hash": prev_hash,
        "signed_by": None,
    }


def stored_events_of(
    events: Iterable[Mapping[str, Any]], *, previous: Mapping[str, str] | None = None
) -> Iterator[dict[str, Any]]:
    """The stored form of each journal event (wire form, checked), in order: its record
    hash is the journal event's (docs/hashing.md 4.1), its ``prev_hash`` the record hash
    of the previous event of its session (``previous`` gives it for a session's first
    event here, when the session already has events elsewhere). Raises
    :class:`~session_contracts.errors.InvalidDocument` for an event RFC 8785 cannot
    write (no record hash covers it)."""
    pairs = ((event, hash_bytes(canonical_bytes(dict(event)))) for event in events)
    return chained_stored_events(pairs, previous=previous)


def chained_stored_events(
    pairs: Iterable[tuple[Mapping[str, Any], str]], *, previous: Mapping[str, str] | None = None
) -> Iterator[dict[str, Any]]:
    """:func:`stored_events_of` of (journal event, its record hash) pairs."""
    last: dict[str, str] = dict(previous or {})
    for event, record_hash in pairs:
        session = event["sessionId"]
        yield stored_event(event, record_hash=record_hash, prev_hash=last.get(session))
        last[session] = record_hash


def discriminator(kind: Mapping[str, Any]) -> str:
    """``SessionEventKind::discriminator``: the custom type, or the named kind."""
    name: str = kind["type"] if kind.get("kind") == "custom" else kind["kind"]
    return name


def harn_record_hash(stored: Mapping[str, Any]) -> str:
    """The record hash Harn's store computes for a stored event as it appends it
    (``crates/harn-session-store/src/signing.rs`` ``compute_record_hash`` over
    ``event.rs`` ``canonical_event_bytes``): ``sha256:`` and the hex SHA-256 of Harn's
    canonical JSON of these members, ``ts``, ``record_hash`` and ``signed_by`` left out."""
    return harn_sha256(
        {
            "schema": HARN_EVENT_SCHEMA,
            "session_id": stored["session_id"],
            "event_id": stored["event_id"],
            "tenant_id": stored["tenant_id"],
            "parent_event_id": stored["parent_event_id"],
            "actor": stored["actor"],
            "kind": discriminator(stored["kind"]),
            "payload": stored["payload"],
            "tags": stored["tags"],
            "headers": stored["headers"],
            "ts_ms": stored["ts_ms"],
            "prev_hash": stored["prev_hash"],
        }
    )


# Journal kinds the recap does not read: their stored form is a custom kind of that
# name with the journal payload unchanged, so it reads back as the journal event.
_OPAQUE_KINDS = frozenset(
    {"provider_call_response", "session_attribute", "transcript_reset", "other"}
)


def journal_event_of(stored: Mapping[str, Any]) -> dict[str, Any] | None:
    """The journal event (wire form, unchecked) whose stored form ``stored`` is, for the
    kinds stored unchanged (``provider_call_response``, ``session_attribute``,
    ``transcript_reset``, ``other``) with a ``topic`` header; ``None`` for any other."""
    kind, headers = stored["kind"], stored["headers"]
    if kind.get("kind") != "custom" or kind.get("type") not in _OPAQUE_KINDS:
        return None
    if "topic" not in headers:
        return None
    iteration = headers.get("iteration")
    return {
        "id": stored["event_id"],
        "sessionId": stored["session_id"],
        "runId": headers.get("run_id"),
        "turnId": headers.get("turn_id"),
        "iteration": int(iteration) if _is_decimal(iteration) else None,
        "executionId": headers.get("execution_id"),
        "topic": headers["topic"],
        "kind": kind["type"],
        "recordedAtUnixMs": stored["ts_ms"],
        "payload": stored["payload"],
    }


_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1


def unheld_integer(value: Any) -> str | None:
    """The JSON path of the first integer serde_json cannot hold as one (outside
    -2^63..2^64-1: Harn's store reads it as a float), or ``None``: a stored event with
    such a number would not read back as it was given."""
    try:
        # orjson writes an integer exactly when it is in that range (and refuses what
        # it cannot write): the walk below runs only when it refuses, to find the path.
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        pass
    else:
        return None
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        node, parts = stack.pop()
        if type(node) is int and not _I64_MIN <= node <= _U64_MAX:
            return json_path(list(parts))
        if isinstance(node, Mapping):
            stack.extend((item, (*parts, key)) for key, item in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((item, (*parts, index)) for index, item in enumerate(node))
    return None


def _is_decimal(text: str | None) -> bool:
    return text is not None and text.isascii() and text.isdigit()
