"""The reference producer with exactly one defect, chosen by argv[1].

tests/integration/test_certify.py proves each defect is caught by its intended check.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping
from typing import Any

from serving import CONTRACTS, by_name, serve_as

from session_contracts.conformance.protocol import Handler, Rejected, Skipped
from session_contracts.conformance.reference.producer import HANDLERS


def accepts_unknown_fields(case: Mapping[str, Any]) -> Any:
    # Validates nothing: echoes whatever it is given.
    return copy.deepcopy(case["document"])


def drops_extensions(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["document.roundtrip"](case)
    snapshot = output.get("snapshot", output) if isinstance(output, dict) else {}
    if isinstance(snapshot, dict):
        snapshot.pop("extensions", None)
    return output


def drops_nulls_in_extensions(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["document.roundtrip"](case)
    snapshot = output.get("snapshot", output) if isinstance(output, dict) else {}
    if isinstance(snapshot, dict) and isinstance(snapshot.get("extensions"), dict):
        snapshot["extensions"] = {k: v for k, v in snapshot["extensions"].items() if v is not None}
    return output


def _null_rates_to_zero(fact: dict[str, Any]) -> None:
    for view in ("turn", "rolling"):
        for name in ("tool_call_success_rate", "nonzero_command_exit_rate"):
            if fact[view][name] is None:
                fact[view][name] = {"numerator": 0, "denominator": 0, "value": 0}


def zero_rate(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["health.reduce"](case)
    for fact in output["facts"]:
        _null_rates_to_zero(fact)
    return output


def counts_streaming_candidates(case: Mapping[str, Any]) -> Any:
    observations = [
        dict(o, streaming_parse_candidate=False) if o.get("kind") == "tool_call_completed" else o
        for o in case["observations"]
    ]
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def sums_usage(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["feedback.run"](case)
    total: dict[str, int] = {}
    for step, response in zip(case["steps"], output["responses"], strict=True):
        usage = step.get("request", {}).get("usage") if step["call"] == "checkpoint" else None
        if usage and "code" not in response and not response.get("replayed"):
            for key in ("input_tokens", "output_tokens"):
                total[key] = total.get(key, 0) + usage.get(key, 0)
        slot = response.get("usage") if "observed_at_unix_ms" in response else None
        if isinstance(slot, dict) and slot.get("state") == "reported":
            slot["value"].update(total)
            slot["value"].pop("cached_input_tokens", None)
    return output


def accepts_future_usage(case: Mapping[str, Any]) -> Any:
    steps = copy.deepcopy(list(case["steps"]))
    for step in steps:
        usage = step.get("request", {}).get("usage")
        if usage and usage["observed_at_unix_ms"] > step["at_unix_ms"] + 300_000:
            usage["observed_at_unix_ms"] = step["at_unix_ms"]
    return HANDLERS["feedback.run"](dict(case, steps=steps))


_CALLS = {"count": 0}


def nondeterministic(case: Mapping[str, Any]) -> Any:
    # Every other answer lists the facts in another order: the same case
    # asked twice in a row gets two answers.
    output = HANDLERS["health.reduce"](case)
    _CALLS["count"] += 1
    if _CALLS["count"] % 2:
        output["facts"].reverse()
    return output


def invalid_output(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["health.reduce"](case)
    for fact in output["facts"]:
        fact["heuristics"] = {"steer": "stop"}
    return output


def inlines_identical_parse(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["runrecord.provider_call_response"](case)
    if output.pop("parsed_tool_calls_ref", None) is not None:
        output["parsed_tool_calls"] = copy.deepcopy(output["tool_calls"])
    return output


def leaks_secrets(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["runrecord.provider_call_response"](case)
    output["text"] = case["response"]["text"]  # forgot to redact the text view
    return output


def nil_stays_a_string(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["runrecord.provider_call_response"](case)
    if isinstance(output.get("loop_state"), dict):
        text = case["response"]["text"]
        for key, value in output["loop_state"].items():
            if value is None and f"{key}: nil" in text:
                output["loop_state"][key] = "nil"
    return output


def writes_parent_id(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["runrecord.project"](case)
    for span in output["evidence"]["trace_spans"]:
        span["parent_id"] = span.pop("parent_span_id")
    return output


def relabels_session_id(case: Mapping[str, Any]) -> Any:
    output = HANDLERS["runrecord.project"](case)
    evidence = output["evidence"]
    if evidence["execution_id"] is None:
        evidence["execution_id"] = output["session_id"]
        evidence["gaps"] = [g for g in evidence["gaps"] if g["component"] != "execution_identity"]
    return output


def counts_repeated_terminal_twice(case: Mapping[str, Any]) -> Any:
    # Gives every terminal update of a call a fresh call id, so each one counts.
    observations = []
    for index, observation in enumerate(case["observations"]):
        if observation.get("kind") in ("tool_call_completed", "tool_call_abandoned"):
            observation = dict(observation, call_id=f"{observation['call_id']}#{index}")
        observations.append(observation)
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def dedupes_calls_across_iterations(case: Mapping[str, Any]) -> Any:
    # Keeps the counted call ids for the whole session; Harn forgets them at
    # each iteration start, so a call id completing in a later iteration counts.
    seen: set[str] = set()
    observations = []
    for observation in case["observations"]:
        kind = observation.get("kind")
        counted = kind == "tool_call_abandoned" or (
            kind == "tool_call_completed" and not observation.get("streaming_parse_candidate")
        )
        if counted and observation.get("call_id") in seen:
            continue
        if counted:
            seen.add(observation["call_id"])
        observations.append(observation)
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def accepts_decreasing_counter(case: Mapping[str, Any]) -> Any:
    # Treats a lower counter as a reset: it gives the sample a new counter_id.
    steps = copy.deepcopy(list(case["steps"]))
    peak: dict[str, int] = {}
    for index, step in enumerate(steps):
        usage = step.get("request", {}).get("usage")
        if not usage:
            continue
        tokens = usage.get("input_tokens", 0)
        if tokens < peak.get(usage["counter_id"], -1):
            usage["counter_id"] = f"{usage['counter_id']}-reset-{index}"
        peak[usage["counter_id"]] = max(peak.get(usage["counter_id"], -1), tokens)
    return HANDLERS["feedback.run"](dict(case, steps=steps))


def _recap(case: Mapping[str, Any]) -> Any:
    return HANDLERS["recap.project"](case)


def hashes_with_extensions(case: Mapping[str, Any]) -> Any:
    from session_contracts.hashes.snapshot import harn_sha256, projection_hash_input

    output = _recap(case)
    snapshot = output.get("snapshot")
    if snapshot is not None:
        snapshot["extensions"] = {"vendor.note": {"kept": True}}
        snapshot["projectionHash"] = harn_sha256(
            {**projection_hash_input(snapshot), "extensions": snapshot["extensions"]}
        )
    return output


def rfc8785_hashing(case: Mapping[str, Any]) -> Any:
    # Hashes the source event list in RFC 8785, not the source object in Harn's form.
    from session_contracts.hashes.snapshot import projection_hash
    from session_contracts.jsontext.canonical import content_hash

    output = _recap(case)
    snapshot = output.get("snapshot")
    if snapshot is not None:
        snapshot["contentHash"] = content_hash(snapshot["source"]["events"])
        snapshot["projectionHash"] = projection_hash(snapshot)
    return output


def noncanonical_hashing(case: Mapping[str, Any]) -> Any:
    import hashlib
    import json

    output = _recap(case)
    snapshot = output.get("snapshot")
    if snapshot is not None:
        from session_contracts.hashes.snapshot import projection_hash_input

        body = projection_hash_input(snapshot)  # json.dumps's spaces: not canonical
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        snapshot["projectionHash"] = "sha256:" + digest
    return output


def wrong_limit_clamp(case: Mapping[str, Any]) -> Any:
    query = dict(case["query"])
    if isinstance(query.get("limit"), int) and query["limit"] > 10_000:
        query["limit"] = 10_000  # clamps to the wrong ceiling
    return _recap(dict(case, query=query))


def wrong_default_limit(case: Mapping[str, Any]) -> Any:
    query = dict(case["query"])
    query.setdefault("limit", 1_000)
    return _recap(dict(case, query=query))


def ignores_snake_aliases(case: Mapping[str, Any]) -> Any:
    for key in case["query"]:
        if "_" in key:
            raise Rejected("unknown_field", f"$.query.{key}", f"{key} is not a query field")
    return _recap(case)


def leaks_recap_secrets(case: Mapping[str, Any]) -> Any:
    raw = {e["id"]: e["payload"].get("text") for e in case.get("events", [])}
    output = _recap(case)
    for turn in output.get("snapshot", {}).get("turns", []):
        for prompt in turn["prompts"]:
            prompt["text"] = raw.get(prompt["sourceEventId"], prompt["text"])
    return output


def redacts_lookalikes(case: Mapping[str, Any]) -> Any:
    # Over-redacts: every prompt loses its text.
    output = _recap(case)
    for turn in output.get("snapshot", {}).get("turns", []):
        for prompt in turn["prompts"]:
            prompt["text"] = "[REDACTED:everything]"
    return output


MARKUP = "[/x][bold]y[/bold]"


def markup_in_answers(case: Mapping[str, Any]) -> Any:
    # Producer text that rich would read as markup: it must be shown verbatim.
    output = HANDLERS["health.reduce"](case)
    for fact in output["facts"]:
        fact["session_id"] = MARKUP
    return output


# -- rejections judged by their reason (docs/protocol.md, Rejections) -------------------------
def bogus_rejections(case: Mapping[str, Any]) -> Any:
    # Refuses what the reference refuses, always as "bogus" at "$": a code outside
    # the vocabulary, a path that names nothing.
    try:
        return HANDLERS["document.roundtrip"](case)
    except Rejected as rejected:
        raise Rejected("bogus", "$", rejected.message) from None


def rejection_wrong_path(case: Mapping[str, Any]) -> Any:
    # The right code, but at the root instead of the member at fault.
    try:
        return HANDLERS["document.roundtrip"](case)
    except Rejected as rejected:
        raise Rejected(rejected.code, "$", rejected.message) from None


def rejection_wrong_class(case: Mapping[str, Any]) -> Any:
    # The right path, but a code of another class (a type error for an unknown field).
    from session_contracts.rejections import rejection_class

    try:
        return HANDLERS["document.roundtrip"](case)
    except Rejected as rejected:
        other = "unknown_field" if rejection_class(rejected.code) == "type" else "wrong_type"
        raise Rejected(other, rejected.path, rejected.message) from None


DEFECTS: dict[str, tuple[str, Handler | None]] = {
    **by_name(
        ("recap.project", redacts_lookalikes),
        ("recap.project", hashes_with_extensions),
        ("recap.project", rfc8785_hashing),
        ("recap.project", noncanonical_hashing),
        ("recap.project", wrong_limit_clamp),
        ("recap.project", wrong_default_limit),
        ("recap.project", ignores_snake_aliases),
        ("recap.project", leaks_recap_secrets),
        ("health.reduce", counts_repeated_terminal_twice),
        ("health.reduce", dedupes_calls_across_iterations),
        ("feedback.run", accepts_decreasing_counter),
        ("runrecord.provider_call_response", inlines_identical_parse),
        ("runrecord.provider_call_response", leaks_secrets),
        ("runrecord.provider_call_response", nil_stays_a_string),
        ("runrecord.project", writes_parent_id),
        ("runrecord.project", relabels_session_id),
        ("document.roundtrip", accepts_unknown_fields),
        ("document.roundtrip", drops_extensions),
        ("document.roundtrip", drops_nulls_in_extensions),
        ("health.reduce", zero_rate),
        ("health.reduce", counts_streaming_candidates),
        ("feedback.run", sums_usage),
        ("feedback.run", accepts_future_usage),
        ("health.reduce", nondeterministic),
        ("health.reduce", invalid_output),
        ("health.reduce", markup_in_answers),
        ("document.roundtrip", bogus_rejections),
        ("document.roundtrip", rejection_wrong_path),
        ("document.roundtrip", rejection_wrong_class),
    ),
    # No handler at all: the producer declares no operation (main serves none).
    "skips_everything": ("", None),
}


def _skipping(every: int) -> dict[str, Any]:
    """Every operation declared; every ``every``-th case answered ``skipped``."""
    calls = {"n": 0}

    def wrap(handler: Any) -> Any:
        def skipping(case: Mapping[str, Any]) -> Any:
            calls["n"] += 1
            if calls["n"] % every == 0:
                raise Skipped("not implemented yet")
            return handler(case)

        return skipping

    return {operation: wrap(handler) for operation, handler in HANDLERS.items()}


# Producers that declare everything and skip cases: certify must not certify them.
SKIPPERS = {"skips_every_case": 1, "skips_every_second_case": 2}


def main() -> int:
    defect = sys.argv[1]
    contracts = CONTRACTS
    if defect == "health_only":
        # Not a defect: a correct producer of one contract, which declares only that.
        handlers = {"health.reduce": HANDLERS["health.reduce"]}
        contracts = ["session-health"]
    elif defect in SKIPPERS:
        handlers = _skipping(SKIPPERS[defect])
    else:
        operation, handler = DEFECTS[defect]
        handlers = dict(HANDLERS)
        if handler is None:
            handlers = {}
        else:
            handlers[operation] = handler
    return serve_as(
        MARKUP if defect == "markup_in_answers" else f"faulty:{defect}", handlers, contracts
    )


# oracle: own-rule checks
# Single defects that 25 random cases used to miss (each caught by an explicit case of
# conformance/judge/cases/explicit.py), and defects that another rule's check must
# not report under its own name (tests/integration/test_oracle.py).
def usage_future_tolerance_300_ms(case: Mapping[str, Any]) -> Any:
    # Refuses usage more than 300 ms ahead of the clock (the rule allows 300,000 ms).
    steps = copy.deepcopy(list(case["steps"]))
    for step in steps:
        usage = step.get("request", {}).get("usage") if step.get("call") == "checkpoint" else None
        if (
            isinstance(usage, dict)
            and usage.get("observed_at_unix_ms", 0) > step["at_unix_ms"] + 300
        ):
            usage["observed_at_unix_ms"] = max(
                usage["observed_at_unix_ms"], step["at_unix_ms"] + 300_001
            )
    return HANDLERS["feedback.run"](dict(case, steps=steps))


def open_heuristics(case: Mapping[str, Any]) -> Any:
    # A health fact's heuristics object accepts any member (it must be closed and empty).
    document = case.get("document")
    if case.get("doctype") != "session-health.fact" or not isinstance(document, dict):
        return HANDLERS["document.roundtrip"](case)
    heuristics = document.get("heuristics")
    extra = dict(heuristics) if isinstance(heuristics, dict) else {}
    output = HANDLERS["document.roundtrip"](dict(case, document=dict(document, heuristics={})))
    output["heuristics"] = extra
    return output


def _strip_below_turns(
    node: Any, known: frozenset[str], removed: list[Any], where: tuple[Any, ...]
) -> None:
    if isinstance(node, dict):
        for key in [k for k in node if k not in known]:
            removed.append((where, key, node.pop(key)))
        for key, value in node.items():
            _strip_below_turns(value, known, removed, (*where, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            _strip_below_turns(item, known, removed, (*where, index))


def _recap_member_names() -> frozenset[str]:
    import json

    from session_contracts.validation.schema_set import default_schema_set

    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for schema_id, schema in default_schema_set().schemas.items():
        if "recap" in schema_id:
            walk(json.loads(json.dumps(schema)))
    return frozenset(names)


def accepts_unknown_member_below_turn(case: Mapping[str, Any]) -> Any:
    # Checks members down to a turn, not inside it: anything below a turn is accepted.
    document = copy.deepcopy(case.get("document"))
    if not str(case.get("doctype", "")).startswith("session-recap.") or not isinstance(
        document, dict
    ):
        return HANDLERS["document.roundtrip"](case)
    snapshot = document.get("snapshot", document)
    removed: list[Any] = []
    if isinstance(snapshot, dict) and isinstance(snapshot.get("turns"), list):
        _strip_below_turns(snapshot["turns"], _recap_member_names(), removed, ())
    output = HANDLERS["document.roundtrip"](dict(case, document=document))
    if not removed:
        return output  # a query, or a snapshot with nothing below its turns
    turns = output.get("snapshot", output)["turns"]
    for where, key, value in removed:
        node = turns
        for part in where:
            node = node[part]
        node[key] = value
    return output


def reset_forgets_resolved_calls(case: Mapping[str, Any]) -> Any:
    # A transcript reset also forgets which call ids this iteration already counted.
    observations = []
    epoch = 0
    for observation in case["observations"]:
        kind = observation.get("kind") if isinstance(observation, dict) else None
        if kind == "iteration_started":
            epoch = 0
        elif kind == "transcript_reset":
            epoch += 1
        elif kind in ("tool_call_completed", "tool_call_abandoned") and epoch:
            observation = dict(observation, call_id=f"{observation['call_id']}~reset{epoch}")
        observations.append(observation)
    return HANDLERS["health.reduce"](dict(case, observations=observations))


def skips_null_receipt(case: Mapping[str, Any]) -> Any:
    # An explicitly null completion receipt is skipped, so an earlier value shows through.
    events = [
        event
        for event in case.get("events", [])
        if not (
            event.get("kind") == "session_attribute"
            and event.get("payload", {}).get("name") == "completion_receipt"
            and event.get("payload", {}).get("value") is None
        )
    ]
    return HANDLERS["runrecord.project"](dict(case, events=events))


def stale_at_exactly_900_000_ms(case: Mapping[str, Any]) -> Any:
    # A report exactly 900,000 ms old is called stale (the rule: older than 900,000 ms).
    output = HANDLERS["feedback.run"](case)
    for response in output["responses"]:
        if "observed_at_unix_ms" not in response:
            continue
        for slot in response.values():
            report = slot.get("report") if isinstance(slot, dict) else None
            if isinstance(report, dict) and report.get("age_ms") == 900_000:
                report["stale"] = True
                if "age_exceeded" not in report["stale_reasons"]:
                    report["stale_reasons"].append("age_exceeded")
    return output


def ignores_edits_of_failed_calls(case: Mapping[str, Any]) -> Any:
    # A failed call's applied edit is not counted in edits_since_verification.
    observations = [
        dict(o, mutation_applied=False)
        if isinstance(o, dict) and o.get("kind") == "tool_call_completed" and not o.get("success")
        else o
        for o in case["observations"]
    ]
    return HANDLERS["health.reduce"](dict(case, observations=observations))


DEFECTS.update(
    by_name(
        ("feedback.run", usage_future_tolerance_300_ms),
        ("document.roundtrip", open_heuristics),
        ("document.roundtrip", accepts_unknown_member_below_turn),
        ("health.reduce", reset_forgets_resolved_calls),
        ("runrecord.project", skips_null_receipt),
        ("feedback.run", stale_at_exactly_900_000_ms),
        ("health.reduce", ignores_edits_of_failed_calls),
    )
)


if __name__ == "__main__":
    sys.exit(main())
