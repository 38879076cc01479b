"""The judges: how one case's answer is compared with the reference's, one function a rule.

A judge sends a trial through a runner (the producer, in process or over the protocol)
and raises :class:`Failed` on a wrong answer, :class:`Errored` when the producer broke
and :class:`Skip` when it answered ``skipped``; returning means the case agreed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from session_contracts.conformance.judge.cases import operations as strategies
from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.judge.json_diff import ABSENT, character_offset, mismatches
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.judge.trials import Trial, as_harn_reads, normalize_feedback
from session_contracts.errors import InvalidDocument
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.serde_numbers import NumberOutOfRange, floats_as_harn_reads
from session_contracts.jsontext.wire import dumps_wire
from session_contracts.recap.query import clamp_limit
from session_contracts.rejections import agreement, answered_findings
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

__all__ = [
    "Errored",
    "Failed",
    "Runner",
    "Skip",
    "judge_canaries",
    "judge_determinism",
    "judge_extensions",
    "judge_lookalikes",
    "judge_no_zero_rate",
    "judge_query_aliases",
    "judge_recap_hashes",
    "judge_recap_limit",
    "judge_redaction_apply",
    "judge_reference_rule",
    "judge_rejection",
    "judge_roundtrip_identity",
    "judge_schema",
    "judge_semantics",
    "judge_unknown_field",
    "judge_usage_not_summed",
    "run_case",
]


class Failed(AssertionError):
    pass


class Errored(Exception):
    def __init__(self, outcome: CaseOutcome) -> None:
        super().__init__(f"{outcome.error_code}: {outcome.message}")
        self.outcome = outcome


class Skip(Exception):
    pass


# -- what each operation's output must be ------------------------------------------------------
def _output_findings(operation: str, case_input: Mapping[str, Any], output: Any) -> list[str]:
    validator = default_validator()
    problems: list[str] = []

    def check(doctype: str, value: Any, where: str) -> None:
        for finding in validator.validate(doctype, value):
            problems.append(f"{where}{finding.path[1:]}: {finding.message} [{finding.code}]")

    if operation == "document.roundtrip":
        check(str(case_input["doctype"]), output, "$")
    elif operation == "health.reduce":
        facts = output.get("facts") if isinstance(output, dict) else None
        if not isinstance(facts, list):
            return ['$: the output must be {"facts": [...]}']
        for index, fact in enumerate(facts):
            check("session-health.fact", fact, f"$.facts[{index}]")
    elif operation == "recap.project":
        check("session-recap.envelope", output, "$")
    elif operation == "runrecord.project":
        check("run-record.record", output, "$")
    elif operation == "runrecord.provider_call_response":
        check("run-record.provider-call-response", output, "$")
    elif operation == "feedback.run":
        responses = output.get("responses") if isinstance(output, dict) else None
        if not isinstance(responses, list):
            return ['$: the output must be {"responses": [...]}']
        for index, response in enumerate(responses):
            if isinstance(response, dict) and "observed_at_unix_ms" in response:
                doctype = "session-feedback.observation"
            elif isinstance(response, dict) and "code" in response:
                doctype = "session-feedback.checkpoint-rejection"
            else:
                doctype = "session-feedback.checkpoint-receipt"
            check(doctype, response, f"$.responses[{index}]")
    return problems


def _reference(trial: Trial) -> tuple[str, Any]:
    """The reference producer's answer, in-process: ("result", output) or
    ("rejected", its rejection: code, path and every finding)."""
    answer = reference_outcome(trial.operation, trial.input)
    if answer.outcome == "result":
        return "result", answer.output
    if answer.outcome == "rejected":
        return "rejected", answer.rejection
    # Our own cases are inputs the reference answers: anything else is a bug of ours.
    raise RuntimeError(
        f"the reference {answer.outcome} on a case of {trial.operation}: "
        f"{answer.message or answer.reason}"
    )


def judge_rejection(reference: Mapping[str, Any], outcome: CaseOutcome) -> None:
    """A producer's rejection agrees with the reference's when each finding it answers
    (its code and path, and each entry of its findings) names the path of one of the
    reference's findings with a code of that finding's class (docs/protocol.md)."""
    verdict = agreement(answered_findings(reference), answered_findings(outcome.rejection))
    if not verdict.agreed:
        raise Failed(
            f"the rejection disagrees with the reference [{verdict.code}]: "
            f"{verdict.message}; hint: {verdict.hint}"
        )


def _numbers_close(a: Any, b: Any) -> bool:
    """JSON equality, with floats equal within 1e-9 relative (summation order may differ)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_numbers_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_numbers_close(x, y) for x, y in zip(a, b, strict=True))
    return json_equal(a, b)


def _first_difference(expected: Any, actual: Any, where: str = "$") -> str:
    """Where ``actual`` first differs from ``expected`` (floats within 1e-9), both shown."""
    found = mismatches(expected, actual, equal=_numbers_close)
    if not found:
        return f"{where}: {_short(actual)}, expected {_short(expected)}"
    mismatch = found[0]
    path = where + mismatch.path[1:]
    if mismatch.actual is ABSENT:
        return f"{path}: missing (expected {_short(mismatch.expected)})"
    if mismatch.expected is ABSENT:
        return f"{path}: unexpected {_short(mismatch.actual)}"
    return f"{path}: {_short(mismatch.actual)}, expected {_short(mismatch.expected)}"


def _short(value: Any) -> str:
    try:
        text = dumps_wire(value).decode()
    except TypeError:  # not a JSON value: show it as Python would
        text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


Runner = Callable[[Trial], CaseOutcome]


def run_case(runner: Runner, trial: Trial) -> CaseOutcome:
    outcome = runner(trial)
    if outcome.outcome == "errored":
        raise Errored(outcome)
    if outcome.outcome == "skipped":
        raise Skip(outcome.reason)
    return outcome


def _expect_result(outcome: CaseOutcome) -> Any:
    if outcome.outcome != "result":
        rejection = outcome.rejection or {}
        raise Failed(
            f"rejected a valid input: {rejection.get('code')} at {rejection.get('path')}: "
            f"{rejection.get('message')}"
        )
    return outcome.output


def _results_unless_rejected(runner: Runner, trial: Trial, what: str) -> tuple[Any, Any] | None:
    """Run the case.  None when the reference rejects it, which the producer must do too,
    with a rejection that agrees (raises otherwise); else (the reference's result, the
    producer's), which must be a result."""
    outcome = run_case(runner, trial)
    kind, expected = _reference(trial)
    if kind != "rejected":
        return expected, _expect_result(outcome)
    if outcome.outcome != "rejected":
        found = ", ".join(f.render() for f in answered_findings(expected)[:6])
        raise Failed(f"accepted {what} the reference rejects ({found})")
    judge_rejection(expected, outcome)
    return None


def judge_roundtrip_identity(runner: Runner, trial: Trial) -> None:
    # A document past one of its limits, or with a value outside its enum, is refused.
    results = _results_unless_rejected(runner, trial, "a document")
    if results is None:
        return
    expected, output = results
    # The document itself, except a historical record loaded under its legacy names
    # (a span's parent_id), which is written again as new records are (parent_span_id);
    # or the reference's answer to the document as Harn's build reads its numbers.
    if json_equal(output, expected):
        return
    harn = as_harn_reads(trial)
    if harn is not None:
        kind, harn_expected = _reference(harn)
        if kind == "result" and json_equal(output, harn_expected):
            return
    raise Failed("re-encoded document differs: " + _first_difference(expected, output))


def judge_unknown_field(runner: Runner, trial: Trial) -> None:
    outcome = run_case(runner, trial)
    if outcome.outcome != "rejected":
        where = "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in trial.input["injected_at"]
        )
        raise Failed(f"accepted an unknown field at ${where}.{strategies.UNKNOWN_KEY}")
    kind, expected = _reference(trial)
    if kind == "rejected":
        judge_rejection(expected, outcome)


def judge_extensions(runner: Runner, trial: Trial) -> None:
    output = _expect_result(run_case(runner, trial))
    document = trial.input["document"]
    expected = document.get("snapshot", document)
    actual = output.get("snapshot", output) if isinstance(output, dict) else None
    got = actual.get("extensions") if isinstance(actual, dict) else None
    harn = _floats_as_harn_reads_or_none(expected["extensions"])
    if not json_equal(got, expected["extensions"]) and not (
        harn is not None and json_equal(got, harn)
    ):
        raise Failed(
            "extensions changed: " + _first_difference(expected["extensions"], got, "$.extensions")
        )


def _floats_as_harn_reads_or_none(value: Any) -> Any:
    try:
        return floats_as_harn_reads(value)
    except NumberOutOfRange:
        return None


def judge_schema(runner: Runner, trial: Trial) -> None:
    outcome = run_case(runner, trial)
    if outcome.outcome != "result":
        return
    problems = _output_findings(trial.operation, trial.input, outcome.output)
    if problems:
        raise Failed("output breaks the contract: " + "; ".join(problems[:3]))


def _without_messages(rejection: Mapping[str, Any] | None) -> Any:
    """A rejection's codes and paths: its messages are people's text, not compared."""
    if not rejection:
        return rejection
    return [finding.to_json() for finding in answered_findings(rejection)]


def _answer_bytes(outcome: CaseOutcome) -> bytes:
    """An answer's RFC 8785 bytes; an answer RFC 8785 cannot write (an integer beyond
    2**53) by its exact wire bytes, sorted."""
    answer = {"o": outcome.outcome, "v": outcome.output, "r": _without_messages(outcome.rejection)}
    try:
        return canonical_bytes(answer)
    except InvalidDocument:
        return dumps_wire(answer, option=orjson.OPT_SORT_KEYS)


def judge_determinism(runner: Runner, trial: Trial) -> None:
    first, second = run_case(runner, trial), run_case(runner, trial)
    one = _answer_bytes(first)
    two = _answer_bytes(second)
    if one != two:
        raise Failed(
            "the same case gave different answers: "
            + _first_difference(first.output, second.output)
        )


def judge_semantics(runner: Runner, trial: Trial) -> None:
    results = _results_unless_rejected(runner, trial, "an input")
    if results is None:
        return
    expected, actual = results
    if trial.operation == "feedback.run":
        expected, actual = normalize_feedback(expected), normalize_feedback(actual)
    if _numbers_close(expected, actual):
        return
    harn = as_harn_reads(trial)
    if harn is not None:
        kind, harn_expected = _reference(harn)
        if kind == "result" and trial.operation == "feedback.run":
            harn_expected = normalize_feedback(harn_expected)
        if kind == "result" and _numbers_close(harn_expected, actual):
            return  # the answer of a producer that reads numbers as Harn's build does
    raise Failed("differs from the reference: " + _first_difference(expected, actual))


def _answer_to_judge(runner: Runner, trial: Trial) -> Any:
    """The producer's result, or None when it and the reference both reject the input
    (nothing for a rule about outputs to judge; how rejections agree is not this rule's)."""
    outcome = run_case(runner, trial)
    if outcome.outcome == "rejected" and _reference(trial)[0] == "rejected":
        return None
    return _expect_result(outcome)


def _rate_members(fact: Any) -> Iterator[tuple[str, Any]]:
    """(where, rate) for both rates of both views of a fact: ``turn.tool_call_success_rate``..."""
    if not isinstance(fact, dict):
        return
    for view in ("turn", "rolling"):
        members = fact.get(view)
        if not isinstance(members, dict):
            continue
        for name in ("tool_call_success_rate", "nonzero_command_exit_rate"):
            yield f"{view}.{name}", members.get(name)


def judge_no_zero_rate(runner: Runner, trial: Trial) -> None:
    """Only the rule: a rate without a qualifying observation is null, never a zero rate.

    A zero denominator is wrong wherever it appears; a rate (zero or not)
    where the reference reports null is a rate made up for a population with
    no qualifying observation. Every other difference (counts, gauges, edits,
    trends, which facts are emitted) is ``health.semantics``'s to report: the
    facts are compared rate by rate only when both list the same number of
    facts, since otherwise no fact can be paired with the reference's.
    """
    output = _answer_to_judge(runner, trial)
    facts = output.get("facts") if isinstance(output, dict) else None
    if not isinstance(facts, list):
        return  # not the shape of a reduction: schema.output reports it
    for index, fact in enumerate(facts):
        for where, rate in _rate_members(fact):
            if isinstance(rate, dict) and rate.get("denominator") == 0:
                raise Failed(f"$.facts[{index}].{where}: a zero-denominator rate instead of null")
    kind, expected = _reference(trial)
    if kind != "result" or len(expected["facts"]) != len(facts):
        return
    for index, (reference_fact, fact) in enumerate(zip(expected["facts"], facts, strict=True)):
        actual_rates = dict(_rate_members(fact))
        for where, reference_rate in _rate_members(reference_fact):
            actual = actual_rates.get(where)
            if reference_rate is None and actual is not None:
                raise Failed(
                    f"$.facts[{index}].{where}: {_short(actual)} where no observation qualifies "
                    "(the reference has null)"
                )


def _accepted_usage(steps: Sequence[Any], responses: Sequence[Any], upto: int) -> dict[str, Any]:
    """Per session, the latest usage snapshot the producer itself accepted before step ``upto``.

    Latest by the host's ``observed_at_unix_ms``, then by checkpoint order
    (docs/feedback.md): the answer to an observe must be exactly that
    snapshot, whatever the producer accepted or refused on other grounds.
    """
    latest: dict[str, tuple[int, int, Any]] = {}
    for index in range(min(upto, len(steps), len(responses))):
        step, response = steps[index], responses[index]
        if not isinstance(step, dict) or step.get("call") != "checkpoint":
            continue
        request = step.get("request")
        usage = request.get("usage") if isinstance(request, dict) else None
        accepted = (
            isinstance(response, dict) and "checkpoint_id" in response and "code" not in response
        )
        if not isinstance(usage, dict) or not accepted or response.get("replayed") is True:
            continue
        at = usage.get("observed_at_unix_ms")
        key = (at if isinstance(at, int) else -1, index)
        assert isinstance(request, dict)  # usage came from it
        session = str(request.get("session_id"))
        if session not in latest or key >= latest[session][:2]:
            latest[session] = (*key, usage)
    return {session: usage for session, (_, _, usage) in latest.items()}


def judge_usage_not_summed(runner: Runner, trial: Trial) -> None:
    """Only the rule: work.observe shows the latest accepted usage snapshot, never a sum.

    Judged against the producer's own receipts: whatever it accepted, the
    usage an observe reports must be the latest of those snapshots, member
    for member. Which checkpoints should have been accepted, the report
    metadata (ages, staleness, checkpoint ids) and the missing-slot reasons
    are ``feedback.semantics``'s to judge.
    """
    output = _answer_to_judge(runner, trial)
    responses = output.get("responses") if isinstance(output, dict) else None
    steps = trial.input.get("steps")
    if not isinstance(responses, list) or not isinstance(steps, list):
        return  # not the shape of a run: schema.output reports it
    for index, (step, response) in enumerate(zip(steps, responses, strict=False)):
        if not isinstance(step, dict) or step.get("call") != "observe":
            continue
        slot = response.get("usage") if isinstance(response, dict) else None
        if not isinstance(slot, dict):
            continue  # not the shape of an observation: schema.output reports it
        reported = slot.get("state") == "reported"
        latest = _accepted_usage(steps, responses, index).get(str(step.get("session_id")))
        where = f"$.responses[{index}].usage"
        if reported and latest is None:
            raise Failed(f"{where}: reports usage although no usage snapshot was accepted")
        if reported and not json_equal(slot.get("value"), latest):
            raise Failed(
                f"{where}.value is not the latest accepted snapshot: "
                + _first_difference(latest, slot.get("value"), f"{where}.value")
            )
        if latest is not None and not reported:
            raise Failed(f"{where}: no usage reported although a snapshot was accepted")


def judge_reference_rule(runner: Runner, trial: Trial) -> None:
    output = _expect_result(run_case(runner, trial))
    inline = output.get("parsed_tool_calls")
    native = output.get("tool_calls")
    if isinstance(inline, list) and inline and json_equal(inline, native):
        raise Failed(
            "parsed_tool_calls repeats tool_calls verbatim: expected "
            'parsed_tool_calls_ref: "tool_calls"'
        )
    if "parsed_tool_calls_ref" in output:
        kind, expected = _reference(trial)
        if kind == "result" and "parsed_tool_calls_ref" not in expected:
            raise Failed(
                "parsed_tool_calls_ref where the parse differs from tool_calls "
                "(or is empty): the inline view is required"
            )


def judge_canaries(runner: Runner, trial: Trial) -> None:
    from session_contracts.redaction.canaries import canary_secrets, strings_of

    outcome = run_case(runner, trial)
    # Every string as decoded, not the JSON text: a secret with a newline (a
    # PEM key) reads "\\n" in JSON and would never be found there.
    texts = list(strings_of({"output": outcome.output, "rejection": outcome.rejection}))
    texts.append(outcome.message)
    leaked = [kind for kind, secret in canary_secrets().items() if any(secret in t for t in texts)]
    if leaked:
        # Never print the secret itself: the kind is enough to find it.
        raise Failed("a planted secret reached the output unredacted: " + ", ".join(leaked))


def judge_recap_hashes(runner: Runner, trial: Trial) -> None:
    from session_contracts.hashes.snapshot import record_hash, verify_snapshot

    output = _expect_result(run_case(runner, trial))
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if not isinstance(snapshot, dict):
        return  # unavailable: no hashes

    def errors_against(events: Any) -> list[Any]:
        journal = {event["id"]: record_hash(event) for event in events}
        found = verify_snapshot(snapshot, ("snapshot",), journal)
        return [f for f in found if f.level == "error"]

    errors = errors_against(trial.input["events"])
    harn = as_harn_reads(trial) if errors else None
    if harn is not None and not errors_against(harn.input["events"]):
        return  # every record hash is of the events as Harn's build reads them
    if errors:
        raise Failed("; ".join(f"{f.path}: {f.message}" for f in errors[:3]))


def judge_recap_limit(runner: Runner, trial: Trial) -> None:
    output = _expect_result(run_case(runner, trial))
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if not isinstance(snapshot, dict):
        return
    query = trial.input["query"]
    requested = query.get("limit")
    echoed = snapshot.get("query", {}).get("limit")
    if echoed != requested:
        # Harn's runtime echoes the query as received; only the read is clamped.
        raise Failed(f"the query echo's limit is {echoed} for a requested {requested}")
    expected = clamp_limit(requested)
    # Harn's store reads from event 1 when the query names no start.
    given = query.get("fromEventId", query.get("from_event_id"))
    start = 1 if given is None else given
    session = query.get("sessionId", query.get("session_id"))
    available = sum(
        1 for e in trial.input["events"] if e["sessionId"] == session and e["id"] >= start
    )
    scanned = snapshot.get("coverage", {}).get("scanned", 0)
    if scanned != min(expected, available):
        raise Failed(
            f"scanned {scanned} events: with the effective bound {expected} and {available} "
            f"events from the start of the read, expected {min(expected, available)}"
        )


def judge_lookalikes(runner: Runner, trial: Trial) -> None:
    lookalike = trial.input["lookalike"]
    case = Trial(trial.operation, {k: v for k, v in trial.input.items() if k != "lookalike"})
    output = _expect_result(run_case(runner, case))
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if not isinstance(snapshot, dict):
        return
    planted = {
        e["id"] for e in case.input["events"] if lookalike in str(e["payload"].get("text", ""))
    }
    for turn in snapshot.get("turns", []):
        for prompt in turn.get("prompts", []):
            if prompt.get("sourceEventId") in planted and lookalike not in prompt.get("text", ""):
                raise Failed(
                    f"a look-alike was redacted from prompt event {prompt['sourceEventId']}: "
                    "redact secrets, not text that merely resembles them"
                )


def judge_query_aliases(runner: Runner, trial: Trial) -> None:
    camel = run_case(runner, trial)
    snake_trial = Trial(
        trial.operation, dict(trial.input, query=strategies.snake_case_query(trial.input["query"]))
    )
    snake = run_case(runner, snake_trial)
    if snake.outcome != camel.outcome or not json_equal(snake.output, camel.output):
        raise Failed(
            "the snake-case spelling of the same query gave another answer: "
            + (
                _first_difference(camel.output, snake.output)
                if snake.outcome == "result"
                else f"{snake.outcome} {dict(snake.rejection or {})}"
            )
        )


def judge_redaction_apply(runner: Runner, trial: Trial) -> None:
    from session_contracts.redaction.vectors import kinds_of

    # A malformed input is refused, by the stage docs/protocol.md names.
    results = _results_unless_rejected(runner, trial, "a redaction input")
    if results is None:
        return
    expected, actual = results
    if not (isinstance(actual, dict) and json_equal(actual, expected)):
        # Name the detector, never the text: the input holds a (fake) secret.
        where = _first_difference_path(expected, actual)
        raise Failed(
            f"{trial.input['policy']} policy, detector(s) {', '.join(kinds_of(trial.input))}: "
            f"the output differs from the reference at {where}"
        )


def _first_difference_path(expected: Any, actual: Any) -> str:
    """Where two JSON values first differ, without showing either (a string: the
    character offset)."""
    found = mismatches(expected, actual)
    if not found:
        return "$"
    mismatch = found[0]
    if mismatch.expected is ABSENT or mismatch.actual is ABSENT:
        return f"{mismatch.path} (present in only one)"
    if isinstance(mismatch.expected, str) and isinstance(mismatch.actual, str):
        return f"{mismatch.path}, character {character_offset(mismatch.expected, mismatch.actual)}"
    return mismatch.path
