"""The recap projection: canonical session events in, a recap snapshot out (pure).

:func:`project` is deterministic and read-only: the same events, query and
policy give the same snapshot, and nothing is written, fetched or asked of a
model.  It follows Harn's runtime (``crates/harn-vm/src/session_recap.rs``)
wherever seed 002 leaves the choice open; ``docs/recap.md`` specifies every
step.  In short, one pass over every event of the bounded read, in id order:

* text members Harn reads through ``semantic_string`` (message text, role and
  visibility, checkpoint label, call id, tool name, terminal members) are
  trimmed of White_Space and absent when blank; numbers stay as the events
  hold them (an integral float stays a float);
* an event of a recap kind without both a run id and a turn id is counted
  unassigned; one outside the query's run/turn filters is skipped;
* a prompt turn is keyed by (runId, turnId), turns in order of first appearance;
* ``loop_checkpoint`` events open (``iteration_start``) and close
  (``iteration_end``) iterations; assistant text, tool exchanges, plans and
  progress go to the turn's open iteration, or to its ``iteration: null``
  segment when none is open (and count unassigned);
* a tool call and its result are joined by call id across the turn, in either
  order;
* every text and tool value goes through the redaction policy;
* hashes last: ``contentHash`` over ``source``, then ``projectionHash``
  (``session_contracts.hashes.snapshot``, docs/hashing.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from session_contracts.doctypes import SNAPSHOT_DOCUMENT_TYPE
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.hashes.snapshot import (
    content_hash_of_source,
    harn_canonical_bytes,
    projection_hash,
)
from session_contracts.jsontext.canonical import is_plain_json
from session_contracts.recap.event_facts import ABSENT, StoredFacts
from session_contracts.redaction.engine import RedactionPolicy, redact_text, redact_value
from session_contracts.redaction.gate import text_screen

__all__ = [
    "RECAP_KINDS",
    "SCHEMA_VERSION",
    "SNAPSHOT_DOCUMENT_TYPE",
    "VERIFICATION_SCHEMA",
    "EventRecord",
    "SourceRecord",
    "TurnState",
    "project",
    "project_stored",
    "with_extensions",
]

SCHEMA_VERSION = 1
# The event kinds a recap reads (Harn: message, tool call/result, plan,
# loop_checkpoint, progress_reported, agent_run_terminal); others are only
# listed in source.events.
RECAP_KINDS = frozenset(
    {"message", "loop_checkpoint", "tool_call", "tool_result", "plan", "progress", "terminal"}
)
# The one tool postcondition a recap shows, and only when it passed.
VERIFICATION_SCHEMA = "harn.agent_tool_postcondition.v1"
_TERMINAL_MEMBERS = ("finalStatus", "stopReason", "kind", "owner", "reason")
# The exchange members an observation sets when it has them (ABSENT while unset).
_TOOL_VALUES = ("toolName", "input", "output", "verification")


Facts = type[StoredFacts]


class SourceRecord(Protocol):
    """One canonical session event (wire form) and its record hash."""

    @property
    def event(self) -> Mapping[str, Any]: ...

    @property
    def record_hash(self) -> str: ...


class EventRecord(NamedTuple):
    """A :class:`SourceRecord`: a journal event (wire form) and its record hash."""

    event: Mapping[str, Any]
    record_hash: str


class _Redactor:
    """The policy applied once per distinct text (a plan repeats its steps in every
    event), and only to a text its literal screen lets through (text_screen)."""

    __slots__ = ("_policy", "_screen", "_texts")

    def __init__(self, policy: RedactionPolicy) -> None:
        self._policy = policy
        self._screen = text_screen(policy)
        self._texts: dict[str, str] = {}

    def text(self, text: str) -> str:
        found = self._texts.get(text)
        if found is None:
            if self._screen.may_change(text):
                result: Any = redact_text(text, self._policy)
                found = result if isinstance(result, str) else result.text
            else:
                found = text
            self._texts[text] = found
        return found

    def optional(self, text: str | None) -> str | None:
        return None if text is None else self.text(text)

    def value(self, value: Any) -> Any:
        if value is None or value is ABSENT:
            return value
        plain = _plain(value)
        if not self._screen.value_may_change(plain):
            return plain  # its own redaction (as redact_values answers too)
        return redact_value(plain, self._policy)


def _plain(value: Any) -> Any:
    """A plain ``dict``/``list`` copy of a JSON value (stored events may be read-only);
    the value itself when it is plain already (redaction copies what it returns)."""
    if is_plain_json(value):
        return value
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


class _Segment:
    """One iteration of a turn (or its null segment) while the pass builds it."""

    __slots__ = ("ended", "fact", "started")

    def __init__(self, iteration: int | None) -> None:
        self.started = False
        self.ended = False
        self.fact: dict[str, Any] = {
            "iteration": iteration,
            "state": "open" if iteration is not None else "unassigned",
            "assistantText": [],
            "tools": [],
            "plans": [],
            "progress": [],
            "sourceEventIds": [],
        }


class TurnState:
    __slots__ = ("current", "fact", "segments")

    def __init__(self, run_id: str, turn_id: str) -> None:
        self.fact: dict[str, Any] = {
            "turnId": turn_id,
            "runId": run_id,
            "state": "open",
            "prompts": [],
            "iterations": [],
            "terminal": None,
            "sourceEventIds": [],
        }
        self.segments: dict[int | None, _Segment] = {}
        self.current: int | None = None

    def segment(self, iteration: int | None) -> _Segment:
        """The iteration's segment, added in order of first appearance."""
        found = self.segments.get(iteration)
        if found is None:
            found = self.segments[iteration] = _Segment(iteration)
            self.fact["iterations"].append(found.fact)
        return found

    def find_tool(self, call_id: str) -> tuple[_Segment, dict[str, Any]] | None:
        """The exchange with this call id in any segment of the turn (first in segment order)."""
        for segment in self.segments.values():
            for tool in segment.fact["tools"]:
                if tool["toolCallId"] == call_id:
                    return segment, tool
        return None


class _Projector:
    """One pass over a bounded read (docs/recap.md section 4)."""

    def __init__(self, query: Mapping[str, Any], redactor: _Redactor, facts: Facts) -> None:
        self.facts = facts
        self.run_filter: str | None = query["runId"]
        self.turn_filter: str | None = query["turnId"]
        self.redact = redactor
        self.turns: dict[tuple[str, str], TurnState] = {}
        self.matched = 0
        self.unassigned = 0
        self.absorbers: dict[str, Callable[[TurnState, int, Mapping[str, Any]], None]] = {
            "loop_checkpoint": self.checkpoint,
            "message": self.message,
            "tool_call": self.tool_call,
            "tool_result": self.tool_result,
            "plan": self.plan,
            "progress": self.progress,
            "terminal": self.terminal,
        }

    def absorb(self, event: Mapping[str, Any], event_id: int) -> None:
        kind, run_id, turn_id = self.facts.placement(event)
        if kind is None:
            return
        if run_id is None or turn_id is None:
            self.unassigned += 1  # counted before the filters, as Harn does
            return
        if (self.run_filter is not None and run_id != self.run_filter) or (
            self.turn_filter is not None and turn_id != self.turn_filter
        ):
            return
        key = (run_id, turn_id)
        turn = self.turns.get(key)
        if turn is None:
            turn = self.turns[key] = TurnState(run_id, turn_id)
        turn.fact["sourceEventIds"].append(event_id)
        self.absorbers[kind](turn, event_id, event)

    # -- placement

    def current_segment(self, turn: TurnState) -> _Segment:
        """The open iteration, or the null segment (a fact placed there counts unassigned)."""
        if turn.current is None:
            self.unassigned += 1
        return turn.segment(turn.current)

    def mark(self, segment: _Segment, event_id: int) -> None:
        segment.fact["sourceEventIds"].append(event_id)
        self.matched += 1

    # -- one method per recap kind

    def checkpoint(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        label, iteration = self.facts.checkpoint(event)
        if iteration is None:
            self.unassigned += 1
            return
        segment = turn.segment(iteration)
        segment.fact["sourceEventIds"].append(event_id)
        if label == "iteration_start":
            segment.started = True
            turn.current = iteration
            self.matched += 1
        elif label == "iteration_end":
            segment.ended = True
            if turn.current == iteration:
                turn.current = None
            self.matched += 1
        else:
            self.unassigned += 1

    def message(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        role, visibility, text = self.facts.message(event)
        if text is None:
            return
        if role == "user" and visibility in (None, "public"):
            turn.fact["prompts"].append({"text": self.redact.text(text), "sourceEventId": event_id})
            self.matched += 1
        elif role == "assistant" and visibility == "public":
            segment = self.current_segment(turn)
            segment.fact["assistantText"].append(
                {"text": self.redact.text(text), "sourceEventId": event_id}
            )
            self.mark(segment, event_id)

    def tool_call(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        # The segment is chosen before the call id is checked, as Harn does:
        # a call without an id outside an iteration counts twice.
        segment = self.current_segment(turn)
        call_id, tool_name, value = self.facts.tool_call(event)
        if call_id is None:
            self.unassigned += 1
            return
        incoming = {
            "toolCallId": call_id,
            "toolName": ABSENT if tool_name is None else tool_name,
            "state": "open",
            "callObserved": True,
            "resultObserved": False,
            "input": self.redact.value(value),
            "output": ABSENT,
            "verification": ABSENT,
            "sourceEventIds": [event_id],
        }
        _upsert(turn, segment, incoming)
        self.mark(segment, event_id)

    def tool_result(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        call_id, tool_name, failed, value, verification = self.facts.tool_result(event)
        if call_id is None:
            self.unassigned += 1
            return
        existing = turn.find_tool(call_id)
        segment = existing[0] if existing is not None else self.current_segment(turn)
        incoming = {
            "toolCallId": call_id,
            "toolName": ABSENT if tool_name is None else tool_name,
            "state": "failed" if failed else "completed",
            "callObserved": False,
            "resultObserved": True,
            "input": ABSENT,
            "output": self.redact.value(value),
            "verification": self.verification(verification, event_id),
            "sourceEventIds": [event_id],
        }
        _upsert(turn, segment, incoming)
        self.mark(segment, event_id)

    def verification(self, value: tuple[str, str, tuple[str, ...]] | None, event_id: int) -> Any:
        if value is None or value[0] != VERIFICATION_SCHEMA or value[1] != "passed":
            return ABSENT
        return {
            "schema": value[0],
            "status": "passed",
            "verifiedPaths": [self.redact.text(path) for path in value[2]],
            "sourceEventId": event_id,
        }

    def plan(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        plan = self.facts.plan(event)
        if plan is None:
            self.unassigned += 1  # not a plan document the recap can read
            return
        document_id, revision_id, title, summary, steps, plan_event = plan
        fact = {
            "documentId": document_id,
            "revisionId": revision_id,
            "title": self.redact.text(title),
            "summary": self.redact.text(summary),
            "steps": [
                {"id": step_id, "content": self.redact.text(content), "status": status}
                for step_id, content, status in steps
            ],
            "event": None
            if plan_event is None
            else dict(zip(("kind", "eventId", "inputRevisionId"), plan_event, strict=True)),
            "sourceEventId": event_id,
        }
        segment = self.current_segment(turn)
        segment.fact["plans"].append(fact)
        self.mark(segment, event_id)

    def progress(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        report = self.facts.progress(event)
        if report is None:
            self.unassigned += 1  # one invalid entry makes the whole report unplaceable
            return
        message, read_entries, replace = report
        if message is None and not read_entries:
            self.unassigned += 1
            return
        entries = [
            {"content": self.redact.text(content), "status": status, "priority": priority}
            for content, status, priority in read_entries
        ]
        segment = self.current_segment(turn)
        segment.fact["progress"].append(
            {
                "message": self.redact.optional(message),
                "entries": entries,
                "replace": replace,
                "sourceEventId": event_id,
            }
        )
        self.mark(segment, event_id)

    def terminal(self, turn: TurnState, event_id: int, event: Mapping[str, Any]) -> None:
        values = dict(zip(_TERMINAL_MEMBERS, self.facts.terminal(event), strict=True))
        complete = values["kind"] is not None and values["owner"] is not None
        fact: dict[str, Any] = {"state": "complete" if complete else "incomplete"}
        for member in _TERMINAL_MEMBERS:
            fact[member] = self.redact.optional(values[member])
        fact["sourceEventId"] = event_id
        turn.fact["terminal"] = fact  # the latest terminal event read wins
        self.matched += 1

    # -- the end of the pass

    def finish(self) -> list[dict[str, Any]]:
        for turn in self.turns.values():
            terminal = turn.fact["terminal"]
            incomplete = terminal is not None and terminal["state"] == "incomplete"
            for segment in turn.segments.values():
                fact = segment.fact
                if fact["iteration"] is None:
                    fact["state"] = "unassigned"
                    incomplete = True
                elif segment.started and segment.ended:
                    fact["state"] = "complete"
                else:
                    fact["state"] = "incomplete"
                    incomplete = True
                for tool in fact["tools"]:
                    for member in _TOOL_VALUES:
                        if tool[member] is ABSENT:
                            tool[member] = None
                    if not (tool["callObserved"] and tool["resultObserved"]):
                        tool["state"] = "incomplete"
                        incomplete = True
            if incomplete:
                turn.fact["state"] = "incomplete"
            elif terminal is not None:
                turn.fact["state"] = "complete"
            elif not turn.fact["iterations"]:
                turn.fact["state"] = "open"
            else:
                turn.fact["state"] = "incomplete"
        return [turn.fact for turn in self.turns.values()]


def _upsert(turn: TurnState, segment: _Segment, incoming: dict[str, Any]) -> None:
    """Merge an observed call or result into the turn's exchange with its id, or add it."""
    found = turn.find_tool(incoming["toolCallId"])
    if found is None:
        segment.fact["tools"].append(incoming)
        return
    tool = found[1]
    for member in _TOOL_VALUES:
        if incoming[member] is not ABSENT:
            tool[member] = incoming[member]  # a later observation's value wins, null too
    tool["callObserved"] = tool["callObserved"] or incoming["callObserved"]
    tool["resultObserved"] = tool["resultObserved"] or incoming["resultObserved"]
    if incoming["resultObserved"]:
        tool["state"] = incoming["state"]
    tool["sourceEventIds"].extend(incoming["sourceEventIds"])


def _not_increasing(index: int, event_id: int, previous: int) -> InvalidDocument:
    return InvalidDocument(
        [
            Finding(
                f"$[{index}].id",
                "events_not_increasing",
                f"event {event_id} follows event {previous}",
                "pass the events of one bounded read, in id order",
            )
        ]
    )


def project(
    events: Sequence[SourceRecord],
    query: Mapping[str, Any],
    *,
    rows_beyond: int,
    policy: RedactionPolicy,
    extensions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The snapshot of one bounded read.

    ``events`` are every event the read returned (all kinds, before the run
    and turn filters) in id order, each with its record hash; ``query`` is the
    query echo (:func:`query_echo`: the query as received, absent members
    ``None``, ``limit`` unclamped); ``rows_beyond`` counts the session's events
    after the last one read.  Every public text and tool value goes through
    ``policy``.  ``extensions`` is attached verbatim ({} when not given).
    Raises :class:`InvalidDocument` when the events are not in id order.
    """
    from session_contracts.journal import stored_event

    # A journal event gives the facts of its stored form (docs/journal.md).
    stored = [
        stored_event(record.event, record_hash=record.record_hash, prev_hash=None)
        for record in events
    ]
    return _project(
        ((event, record.record_hash) for event, record in zip(stored, events, strict=True)),
        StoredFacts,
        query,
        rows_beyond=rows_beyond,
        policy=policy,
        extensions=extensions,
    )


def project_stored(
    events: Sequence[Mapping[str, Any]],
    query: Mapping[str, Any],
    *,
    rows_beyond: int,
    policy: RedactionPolicy,
    extensions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`project` over Harn's ``StoredEvent`` values (serde form, checked), read as
    Harn's recap reads them (docs/recap.md, "Stored events"); each event's record hash
    is its own ``record_hash`` (a redacted projection's source hash)."""
    return _project(
        ((event, StoredFacts.record_hash(event)) for event in events),
        StoredFacts,
        query,
        rows_beyond=rows_beyond,
        policy=policy,
        extensions=extensions,
    )


def _project(
    events: Iterable[tuple[Mapping[str, Any], str]],
    facts: Facts,
    query: Mapping[str, Any],
    *,
    rows_beyond: int,
    policy: RedactionPolicy,
    extensions: Mapping[str, Any] | None,
) -> dict[str, Any]:
    if rows_beyond < 0:
        raise ValueError(f"rows_beyond must not be negative, not {rows_beyond}")
    projector = _Projector(query, _Redactor(policy), facts)
    source_events: list[dict[str, Any]] = []
    previous = -1
    event_id_of = facts.event_id
    for index, (event, record_hash) in enumerate(events):
        event_id = event_id_of(event)
        if event_id <= previous:
            raise _not_increasing(index, event_id, previous)
        previous = event_id
        source_events.append({"eventId": event_id, "recordHash": record_hash})
        projector.absorb(event, event_id)
    turns = projector.finish()
    last_event_id = source_events[-1]["eventId"] if source_events else None
    next_event_id = last_event_id + 1 if last_event_id is not None and rows_beyond else None
    source = {
        "firstEventId": source_events[0]["eventId"] if source_events else None,
        "lastEventId": last_event_id,
        "events": source_events,
    }
    snapshot: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "sessionId": query["sessionId"],
        "query": {
            "sessionId": query["sessionId"],
            "runId": query["runId"],
            "turnId": query["turnId"],
            "fromEventId": query["fromEventId"],
            "limit": query["limit"],
        },
        "cursor": {"lastEventId": last_event_id, "nextEventId": next_event_id},
        "coverage": {
            "scanned": len(source_events),
            "matched": projector.matched,
            "pending": rows_beyond if last_event_id is not None else 0,
            "unassigned": projector.unassigned,
            "truncated": next_event_id is not None,
        },
        "source": source,
        "contentHash": content_hash_of_source(source),
        "projectionHash": "",
        "turns": turns,
        "extensions": {},
    }
    # Last: every member it binds is final (docs/hashing.md 4.3).
    snapshot["projectionHash"] = projection_hash(snapshot)
    return snapshot if extensions is None else with_extensions(snapshot, extensions)


def with_extensions(snapshot: Mapping[str, Any], extensions: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``snapshot`` carrying ``extensions`` (replacing any); both hashes unchanged.

    projectionHash excludes extensions (docs/hashing.md 4.3), so nothing is
    recomputed.  The extensions must be JSON values; raises
    :class:`InvalidDocument` (paths under ``$.extensions``) otherwise.
    """
    copied = dict(extensions)
    try:
        harn_canonical_bytes(copied)
    except InvalidDocument as exc:
        raise InvalidDocument(
            [Finding(f"$.extensions{f.path[1:]}", f.code, f.message, f.hint) for f in exc.findings]
        ) from None
    return {**snapshot, "extensions": copied}
