"""More single-defect producers: the reference with exactly one rule broken.

Each defect wraps the reference HANDLERS (as tests/producers/faulty.py does) and
breaks one output-observable rule of the seeds the way a careful third party
might. ``DEFECTS`` names, for each, the operation it replaces, the seed sentence
(conformance/fixtures/sentences.json) it breaks, the check that must catch it
and the golden fixture that must catch it; tests/integration/test_defects.py proves both
catch it at default settings, and docs/checks.md ("Defect matrix") shows the
table. Run one as a producer: ``python tests/producers/defects.py NAME``.
"""

from __future__ import annotations

import contextlib
import copy
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from serving import serve_as

from session_contracts.conformance.protocol import Rejected
from session_contracts.conformance.reference.producer import HANDLERS

Handler = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Defect:
    """One defect: where it lives, the rule it breaks, and who must catch it."""

    operation: str
    handler: Handler
    rule: str  # a sentence id of conformance/fixtures/sentences.json
    check: str  # the certify check that names the rule
    fixture: str  # the golden fixture (area/stem) that exposes it; "" when none can
    what: str  # the defect, in a few words


# -- recap ----------------------------------------------------------------------------------------
def _rehash(output: Any) -> Any:
    """A consistent producer rehashes what it changed: the defect stays semantic."""
    from session_contracts.hashes.snapshot import projection_hash

    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if isinstance(snapshot, dict):
        snapshot["projectionHash"] = projection_hash(snapshot)
    return output


def _snapshot(output: Any) -> dict[str, Any] | None:
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    return snapshot if isinstance(snapshot, dict) else None


def sorts_iterations_ascending(case: Mapping[str, Any]) -> Any:
    # Lists a turn's iterations by number (null last), not in order of first appearance.
    output = HANDLERS["recap.project"](case)
    for turn in (_snapshot(output) or {}).get("turns", []):
        turn["iterations"].sort(key=lambda it: (it["iteration"] is None, it["iteration"] or 0))
    return _rehash(output)


def next_event_id_from_last_matched(case: Mapping[str, Any]) -> Any:
    # Continues after the last event it matched, not after the last event it read.
    output = HANDLERS["recap.project"](case)
    snapshot = _snapshot(output)
    if snapshot is None or snapshot["cursor"]["nextEventId"] is None:
        return output
    matched = [i for turn in snapshot["turns"] for i in turn["sourceEventIds"]]
    if matched:
        snapshot["cursor"]["nextEventId"] = max(matched) + 1
    return _rehash(output)


def _restore_key_redactions(shown: Any, raw: Any) -> Any:
    if isinstance(shown, dict) and isinstance(raw, dict):
        return {k: _restore_key_redactions(v, raw.get(k)) for k, v in shown.items()}
    if isinstance(shown, list) and isinstance(raw, list) and len(shown) == len(raw):
        return [_restore_key_redactions(s, r) for s, r in zip(shown, raw, strict=True)]
    if shown == "[redacted]" and raw is not None and raw != shown:
        return copy.deepcopy(raw)
    return shown


def keeps_sensitive_tool_arguments(case: Mapping[str, Any]) -> Any:
    # Scans tool values for secret patterns but never redacts by member name:
    # {"password": "hunter2"} goes out as written.
    raw = {
        event["id"]: event["payload"]
        for event in case.get("events", [])
        if event.get("kind") in ("tool_call", "tool_result") and isinstance(event["payload"], dict)
    }
    output = HANDLERS["recap.project"](case)
    for turn in (_snapshot(output) or {}).get("turns", []):
        for iteration in turn["iterations"]:
            for tool in iteration["tools"]:
                for event_id in tool["sourceEventIds"]:
                    payload = raw.get(event_id, {})
                    for member in ("input", "output"):
                        if payload.get(member) is not None:
                            tool[member] = _restore_key_redactions(tool[member], payload[member])
    return _rehash(output)


@contextlib.contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    saved = vars(module)[name]  # a class's descriptor itself, not what it binds
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def clamps_limit_to_32769(case: Mapping[str, Any]) -> Any:
    # An off-by-one ceiling: 32,769 is kept, not clamped to 32,768.
    from session_contracts.recap import service as _service

    def clamp(requested: int | None) -> int:
        return 4096 if requested is None else max(1, min(32_769, requested))

    with _patched(_service, "clamp_limit", clamp):
        return HANDLERS["recap.project"](case)


# -- health ---------------------------------------------------------------------------------------
def _reduce_with(case: Mapping[str, Any], transitions: Mapping[str, Any]) -> Any:
    """The reference reducer with some transitions replaced (after its own input checks)."""
    from session_contracts.health import reducer as _reducer

    HANDLERS["health.reduce"](case)  # rejects what the reference rejects
    state = _reducer.initial_state(str(case["session_id"]))
    facts: list[Any] = []
    for observation in case["observations"]:
        transition = transitions.get(observation.get("kind"))
        if transition is None:
            state, emitted = _reducer.step(state, observation)
        else:
            state, emitted = transition(state, observation)
        facts.extend(emitted)
    return {"facts": facts}


def reset_clears_gauges(case: Mapping[str, Any]) -> Any:
    # A transcript reset also forgets the diagnostic trend and the last stop class.
    from session_contracts.health import reducer as _reducer

    def reset(state: Any, observation: Any) -> Any:
        return replace(
            state,
            rolling=_reducer.Counts(),
            diagnostics=(),
            diagnostic_trend=None,
            last_stop_class=None,
        ), ()

    return _reduce_with(case, {"transcript_reset": reset})


def reset_forgets_resolved_calls(case: Mapping[str, Any]) -> Any:
    # A transcript reset also forgets which calls were counted: a repeated
    # terminal update after the reset counts the call again.
    from session_contracts.health import reducer as _reducer

    def reset(state: Any, observation: Any) -> Any:
        return replace(
            state, rolling=_reducer.Counts(), counted_calls=type(state.counted_calls)()
        ), ()

    return _reduce_with(case, {"transcript_reset": reset})


# -- feedback -------------------------------------------------------------------------------------
def _steps(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    return copy.deepcopy(list(case["steps"]))


def _feedback(case: Mapping[str, Any], steps: list[dict[str, Any]]) -> Any:
    return HANDLERS["feedback.run"](dict(case, steps=steps))


def future_tolerance_300_ms(case: Mapping[str, Any]) -> Any:
    # Allows 300 ms of clock skew instead of five minutes.
    for step in case["steps"]:
        usage = step.get("request", {}).get("usage") if step.get("call") == "checkpoint" else None
        if isinstance(usage, dict) and isinstance(usage.get("observed_at_unix_ms"), int):
            ahead = usage["observed_at_unix_ms"] - int(step["at_unix_ms"])
            if 300 < ahead <= 300_000:
                raise Rejected(
                    "usage_future_timestamp",
                    "$.usage.observed_at_unix_ms",
                    "observed more than 300 ms ahead of the server clock",
                )
    return HANDLERS["feedback.run"](case)


def _fits_in_characters(text: Any, limit: int) -> bool:
    return isinstance(text, str) and len(text) <= limit < len(text.encode("utf-8"))


def _shorten(text: str, limit: int) -> str:
    # What a producer counting characters stores fits its own idea of the
    # limit; it is cut here only so the reference accepts the rest of the case.
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def _progress_items(request: dict[str, Any], member: str) -> list[Any]:
    progress = request.get("progress")
    items = progress.get(member) if isinstance(progress, dict) else None
    return items if isinstance(items, list) else []


def _checkpoint_requests(steps: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each checkpoint step's index and request (an object)."""
    for index, step in enumerate(steps):
        request = step.get("request")
        if step.get("call") == "checkpoint" and isinstance(request, dict):
            yield index, request


def _counts_characters_in_list(member: str, limit: int) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        steps = _steps(case)
        for _, request in _checkpoint_requests(steps):
            items = _progress_items(request, member)
            for index, item in enumerate(items):
                if _fits_in_characters(item, limit):
                    items[index] = _shorten(item, limit)
        return _feedback(case, steps)

    return handler


def _counts_characters_in_objects(member: str, key: str, limit: int) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        steps = _steps(case)
        for _, request in _checkpoint_requests(steps):
            for item in _progress_items(request, member):
                if isinstance(item, dict) and _fits_in_characters(item.get(key), limit):
                    item[key] = _shorten(item[key], limit)
        return _feedback(case, steps)

    return handler


def source_counted_in_characters(case: Mapping[str, Any]) -> Any:
    # The usage source's 128-byte limit checked in characters.
    steps = _steps(case)
    for step in steps:
        request = step.get("request")
        usage = request.get("usage") if isinstance(request, dict) else None
        if isinstance(usage, dict) and _fits_in_characters(usage.get("source"), 128):
            usage["source"] = _shorten(usage["source"], 128)
    return _feedback(case, steps)


def _no_item_limit(member: str) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        # Keeps every item it is sent; it stores (here: forwards) the first eight.
        steps = _steps(case)
        for step in steps:
            request = step.get("request")
            progress = request.get("progress") if isinstance(request, dict) else None
            if isinstance(progress, dict) and isinstance(progress.get(member), list):
                del progress[member][8:]
        return _feedback(case, steps)

    return handler


_COUNTERS = ("input_tokens", "output_tokens", "cached_input_tokens")


def _reset_counter(usage: dict[str, Any], index: int) -> None:
    usage["counter_id"] = f"{usage['counter_id']}~{index}"


def decrease_checked_for_input_tokens_only(case: Mapping[str, Any]) -> Any:
    # A lower output_tokens or cached_input_tokens passes: only input_tokens is compared.
    steps = _steps(case)
    peaks: dict[tuple[Any, Any], dict[str, int]] = {}
    renamed: dict[tuple[Any, Any], str] = {}
    for index, step in enumerate(steps):
        request = step.get("request")
        usage = request.get("usage") if isinstance(request, dict) else None
        if not isinstance(usage, dict):
            continue
        key = (usage.get("source"), usage.get("counter_id"))
        if key in renamed:
            usage["counter_id"] = renamed[key]
        peak = peaks.setdefault(key, {})
        lower = [
            f for f in _COUNTERS if isinstance(usage.get(f), int) and usage[f] < peak.get(f, -1)
        ]
        if lower and "input_tokens" not in lower:
            _reset_counter(usage, index)  # the sample starts a fresh counter: accepted
            renamed[key] = usage["counter_id"]
            peaks[key] = {}
        for field in _COUNTERS:
            if isinstance(usage.get(field), int):
                peaks[key][field] = max(peaks[key].get(field, -1), usage[field])
    return _feedback(case, steps)


def counter_keyed_without_source(case: Mapping[str, Any]) -> Any:
    # Keys the no-decrease rule by counter_id alone: two sources sharing a
    # counter name are one counter, so the second source's lower value is refused.
    steps = _steps(case)
    first_source: dict[Any, Any] = {}
    for step in steps:
        request = step.get("request")
        usage = request.get("usage") if isinstance(request, dict) else None
        if not isinstance(usage, dict):
            continue
        counter = usage.get("counter_id")
        owner = first_source.setdefault(counter, usage.get("source"))
        usage["source"] = owner  # the same counter, whoever reports it
    return _feedback(case, steps)


# -- run records ----------------------------------------------------------------------------------
def _spans(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    spans = case.get("run", {}).get("spans", [])
    return [s for s in spans if isinstance(s, dict)]


def no_span_cycle_detection(case: Mapping[str, Any]) -> Any:
    # Checks that parents exist, never that following them ends at a root.
    spans = _spans(case)
    ids = {s.get("span_id") for s in spans}
    cut = copy.deepcopy(dict(case))
    for span in cut["run"].get("spans", []):
        if span.get("parent_span_id") in ids:
            span["parent_span_id"] = None  # the tree is not walked at all
    output = HANDLERS["runrecord.project"](cut)
    for written, given in zip(output["evidence"]["trace_spans"], spans, strict=True):
        written["parent_span_id"] = given.get("parent_span_id")
    return output


def refuses_child_before_parent(case: Mapping[str, Any]) -> Any:
    # Resolves parents in one pass: a parent listed after its child is "missing",
    # and the one-pass resolver calls the unresolved link a broken tree.
    seen: set[Any] = set()
    for index, span in enumerate(_spans(case)):
        parent = span.get("parent_span_id")
        if parent is not None and parent not in seen:
            raise Rejected(
                "span_cycle",
                f"$.run.spans[{index}].parent_span_id",
                f"span {span.get('span_id')} names parent {parent}, not seen before it",
            )
        seen.add(span.get("span_id"))
    return HANDLERS["runrecord.project"](case)


def skips_null_receipt(case: Mapping[str, Any]) -> Any:
    # Takes the latest non-null completion_receipt: an explicit null is skipped.
    events = [
        e
        for e in case.get("events", [])
        if not (
            isinstance(e, dict)
            and e.get("kind") == "session_attribute"
            and e.get("payload", {}).get("name") == "completion_receipt"
            and e.get("payload", {}).get("value") is None
        )
    ]
    return HANDLERS["runrecord.project"](dict(case, events=events))


# -- documents ------------------------------------------------------------------------------------
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _accepts_unknown_where(case: Mapping[str, Any], open_at: Callable[[str], bool]) -> Any:
    """Keeps (echoes) unknown members where ``open_at(path)``; closed elsewhere."""
    document = copy.deepcopy(case.get("document"))
    kept = False
    for _ in range(64):
        try:
            output = HANDLERS["document.roundtrip"](dict(case, document=document))
        except Rejected as rejected:
            if rejected.code != "unknown_field" or not open_at(rejected.path):
                raise
            parts = [
                int(index) if index else key
                for key, index in _PATH_PART.findall(rejected.path.removeprefix("$.document"))
            ]
            node: Any = document
            for part in parts[:-1]:
                node = node[part]
            del node[parts[-1]]
            kept = True
            continue
        return copy.deepcopy(case["document"]) if kept else output
    raise Rejected("too_many_unknown_fields", "$.document", "gave up")


def open_heuristics(case: Mapping[str, Any]) -> Any:
    # heuristics is an open object: unknown members inside it are kept.
    return _accepts_unknown_where(case, lambda path: ".heuristics." in path)


def accepts_unknown_below_turn(case: Mapping[str, Any]) -> Any:
    # Closed at the snapshot and the turn themselves, open below a turn.
    return _accepts_unknown_where(
        case, lambda path: re.search(r"\.turns\[\d+\]\.[^.\[]+[.\[]", path) is not None
    )


# -- more rules of the seeds, one defect each ------------------------------------------------------
def _health_facts(case: Mapping[str, Any], edit: Callable[[dict[str, Any]], None]) -> Any:
    output = HANDLERS["health.reduce"](case)
    for fact in output["facts"]:
        for view in ("turn", "rolling"):
            edit(fact[view])
    return output


def _patched_trend(trend: Callable[..., Any]) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        from session_contracts.health import reducer as _reducer

        original = _reducer.diagnostic_trend

        def patched(held: Any, latest: Any, current: Any) -> Any:
            return trend(original, held, latest, current)

        with _patched(_reducer, "diagnostic_trend", patched):
            return HANDLERS["health.reduce"](case)

    return handler


def _trend_from_one_collection(reference: Any, held: Any, latest: Any, current: Any) -> Any:
    # Reads "flat" from a single collection.
    return "flat" if not held else reference(held, latest, current)


def _trend_by_cardinality_only(reference: Any, held: Any, latest: Any, current: Any) -> Any:
    # Never oscillating: the counts alone decide.
    if not held:
        return current
    previous = held[-1]
    if latest.count != previous.count:
        return "improving" if latest.count < previous.count else "regressing"
    return "flat"


def edits_zero_before_any(case: Mapping[str, Any]) -> Any:
    # Starts the edit count at 0 instead of null (unmeasured).
    def edit(view: dict[str, Any]) -> None:
        if view["edits_since_verification"] is None:
            view["edits_since_verification"] = 0

    return _health_facts(case, edit)


def ratio_zero_without_calls(case: Mapping[str, Any]) -> Any:
    # Characters per call is 0 (not null) when no tool call completed.
    def edit(view: dict[str, Any]) -> None:
        balance = view["prose_to_tool_balance"]
        if isinstance(balance, dict) and balance.get("tool_calls") == 0:
            balance["characters_per_tool_call"] = 0.0

    return _health_facts(case, edit)


def rolling_copies_turn(case: Mapping[str, Any]) -> Any:
    # The rolling view repeats the iteration's measurements.
    output = HANDLERS["health.reduce"](case)
    for fact in output["facts"]:
        fact["rolling"] = copy.deepcopy(fact["turn"])
    return output


def first_stop_class_kept(case: Mapping[str, Any]) -> Any:
    # Keeps the first terminal classification, not the most recent.
    first: str | None = None
    observations = []
    for observation in case["observations"]:
        if isinstance(observation, dict) and observation.get("kind") == "terminal_outcome":
            first = first or observation.get("stop_class")
            observation = dict(observation, stop_class=first)
        observations.append(observation)
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def history_invents_calls(case: Mapping[str, Any]) -> Any:
    # Counts each loaded historical message as a successful tool call.
    observations: list[Any] = []
    for index, observation in enumerate(case["observations"]):
        count = observation.get("count") if isinstance(observation, dict) else None
        if observation.get("kind") == "historical_messages_loaded" and isinstance(count, int):
            observations += [
                {
                    "kind": "tool_call_completed",
                    "call_id": f"history-{index}-{n}",
                    "success": True,
                    "streaming_parse_candidate": False,
                }
                for n in range(count)
            ]
        observations.append(observation)
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def absent_exit_counted_as_zero(case: Mapping[str, Any]) -> Any:
    # An absent exit code is counted as a zero exit.
    observations: list[Any] = []
    for observation in case["observations"]:
        telemetry = observation.get("telemetry") if isinstance(observation, dict) else None
        if isinstance(telemetry, dict) and telemetry.get("command_exit_code") is None:
            observation = dict(observation, telemetry=dict(telemetry, command_exit_code=0))
        observations.append(observation)
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def no_fact_on_terminal_outcome(case: Mapping[str, Any]) -> Any:
    # Publishes facts after iterations only, never for a terminal outcome.
    from session_contracts.health import reducer as _reducer

    def terminal(state: Any, observation: Any) -> Any:
        return _reducer.step(state, observation)[0], ()

    return _reduce_with(case, {"terminal_outcome": terminal})


def no_fact_for_late_resolution(case: Mapping[str, Any]) -> Any:
    # A call resolved after the snapshot updates the state but publishes nothing.
    from session_contracts.health import reducer as _reducer

    def quiet(state: Any, observation: Any) -> Any:
        return _reducer.step(state, observation)[0], ()

    return _reduce_with(case, {"tool_call_completed": quiet, "tool_call_abandoned": quiet})


def stale_after_five_minutes(case: Mapping[str, Any]) -> Any:
    # Marks reports stale after five minutes, not fifteen.
    from session_contracts.feedback import rules as _rules

    with _patched(_rules, "STALE_AFTER_MS", 300_000):
        return HANDLERS["feedback.run"](case)


def replay_is_a_new_checkpoint(case: Mapping[str, Any]) -> Any:
    # A duplicate request is processed again instead of replaying its receipt.
    steps = _steps(case)
    seen: dict[Any, int] = {}
    for index, request in _checkpoint_requests(steps):
        request_id = request.get("request_id")
        if request_id in seen:
            request["request_id"] = f"{request_id}~{index}"
        seen[request_id] = index
    return _feedback(case, steps)


def shows_internal_text(case: Mapping[str, Any]) -> Any:
    # Shows internal prompts and assistant text as if they were public.
    events = []
    for event in case.get("events", []):
        payload = event.get("payload") if isinstance(event, dict) else None
        internal = isinstance(payload, dict) and payload.get("visibility") == "internal"
        if event.get("kind") == "message" and internal and isinstance(payload, dict):
            event = dict(event, payload=dict(payload, visibility="public"))
        events.append(event)
    return HANDLERS["recap.project"](dict(case, events=events))


def unassigned_not_counted(case: Mapping[str, Any]) -> Any:
    # Leaves coverage.unassigned at 0 while placing facts in the null segment.
    output = HANDLERS["recap.project"](case)
    snapshot = _snapshot(output)
    if snapshot is not None:
        snapshot["coverage"]["unassigned"] = 0
    return _rehash(output)


def _semantic_as(read: Callable[[str], str | None]) -> Handler:
    """The recap with Harn's ``semantic_string`` reading of text replaced by ``read``."""
    from session_contracts.recap import event_facts as _event_facts

    def semantic(text: Any) -> str | None:
        return read(text) if isinstance(text, str) else None

    def handler(case: Mapping[str, Any]) -> Any:
        with _patched(_event_facts, "semantic", semantic):
            return HANDLERS["recap.project"](case)

    return handler


# Reads call ids, names, labels and terminal members verbatim: " c1 " is not "c1".
keeps_text_untrimmed = _semantic_as(lambda text: text)
# Trims, but keeps a blank text as "" instead of reading it as absent.
keeps_blank_text = _semantic_as(lambda text: text.strip())
# Trims with the host language's notion of whitespace (Python's str.strip also removes
# U+001C..U+001F, which Rust's str::trim keeps).
trims_host_whitespace = _semantic_as(lambda text: text.strip() or None)


def trims_plan_and_progress_text(case: Mapping[str, Any]) -> Any:
    # Trims plan titles, summaries, steps and progress texts too, which Harn keeps verbatim.
    output = HANDLERS["recap.project"](case)
    for turn in (_snapshot(output) or {}).get("turns", []):
        for segment in turn["iterations"]:
            for plan in segment["plans"]:
                plan["title"], plan["summary"] = plan["title"].strip(), plan["summary"].strip()
                for step in plan["steps"]:
                    step["content"] = step["content"].strip()
            for report in segment["progress"]:
                if report["message"] is not None:
                    report["message"] = report["message"].strip()
    return _rehash(output)


def _floats_as_integers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _floats_as_integers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_floats_as_integers(item) for item in value]
    return value


def integral_floats_as_integers(case: Mapping[str, Any]) -> Any:
    # Stores events as RFC 8785 text and reads them back: 1.0 and -0.0 become 1 and 0.
    events = case.get("events")
    if isinstance(events, list):
        case = dict(case, events=_floats_as_integers(events))
    return HANDLERS["recap.project"](case)


def _through_float64(value: Any) -> Any:
    """A number as JSON.parse reads it and JSON.stringify writes it back: a double, an
    integral one below 10^21 written as an integer, one past the double range null."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, dict):
            return {key: _through_float64(item) for key, item in value.items()}
        if isinstance(value, list):
            return [_through_float64(item) for item in value]
        return value
    try:
        double = float(value)
    except OverflowError:  # JavaScript's Infinity, which JSON.stringify writes as null
        return None
    return int(double) if double.is_integer() and abs(double) < 1e21 else double


def float64_reader(case: Mapping[str, Any]) -> Any:
    # Reads the case line with a JSON reader that makes every number a double (JavaScript's
    # JSON.parse): integers beyond 2^53 and beyond 64 bits come back rounded.
    return HANDLERS["document.roundtrip"](_through_float64(case))


def stored_read_starts_after_from_event_id(case: Mapping[str, Any]) -> Any:
    # Reads Harn's stored events from fromEventId exclusive (> instead of >=).
    query, events = case.get("query"), case.get("storedEvents")
    start = query.get("fromEventId") if isinstance(query, dict) else None
    if isinstance(events, list) and isinstance(start, int):
        kept = [e for e in events if not (isinstance(e, dict) and e.get("event_id") == start)]
        case = dict(case, storedEvents=kept)
    return HANDLERS["recap.project"](case)


# -- recap of Harn's stored events (docs/recap.md section 11) -------------------------------------
def _stored_payloads(case: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Each stored event of a (copied) case, to be rewritten before the reference reads it."""
    for event in case.get("storedEvents") or []:
        if isinstance(event, dict) and isinstance(event.get("payload"), dict):
            yield event


def _read_stored(case: Mapping[str, Any], rewrite: Callable[[dict[str, Any]], None]) -> Any:
    if not isinstance(case.get("storedEvents"), list):
        return HANDLERS["recap.project"](case)
    case = copy.deepcopy(dict(case))
    for event in _stored_payloads(case):
        rewrite(event)
    return HANDLERS["recap.project"](case)


def ignores_tool_call_id_header(case: Mapping[str, Any]) -> Any:
    # Reads the call id from the payload only, never from the tool_call_id header.
    return _read_stored(case, lambda event: event.get("headers", {}).pop("tool_call_id", None))


def trims_tool_call_id_header(case: Mapping[str, Any]) -> Any:
    # Trims the tool_call_id header as it trims the payload's id (Harn reads it verbatim).
    def rewrite(event: dict[str, Any]) -> None:
        headers = event.get("headers")
        if isinstance(headers, dict) and isinstance(headers.get("tool_call_id"), str):
            headers["tool_call_id"] = headers["tool_call_id"].strip()

    return _read_stored(case, rewrite)


def ignores_raw_message_fallbacks(case: Mapping[str, Any]) -> Any:
    # Reads transcript_event only: role, text, name, input, output in raw_message are lost.
    def rewrite(event: dict[str, Any]) -> None:
        raw = event["payload"].get("raw_message")
        if isinstance(raw, dict):
            event["payload"]["raw_message"] = {k: v for k, v in raw.items() if k == "_harn"}

    return _read_stored(case, rewrite)


def stored_null_as_absent(case: Mapping[str, Any]) -> Any:
    # Treats a tool input or output that is JSON null like an absent one (keeps the earlier value).
    def rewrite(event: dict[str, Any]) -> None:
        metadata = event["payload"].get("transcript_event", {}).get("metadata")
        if isinstance(metadata, dict):
            for member in ("input", "output"):
                if member in metadata and metadata[member] is None:
                    del metadata[member]

    return _read_stored(case, rewrite)


def first_string_even_blank(case: Mapping[str, Any]) -> Any:
    # Takes the first pointer holding a string even when blank, so a blank transcript text
    # hides raw_message.content.
    def rewrite(event: dict[str, Any]) -> None:
        transcript = event["payload"].get("transcript_event")
        raw = event["payload"].get("raw_message")
        if isinstance(transcript, dict) and isinstance(raw, dict):
            for member, fallback in (("text", "content"), ("role", "role")):
                if isinstance(transcript.get(member), str):
                    raw.pop(fallback, None)

    return _read_stored(case, rewrite)


def plan_update_without_input_revision(case: Mapping[str, Any]) -> Any:
    # Accepts an `updated` plan event without input_revision_id (Harn counts it unassigned).
    def rewrite(event: dict[str, Any]) -> None:
        metadata = event["payload"].get("transcript_event", {}).get("metadata")
        plan_event = metadata.get("plan_document_event") if isinstance(metadata, dict) else None
        if isinstance(plan_event, dict) and plan_event.get("kind") == "updated":
            plan_event.setdefault("input_revision_id", "rev-0")

    return _read_stored(case, rewrite)


def stored_pending_counts_events(case: Mapping[str, Any]) -> Any:
    # Counts the session's unread events as pending, not the id distance to its last event.
    output = HANDLERS["recap.project"](case)
    snapshot, events = _snapshot(output), case.get("storedEvents")
    if snapshot is None or not isinstance(events, list):
        return output
    read = {source["eventId"] for source in snapshot["source"]["events"]}
    session = snapshot["sessionId"]
    last = max(read, default=None)
    if last is None:
        return output
    pending = sum(
        1
        for event in events
        if isinstance(event, dict)
        and event.get("session_id") == session
        and isinstance(event.get("event_id"), int)
        and event["event_id"] > last
    )
    snapshot["coverage"]["pending"] = pending
    snapshot["cursor"]["nextEventId"] = last + 1 if pending else None
    return _rehash(output)


def journal_pending_counts_rows(case: Mapping[str, Any]) -> Any:
    # Counts the session's unread journal events as pending, not the id distance to its
    # last event (Harn's store: last id minus last read id).
    output = HANDLERS["recap.project"](case)
    snapshot, events = _snapshot(output), case.get("events")
    if snapshot is None or not isinstance(events, list) or not snapshot["source"]["events"]:
        return output
    last = snapshot["source"]["events"][-1]["eventId"]
    pending = sum(
        1
        for event in events
        if isinstance(event, dict)
        and event.get("sessionId") == snapshot["sessionId"]
        and isinstance(event.get("id"), int)
        and event["id"] > last
    )
    snapshot["coverage"]["pending"] = pending
    snapshot["cursor"]["nextEventId"] = last + 1 if pending else None
    snapshot["coverage"]["truncated"] = bool(pending)
    return _rehash(output)


def journal_read_from_event_zero(case: Mapping[str, Any]) -> Any:
    # Reads a journal session from its first event when the query names no start, where
    # Harn's store reads from event 1 (an event numbered 0 is then not read).
    query = case.get("query")
    if (
        "events" not in case
        or not isinstance(query, dict)
        or query.get("fromEventId", query.get("from_event_id")) is not None
    ):
        return HANDLERS["recap.project"](case)
    output = HANDLERS["recap.project"](dict(case, query=dict(query, fromEventId=0)))
    snapshot = _snapshot(output)
    if snapshot is not None:
        snapshot["query"]["fromEventId"] = None
    return _rehash(output)


def omits_null_receipt_key(case: Mapping[str, Any]) -> Any:
    # Writes no completion_receipt key when no receipt was recorded.
    output = HANDLERS["runrecord.project"](case)
    metadata = output.get("metadata")
    if isinstance(metadata, dict) and metadata.get("completion_receipt", 0) is None:
        del metadata["completion_receipt"]
    return output


def loop_state_numbers_as_strings(case: Mapping[str, Any]) -> Any:
    # Decodes booleans and null, but leaves numbers as strings.
    output = HANDLERS["runrecord.provider_call_response"](case)
    state = output.get("loop_state")
    if isinstance(state, dict):
        for key, value in state.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                state[key] = str(value)
    return output


# -- redaction.apply, as a producer written from the docs first got it wrong ---------------------
def redaction_reads_no_windows(case: Mapping[str, Any]) -> Any:
    """Harn's catalog read in one pass over the whole text, never in 256 KiB windows."""
    from session_contracts.redaction import vectors

    named = vectors.policy_named

    def one_window(name: str) -> Any:
        return replace(named(name), window_bytes=1 << 62, window_overlap_bytes=1)

    with _patched(vectors, "policy_named", one_window):
        return HANDLERS["redaction.apply"](case)


def redaction_word_characters_of_a_newer_unicode(case: Mapping[str, Any]) -> Any:
    """\\b read with a newer Unicode than 14.0: a letter assigned since counts as a word
    character, so a token beside it is not at a word boundary and is kept."""
    from session_contracts.redaction.vectors import LATER_UNICODE_LETTERS

    text = case.get("text")
    later = [letter for letter in LATER_UNICODE_LETTERS if isinstance(text, str) and letter in text]
    if not later:
        return HANDLERS["redaction.apply"](case)
    stand_in = "\u00aa"  # a letter of Unicode 14.0, standing where the newer one is
    answer = HANDLERS["redaction.apply"](dict(case, text=text.replace(later[0], stand_in)))
    return {"text": answer["text"].replace(stand_in, later[0])}


def redaction_missing_policy_is_required(case: Mapping[str, Any]) -> Any:
    """A missing policy answered by the general rule (required), not invalid_case."""
    if isinstance(case, Mapping) and "policy" not in case:
        raise Rejected("required", "$.policy", "policy is required")
    return HANDLERS["redaction.apply"](case)


def spans_drop_harn_members(case: Mapping[str, Any]) -> Any:
    """The record's spans keep the nine members of the seed's example only: links, events
    and cost_usd (Harn's RunTraceSpanRecord) judged, then dropped."""
    output = HANDLERS["runrecord.project"](case)
    for span in output["evidence"]["trace_spans"]:
        for member in ("links", "events", "cost_usd"):
            span.pop(member, None)
    return output


# -- Harn's redaction rules through recap.project and provider_call_response, and blank ids --------
# Producers written from the docs that did not declare redaction.apply got these wrong; certify
# reaches each rule through the operation that applies it (conformance/judge/cases/redaction.py).
def _redacting(
    operation: str, patch: Callable[[], contextlib.AbstractContextManager[Any]]
) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        with patch():
            return HANDLERS[operation](case)

    return handler


def _ascii_word_boundary() -> contextlib.AbstractContextManager[Any]:
    """\\b read as ASCII (RE2's, Go's, ECMAScript's without a spelled-out boundary): a
    non-ASCII letter beside a token is a boundary, so the token is redacted."""
    from session_contracts.redaction import harn

    def regex_for(self: Any, text: str) -> Any:
        return harn._compiled(self.source, "re2")

    return _patched(harn.CompiledPattern, "regex_for", regex_for)


def _placeholder_length_in_characters() -> contextlib.AbstractContextManager[Any]:
    """<redacted:NAME:LEN> with LEN the matched text's length in characters, not UTF-8 bytes."""
    from session_contracts.redaction import engine

    marker_for = engine.RedactionPolicy.marker_for

    def in_characters(self: Any, kind: str, matched: str = "") -> str:
        if not self.pattern_style or kind == engine.SENSITIVE_KEY_KIND:
            return marker_for(self, kind, matched)
        template = self.placeholder.replace(engine.NAME_FIELD, kind)
        return str(template.replace(engine.LEN_FIELD, str(len(matched))))

    return _patched(engine.RedactionPolicy, "marker_for", in_characters)


@contextlib.contextmanager
def _one_pass() -> Iterator[None]:
    """Harn's catalog read in one pass over any text, never in 256 KiB windows."""
    from session_contracts.recap import service as _service
    from session_contracts.redaction import policy

    whole = replace(policy.default_policy(), window_bytes=1 << 62, window_overlap_bytes=1)
    with (
        _patched(policy, "default_policy", lambda: whole),
        _patched(_service, "default_policy", lambda: whole),
    ):
        yield


# ECMAScript's white space (\\s, String.prototype.trim): U+FEFF, not U+0085.
_ECMASCRIPT_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def blank_ids_by_ecmascript_white_space(case: Mapping[str, Any]) -> Any:
    """Texts and ids trimmed of White_Space, but judged blank with ECMAScript's set
    (`s.trim() === ""`): an id of U+FEFF alone is absent, one of U+0085 alone is ""."""
    from session_contracts.recap import event_facts

    def semantic(text: Any) -> str | None:
        if not isinstance(text, str) or not text.strip(_ECMASCRIPT_WHITE_SPACE):
            return None
        return text.strip(event_facts.WHITE_SPACE)

    with _patched(event_facts, "semantic", semantic):
        return HANDLERS["recap.project"](case)


def session_id_blank_by_ecmascript_white_space(case: Mapping[str, Any]) -> Any:
    """The query's sessionId judged blank with ECMAScript's set (the schema's old pattern
    `\\S`): a sessionId of U+FEFF alone is refused, as a White_Space one is."""
    query = case.get("query") if isinstance(case, Mapping) else None
    session_id = query.get("sessionId") if isinstance(query, Mapping) else None
    if isinstance(session_id, str) and session_id and not session_id.strip(_ECMASCRIPT_WHITE_SPACE):
        blank = {**query, "sessionId": "\u0085" * len(session_id)}
        return HANDLERS["recap.project"]({**case, "query": blank})
    return HANDLERS["recap.project"](case)


def _span_document(case: Mapping[str, Any]) -> bool:
    return isinstance(case, Mapping) and case.get("doctype") == "run-record.span"


def historical_parent_id_kept(case: Mapping[str, Any]) -> Any:
    """A historical span loaded with its parent_id is written back under that name."""
    output = HANDLERS["document.roundtrip"](case)
    document = case.get("document")
    loaded = _span_document(case) and case.get("historical") and isinstance(document, Mapping)
    if (
        loaded
        and "parent_id" in document
        and isinstance(output, dict)
        and "parent_span_id" in output
    ):
        output["parent_id"] = output.pop("parent_span_id")
    return output


def historical_parent_id_refused(case: Mapping[str, Any]) -> Any:
    """A historical span is read with the write contract: its parent_id is refused."""
    if _span_document(case) and case.get("historical"):
        return HANDLERS["document.roundtrip"](dict(case, historical=False))
    return HANDLERS["document.roundtrip"](case)


def parent_id_accepted_on_write(case: Mapping[str, Any]) -> Any:
    """Every span is read as a historical one: a new span spelled with parent_id is accepted."""
    if _span_document(case):
        return HANDLERS["document.roundtrip"](dict(case, historical=True))
    return HANDLERS["document.roundtrip"](case)


# -- limits, enums, unknown members and redaction, as outside producers get them wrong -----------
# Written from the rules (docs/x-keywords.md, docs/redaction.md), not from the cases that
# catch them: each bends the reference's own validation or policy in one way.
_LIMIT = re.compile(r"the limit is ([\d,]+) bytes")


def _at(instance: Any, path: str) -> Any:
    from session_contracts.errors import json_path_steps

    node = instance
    for step in json_path_steps(path) or ():
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# keep(finding, doctype, instance, validate): whether the bent producer still reports it.
Keep = Callable[[Any, str, Any, Callable[[str, Any], Any]], bool]


def _kept(keep: Keep) -> Callable[[Handler], Handler]:
    """A handler whose validator drops every finding ``keep`` refuses (one rule bent)."""
    from session_contracts.validation.validator import DocumentValidator

    validate = DocumentValidator.validate

    def wrap(handler: Handler) -> Handler:
        def bent(case: Mapping[str, Any]) -> Any:
            def filtered(self: Any, doctype: str, instance: Any, **options: Any) -> Any:
                def again(name: str, value: Any) -> Any:
                    return validate(self, name, value, **options)

                findings = again(doctype, instance)
                return [f for f in findings if keep(f, doctype, instance, again)]

            with _patched(DocumentValidator, "validate", filtered):
                return handler(case)

        return bent

    return wrap


def _counted_in(count: Callable[[str], int]) -> Keep:
    def keep(finding: Any, doctype: str, instance: Any, again: Any) -> bool:
        limit = _LIMIT.search(finding.message)
        text = _at(instance, finding.path)
        if finding.code != "max_utf8_bytes" or limit is None or not isinstance(text, str):
            return True
        return count(text) > int(limit.group(1).replace(",", ""))

    return keep


def _item_limit_ignored(finding: Any, doctype: str, instance: Any, again: Any) -> bool:
    return bool(finding.code != "max_items")


def _enum_case_insensitive(finding: Any, doctype: str, instance: Any, again: Any) -> bool:
    # allowed.includes(value.toLowerCase()): a value in another case is accepted.
    from session_contracts.errors import json_path_steps

    value = _at(instance, finding.path)
    steps = json_path_steps(finding.path)
    if finding.code != "not_allowed_value" or not isinstance(value, str) or not steps:
        return True
    lowered = copy.deepcopy(instance)
    node = lowered
    for step in steps[:-1]:
        node = node[step]
    node[steps[-1]] = value.lower()
    return any(f.path == finding.path for f in again(doctype, lowered))


# JavaScript's Object.prototype members: `name in known` is true for each of them.
JS_BUILTIN_MEMBERS = frozenset(
    {
        "__proto__",
        "constructor",
        "toString",
        "toLocaleString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    }
)


def accepts_js_builtin_members(case: Mapping[str, Any]) -> Any:
    # Tests membership with JavaScript's `in`: a member named like Object.prototype's passes.
    return _accepts_unknown_where(case, lambda path: path.rsplit(".", 1)[-1] in JS_BUILTIN_MEMBERS)


def _lacks_pattern(operation: str, kind: str) -> Handler:
    """The operation under the default policy without the pattern ``kind``."""

    def handler(case: Mapping[str, Any]) -> Any:
        from session_contracts.recap import service as _service
        from session_contracts.redaction import policy

        broken = policy.default_policy().disable(kind)
        with (
            _patched(policy, "default_policy", lambda: broken),
            _patched(_service, "default_policy", lambda: broken),
        ):
            return HANDLERS[operation](case)

    return handler


_BENT = {
    "counted_in_characters": (_counted_in(len), "a byte limit counted in characters"),
    "counted_in_utf16_units": (_counted_in(_utf16_units), "a byte limit counted in UTF-16 units"),
    "item_limit_ignored": (_item_limit_ignored, "maxItems not enforced"),
    "enum_case_insensitive": (_enum_case_insensitive, "enum and const values matched in any case"),
}
# (operation, the check that judges its limits) for each kind of limit.
_LIMITED = {
    "document": ("document.roundtrip", "roundtrip.identity"),
    "feedback": ("feedback.run", "feedback.semantics"),
}


DEFECTS: dict[str, Defect] = {
    "sorts_iterations_ascending": Defect(
        "recap.project",
        sorts_iterations_ascending,
        "recap.grouping",
        "recap.semantics",
        "recap/iterations-in-order-of-first-appearance",
        "iterations sorted by number, not in order of first appearance",
    ),
    "next_event_id_from_last_matched": Defect(
        "recap.project",
        next_event_id_from_last_matched,
        "recap.from-event-id",
        "recap.semantics",
        "recap/next-event-id-after-last-read-interleaved",
        "nextEventId = last matched id + 1, not last read id + 1",
    ),
    "keeps_sensitive_tool_arguments": Defect(
        "recap.project",
        keeps_sensitive_tool_arguments,
        "recap.redaction",
        "recap.semantics",
        "recap/tool-arguments-redacted-by-name",
        'a secret under a sensitive name in tool arguments ({"password": "hunter2"}) kept',
    ),
    "clamps_limit_to_32769": Defect(
        "recap.project",
        clamps_limit_to_32769,
        "recap.limit-default-clamp",
        "recap.limit",
        "",  # only a read of more than 32,768 events shows it: no fixture of that size
        "a limit of 32,769 kept instead of clamped to 32,768",
    ),
    "reset_clears_gauges": Defect(
        "health.reduce",
        reset_clears_gauges,
        "health.session-gauges",
        "health.transcript-reset",
        "health/reset-keeps-trend-and-stop-class",
        "a transcript reset also clears the diagnostic trend and the stop class",
    ),
    "reset_forgets_resolved_calls": Defect(
        "health.reduce",
        reset_forgets_resolved_calls,
        "health.repeated-update-once",
        "health.transcript-reset",
        "health/reset-keeps-resolved-calls",
        "a transcript reset forgets which calls were counted",
    ),
    "future_tolerance_300_ms": Defect(
        "feedback.run",
        future_tolerance_300_ms,
        "feedback.future-timestamp-rejected",
        "feedback.semantics",
        "feedback/usage-one-second-ahead-accepted",
        "300 ms of future tolerance instead of five minutes",
    ),
    "completed_counted_in_characters": Defect(
        "feedback.run",
        _counts_characters_in_list("completed", 1024),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-completed-1025-bytes-rejected",
        "the 1,024-byte limit of a completed item counted in characters",
    ),
    "artifact_label_counted_in_characters": Defect(
        "feedback.run",
        _counts_characters_in_objects("artifacts", "label", 256),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-artifact-label-257-bytes-rejected",
        "the 256-byte limit of an artifact label counted in characters",
    ),
    "test_name_counted_in_characters": Defect(
        "feedback.run",
        _counts_characters_in_objects("tests", "name", 256),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-test-name-257-bytes-rejected",
        "the 256-byte limit of a test name counted in characters",
    ),
    "reference_counted_in_characters": Defect(
        "feedback.run",
        _counts_characters_in_objects("artifacts", "reference", 1024),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-artifact-reference-1025-bytes-rejected",
        "the 1,024-byte limit of an artifact reference counted in characters",
    ),
    "source_counted_in_characters": Defect(
        "feedback.run",
        source_counted_in_characters,
        "feedback.usage-label-limits",
        "feedback.semantics",
        "feedback/usage-source-129-bytes-rejected",
        "the 128-byte limit of a usage source counted in characters",
    ),
    "no_item_limit_on_blockers": Defect(
        "feedback.run",
        _no_item_limit("blockers"),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-nine-blockers-rejected",
        "nine blockers accepted (at most eight)",
    ),
    "no_item_limit_on_artifacts": Defect(
        "feedback.run",
        _no_item_limit("artifacts"),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-nine-artifacts-rejected",
        "nine artifacts accepted (at most eight)",
    ),
    "no_item_limit_on_tests": Defect(
        "feedback.run",
        _no_item_limit("tests"),
        "feedback.list-and-entry-limits",
        "feedback.semantics",
        "feedback/progress-nine-tests-rejected",
        "nine test reports accepted (at most eight)",
    ),
    "decrease_checked_for_input_tokens_only": Defect(
        "feedback.run",
        decrease_checked_for_input_tokens_only,
        "feedback.decreasing-counter-rejected",
        "feedback.semantics",
        "feedback/usage-output-tokens-decrease-rejected",
        "the no-decrease rule applied to input_tokens only",
    ),
    "counter_keyed_without_source": Defect(
        "feedback.run",
        counter_keyed_without_source,
        "feedback.decreasing-counter-rejected",
        "feedback.semantics",
        "feedback/usage-same-counter-two-sources",
        "the no-decrease rule keyed by counter_id alone, not (source, counter_id)",
    ),
    "no_span_cycle_detection": Defect(
        "runrecord.project",
        no_span_cycle_detection,
        "runrecord.span-tree-join",
        "runrecord.semantics",
        "runrecord/span-cycle-rejected",
        "no cycle detection in the span tree",
    ),
    "refuses_child_before_parent": Defect(
        "runrecord.project",
        refuses_child_before_parent,
        "runrecord.span-tree-join",
        "runrecord.semantics",
        "runrecord/child-span-before-parent",
        "a valid span list with a child before its parent refused",
    ),
    "skips_null_receipt": Defect(
        "runrecord.project",
        skips_null_receipt,
        "runrecord.receipt-null",
        "runrecord.semantics",
        "runrecord/explicit-null-receipt-wins",
        "an explicitly null completion_receipt skipped for an older one",
    ),
    "open_heuristics": Defect(
        "document.roundtrip",
        open_heuristics,
        "health.heuristics-empty",
        "closed.unknown-field-rejected",
        "documents/health-fact-nonempty-heuristics-rejected",
        "heuristics is an open object",
    ),
    "accepts_unknown_below_turn": Defect(
        "document.roundtrip",
        accepts_unknown_below_turn,
        "recap.reject-unknown-fields",
        "closed.unknown-field-rejected",
        "documents/recap-snapshot-unknown-iteration-field-rejected",
        "an unknown member accepted below a turn",
    ),
    "trend_from_one_collection": Defect(
        "health.reduce",
        _patched_trend(_trend_from_one_collection),
        "health.trend-one-collection",
        "health.semantics",
        "health/trend-one-collection",
        "a trend measured from one collection",
    ),
    "oscillation_ignored": Defect(
        "health.reduce",
        _patched_trend(_trend_by_cardinality_only),
        "health.trend-oscillating",
        "health.semantics",
        "health/trend-oscillating",
        "a return to the set of two collections ago read by cardinality, never oscillating",
    ),
    "edits_zero_before_any": Defect(
        "health.reduce",
        edits_zero_before_any,
        "health.edits-null-before",
        "health.semantics",
        "health/single-iteration-null-rates",
        "edits_since_verification 0 (not null) before any edit or verification",
    ),
    "ratio_zero_without_calls": Defect(
        "health.reduce",
        ratio_zero_without_calls,
        "health.prose-balance-nulls",
        "health.semantics",
        "health/prose-without-tool-call",
        "characters per tool call 0 (not null) without a tool call",
    ),
    "rolling_copies_turn": Defect(
        "health.reduce",
        rolling_copies_turn,
        "health.rolling-view",
        "health.semantics",
        "health/turn-and-rolling-populations",
        "the rolling view repeats the iteration's measurements",
    ),
    "first_stop_class_kept": Defect(
        "health.reduce",
        first_stop_class_kept,
        "health.last-stop-class",
        "health.semantics",
        "health/last-stop-class-most-recent",
        "the first stop class kept, not the most recent",
    ),
    "history_invents_calls": Defect(
        "health.reduce",
        history_invents_calls,
        "health.history-invents-nothing",
        "health.semantics",
        "health/historical-messages-invent-nothing",
        "loaded historical messages counted as successful tool calls",
    ),
    "absent_exit_counted_as_zero": Defect(
        "health.reduce",
        absent_exit_counted_as_zero,
        "health.absent-exit-excluded",
        "health.semantics",
        "health/absent-exit-code-excluded",
        "an absent exit code counted as exit 0",
    ),
    "no_fact_on_terminal_outcome": Defect(
        "health.reduce",
        no_fact_on_terminal_outcome,
        "health.fact-after-iteration",
        "health.semantics",
        "health/terminal-outcome-emits-fact",
        "no fact when the terminal outcome is published",
    ),
    "no_fact_for_late_resolution": Defect(
        "health.reduce",
        no_fact_for_late_resolution,
        "health.late-resolution-updates-fact",
        "health.semantics",
        "health/late-tool-resolution",
        "no updated fact for a call resolved after the snapshot",
    ),
    "stale_after_five_minutes": Defect(
        "feedback.run",
        stale_after_five_minutes,
        "feedback.stale",
        "feedback.semantics",
        "feedback/stale-after-fifteen-minutes",
        "reports stale after five minutes, not fifteen",
    ),
    "replay_is_a_new_checkpoint": Defect(
        "feedback.run",
        replay_is_a_new_checkpoint,
        "feedback.duplicate-replay",
        "feedback.semantics",
        "feedback/duplicate-replay",
        "a duplicate request processed again, not replayed",
    ),
    "shows_internal_text": Defect(
        "recap.project",
        shows_internal_text,
        "recap.grouping",
        "recap.semantics",
        "recap/message-visibility",
        "internal prompts and assistant text shown",
    ),
    "unassigned_not_counted": Defect(
        "recap.project",
        unassigned_not_counted,
        "recap.read-coverage",
        "recap.semantics",
        "recap/unassigned-events",
        "coverage.unassigned left at 0",
    ),
    "keeps_text_untrimmed": Defect(
        "recap.project",
        keeps_text_untrimmed,
        "recap.grouping",
        "recap.semantics",
        "recap/text-trimmed-tool-ids",
        "call ids, tool names and terminal members read verbatim, not trimmed",
    ),
    "keeps_blank_text": Defect(
        "recap.project",
        keeps_blank_text,
        "recap.grouping",
        "recap.semantics",
        "recap/text-trimmed-terminal",
        'a blank text read as "" instead of absent',
    ),
    "trims_host_whitespace": Defect(
        "recap.project",
        trims_host_whitespace,
        "recap.grouping",
        "recap.semantics",
        "recap/text-trimmed-messages",
        "text trimmed of U+001C..U+001F too (not Unicode White_Space)",
    ),
    "trims_plan_and_progress_text": Defect(
        "recap.project",
        trims_plan_and_progress_text,
        "recap.grouping",
        "recap.semantics",
        "recap/text-verbatim-plan-progress",
        "plan and progress texts trimmed, which Harn keeps verbatim",
    ),
    "integral_floats_as_integers": Defect(
        "recap.project",
        integral_floats_as_integers,
        "recap.projection-hash",
        "recap.semantics",
        "recap/tool-values-keep-floats",
        "tool values' integral floats (1.0, -0.0) turned into integers",
    ),
    "float64_reader": Defect(
        "document.roundtrip",
        float64_reader,
        "recap.extensions-preserved",
        "extensions.verbatim",
        "",
        "a JSON reader that makes every number a double: integers beyond 2^53 come back rounded",
    ),
    "stored_read_starts_after_from_event_id": Defect(
        "recap.project",
        stored_read_starts_after_from_event_id,
        "recap.from-event-id",
        "recap.stored-events",
        "recap/stored-from-event-id-bounded-read",
        "stored events read from fromEventId exclusive",
    ),
    "ignores_tool_call_id_header": Defect(
        "recap.project",
        ignores_tool_call_id_header,
        "recap.source-events",
        "recap.stored-events",
        "recap/stored-tool-call-id-header",
        "the tool_call_id header of a stored event not read",
    ),
    "trims_tool_call_id_header": Defect(
        "recap.project",
        trims_tool_call_id_header,
        "recap.source-events",
        "recap.stored-events",
        "recap/stored-tool-call-id-header",
        "the tool_call_id header trimmed",
    ),
    "ignores_raw_message_fallbacks": Defect(
        "recap.project",
        ignores_raw_message_fallbacks,
        "recap.grouping",
        "recap.stored-events",
        "recap/stored-raw-message-fallbacks",
        "raw_message fallbacks not read",
    ),
    "stored_null_as_absent": Defect(
        "recap.project",
        stored_null_as_absent,
        "recap.grouping",
        "recap.stored-events",
        "recap/stored-null-replaces-absent-keeps",
        "a stored JSON null tool value read as absent",
    ),
    "first_string_even_blank": Defect(
        "recap.project",
        first_string_even_blank,
        "recap.grouping",
        "recap.stored-events",
        "recap/stored-blank-first-pointer-falls-back",
        "a blank string at the first pointer hides the fallback",
    ),
    "plan_update_without_input_revision": Defect(
        "recap.project",
        plan_update_without_input_revision,
        "recap.read-coverage",
        "recap.stored-events",
        "recap/stored-plan-unreadable-unassigned",
        "an updated plan event without input_revision_id read as a plan",
    ),
    "stored_pending_counts_events": Defect(
        "recap.project",
        stored_pending_counts_events,
        "recap.read-coverage",
        "recap.stored-events",
        "recap/stored-pending-id-distance",
        "pending counts unread stored events, not the id distance",
    ),
    "journal_pending_counts_rows": Defect(
        "recap.project",
        journal_pending_counts_rows,
        "recap.read-coverage",
        "recap.semantics",
        "recap/next-event-id-after-last-read-interleaved",
        "pending counts unread journal events, not the id distance",
    ),
    "journal_read_from_event_zero": Defect(
        "recap.project",
        journal_read_from_event_zero,
        "recap.from-event-id",
        "recap.semantics",
        "recap/read-starts-at-event-one",
        "a read without fromEventId starts at event 0, not 1",
    ),
    "omits_null_receipt_key": Defect(
        "runrecord.project",
        omits_null_receipt_key,
        "runrecord.receipt-always",
        "runrecord.semantics",
        "runrecord/receipt-absent-is-null",
        "no completion_receipt key when no receipt was recorded",
    ),
    "loop_state_numbers_as_strings": Defect(
        "runrecord.provider_call_response",
        loop_state_numbers_as_strings,
        "runrecord.loop-state-primitives",
        "runrecord.response-semantics",
        "runrecord/loop-state-complete",
        "LOOP_STATE numbers left as strings",
    ),
}


def _bent_defects() -> dict[str, Defect]:
    """One producer per (kind of limit, way of bending it), and per pattern of the default
    catalog a producer without it, for each operation that redacts."""
    from session_contracts.redaction.policy import default_policy

    bent: dict[str, Defect] = {}
    limits, phases = "feedback.list-and-entry-limits", "feedback.phases"
    label = "documents/feedback-progress-artifact-label-257-bytes-rejected"
    pairs = [
        ("document", "counted_in_characters", limits, label),
        ("document", "counted_in_utf16_units", limits, label),
        (
            "document",
            "item_limit_ignored",
            limits,
            "documents/feedback-progress-nine-tests-rejected",
        ),
        (
            "document",
            "enum_case_insensitive",
            phases,
            "documents/feedback-progress-phase-case-rejected",
        ),
        (
            "feedback",
            "counted_in_characters",
            limits,
            "feedback/progress-artifact-label-257-bytes-rejected",
        ),
        (
            "feedback",
            "counted_in_utf16_units",
            limits,
            "feedback/progress-artifact-label-257-bytes-rejected",
        ),
        ("feedback", "enum_case_insensitive", phases, "feedback/progress-phase-case-rejected"),
    ]
    for kind, how, rule, fixture in pairs:
        keep, what = _BENT[how]
        operation, check = _LIMITED[kind]
        handler = _kept(keep)(HANDLERS[operation])
        bent[f"{kind}_{how}"] = Defect(operation, handler, rule, check, fixture, f"{kind}: {what}")
    bent["accepts_js_builtin_members"] = Defect(
        "document.roundtrip",
        accepts_js_builtin_members,
        "recap.reject-unknown-fields",
        "closed.unknown-field-rejected",
        "documents/recap-snapshot-builtin-member-rejected",
        "unknown members named like JavaScript's Object.prototype members accepted",
    )
    redacting = (
        (
            "provider",
            "runrecord.provider_call_response",
            "runrecord.redaction",
            "redaction.canaries",
        ),
        ("recap", "recap.project", "recap.redaction", "redaction.recap-canaries"),
    )
    for prefix, operation, rule, check in redacting:
        area = "runrecord" if prefix == "provider" else "recap"
        for kind in default_policy().kinds:
            bent[f"{prefix}_lacks_{kind}"] = Defect(
                operation,
                _lacks_pattern(operation, kind),
                rule,
                check,
                f"{area}/each-pattern-alone-redacted",
                f"the default catalog without its {kind} pattern",
            )
    return bent


DEFECTS.update(_bent_defects())


# -- hashes, sameness rules and state paths (conformance/judge/cases/hashes.py, cases/sameness.py)
# Each defect breaks one rule and is otherwise consistent: a producer that hashes
# its own way rehashes everything it emits, so only the hash rule is wrong.
def _encode(value: Any, order: Callable[[str], Any], scalar: Callable[[Any], bytes]) -> bytes:
    """Canonical-looking JSON: keys sorted by ``order``, every other value by ``scalar``."""
    if isinstance(value, dict):
        members = sorted(value.items(), key=lambda item: order(item[0]))
        inner = b",".join(scalar(k) + b":" + _encode(v, order, scalar) for k, v in members)
        return b"{" + inner + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(_encode(item, order, scalar) for item in value) + b"]"
    return scalar(value)


def _harn_scalar(value: Any) -> bytes:
    from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

    return harn_canonical_bytes(value)


def _rfc8785_scalar(value: Any) -> bytes:
    from session_contracts.jsontext.canonical import canonical_bytes

    return canonical_bytes(value)


def _code_points(key: str) -> str:
    return key


def _utf16_units(key: str) -> bytes:
    return key.encode("utf-16-be")


def _sha256(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


def _projection_hashed_by(order: Callable[[str], Any], scalar: Callable[[Any], bytes]) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        from session_contracts.hashes.snapshot import projection_hash_input

        output = HANDLERS["recap.project"](case)
        snapshot = _snapshot(output)
        if snapshot is not None:
            body = _encode(projection_hash_input(snapshot), order, scalar)
            snapshot["projectionHash"] = _sha256(body)
        return output

    return handler


def _python_repr_floats(value: Any) -> bytes:
    # Python's repr: 1e-05 and 1e-07 where Harn writes 0.00001 and 1e-7.
    return repr(value).encode() if isinstance(value, float) else _harn_scalar(value)


def _integral_floats_as_integers(value: Any) -> bytes:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)).encode()
    return _harn_scalar(value)


def _ascii_escapes(value: Any) -> bytes:
    import json

    return json.dumps(value).encode() if isinstance(value, str) else _harn_scalar(value)


def projection_hash_rfc8785(case: Mapping[str, Any]) -> Any:
    # Hashes the projection in RFC 8785 (UTF-16 key order, ECMAScript numbers).
    from session_contracts.errors import InvalidDocument
    from session_contracts.hashes.snapshot import projection_hash_input
    from session_contracts.jsontext.canonical import content_hash

    output = HANDLERS["recap.project"](case)
    snapshot = _snapshot(output)
    if snapshot is not None:
        with contextlib.suppress(InvalidDocument):  # RFC 8785 has no form for it: kept
            snapshot["projectionHash"] = content_hash(projection_hash_input(snapshot))
    return output


def record_hash_code_point_order(case: Mapping[str, Any]) -> Any:
    # RFC 8785 record hashes with keys sorted by code point, not UTF-16 code units;
    # contentHash and projectionHash recomputed over them.
    from session_contracts.hashes.snapshot import content_hash_of_source

    output = HANDLERS["recap.project"](case)
    snapshot = _snapshot(output)
    events = {e.get("id"): e for e in case.get("events", ()) if isinstance(e, dict)}
    if snapshot is None:
        return output
    for source in snapshot["source"]["events"]:
        event = events.get(source["eventId"])
        if event is not None:
            source["recordHash"] = _sha256(_encode(event, _code_points, _rfc8785_scalar))
    snapshot["contentHash"] = content_hash_of_source(snapshot["source"])
    return _rehash(output)


def _usage_same_by(key: Callable[[Mapping[str, Any]], Any]) -> Handler:
    """Same-time usage samples compared by ``key`` of the two samples, not by every member."""

    def handler(case: Mapping[str, Any]) -> Any:
        import orjson

        from session_contracts.feedback import rules as _rules

        reference = _rules.usage_rejection

        def rejection(request_id: str, sample: Any, usage: Any, now_ms: int) -> Any:
            new = key(orjson.loads(sample.canonical))
            if usage.latest_observed_at_unix_ms == sample.observed_at_unix_ms and all(
                key(orjson.loads(held)) == new for held in usage.samples_at_latest
            ):
                usage = replace(usage, samples_at_latest=frozenset({sample.canonical}))
            return reference(request_id, sample, usage, now_ms)

        with _patched(_rules, "usage_rejection", rejection):
            return HANDLERS["feedback.run"](case)

    return handler


def _without(member: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda value: {k: v for k, v in value.items() if k != member}


def _token_counts(usage: Mapping[str, Any]) -> Any:
    return tuple(usage.get(field) for field in _COUNTERS)


def usage_compared_as_text(case: Mapping[str, Any]) -> Any:
    # Keeps each usage sample as the text it was sent in and compares texts: the same
    # sample with its members in another order is a conflicting sample.
    import json

    from session_contracts.feedback import rules as _rules

    sample_type = _rules.UsageSample
    reference = sample_type.__dict__["from_json"]

    def from_json(cls: Any, usage: Mapping[str, Any]) -> Any:
        text = json.dumps(usage, separators=(",", ":"), ensure_ascii=False)
        return replace(reference.__func__(cls, usage), canonical=text.encode())

    with _patched(sample_type, "from_json", classmethod(from_json)):
        return HANDLERS["feedback.run"](case)


def request_body_compared_as_text(case: Mapping[str, Any]) -> Any:
    # Hashes a request's body as sent, not its canonical form: a retry with its
    # members in another order is a request_conflict, not a replay.
    import hashlib
    import json

    from session_contracts.feedback import rules as _rules

    def request_hash(operation: str, request: Mapping[str, Any]) -> str:
        body = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode()
        return hashlib.sha256(operation.encode() + b"\n" + body).hexdigest()

    with _patched(_rules, "request_body_hash", request_hash):
        return HANDLERS["feedback.run"](case)


def _renamed_requests(
    case: Mapping[str, Any], renamed: Callable[[int, dict[str, Any]], bool]
) -> Any:
    """The reference run with the request_id of each step for which ``renamed`` holds made
    unique: that request is processed as new instead of replayed."""
    steps = _steps(case)
    for index, step in enumerate(steps):
        request = step.get("request")
        if isinstance(request, dict) and renamed(index, step):
            request["request_id"] = f"{request.get('request_id')}~{index}"
    return _feedback(case, steps)


def start_retry_is_a_new_start(case: Mapping[str, Any]) -> Any:
    # Checks that the session does not exist before the replay rule: a retried
    # start is session_version_conflict instead of its replayed receipt.
    started: set[Any] = set()

    def renamed(index: int, step: dict[str, Any]) -> bool:
        if step.get("call") != "start":
            return False
        key = (step["request"].get("session_id"), step["request"].get("request_id"))
        seen = key in started
        started.add(key)
        return seen

    return _renamed_requests(case, renamed)


def replays_only_the_latest_request(case: Mapping[str, Any]) -> Any:
    # Remembers only the session's latest request for replay: a retry of an
    # earlier one after a later checkpoint is processed as new.
    latest: dict[Any, Any] = {}

    def renamed(index: int, step: dict[str, Any]) -> bool:
        if step.get("call") != "checkpoint":
            return False
        session, request_id = step["request"].get("session_id"), step["request"].get("request_id")
        earlier = (
            session in latest
            and latest[session] != request_id
            and any(
                s.get("call") == "checkpoint"
                and s["request"].get("request_id") == request_id
                and s["request"].get("session_id") == session
                for s in case["steps"][:index]
                if isinstance(s.get("request"), dict)
            )
        )
        latest[session] = request_id
        return earlier

    return _renamed_requests(case, renamed)


def _trend_with_identity(same: Callable[[Any, Any], bool]) -> Handler:
    def trend(reference: Any, held: Any, latest: Any, current: Any) -> Any:
        if len(held) == 2 and same(held[0], latest) and not same(held[-1], latest):
            return "oscillating"
        return reference(held[-1:], latest, current)  # the counts decide

    return _patched_trend(trend)


def _same_sets_but(ignored: str, members: tuple[str, ...]) -> Callable[[Any, Any], bool]:
    """Two diagnostic sets compared on every schema member but ``ignored``."""
    attributes = {"set_fingerprint": "fingerprint"}  # the schema member -> DiagnosticSet's
    kept = [attributes.get(member, member) for member in members if member != ignored]
    return lambda a, b: all(getattr(a, name) == getattr(b, name) for name in kept)


def _reduce_patched(transitions: Mapping[str, Callable[[Any, Any, Any], Any]]) -> Handler:
    """The reference reducer with some transitions wrapped: each gets the reference's."""

    def handler(case: Mapping[str, Any]) -> Any:
        from session_contracts.health import reducer as _reducer

        def wrapped(kind: str) -> Any:
            return lambda state, observation: transitions[kind](_reducer.step, state, observation)

        return _reduce_with(case, {kind: wrapped(kind) for kind in transitions})

    return handler


def _history_reopens_turn(step: Any, state: Any, observation: Any) -> Any:
    # Loading history starts a fresh transcript view: the turn is open again, so
    # a call resolved after the snapshot publishes nothing.
    return replace(state, turn_closed=False), ()


def _history_republishes(step: Any, state: Any, observation: Any) -> Any:
    # Loading history after a snapshot publishes the fact again.
    from session_contracts.health import reducer as _reducer

    return state, ((_reducer.fact_of(state),) if state.turn_closed else ())


def _restart_continues(step: Any, state: Any, observation: Any) -> Any:
    # An iteration started again under the current number continues it.
    if observation.get("iteration") == state.iteration and state.iteration is not None:
        return replace(state, turn_closed=False), ()
    return step(state, observation)


def _highest_iteration(step: Any, state: Any, observation: Any) -> Any:
    # Names the highest iteration started, not the latest.
    current = state.iteration
    state, emitted = step(state, observation)
    if current is not None and current > state.iteration:
        state = replace(state, iteration=current)
    return state, emitted


def _empty_collection_unmeasured(case: Mapping[str, Any]) -> Any:
    # An empty collection (count 0) is read as no measurement.
    observations = copy.deepcopy(list(case["observations"]))
    for observation in observations:
        telemetry = observation.get("telemetry") if isinstance(observation, dict) else None
        verification = telemetry.get("verification") if isinstance(telemetry, dict) else None
        measured = verification.get("diagnostics") if isinstance(verification, dict) else None
        if isinstance(verification, dict) and isinstance(measured, dict) and not measured["count"]:
            verification["diagnostics"] = None
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def _repeated_set_keeps_trend(reference: Any, held: Any, latest: Any, current: Any) -> Any:
    # A collection equal to the latest one held is no change: the trend stays as it was.
    return current if held and held[-1] == latest else reference(held, latest, current)


def _parse_compared_with(equal: Callable[[Any, Any], bool]) -> Handler:
    def handler(case: Mapping[str, Any]) -> Any:
        from session_contracts.runrecord import responses as _responses

        with _patched(_responses, "json_equal", equal):
            return HANDLERS["runrecord.provider_call_response"](case)

    return handler


def _as_text(a: Any, b: Any) -> bool:
    import json

    return json.dumps(a) == json.dumps(b)


def _calls_without(
    members: Callable[[Mapping[str, Any]], Mapping[str, Any]],
) -> Callable[..., bool]:
    from session_contracts.validation.xkeywords import json_equal

    def equal(parse: Any, native: Any) -> bool:
        def view(calls: Any) -> Any:
            return [members(c) if isinstance(c, dict) else c for c in calls]

        return json_equal(view(parse), view(native))

    return equal


def _only_parse_members(call: Mapping[str, Any]) -> Mapping[str, Any]:
    from session_contracts.conformance.judge.cases.sameness import object_members

    kept = object_members("run-record.schema.json", "ParsedToolCall")
    return {k: v for k, v in call.items() if k in kept}


def _sameness_family() -> dict[str, Defect]:
    """One defect per member each sameness rule compares (from the schema object), for the
    members a one-member difference can reach; every defect of a family ignores one."""
    from session_contracts.conformance.judge.cases.sameness import (
        object_members,
        tool_call_normalizations,
    )

    family: dict[str, Defect] = {}
    for member in object_members("session-feedback.schema.json", "Usage"):
        if member in ("observed_at_unix_ms", "scope"):  # the pairing key; a const
            continue
        family[f"same_sample_ignores_{member}"] = Defect(
            "feedback.run",
            _usage_same_by(_without(member)),
            "feedback.older-and-conflicting-rejected",
            "feedback.semantics",
            "feedback/usage-same-sample-one-member",
            f"two same-time usage samples that differ only in {member} are one sample",
        )
    measured = object_members("health-observation.schema.json", "DiagnosticMeasurement")
    for member in measured:
        family[f"diagnostic_set_ignores_{member}"] = Defect(
            "health.reduce",
            _trend_with_identity(_same_sets_but(member, measured)),
            "health.trend-oscillating",
            "health.semantics",
            "health/diagnostic-set-one-member",
            f"two diagnostic sets that differ only in {member} are one set (oscillation)",
        )
    for member, spellings in tool_call_normalizations().items():
        if not spellings:  # nothing normalizes this member: ignoring it cannot show
            continue
        family[f"identical_parse_ignores_{member}"] = Defect(
            "runrecord.provider_call_response",
            _parse_compared_with(_calls_without(_without(member))),
            "runrecord.parsed-ref-when-identical",
            "runrecord.reference-when-identical",
            f"runrecord/native-call-{member}-normalized-inline",
            f"a parse that differs from tool_calls only in {member} stored as a reference",
        )
    return family


def exchanges_joined_within_an_iteration(case: Mapping[str, Any]) -> Any:
    # Looks for a result's call in the current iteration only, not the whole turn:
    # a result in a later iteration opens an exchange of its own.
    from session_contracts.recap import projection as _projection

    def find_tool(turn: Any, call_id: str) -> Any:
        segment = turn.segments.get(turn.current)
        tools = segment.fact["tools"] if segment is not None else []
        return next(((segment, t) for t in tools if t["toolCallId"] == call_id), None)

    with _patched(_projection.TurnState, "find_tool", find_tool):
        return _rehash(HANDLERS["recap.project"](case))


DEFECTS.update(
    {
        "projection_hash_rfc8785": Defect(
            "recap.project",
            projection_hash_rfc8785,
            "recap.projection-hash",
            "recap.hashes",
            "recap/hash-forms-keys-strings-numbers",
            "projectionHash in RFC 8785, not Harn's canonical JSON",
        ),
        "projection_hash_utf16_key_order": Defect(
            "recap.project",
            _projection_hashed_by(_utf16_units, _harn_scalar),
            "recap.projection-hash",
            "recap.hashes",
            "recap/hash-forms-keys-strings-numbers",
            "projectionHash keys sorted by UTF-16 code units, not UTF-8 bytes",
        ),
        "projection_hash_python_float_repr": Defect(
            "recap.project",
            _projection_hashed_by(_code_points, _python_repr_floats),
            "recap.projection-hash",
            "recap.hashes",
            "recap/hash-forms-keys-strings-numbers",
            "projectionHash floats written with Python's repr (1e-05, 1e-07)",
        ),
        "projection_hash_integral_floats_as_integers": Defect(
            "recap.project",
            _projection_hashed_by(_code_points, _integral_floats_as_integers),
            "recap.projection-hash",
            "recap.hashes",
            "recap/hash-forms-keys-strings-numbers",
            "projectionHash writes integral floats as integers (the snapshot keeps 1.0)",
        ),
        "projection_hash_ascii_escapes": Defect(
            "recap.project",
            _projection_hashed_by(_code_points, _ascii_escapes),
            "recap.projection-hash",
            "recap.hashes",
            "recap/hash-forms-keys-strings-numbers",
            "projectionHash escapes non-ASCII characters as \\u",
        ),
        "record_hash_code_point_order": Defect(
            "recap.project",
            record_hash_code_point_order,
            "recap.source-events",
            "recap.hashes",
            "recap/hash-forms-keys-strings-numbers",
            "recordHash keys sorted by code point, not UTF-16 code units (RFC 8785)",
        ),
        "same_sample_by_token_counts": Defect(
            "feedback.run",
            _usage_same_by(_token_counts),
            "feedback.older-and-conflicting-rejected",
            "feedback.semantics",
            "feedback/usage-same-sample-one-member",
            "same-time usage samples compared by their token counts only",
        ),
        "usage_compared_as_text": Defect(
            "feedback.run",
            usage_compared_as_text,
            "feedback.older-and-conflicting-rejected",
            "feedback.semantics",
            "feedback/usage-same-sample-one-member",
            "same-time usage samples compared as sent text (key order matters)",
        ),
        "request_body_compared_as_text": Defect(
            "feedback.run",
            request_body_compared_as_text,
            "feedback.duplicate-replay",
            "feedback.semantics",
            "feedback/replay-same-body-one-member",
            "a retried request's body compared as sent text (key order matters)",
        ),
        "start_retry_is_a_new_start": Defect(
            "feedback.run",
            start_retry_is_a_new_start,
            "feedback.duplicate-replay",
            "feedback.semantics",
            "feedback/start-retried-and-earlier-checkpoint-retried",
            "a retried start is a version conflict, not a replay",
        ),
        "replays_only_the_latest_request": Defect(
            "feedback.run",
            replays_only_the_latest_request,
            "feedback.duplicate-replay",
            "feedback.semantics",
            "feedback/start-retried-and-earlier-checkpoint-retried",
            "only the latest request replays; an earlier one retried is processed anew",
        ),
        "history_reopens_turn": Defect(
            "health.reduce",
            _reduce_patched({"historical_messages_loaded": _history_reopens_turn}),
            "health.late-resolution-updates-fact",
            "health.semantics",
            "health/history-after-snapshot",
            "history loaded after a snapshot reopens the turn: a late call publishes nothing",
        ),
        "history_republishes_fact": Defect(
            "health.reduce",
            _reduce_patched({"historical_messages_loaded": _history_republishes}),
            "health.history-invents-nothing",
            "health.semantics",
            "health/history-after-snapshot",
            "history loaded after a snapshot publishes the fact again",
        ),
        "restarted_iteration_continues": Defect(
            "health.reduce",
            _reduce_patched({"iteration_started": _restart_continues}),
            "health.turn-view",
            "health.semantics",
            "health/iteration-restarted-and-out-of-order",
            "an iteration started again under its number keeps its turn population",
        ),
        "fact_names_highest_iteration": Defect(
            "health.reduce",
            _reduce_patched({"iteration_started": _highest_iteration}),
            "health.fact-members",
            "health.semantics",
            "health/iteration-restarted-and-out-of-order",
            "the fact names the highest iteration started, not the latest",
        ),
        "empty_collection_unmeasured": Defect(
            "health.reduce",
            _empty_collection_unmeasured,
            "health.complete-collection-required",
            "health.semantics",
            "health/diagnostic-empty-and-repeated-sets",
            "an empty diagnostic collection (count 0) read as no measurement",
        ),
        "repeated_set_keeps_trend": Defect(
            "health.reduce",
            _patched_trend(_repeated_set_keeps_trend),
            "health.trend-cardinality",
            "health.semantics",
            "health/diagnostic-empty-and-repeated-sets",
            "a diagnostic set equal to the latest one leaves the trend as it was, not flat",
        ),
        "identical_parse_compared_as_text": Defect(
            "runrecord.provider_call_response",
            _parse_compared_with(_as_text),
            "runrecord.parsed-ref-when-identical",
            "runrecord.reference-when-identical",
            "runrecord/native-calls-reordered-identical",
            "the parse compared with tool_calls as text: key order matters",
        ),
        "identical_parse_ignores_extra_native_members": Defect(
            "runrecord.provider_call_response",
            _parse_compared_with(_calls_without(_only_parse_members)),
            "runrecord.parsed-ref-when-identical",
            "runrecord.reference-when-identical",
            "runrecord/native-call-extra-member-inline",
            "native calls compared on the parse's members only: an extra member is ignored",
        ),
        "exchanges_joined_within_an_iteration": Defect(
            "recap.project",
            exchanges_joined_within_an_iteration,
            "recap.grouping",
            "recap.semantics",
            "recap/tool-exchange-joined-across-the-turn",
            "a tool result joined to its call only within one iteration, not the whole turn",
        ),
        "spans_drop_harn_members": Defect(
            "runrecord.project",
            spans_drop_harn_members,
            "runrecord.one-evidence",
            "runrecord.semantics",
            "runrecord/span-links-events-and-cost-kept",
            "a span's links, events and cost_usd dropped from the record",
        ),
        "redaction_reads_no_windows": Defect(
            "redaction.apply",
            redaction_reads_no_windows,
            "recap.redaction",
            "redaction.apply",
            "",
            "Harn's catalog read in one pass, not in 256 KiB windows",
        ),
        "redaction_word_characters_of_a_newer_unicode": Defect(
            "redaction.apply",
            redaction_word_characters_of_a_newer_unicode,
            "recap.redaction",
            "redaction.apply",
            "redaction/default-token-beside-a-letter-after-unicode-14",
            "\\b's word characters from a Unicode newer than 14.0",
        ),
        "redaction_missing_policy_is_required": Defect(
            "redaction.apply",
            redaction_missing_policy_is_required,
            "recap.redaction",
            "redaction.apply",
            "redaction/apply-missing-policy-rejected",
            "a missing policy answered required, not invalid_case",
        ),
        "recap_ascii_word_boundary": Defect(
            "recap.project",
            _redacting("recap.project", _ascii_word_boundary),
            "recap.redaction",
            "recap.semantics",
            "recap/redaction-token-beside-non-ascii-letters",
            "recap: \\b read as ASCII, so a token beside a non-ASCII letter is redacted",
        ),
        "recap_placeholder_length_in_characters": Defect(
            "recap.project",
            _redacting("recap.project", _placeholder_length_in_characters),
            "recap.redaction",
            "recap.semantics",
            "recap/redaction-multibyte-matches",
            "recap: a placeholder's length counted in characters, not UTF-8 bytes",
        ),
        "provider_placeholder_length_in_characters": Defect(
            "runrecord.provider_call_response",
            _redacting("runrecord.provider_call_response", _placeholder_length_in_characters),
            "runrecord.redaction",
            "runrecord.response-semantics",
            "runrecord/redaction-multibyte-matches",
            "provider_call_response: a placeholder's length counted in characters, not UTF-8 bytes",
        ),
        "recap_redaction_reads_no_windows": Defect(
            "recap.project",
            _redacting("recap.project", _one_pass),
            "recap.redaction",
            "recap.semantics",
            "",
            "recap: Harn's catalog read in one pass, not in 256 KiB windows",
        ),
        "blank_ids_by_ecmascript_white_space": Defect(
            "recap.project",
            blank_ids_by_ecmascript_white_space,
            "recap.grouping",
            "recap.semantics",
            "recap/blank-ids-white-space-and-near-misses",
            "ids judged blank with ECMAScript's white space (U+FEFF blank, U+0085 not)",
        ),
        "session_id_blank_by_ecmascript_white_space": Defect(
            "recap.project",
            session_id_blank_by_ecmascript_white_space,
            "recap.session-id-required",
            "recap.semantics",
            "recap/session-id-feff-alone-is-not-blank",
            "a query's sessionId judged blank with ECMAScript's white space (U+FEFF alone refused)",
        ),
        "historical_parent_id_kept": Defect(
            "document.roundtrip",
            historical_parent_id_kept,
            "runrecord.new-records-parent-span-id",
            "roundtrip.identity",
            "documents/runrecord-span-historical-parent-id-loads",
            "a historical span's parent_id written back as parent_id, not parent_span_id",
        ),
        "historical_parent_id_refused": Defect(
            "document.roundtrip",
            historical_parent_id_refused,
            "runrecord.historical-parent-id-loads",
            "roundtrip.identity",
            "documents/runrecord-span-historical-parent-id-loads",
            "a historical span's parent_id refused, as the write contract refuses it",
        ),
        "parent_id_accepted_on_write": Defect(
            "document.roundtrip",
            parent_id_accepted_on_write,
            "runrecord.new-records-parent-span-id",
            "roundtrip.identity",
            "documents/runrecord-span-parent-id-rejected",
            "a new span spelled with parent_id accepted, as a historical one is",
        ),
        **_sameness_family(),
    }
)


# -- run-record rules a Go producer written from the docs broke (tests/producers/go_runrecord/) ---
# Each is caught through the operation that applies the rule, with redaction.apply and
# document.roundtrip undeclared (conformance/judge/cases: explicit.run_identities,
# redaction.provider_key_cases, redaction.provider_rule_cases,
# limits.provider_response_limit_cases).
def execution_id_upper_case_accepted(case: Mapping[str, Any]) -> Any:
    """Harn's older identity rule (uuid::Uuid::parse_str): an hxe- UUID in upper case is
    Harn-owned too."""
    from session_contracts.runrecord import record

    rule = record.is_harn_execution_id
    with _patched(record, "is_harn_execution_id", lambda candidate: rule(candidate.lower())):
        return HANDLERS["runrecord.project"](case)


def sensitive_key_suffix_apikey_missing(case: Mapping[str, Any]) -> Any:
    """A key ending in apikey (openai_apikey) is not sensitive: three of the four suffixes."""
    from session_contracts.redaction import policy

    default = policy.default_policy()
    rule = default.sensitive_keys
    assert rule is not None
    without = replace(rule, suffixes=tuple(s for s in rule.suffixes if s != "apikey"))
    broken = replace(default, sensitive_keys=without)
    with _patched(policy, "default_policy", lambda: broken):
        return HANDLERS["runrecord.provider_call_response"](case)


def _call_id_of_257_bytes_kept(finding: Any, doctype: str, instance: Any, again: Any) -> bool:
    text = _at(instance, finding.path)
    return not (
        finding.code == "max_utf8_bytes"
        and finding.path == "$.call_id"
        and isinstance(text, str)
        and len(text.encode("utf-8")) == 257
    )


def _owner_is_a_string(finding: Any, doctype: str, instance: Any, again: Any) -> bool:
    return finding.code != "same_value" or isinstance(_at(instance, finding.path), str)


def span_owner_non_string_ignored(case: Mapping[str, Any]) -> Any:
    """A span's harn.execution.id is compared only when it is a string: 5 names no owner."""
    from session_contracts.runrecord import record

    owner_findings = record._span_owner_findings

    def strings_only(run: Any) -> list[Any]:
        spans = {"evidence": {"trace_spans": [{"metadata": s.metadata} for s in run.spans]}}
        return [f for f in owner_findings(run) if isinstance(_at(spans, f.path), str)]

    with _patched(record, "_span_owner_findings", strings_only):
        return _kept(_owner_is_a_string)(HANDLERS["runrecord.project"])(case)


def sensitive_key_non_string_kept(case: Mapping[str, Any]) -> Any:
    """Under a sensitive key only a string is replaced in tool calls: a number, null, an array
    or an object is kept (walked), as the reference did before Harn's redact_json was read."""
    from session_contracts.runrecord import responses

    tree = responses._Redactor.tree

    def strings_only(self: Any, value: Any, key: str | None = None) -> Any:
        return tree(self, value, key if isinstance(value, str) else None)

    with _patched(responses._Redactor, "tree", strings_only):
        return HANDLERS["runrecord.provider_call_response"](case)


DEFECTS.update(
    {
        "execution_id_upper_case_accepted": Defect(
            "runrecord.project",
            execution_id_upper_case_accepted,
            "runrecord.execution-identity-gap",
            "runrecord.semantics",
            "runrecord/execution-id-upper-case-not-harn-owned",
            "an execution id in upper case taken as Harn-owned (Harn's older identity rule)",
        ),
        "span_owner_non_string_ignored": Defect(
            "runrecord.project",
            span_owner_non_string_ignored,
            "runrecord.execution-owner",
            "runrecord.semantics",
            "runrecord/span-owner-non-string-mismatch",
            "a span's harn.execution.id compared only when it is a string",
        ),
        "sensitive_key_suffix_apikey_missing": Defect(
            "runrecord.provider_call_response",
            sensitive_key_suffix_apikey_missing,
            "runrecord.redaction",
            "runrecord.response-semantics",
            "runrecord/sensitive-key-names-and-spellings",
            "a key ending in apikey not sensitive (three of the four suffixes)",
        ),
        "sensitive_key_non_string_kept": Defect(
            "runrecord.provider_call_response",
            sensitive_key_non_string_kept,
            "runrecord.redaction",
            "runrecord.response-semantics",
            "runrecord/sensitive-key-non-string-values-redacted",
            "under a sensitive key only a string replaced in tool calls (a number, null, an "
            "array or an object kept)",
        ),
        "provider_ascii_word_boundary": Defect(
            "runrecord.provider_call_response",
            _redacting("runrecord.provider_call_response", _ascii_word_boundary),
            "runrecord.redaction",
            "runrecord.response-semantics",
            "runrecord/redaction-token-beside-non-ascii-letters",
            "provider_call_response: \\b read as ASCII, so a token beside a non-ASCII letter is "
            "redacted",
        ),
        "call_id_limit_off_by_one": Defect(
            "runrecord.provider_call_response",
            _kept(_call_id_of_257_bytes_kept)(HANDLERS["runrecord.provider_call_response"]),
            "runrecord.correlation",
            "runrecord.response-semantics",
            "runrecord/call-id-257-bytes-rejected",
            "a call_id of 257 UTF-8 bytes accepted (the limit off by one)",
        ),
    }
)


def handlers_for(name: str) -> dict[str, Handler]:
    """The reference's handlers with the one defect ``name`` in place."""
    defect = DEFECTS[name]
    handlers: dict[str, Handler] = dict(HANDLERS)
    handlers[defect.operation] = defect.handler
    return handlers


def main() -> int:
    name = sys.argv[1]
    return serve_as(f"defects:{name}", handlers_for(name))


if __name__ == "__main__":
    sys.exit(main())
