"""The recap projection: canonical session events in, a recap snapshot out (pure).

:func:`project` is deterministic and read-only: the same events, query and
policy give the same snapshot, byte for byte once canonicalized, and nothing
is written, fetched or asked of a model.  ``docs/recap.md`` defines every
member; in short, one pass over the matched events in id order

* groups visible prompts and terminal facts by prompt turn (``turnId``, turns
  in order of first appearance) and assistant text, tool exchanges, plans and
  progress by prompt turn and agent-loop iteration (ascending);
* joins a tool call and its result by ``callId`` into one exchange, pending
  until the result is among the matched events;
* counts what it could not place (``coverage.unassigned``) and what is still
  pending (``coverage.pending``);
* redacts every public text through the active policy, all texts at once
  (:func:`redact_texts` skips detectors that cannot match);
* hashes last: ``contentHash`` over ``source.events``, then ``projectionHash``
  over the rest (``session_contracts._snapshot_hashes``, docs/hashing.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import orjson
from session_contracts.conformance.recap._redaction_gate import redact_texts, redact_values

from session_contracts._canonical import canonical_bytes
from session_contracts._errors import Finding, InvalidDocument
from session_contracts._redaction import RedactionPolicy
from session_contracts._snapshot_hashes import content_hash_of_sources, projection_hash

__all__ = [
    "CONTENT_KINDS",
    "FACT_KINDS",
    "SCHEMA_VERSION",
    "SNAPSHOT_DOCUMENT_TYPE",
    "SourceRecord",
    "project",
    "with_extensions",
]

SCHEMA_VERSION = 1
SNAPSHOT_DOCUMENT_TYPE = "session-recap.snapshot"
# Kinds that become facts of a prompt turn; every other kind is scanned and
# matched (and listed in source.events) but projects nothing.
FACT_KINDS = frozenset(
    {"visible_prompt", "assistant_text", "tool_call", "tool_result", "plan", "progress", "terminal"}
)
# Facts of one agent-loop iteration: without an iteration they have no place.
CONTENT_KINDS = frozenset({"assistant_text", "tool_call", "tool_result", "plan", "progress"})


class SourceRecord(Protocol):
    """One canonical session event (wire form) and its record hash."""

    @property
    def event(self) -> Mapping[str, Any]: ...

    @property
    def record_hash(self) -> str: ...


class _Texts:
    """Public texts waiting for redaction, and where each one goes."""

    __slots__ = ("arguments", "places", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.places: list[tuple[dict[str, Any], str]] = []
        self.arguments: list[tuple[dict[str, Any], Any]] = []

    def put(self, target: dict[str, Any], key: str, text: str) -> None:
        target[key] = text
        self.texts.append(text)
        self.places.append((target, key))

    def put_arguments(self, exchange: dict[str, Any], arguments: Any) -> None:
        """Tool arguments, written later as canonical JSON text (all calls at once)."""
        exchange["arguments"] = ""
        self.arguments.append((exchange, arguments))

    def redact(self, policy: RedactionPolicy) -> None:
        # Arguments are redacted twice: as a JSON value first (each string on
        # its own and under its key, so `{"env": "token: ..."}` loses its
        # secret although the text form hides it behind escaped quotes), then
        # as canonical JSON text with the other texts (so a pair such as
        # `"password": "..."` goes too, which the value pass leaves alone).
        values = redact_values([arguments for _, arguments in self.arguments], policy)
        rendered = _canonical_texts(values)
        for (exchange, _), text in zip(self.arguments, rendered, strict=True):
            self.put(exchange, "arguments", text)
        for (target, key), text in zip(self.places, redact_texts(self.texts, policy), strict=True):
            target[key] = text


def _canonical_texts(values: list[Any]) -> list[str]:
    """Each value's canonical JSON (RFC 8785) as text.

    orjson with sorted keys writes most values canonically but not all
    (floats, some key orders); one ``canonical_bytes`` over the whole list
    settles it for every value at once, since the canonical form of a list is
    its elements' forms joined by commas.  Otherwise each value is
    canonicalized on its own.
    """
    try:
        quick = [orjson.dumps(value, option=orjson.OPT_SORT_KEYS) for value in values]
        if canonical_bytes(values) == b"[" + b",".join(quick) + b"]":
            return [text.decode() for text in quick]
    except (orjson.JSONEncodeError, InvalidDocument):
        pass
    return [canonical_bytes(value).decode() for value in values]


class _Turn:
    __slots__ = ("iterations", "prompts", "run_id", "terminal", "turn_id")

    def __init__(self, turn_id: str, run_id: str | None) -> None:
        self.turn_id = turn_id
        self.run_id = run_id
        self.prompts: list[dict[str, Any]] = []
        self.iterations: dict[int, dict[str, Any]] = {}
        self.terminal: dict[str, Any] | None = None

    def iteration(self, number: int) -> dict[str, Any]:
        found = self.iterations.get(number)
        if found is None:
            found = {
                "iteration": number,
                "assistantText": [],
                "toolExchanges": [],
                "plans": [],
                "progress": [],
            }
            self.iterations[number] = found
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "turnId": self.turn_id,
            "runId": self.run_id,
            "prompts": self.prompts,
            "iterations": [self.iterations[n] for n in sorted(self.iterations)],
            "terminal": self.terminal,
        }


class _Call:
    """A tool call seen in the pass: its exchange when placed, and whether it settled."""

    __slots__ = ("exchange", "settled")

    def __init__(self, exchange: dict[str, Any] | None) -> None:
        self.exchange = exchange
        self.settled = False


def _not_increasing(index: int, event_id: int, previous: int) -> InvalidDocument:
    return InvalidDocument(
        [
            Finding(
                f"$[{index}].id",
                "events_not_increasing",
                f"event {event_id} follows event {previous}",
                "pass the matched events of one bounded read, in id order",
            )
        ]
    )


def project(
    events: Sequence[SourceRecord],
    query: Mapping[str, Any],
    *,
    scanned: int,
    last_event_id: int | None,
    next_event_id: int | None,
    policy: RedactionPolicy,
    extensions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The snapshot of one bounded read.

    ``events`` are the matched events (the scanned events that pass the
    query's run and turn filters) in id order, each with its record hash;
    ``query`` is the effective query (:func:`effective_query`); ``scanned``,
    ``last_event_id`` and ``next_event_id`` describe the read (a journal's
    :class:`RecordRead`).  Every public text goes through ``policy``.
    ``extensions``, when given, is attached verbatim after the hashes.
    Raises :class:`InvalidDocument` when the inputs contradict each other.
    """
    if not 0 <= len(events) <= scanned:
        raise InvalidDocument(
            [
                Finding(
                    "$",
                    "coverage_inconsistent",
                    f"{len(events)} matched events but {scanned} scanned",
                    "matched events are a subset of the scanned ones",
                )
            ]
        )
    texts = _Texts()
    put = texts.put  # called for every text of the read
    turns: dict[str, _Turn] = {}
    calls: list[_Call] = []
    open_calls: dict[str, _Call] = {}
    unassigned = 0
    sources: list[dict[str, Any]] = []
    previous = -1
    for index, record in enumerate(events):
        event = record.event
        event_id = event["id"]
        if event_id <= previous:
            raise _not_increasing(index, event_id, previous)
        previous = event_id
        sources.append({"id": event_id, "recordHash": record.record_hash})
        kind = event["kind"]
        if kind not in FACT_KINDS:
            continue
        payload = event["payload"]
        if kind == "tool_result":
            call = open_calls.pop(payload["callId"], None)
            if call is None or call.exchange is None:
                unassigned += 1  # no call to settle, or the call itself has no place
                if call is not None:
                    call.settled = True
                continue
            call.settled = True
            exchange = call.exchange
            exchange["resultEventId"] = event_id
            exchange["status"] = "succeeded" if payload["ok"] else "failed"
            if payload["output"] is not None:
                put(exchange, "output", payload["output"])
            continue
        turn_id = event["turnId"]
        iteration = event["iteration"]
        if turn_id is None or (iteration is None and kind in CONTENT_KINDS):
            unassigned += 1
            if kind == "tool_call":
                # Its result (if matched) settles it, and is unassigned with it.
                call = _Call(None)
                calls.append(call)
                open_calls[payload["callId"]] = call
            continue
        turn = turns.get(turn_id)
        if turn is None:
            turn = turns[turn_id] = _Turn(turn_id, event["runId"])
        elif turn.run_id is None:
            turn.run_id = event["runId"]
        # Most frequent kinds first: this chain runs once per matched event.
        if kind == "tool_call":
            exchange = {
                "callId": payload["callId"],
                "toolName": payload["toolName"],
                "callEventId": event_id,
                "resultEventId": None,
                "status": "pending",
            }
            # The arguments object as canonical JSON text: one spelling per value.
            texts.put_arguments(exchange, payload["arguments"])
            exchange["output"] = None
            turn.iteration(iteration)["toolExchanges"].append(exchange)
            call = _Call(exchange)
            calls.append(call)
            open_calls[payload["callId"]] = call
        elif kind == "assistant_text":
            fact: dict[str, Any] = {"eventId": event_id}
            put(fact, "text", payload["text"])
            turn.iteration(iteration)["assistantText"].append(fact)
        elif kind == "plan":
            steps = []
            for step in payload["steps"]:
                entry: dict[str, Any] = {"status": step["status"]}
                put(entry, "text", step["text"])
                steps.append(entry)
            turn.iteration(iteration)["plans"].append({"eventId": event_id, "steps": steps})
        elif kind == "progress":
            fact = {"eventId": event_id, "phase": payload["phase"]}
            put(fact, "summary", payload["summary"])
            turn.iteration(iteration)["progress"].append(fact)
        elif kind == "visible_prompt":
            fact = {"eventId": event_id}
            put(fact, "text", payload["text"])
            turn.prompts.append(fact)
        else:  # terminal
            fact = {"eventId": event_id, "stopClass": payload["stopClass"], "summary": None}
            if payload["summary"] is not None:
                put(fact, "summary", payload["summary"])
            turn.terminal = fact  # a later terminal event supersedes an earlier one
    texts.redact(policy)
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
        "cursor": {
            "fromEventId": query["fromEventId"],
            "lastEventId": last_event_id,
            "nextEventId": next_event_id,
        },
        "coverage": {
            "scanned": scanned,
            "matched": len(events),
            "pending": sum(1 for call in calls if not call.settled),
            "unassigned": unassigned,
        },
        "source": {"events": sources},
        "contentHash": content_hash_of_sources(sources),
        "projectionHash": "",
        "turns": [turn.to_json() for turn in turns.values()],
    }
    # Last: every member it binds is final (docs/hashing.md 4.3).
    snapshot["projectionHash"] = projection_hash(snapshot)
    return snapshot if extensions is None else with_extensions(snapshot, extensions)


def with_extensions(snapshot: Mapping[str, Any], extensions: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``snapshot`` carrying ``extensions`` (replacing any); both hashes unchanged.

    projectionHash excludes extensions (docs/hashing.md 4.3), so nothing is
    recomputed.  The extensions must be JSON with a canonical form; raises
    :class:`InvalidDocument` (paths under ``$.extensions``) otherwise.
    """
    copied = dict(extensions)
    try:
        canonical_bytes(copied)
    except InvalidDocument as exc:
        raise InvalidDocument(
            [Finding(f"$.extensions{f.path[1:]}", f.code, f.message, f.hint) for f in exc.findings]
        ) from None
    return {**snapshot, "extensions": copied}
