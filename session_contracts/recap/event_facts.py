"""Reading recap facts out of an event as Harn's stored form holds them.

Harn's recap (``crates/harn-vm/src/session_recap.rs``) reads each fact of a
``StoredEvent`` at a JSON pointer of ``crates/harn-vm/src/agent_sessions/event_facts.rs``,
through a few typed accessors: ``semantic_string`` (the first pointer holding a
string that is not blank once trimmed, trimmed), ``semantic_value`` (the first
pointer that resolves at all, JSON ``null`` included), ``i64_at``, ``bool_at_any``.
:class:`StoredFacts` does exactly that (docs/recap.md 4.1 and "Stored events").

The journal holds every event in its stored form (docs/journal.md), and an
event of the journal's own model is read through its stored form
(``journal.harn_stored.stored_event``), so this is the one reader.

Each reader answers per recap kind with plain tuples; ``ABSENT`` marks a tool
value no pointer resolved (Harn's ``None``), distinct from a JSON ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "ABSENT",
    "WHITE_SPACE",
    "PlanFact",
    "ProgressFact",
    "StoredFacts",
    "semantic",
]


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()

# Unicode White_Space, the set Rust's str::trim removes. Python's str.strip also
# removes U+001C..U+001F, which Rust keeps.
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_PLAN_STEP_STATUSES = frozenset({"pending", "in_progress", "completed", "blocked", "cancelled"})
_PROGRESS_STATUSES = frozenset({"pending", "in_progress", "completed"})
_PROGRESS_PRIORITIES = frozenset({"high", "medium", "low"})
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1

# (documentId, revisionId, title, summary, steps as (id, content, status), event as
# (kind, eventId, inputRevisionId) or None)
PlanFact = tuple[
    str, str, str, str, tuple[tuple[str, str, str], ...], tuple[str, str, str | None] | None
]
# (message, entries as (content, status, priority), replace)
ProgressFact = tuple[str | None, tuple[tuple[str, str, str | None], ...], bool]


def semantic(text: Any) -> str | None:
    """A string as ``semantic_string`` reads it: trimmed of White_Space, ``None`` when
    nothing is left or when it is not a string."""
    if not isinstance(text, str):
        return None
    return text.strip(WHITE_SPACE) or None


def _is_blank(text: str) -> bool:
    return not text.strip(WHITE_SPACE)


def _progress_entry(entry: Any) -> tuple[str, str, str | None] | None:
    """One entry as Harn's ``progress_entry`` reads it; ``None`` refuses the report."""
    if not isinstance(entry, Mapping):
        return None
    content, status = entry.get("content"), entry.get("status")
    if not isinstance(content, str) or _is_blank(content) or status not in _PROGRESS_STATUSES:
        return None
    priority = entry.get("priority")
    if priority is not None and (
        not isinstance(priority, str) or priority not in _PROGRESS_PRIORITIES
    ):
        return None
    return content, status, priority


# ------------------------------------------------------------------ Harn's stored events


_TOKENS: dict[str, tuple[str, ...]] = {}


def _tokens(path: str) -> tuple[str, ...]:
    """The reference tokens of a JSON pointer, unescaped (parsed once per pointer)."""
    found = _TOKENS.get(path)
    if found is None:
        found = tuple(raw.replace("~1", "/").replace("~0", "~") for raw in path[1:].split("/"))
        if len(_TOKENS) < 4096:  # the readers' pointers are few; others are not kept
            _TOKENS[path] = found
    return found


def pointer(value: Any, path: str) -> Any:
    """RFC 6901: the value at ``path`` in ``value``, or ``ABSENT`` (serde_json's
    ``Value::pointer``: an array index is decimal digits without a leading zero)."""
    if path == "":
        return value
    node = value
    for token in _tokens(path):
        if type(node) is dict:  # parsed JSON: the common case, without an ABC check
            node = node.get(token, ABSENT)
            if node is ABSENT:
                return ABSENT
        elif isinstance(node, Mapping):
            if token not in node:
                return ABSENT
            node = node[token]
        elif isinstance(node, list | tuple):
            if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
                return ABSENT
            index = int(token)
            if index >= len(node):
                return ABSENT
            node = node[index]
        else:
            return ABSENT
    return node


def _semantic_string(payload: Any, pointers: Sequence[str]) -> str | None:
    for path in pointers:
        found = semantic(pointer(payload, path))
        if found is not None:
            return found
    return None


def _semantic_value(payload: Any, pointers: Sequence[str]) -> Any:
    for path in pointers:
        found = pointer(payload, path)
        if found is not ABSENT:
            return found
    return ABSENT


def _i64_at(payload: Any, path: str) -> int | None:
    """``i64_at``: an integer in the i64 range, else a number cast to i64 (truncated,
    saturating, as Rust's ``as``), else ``None``."""
    value = pointer(payload, path)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and _I64_MIN <= value <= _I64_MAX:
        return value
    number = float(value)
    if number != number:  # NaN
        return 0
    if number >= 2.0**63:
        return _I64_MAX
    if number < -(2.0**63):
        return _I64_MIN
    return int(number)


def _bool_at_any(payload: Any, pointers: Sequence[str]) -> bool:
    return any(pointer(payload, path) is True for path in pointers)


_TEXT = ("/transcript_event/text", "/raw_message/content")
_ROLE = ("/transcript_event/role", "/raw_message/role")
_VISIBILITY = ("/transcript_event/visibility",)
_CHECKPOINT_KIND = ("/transcript_event/metadata/kind",)
_ITERATION = "/transcript_event/metadata/iteration"
_TOOL_CALL_ID = ("/transcript_event/metadata/tool_call_id",)
_TOOL_RESULT_FACT_CALL_ID = "/raw_message/_harn/tool_call_id"
_TOOL_NAME_ANY = (
    "/transcript_event/metadata/tool_name",
    "/raw_message/name",
    "/raw_message/tool_calls/0/name",
)
_TOOL_INPUT_ANY = (
    "/transcript_event/metadata/input",
    "/raw_message/input",
    "/raw_message/tool_calls/0/arguments",
    "/transcript_event/metadata/raw_input",
)
_TOOL_OUTPUT_ANY = (
    "/transcript_event/metadata/output",
    "/raw_message/content",
    "/transcript_event/text",
)
_TOOL_IS_ERROR_ANY = ("/transcript_event/metadata/is_error", "/raw_message/is_error")
_TOOL_VERIFICATION = "/raw_message/_harn/data/verification"
_PLAN_DOCUMENT = "/transcript_event/metadata/plan_document"
_PLAN_DOCUMENT_EVENT = "/transcript_event/metadata/plan_document_event"
_METADATA = "/transcript_event/metadata"
_FINAL_STATUS = ("/transcript_event/metadata/final_status",)
_STOP_REASON = ("/transcript_event/metadata/stop_reason",)
_TERMINAL_KIND = ("/transcript_event/metadata/terminal/kind",)
_TERMINAL_OWNER = ("/transcript_event/metadata/terminal/owner",)
_TERMINAL_REASON = ("/transcript_event/metadata/terminal/reason",)

_NAMED_RECAP_KINDS = {
    "message": "message",
    "tool_call": "tool_call",
    "tool_result": "tool_result",
    "plan": "plan",
}
_CUSTOM_RECAP_KINDS = {
    "loop_checkpoint": "loop_checkpoint",
    "progress_reported": "progress",
    "agent_run_terminal": "terminal",
}


_Document = tuple[str, str, str, str, tuple[tuple[str, str, str], ...]]


def _plan_document(value: Any) -> _Document | None:
    """The members of a ``PlanDocument`` the recap reads, when each has its type
    (what serde needs to read them); ``None`` otherwise."""
    if not isinstance(value, Mapping):
        return None
    revision = value.get("current_revision")
    plan = revision.get("plan") if isinstance(revision, Mapping) else None
    if not isinstance(plan, Mapping):
        return None
    strings = (
        value.get("document_id"),
        revision.get("revision_id") if isinstance(revision, Mapping) else None,
        plan.get("title"),
        plan.get("summary"),
    )
    steps = plan.get("steps")
    if not all(isinstance(text, str) for text in strings) or not isinstance(steps, list | tuple):
        return None
    read_steps = []
    for step in steps:
        if not isinstance(step, Mapping):
            return None
        step_id, content, status = step.get("id"), step.get("content"), step.get("status")
        if not (isinstance(step_id, str) and isinstance(content, str)):
            return None
        if status not in _PLAN_STEP_STATUSES:
            return None
        read_steps.append((step_id, content, status))
    document_id, revision_id, title, summary = strings
    return document_id, revision_id, title, summary, tuple(read_steps)  # type: ignore[return-value]


class StoredFacts:
    """Facts of a Harn ``StoredEvent`` (serde form), read as ``session_recap.rs`` reads them."""

    __slots__ = ()

    @staticmethod
    def event_id(event: Mapping[str, Any]) -> int:
        event_id: int = event["event_id"]
        return event_id

    @staticmethod
    def record_hash(event: Mapping[str, Any]) -> str:
        """``source_record_hash()``: a redacted projection's source hash."""
        record_hash: str = event["record_hash"]
        return record_hash.removeprefix("redacted:")

    @staticmethod
    def placement(event: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
        """(its recap kind or ``None``, the ``run_id`` header, the ``turn_id`` header)."""
        kind = event["kind"]
        if kind.get("kind") == "custom":
            recap_kind = _CUSTOM_RECAP_KINDS.get(kind.get("type"))
        else:
            recap_kind = _NAMED_RECAP_KINDS.get(kind.get("kind"))
        headers = event["headers"]
        return recap_kind, headers.get("run_id"), headers.get("turn_id")

    @staticmethod
    def message(event: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
        payload = event["payload"]
        return (
            _semantic_string(payload, _ROLE),
            _semantic_string(payload, _VISIBILITY),
            _semantic_string(payload, _TEXT),
        )

    @staticmethod
    def checkpoint(event: Mapping[str, Any]) -> tuple[str | None, int | None]:
        payload = event["payload"]
        return _semantic_string(payload, _CHECKPOINT_KIND), _i64_at(payload, _ITERATION)

    @staticmethod
    def _call_id(event: Mapping[str, Any]) -> str | None:
        # The header first (verbatim), then the envelope (trimmed), then the raw
        # result fact (verbatim), as event_facts.rs tool_call_id does.
        header = event["headers"].get("tool_call_id")
        if header is not None:
            return str(header)
        found = _semantic_string(event["payload"], _TOOL_CALL_ID)
        if found is not None:
            return found
        raw = pointer(event["payload"], _TOOL_RESULT_FACT_CALL_ID)
        return raw if isinstance(raw, str) else None

    @classmethod
    def tool_call(cls, event: Mapping[str, Any]) -> tuple[str | None, str | None, Any]:
        payload = event["payload"]
        return (
            cls._call_id(event),
            _semantic_string(payload, _TOOL_NAME_ANY),
            _semantic_value(payload, _TOOL_INPUT_ANY),
        )

    @classmethod
    def tool_result(
        cls, event: Mapping[str, Any]
    ) -> tuple[str | None, str | None, bool, Any, tuple[str, str, tuple[str, ...]] | None]:
        payload = event["payload"]
        return (
            cls._call_id(event),
            _semantic_string(payload, _TOOL_NAME_ANY),
            _bool_at_any(payload, _TOOL_IS_ERROR_ANY),
            _semantic_value(payload, _TOOL_OUTPUT_ANY),
            _verification(pointer(payload, _TOOL_VERIFICATION)),
        )

    @staticmethod
    def plan(event: Mapping[str, Any]) -> PlanFact | None:
        payload = event["payload"]
        document = _plan_document(pointer(payload, _PLAN_DOCUMENT))
        if document is None:
            return None
        raw_event = pointer(payload, _PLAN_DOCUMENT_EVENT)
        plan_event: tuple[str, str, str | None] | None = None
        if raw_event is not ABSENT:
            if not isinstance(raw_event, Mapping):
                return None
            kind, event_id = raw_event.get("kind"), raw_event.get("event_id")
            revision = raw_event.get("input_revision_id")
            if not isinstance(event_id, str) or kind not in ("created", "updated"):
                return None
            if kind == "updated" and not isinstance(revision, str):
                return None  # PlanDocumentEvent::Updated needs its input revision
            if _plan_document(raw_event.get("document")) != document:
                return None
            plan_event = (kind, event_id, revision if kind == "updated" else None)
        return (*document, plan_event)

    @staticmethod
    def progress(event: Mapping[str, Any]) -> ProgressFact | None:
        metadata = pointer(event["payload"], _METADATA)
        if not isinstance(metadata, Mapping):
            metadata = {}
        message = metadata.get("message")
        entries: list[tuple[str, str, str | None]] = []
        raw_entries = metadata.get("entries")
        if isinstance(raw_entries, list | tuple):
            for raw in raw_entries:
                entry = _progress_entry(raw)
                if entry is None:
                    return None
                entries.append(entry)
        replace = metadata.get("replace")
        return (
            message if isinstance(message, str) else None,
            tuple(entries),
            replace if isinstance(replace, bool) else True,
        )

    @staticmethod
    def terminal(event: Mapping[str, Any]) -> tuple[str | None, ...]:
        """(finalStatus, stopReason, kind, owner, reason)."""
        payload = event["payload"]
        return tuple(
            _semantic_string(payload, pointers)
            for pointers in (
                _FINAL_STATUS,
                _STOP_REASON,
                _TERMINAL_KIND,
                _TERMINAL_OWNER,
                _TERMINAL_REASON,
            )
        )


def _verification(value: Any) -> tuple[str, str, tuple[str, ...]] | None:
    """``verification_fact``'s reading: string schema and status, a list of string paths."""
    if not isinstance(value, Mapping):
        return None
    schema, status, paths = value.get("schema"), value.get("status"), value.get("verified_paths")
    if not isinstance(schema, str) or not isinstance(status, str):
        return None
    if not isinstance(paths, list | tuple) or not all(isinstance(p, str) for p in paths):
        return None
    return schema, status, tuple(paths)
