"""A journal event as Harn's session store holds it: the ``StoredEvent`` it maps to.

Harn's recap reads ``StoredEvent`` values (``crates/harn-session-store/src/event.rs``):
a kind discriminator, string headers and an opaque payload in which
``crates/harn-vm/src/agent_sessions/event_facts.rs`` finds each fact at a JSON
pointer. :func:`stored_event` writes a journal event in that form, member for
member as docs/journal.md ("As Harn stores it") specifies; it is the mapping
the recorded answers of Harn's code were made with
(``tests/fixtures/upstream/harn/recorded/README.md``), so the projection of a
journal event and of its stored form are the same facts. Pure: nothing is read
or written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["HARN_KINDS", "stored_event", "stored_kind_and_payload"]

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


def stored_kind_and_payload(kind: str, payload: Mapping[str, Any]) -> tuple[Any, Any]:
    """Harn's ``kind`` and ``payload`` for a journal event's ``kind`` and ``payload``."""
    if kind == "message":
        event = _present(
            {"role": payload["role"], "visibility": payload["visibility"], "text": payload["text"]}
        )
        return HARN_KINDS[kind], {"transcript_event": event}
    if kind == "loop_checkpoint":
        metadata = _present({"kind": payload["checkpoint"], "iteration": payload["iteration"]})
        return HARN_KINDS[kind], {"transcript_event": {"metadata": metadata}}
    if kind == "tool_call":
        metadata = _present(
            {
                "tool_call_id": payload["callId"],
                "tool_name": payload["toolName"],
                "input": payload["input"],
            }
        )
        return HARN_KINDS[kind], {"transcript_event": {"metadata": metadata}}
    if kind == "tool_result":
        metadata = _present(
            {
                "tool_call_id": payload["callId"],
                "tool_name": payload["toolName"],
                "is_error": payload["isError"],
                "output": payload["output"],
            }
        )
        out: dict[str, Any] = {"transcript_event": {"metadata": metadata}}
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
        return HARN_KINDS[kind], out
    if kind == "plan":
        document = _plan_document(payload)
        metadata = {"plan_document": document}
        plan_event = payload["event"]
        if isinstance(plan_event, Mapping):
            metadata["plan_document_event"] = {
                **_present(
                    {
                        "kind": plan_event["kind"],
                        "event_id": plan_event["eventId"],
                        "input_revision_id": plan_event["inputRevisionId"],
                    }
                ),
                "document": _plan_document(payload),
            }
        return HARN_KINDS[kind], {"transcript_event": {"metadata": metadata}}
    if kind == "progress":
        metadata = _present(
            {
                "message": payload["message"],
                "entries": payload["entries"],
                "replace": payload["replace"],
            }
        )
        return HARN_KINDS[kind], {"transcript_event": {"metadata": metadata}}
    if kind == "terminal":
        metadata = _present(
            {"final_status": payload["finalStatus"], "stop_reason": payload["stopReason"]}
        )
        metadata["terminal"] = _present(
            {"kind": payload["kind"], "owner": payload["owner"], "reason": payload["reason"]}
        )
        return HARN_KINDS[kind], {"transcript_event": {"metadata": metadata}}
    # Kinds the recap does not read: a custom kind named after the journal kind.
    return {"kind": "custom", "type": kind}, dict(payload)


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for journal_name, header in (
        ("runId", "run_id"),
        ("turnId", "turn_id"),
        ("executionId", "execution_id"),
        ("topic", "topic"),
    ):
        value = event[journal_name]
        if isinstance(value, str):
            headers[header] = value
    iteration = event["iteration"]
    if type(iteration) is int and iteration >= 0:
        headers["iteration"] = str(iteration)
    return dict(sorted(headers.items()))  # a BTreeMap: serde writes it in key order


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
