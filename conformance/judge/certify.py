"""Certify a producer: run every check as a property against it.

Each check is a hypothesis property whose test calls the producer; a failure
shrinks to a minimal case, is saved to a file, and comes with a one-line
command that replays exactly that case.  Outcomes are kept apart: passed,
failed (a wrong answer), errored (the producer broke: crash, hang, invalid
JSON, wrong seq, or an error it reported), skipped (with the reason).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import math
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from session_contracts.conformance.judge.cases import operations as strategies
from session_contracts.conformance.judge.cases.explicit import EXPLICIT_CASES, ExplicitCase
from session_contracts.conformance.judge.checks import CHECKS, Check
from session_contracts.conformance.judge.golden import answer_of, reference_outcome
from session_contracts.conformance.judge.json_diff import ABSENT, character_offset, mismatches
from session_contracts.conformance.judge.runner import CaseOutcome, ProducerProcess
from session_contracts.conformance.protocol import Handler, Rejected
from session_contracts.conformance.protocol.producer_loop import answer_request
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.contracts import CONTRACT_DOCTYPES
from session_contracts.json.canonical import canonical_bytes
from session_contracts.json.wire import dumps_wire, loads_wire
from session_contracts.rejections import agreement, answered_findings
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

__all__ = [
    "DEFAULT_EXAMPLES",
    "CheckResult",
    "Evidence",
    "Runner",
    "Trial",
    "blocking_results",
    "certify",
    "explicit_trials",
    "gating_levels",
    "in_process_runner",
    "is_certified",
    "judge_rejection",
    "judge_trial",
    "replay_trial",
    "run_check",
]


# Random cases a check draws after its explicit ones, unless --examples says otherwise.
DEFAULT_EXAMPLES = 25


@dataclass(frozen=True)
class Trial:
    """One case as sent: the operation and its input."""

    operation: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class Evidence:
    """What a check's cases showed: a check passes only on cases judged and agreed.

    ``judged`` counts the cases whose answer (a result or a rejection) was
    compared, ``agreed`` those of them that agreed; ``skipped`` the cases the
    producer answered ``skipped`` although it declared the operation;
    ``errored`` the cases where the producer broke.
    """

    judged: int = 0
    agreed: int = 0
    skipped: int = 0
    errored: int = 0

    def __add__(self, other: Evidence) -> Evidence:
        return Evidence(
            self.judged + other.judged,
            self.agreed + other.agreed,
            self.skipped + other.skipped,
            self.errored + other.errored,
        )

    @property
    def sent(self) -> int:
        return self.judged + self.skipped + self.errored


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome.

    ``status`` is passed (every case judged and agreed, at least one), failed (a
    wrong answer), errored (the producer broke), partial (the producer skipped
    some cases of an operation it declared; the rest agreed) or skipped (no case
    was judged).  ``applicable`` is False when the producer does not declare the
    check's contract or operation: only then may a skip leave a certificate
    standing.
    """

    check: Check
    status: str  # passed | failed | errored | partial | skipped
    cases: int
    message: str = ""
    trial: Trial | None = None
    saved_to: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    evidence: Evidence = field(default_factory=Evidence)
    applicable: bool = True
    # On a failure: the producer's last answer to the failing case and the reference's
    # answer to the same input, both in golden's comparable form (``answer_of``).
    answer: Mapping[str, Any] | None = None
    reference_answer: Mapping[str, Any] | None = None
    # The part of ``evidence`` that the explicit cases gave; the rest is random cases'.
    explicit: Evidence = field(default_factory=Evidence)

    @property
    def certifies(self) -> bool:
        """Whether this result lets a certificate stand (a skip only when not applicable)."""
        return self.status == "passed" or (self.status == "skipped" and not self.applicable)


def gating_levels(fail_on: str) -> frozenset[str]:
    """The check levels that can keep a producer from being certified."""
    return frozenset({"required"} if fail_on == "required" else {"required", "recommended"})


def blocking_results(results: Sequence[CheckResult], fail_on: str) -> list[CheckResult]:
    """The results that keep the producer from being certified at ``fail_on``."""
    gating = gating_levels(fail_on)
    return [r for r in results if not r.certifies and r.check.level in gating]


def is_certified(results: Sequence[CheckResult], fail_on: str) -> bool:
    """The rule of a certificate: evidence, not silence.  At least one case judged and
    agreed, and every check of a gating level certifies (passed, or skipped only when
    the producer does not declare what it needs)."""
    agreed = sum(result.evidence.agreed for result in results)
    return agreed > 0 and not blocking_results(results, fail_on)


class _Failed(AssertionError):
    pass


class _Errored(Exception):
    def __init__(self, outcome: CaseOutcome) -> None:
        super().__init__(f"{outcome.error_code}: {outcome.message}")
        self.outcome = outcome


class _Skip(Exception):
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
    handler = HANDLERS[trial.operation]
    try:
        return "result", handler(trial.input)
    except Rejected as rejected:
        return "rejected", rejected.to_json()


def judge_rejection(reference: Mapping[str, Any], outcome: CaseOutcome) -> None:
    """A producer's rejection agrees with the reference's when each finding it answers
    (its code and path, and each entry of its findings) names the path of one of the
    reference's findings with a code of that finding's class (docs/protocol.md)."""
    verdict = agreement(answered_findings(reference), answered_findings(outcome.rejection))
    if not verdict.agreed:
        raise _Failed(
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


def normalize_feedback(output: Any) -> Any:
    # Checkpoint ids are the implementation's own: compare them by first appearance.
    names: dict[str, str] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "checkpoint_id" and isinstance(value, str):
                    out[key] = names.setdefault(value, f"checkpoint#{len(names) + 1}")
                elif key == "message":
                    out[key] = "<message>"  # people's text: not compared
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(output)


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


# -- the checks -----------------------------------------------------------------------------------
Runner = Callable[[Trial], CaseOutcome]


class _Recorder:
    """A runner that keeps what it sent for the case being judged and the answers,
    so that a failure can show the producer's answer beside the reference's."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._sent: list[tuple[Trial, CaseOutcome]] = []

    def __call__(self, trial: Trial) -> CaseOutcome:
        outcome = self._runner(trial)
        self._sent.append((trial, outcome))
        return outcome

    def new_case(self) -> None:
        self._sent.clear()

    def answers(self) -> dict[str, Any]:
        """The producer's last answer and the reference's to the same input (the
        fields ``answer`` and ``reference_answer`` of a failed result)."""
        if not self._sent:
            return {}
        trial, outcome = self._sent[-1]
        reference = reference_outcome(trial.operation, copy.deepcopy(dict(trial.input)))
        return {
            "answer": answer_of(trial.operation, outcome),
            "reference_answer": answer_of(trial.operation, reference),
        }


def _run(runner: Runner, trial: Trial) -> CaseOutcome:
    outcome = runner(trial)
    if outcome.outcome == "errored":
        raise _Errored(outcome)
    if outcome.outcome == "skipped":
        raise _Skip(outcome.reason)
    return outcome


def _expect_result(outcome: CaseOutcome) -> Any:
    if outcome.outcome != "result":
        rejection = outcome.rejection or {}
        raise _Failed(
            f"rejected a valid input: {rejection.get('code')} at {rejection.get('path')}: "
            f"{rejection.get('message')}"
        )
    return outcome.output


def _reference_unless_rejected(outcome: CaseOutcome, trial: Trial, what: str) -> tuple[bool, Any]:
    """(True, None) when the reference rejects the case, which the producer must do too,
    with a rejection that agrees (raises otherwise); else (False, the reference's result)."""
    kind, expected = _reference(trial)
    if kind != "rejected":
        return False, expected
    if outcome.outcome != "rejected":
        found = ", ".join(f.render() for f in answered_findings(expected)[:6])
        raise _Failed(f"accepted {what} the reference rejects ({found})")
    judge_rejection(expected, outcome)
    return True, None


def judge_roundtrip_identity(runner: Runner, trial: Trial) -> None:
    outcome = _run(runner, trial)
    # A document past one of its limits, or with a value outside its enum, is refused.
    if _reference_unless_rejected(outcome, trial, "a document")[0]:
        return
    output = _expect_result(outcome)
    if not json_equal(output, trial.input["document"]):
        raise _Failed(
            "re-encoded document differs: " + _first_difference(trial.input["document"], output)
        )


def judge_unknown_field(runner: Runner, trial: Trial) -> None:
    outcome = _run(runner, trial)
    if outcome.outcome != "rejected":
        where = "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in trial.input["injected_at"]
        )
        raise _Failed(f"accepted an unknown field at ${where}.{strategies.UNKNOWN_KEY}")
    kind, expected = _reference(trial)
    if kind == "rejected":
        judge_rejection(expected, outcome)


def judge_extensions(runner: Runner, trial: Trial) -> None:
    output = _expect_result(_run(runner, trial))
    document = trial.input["document"]
    expected = document.get("snapshot", document)
    actual = output.get("snapshot", output) if isinstance(output, dict) else None
    got = actual.get("extensions") if isinstance(actual, dict) else None
    if not json_equal(got, expected["extensions"]):
        raise _Failed(
            "extensions changed: " + _first_difference(expected["extensions"], got, "$.extensions")
        )


def judge_schema(runner: Runner, trial: Trial) -> None:
    outcome = _run(runner, trial)
    if outcome.outcome != "result":
        return
    problems = _output_findings(trial.operation, trial.input, outcome.output)
    if problems:
        raise _Failed("output breaks the contract: " + "; ".join(problems[:3]))


def _without_messages(rejection: Mapping[str, Any] | None) -> Any:
    """A rejection's codes and paths: its messages are people's text, not compared."""
    if not rejection:
        return rejection
    return [finding.to_json() for finding in answered_findings(rejection)]


def judge_determinism(runner: Runner, trial: Trial) -> None:
    first, second = _run(runner, trial), _run(runner, trial)
    one = canonical_bytes(
        {"o": first.outcome, "v": first.output, "r": _without_messages(first.rejection)}
    )
    two = canonical_bytes(
        {"o": second.outcome, "v": second.output, "r": _without_messages(second.rejection)}
    )
    if one != two:
        raise _Failed(
            "the same case gave different answers: "
            + _first_difference(first.output, second.output)
        )


def judge_semantics(runner: Runner, trial: Trial) -> None:
    outcome = _run(runner, trial)
    rejected, expected = _reference_unless_rejected(outcome, trial, "an input")
    if rejected:
        return
    actual = _expect_result(outcome)
    if trial.operation == "feedback.run":
        expected, actual = normalize_feedback(expected), normalize_feedback(actual)
    if not _numbers_close(expected, actual):
        raise _Failed("differs from the reference: " + _first_difference(expected, actual))


def _answer_to_judge(runner: Runner, trial: Trial) -> Any:
    """The producer's result, or None when it and the reference both reject the input
    (nothing for a rule about outputs to judge; how rejections agree is not this rule's)."""
    outcome = _run(runner, trial)
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
                raise _Failed(f"$.facts[{index}].{where}: a zero-denominator rate instead of null")
    kind, expected = _reference(trial)
    if kind != "result" or len(expected["facts"]) != len(facts):
        return
    for index, (reference_fact, fact) in enumerate(zip(expected["facts"], facts, strict=True)):
        actual_rates = dict(_rate_members(fact))
        for where, reference_rate in _rate_members(reference_fact):
            actual = actual_rates.get(where)
            if reference_rate is None and actual is not None:
                raise _Failed(
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
            raise _Failed(f"{where}: reports usage although no usage snapshot was accepted")
        if reported and not json_equal(slot.get("value"), latest):
            raise _Failed(
                f"{where}.value is not the latest accepted snapshot: "
                + _first_difference(latest, slot.get("value"), f"{where}.value")
            )
        if latest is not None and not reported:
            raise _Failed(f"{where}: no usage reported although a snapshot was accepted")


def judge_reference_rule(runner: Runner, trial: Trial) -> None:
    output = _expect_result(_run(runner, trial))
    inline = output.get("parsed_tool_calls")
    native = output.get("tool_calls")
    if isinstance(inline, list) and inline and json_equal(inline, native):
        raise _Failed(
            "parsed_tool_calls repeats tool_calls verbatim: expected "
            'parsed_tool_calls_ref: "tool_calls"'
        )
    if "parsed_tool_calls_ref" in output:
        kind, expected = _reference(trial)
        if kind == "result" and "parsed_tool_calls_ref" not in expected:
            raise _Failed(
                "parsed_tool_calls_ref where the parse differs from tool_calls "
                "(or is empty): the inline view is required"
            )


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, member names included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def judge_canaries(runner: Runner, trial: Trial) -> None:
    from session_contracts.redaction.engine import canary_secrets

    outcome = _run(runner, trial)
    # Every string as decoded, not the JSON text: a secret with a newline (a
    # PEM key) reads "\\n" in JSON and would never be found there.
    texts = list(_strings({"output": outcome.output, "rejection": outcome.rejection}))
    texts.append(outcome.message)
    leaked = [kind for kind, secret in canary_secrets().items() if any(secret in t for t in texts)]
    if leaked:
        # Never print the secret itself: the kind is enough to find it.
        raise _Failed("a planted secret reached the output unredacted: " + ", ".join(leaked))


def judge_recap_hashes(runner: Runner, trial: Trial) -> None:
    from session_contracts.hashes.snapshot import record_hash, verify_snapshot

    output = _expect_result(_run(runner, trial))
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if not isinstance(snapshot, dict):
        return  # unavailable: no hashes
    journal = {event["id"]: record_hash(event) for event in trial.input["events"]}
    errors = [f for f in verify_snapshot(snapshot, ("snapshot",), journal) if f.level == "error"]
    if errors:
        raise _Failed("; ".join(f"{f.path}: {f.message}" for f in errors[:3]))


def judge_recap_limit(runner: Runner, trial: Trial) -> None:
    output = _expect_result(_run(runner, trial))
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if not isinstance(snapshot, dict):
        return
    query = trial.input["query"]
    requested = query.get("limit")
    echoed = snapshot.get("query", {}).get("limit")
    if echoed != requested:
        # Harn's runtime echoes the query as received; only the read is clamped.
        raise _Failed(f"the query echo's limit is {echoed} for a requested {requested}")
    expected = 4096 if requested is None else min(max(requested, 1), 32768)
    # Harn's store reads from event 1 when the query names no start.
    given = query.get("fromEventId", query.get("from_event_id"))
    start = 1 if given is None else given
    session = query.get("sessionId", query.get("session_id"))
    available = sum(
        1 for e in trial.input["events"] if e["sessionId"] == session and e["id"] >= start
    )
    scanned = snapshot.get("coverage", {}).get("scanned", 0)
    if scanned != min(expected, available):
        raise _Failed(
            f"scanned {scanned} events: with the effective bound {expected} and {available} "
            f"events from the start of the read, expected {min(expected, available)}"
        )


def judge_lookalikes(runner: Runner, trial: Trial) -> None:
    lookalike = trial.input["lookalike"]
    case = Trial(trial.operation, {k: v for k, v in trial.input.items() if k != "lookalike"})
    output = _expect_result(_run(runner, case))
    snapshot = output.get("snapshot") if isinstance(output, dict) else None
    if not isinstance(snapshot, dict):
        return
    planted = {
        e["id"] for e in case.input["events"] if lookalike in str(e["payload"].get("text", ""))
    }
    for turn in snapshot.get("turns", []):
        for prompt in turn.get("prompts", []):
            if prompt.get("sourceEventId") in planted and lookalike not in prompt.get("text", ""):
                raise _Failed(
                    f"a look-alike was redacted from prompt event {prompt['sourceEventId']}: "
                    "redact secrets, not text that merely resembles them"
                )


def judge_query_aliases(runner: Runner, trial: Trial) -> None:
    camel = _run(runner, trial)
    snake_trial = Trial(
        trial.operation, dict(trial.input, query=strategies.snake_case_query(trial.input["query"]))
    )
    snake = _run(runner, snake_trial)
    if snake.outcome != camel.outcome or not json_equal(snake.output, camel.output):
        raise _Failed(
            "the snake-case spelling of the same query gave another answer: "
            + (
                _first_difference(camel.output, snake.output)
                if snake.outcome == "result"
                else f"{snake.outcome} {dict(snake.rejection or {})}"
            )
        )


def _redaction_vector_trials() -> list[st.SearchStrategy[Trial]]:
    """One strategy per policy and detector group of the redaction vectors, so every
    detector is tried at any number of examples."""
    from session_contracts.redaction.vectors import vector_groups

    return [_trials("redaction.apply", st.sampled_from(cases)) for _, cases in vector_groups()]


def judge_redaction_apply(runner: Runner, trial: Trial) -> None:
    from session_contracts.redaction.vectors import apply, kinds_of

    outcome = _run(runner, trial)
    actual = _expect_result(outcome)
    expected = apply(trial.input)
    if not (isinstance(actual, dict) and json_equal(actual, expected)):
        # Name the detector, never the text: the input holds a (fake) secret.
        where = _first_difference_path(expected, actual)
        raise _Failed(
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


@dataclass(frozen=True)
class _Plan:
    judge: Callable[[Runner, Trial], None]
    # One strategy, or one per operation (each then gets its own cases).
    strategy: Callable[
        [tuple[str, ...], tuple[str, ...]],
        st.SearchStrategy[Trial] | list[st.SearchStrategy[Trial]],
    ]


def _trials(operation: str, strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Trial]:
    return strategy.map(lambda case_input: Trial(operation, case_input))


def _every_operation(
    contracts: tuple[str, ...], operations: tuple[str, ...]
) -> list[st.SearchStrategy[Trial]]:
    """One strategy per supported operation: a cross-cutting check runs its cases
    on each operation in turn, so no operation is left to chance."""
    options: list[st.SearchStrategy[Trial]] = []
    if "document.roundtrip" in operations:
        options.append(_trials("document.roundtrip", strategies.roundtrip_inputs(contracts)))
    if "health.reduce" in operations:
        options.append(_trials("health.reduce", strategies.health_streams()))
    if "feedback.run" in operations:
        options.append(_trials("feedback.run", strategies.feedback_steps()))
    if "recap.project" in operations:
        options.append(_trials("recap.project", strategies.recap_cases()))
    if "runrecord.project" in operations:
        options.append(_trials("runrecord.project", strategies.run_projections()))
    if "runrecord.provider_call_response" in operations:
        options.append(_trials("runrecord.provider_call_response", strategies.provider_responses()))
    if not options:
        raise _Skip("the producer supports none of the operations this check exercises")
    return options


PLANS: dict[str, _Plan] = {
    "roundtrip.identity": _Plan(
        judge_roundtrip_identity,
        lambda c, o: _trials("document.roundtrip", strategies.roundtrip_inputs(c)),
    ),
    "closed.unknown-field-rejected": _Plan(
        judge_unknown_field,
        lambda c, o: _trials("document.roundtrip", strategies.unknown_field_inputs(c)),
    ),
    "extensions.verbatim": _Plan(
        judge_extensions, lambda c, o: _trials("document.roundtrip", strategies.extension_inputs())
    ),
    "schema.output": _Plan(judge_schema, _every_operation),
    "determinism.same-bytes": _Plan(judge_determinism, _every_operation),
    "health.semantics": _Plan(
        judge_semantics, lambda c, o: _trials("health.reduce", strategies.health_streams())
    ),
    "health.no-zero-rate": _Plan(
        judge_no_zero_rate, lambda c, o: _trials("health.reduce", strategies.health_streams())
    ),
    "health.transcript-reset": _Plan(
        judge_semantics, lambda c, o: _trials("health.reduce", strategies.reset_streams())
    ),
    "feedback.semantics": _Plan(
        judge_semantics, lambda c, o: _trials("feedback.run", strategies.feedback_steps())
    ),
    "runrecord.semantics": _Plan(
        judge_semantics, lambda c, o: _trials("runrecord.project", strategies.run_projections())
    ),
    "runrecord.response-semantics": _Plan(
        judge_semantics,
        lambda c, o: _trials("runrecord.provider_call_response", strategies.provider_responses()),
    ),
    "runrecord.reference-when-identical": _Plan(
        judge_reference_rule,
        lambda c, o: _trials("runrecord.provider_call_response", strategies.provider_responses()),
    ),
    "redaction.canaries": _Plan(
        judge_canaries,
        lambda c, o: _trials(
            "runrecord.provider_call_response",
            st.sampled_from(sorted(_canary_texts())).flatmap(
                lambda canary: strategies.provider_responses(canary=canary)
            ),
        ),
    ),
    "recap.semantics": _Plan(
        judge_semantics, lambda c, o: _trials("recap.project", strategies.recap_cases())
    ),
    "recap.hashes": _Plan(
        judge_recap_hashes, lambda c, o: _trials("recap.project", strategies.recap_cases())
    ),
    "recap.limit": _Plan(
        judge_recap_limit, lambda c, o: _trials("recap.project", strategies.recap_cases())
    ),
    "recap.query-aliases": _Plan(
        judge_query_aliases, lambda c, o: _trials("recap.project", strategies.recap_cases())
    ),
    "redaction.recap-canaries": _Plan(
        judge_canaries,
        lambda c, o: _trials(
            "recap.project",
            st.sampled_from(sorted(_canary_texts())).flatmap(
                lambda canary: strategies.recap_cases(canary=canary)
            ),
        ),
    ),
    "redaction.lookalikes-survive": _Plan(
        judge_lookalikes,
        lambda c, o: _trials(
            "recap.project",
            st.sampled_from(sorted(_lookalike_texts())).flatmap(
                lambda text: strategies.recap_cases(canary=text).map(
                    lambda case: {**case, "lookalike": text}
                )
            ),
        ),
    ),
    "redaction.apply": _Plan(judge_redaction_apply, lambda c, o: _redaction_vector_trials()),
    "feedback.usage-never-summed": _Plan(
        judge_usage_not_summed, lambda c, o: _trials("feedback.run", strategies.feedback_steps())
    ),
    "health.a2a-preserves-state": _Plan(
        judge_semantics,
        lambda c, o: _trials("health.a2a_status_update", strategies.a2a_cases()),
    ),
    "recap.stored-events": _Plan(
        judge_semantics,
        lambda c, o: _trials(
            "recap.project",
            st.one_of(
                strategies.recap_stored_cases(),
                st.sampled_from(sorted(_canary_texts())).flatmap(
                    lambda canary: strategies.recap_stored_cases(canary=canary)
                ),
            ),
        ),
    ),
    "recap.unavailable-states": _Plan(
        judge_semantics,
        lambda c, o: _trials("recap.project", strategies.recap_condition_cases()),
    ),
}


def _canary_texts() -> list[str]:
    from session_contracts.redaction.engine import canaries

    return list(canaries().values())


def _lookalike_texts() -> list[str]:
    from session_contracts.redaction.engine import lookalikes

    return list(lookalikes().values())


def _save(folder: Path, check: Check, trial: Trial) -> Path:
    body = dumps_wire(
        {"check": check.id, "operation": trial.operation, "input": trial.input},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{check.id}-{hashlib.sha256(body).hexdigest()[:12]}.json"
    path.write_bytes(body + b"\n")
    return path


def _seed_for(seed: int, check_id: str, part: int) -> int:
    """The seed of one check's ``part``-th strategy: a function of (seed, check id, part) only.

    Checks that draw from the same strategy (the recap checks) get cases of
    their own, and a check's cases do not depend on which checks run before it.
    """
    digest = hashlib.sha256(f"{seed}\x00{check_id}\x00{part}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# Hypothesis's (private) source of constants harvested from local modules.
_LOCAL_CONSTANTS = "_get_local_constants"


@contextlib.contextmanager
def _fixed_generation() -> Iterator[None]:
    """Case generation that depends on the seed alone, not on what this process imported.

    Hypothesis now and then draws a constant harvested from the source of
    every "local" module in ``sys.modules``; which modules are loaded depends
    on the checks already run (the reference imports its parts lazily), on
    how session-contracts is installed (an editable install is local, a
    site-packages one is not) and on the caller (the bench, a test). So the
    same seed gave other cases to the same check. The local pool is emptied
    while certify draws; hypothesis's fixed global constants still apply.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another hypothesis layout: nothing to empty
        yield
        return
    original = getattr(providers, _LOCAL_CONSTANTS, None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover - another hypothesis version
        yield
        return
    empty = getattr(providers, "Constants")()  # noqa: B009 - not in the module's __all__
    setattr(providers, _LOCAL_CONSTANTS, lambda: empty)
    cache.cache.clear()
    try:
        yield
    finally:
        setattr(providers, _LOCAL_CONSTANTS, original)
        cache.cache.clear()


def _claims(contracts: tuple[str, ...], operations: tuple[str, ...], case: ExplicitCase) -> bool:
    """Whether a producer with these declarations is asked an explicit case."""
    if case.operation not in operations:
        return False
    if case.operation != "document.roundtrip":
        return True
    doctype = str(case.input.get("doctype", ""))
    return any(
        doctype.startswith(prefix)
        for contract in contracts
        for prefix in CONTRACT_DOCTYPES.get(contract, ())
    )


def explicit_trials(
    check: Check, contracts: tuple[str, ...], operations: tuple[str, ...], *, golden: bool = True
) -> list[tuple[Trial, str]]:
    """The explicit cases ``check`` sends first, in order, with the rule each decides
    (the golden fixtures among them unless ``golden`` is false)."""
    return [
        (Trial(case.operation, copy.deepcopy(dict(case.input))), case.why)
        for case in EXPLICIT_CASES.get(check.id, ())
        if _claims(contracts, operations, case) and (golden or not case.fixture)
    ]


def run_check(
    check: Check,
    runner: Runner,
    *,
    contracts: tuple[str, ...],
    operations: tuple[str, ...],
    examples: int,
    seed: int,
    failures_dir: Path,
    prepare: Callable[[Trial], Trial] | None = None,
    expressible: Callable[[Trial], bool] | None = None,
    golden: bool = True,
) -> CheckResult:
    """Run one check against ``runner``: its explicit cases first, then its property.

    The explicit cases (``cases.explicit.EXPLICIT_CASES``) are the rare but
    decisive inputs, sent at every setting; the property's ``examples``
    random cases follow, drawn from a seed derived from (``seed``, check id).
    Both count as cases and evidence. ``prepare`` rewrites each trial before
    anything sees it, the reference and the judge included (the HTTP runner
    gives each case its own sessions and event ids in a shared journal this
    way: the hashes bind both, so they cannot be renamed after the fact).
    ``expressible`` leaves out the explicit cases the runner has no way to send
    (over HTTP: a runtime condition, Harn's stored events), as cases of an
    undeclared operation are left out; ``golden`` false leaves out the golden
    fixtures (written for the producer protocol, not for a URL's parameters).
    """
    plan = PLANS[check.id]
    if check.operation != "*" and check.operation not in operations:
        return CheckResult(
            check,
            "skipped",
            0,
            f"the producer does not declare {check.operation}",
            applicable=False,
        )
    if check.contract != "all" and check.contract not in contracts:
        return CheckResult(
            check, "skipped", 0, f"the producer does not claim {check.contract}", applicable=False
        )
    try:
        planned = plan.strategy(contracts, operations)
    except _Skip as skip:
        return CheckResult(check, "skipped", 0, str(skip), applicable=False)
    drawn = planned if isinstance(planned, list) else [planned]
    if prepare is not None:
        drawn = [strategy.map(prepare) for strategy in drawn]
    explicit = explicit_trials(check, contracts, operations, golden=golden)
    if expressible is not None:
        explicit = [(trial, why) for trial, why in explicit if expressible(trial)]
    if prepare is not None:
        explicit = [(prepare(trial), why) for trial, why in explicit]
    result = _run_explicit(check, plan, runner, explicit, failures_dir)
    evidence = explicit_evidence = result.evidence
    if result.status in ("failed", "errored"):
        return replace(result, explicit=explicit_evidence)
    total = result.cases
    skip_reason: str | None = result.message or None
    for part, strategy in enumerate(drawn):
        result = _run_property(
            check,
            plan,
            runner,
            strategy,
            examples,
            _seed_for(seed, check.id, part),
            failures_dir,
            total,
        )
        evidence += result.evidence
        if result.status in ("failed", "errored"):
            return replace(result, evidence=evidence, explicit=explicit_evidence)
        total = result.cases
        skip_reason = skip_reason or result.message or None
    return replace(_settled(check, total, evidence, skip_reason), explicit=explicit_evidence)


def _run_explicit(
    check: Check,
    plan: _Plan,
    runner: Runner,
    trials: Sequence[tuple[Trial, str]],
    failures_dir: Path,
) -> CheckResult:
    """Judge the explicit cases in order; the first failure or error ends the check.

    An explicit case is not shrunk (it is already the deciding input): a
    failure reports the rule it decides (its ``why``) and is saved like a
    random case, so ``--replay`` runs it again.
    """
    counts = Evidence()
    skip_reason = ""
    recorder = _Recorder(runner)
    for cases, (trial, why) in enumerate(trials, start=1):
        recorder.new_case()
        try:
            plan.judge(recorder, trial)
        except _Skip as skip:
            skip_reason = skip_reason or str(skip)
            counts += Evidence(skipped=1)
        except _Errored as errored:
            outcome = errored.outcome
            return CheckResult(
                check,
                "errored",
                cases,
                f"{outcome.error_code}: {outcome.message} (explicit case: {why})",
                trial,
                str(_save(failures_dir, check, trial)),
                {"error_code": outcome.error_code, "stderr_tail": outcome.stderr_tail},
                counts + Evidence(errored=1),
            )
        except _Failed as failed:
            return CheckResult(
                check,
                "failed",
                cases,
                f"{failed} (explicit case: {why})",
                trial,
                str(_save(failures_dir, check, trial)),
                {"explicit": why},
                counts + Evidence(judged=1),
                **recorder.answers(),
            )
        else:
            counts += Evidence(judged=1, agreed=1)
    return CheckResult(check, "passed", len(trials), skip_reason, evidence=counts)


def _settled(check: Check, cases: int, evidence: Evidence, skip_reason: str | None) -> CheckResult:
    """The status of a check none of whose cases failed or errored: evidence decides."""
    if evidence.agreed == 0:
        if evidence.skipped:
            message = f"the producer skipped all {evidence.skipped} case(s): {skip_reason}"
        else:
            message = "no case was judged: nothing to certify"
        return CheckResult(check, "skipped", cases, message, evidence=evidence)
    if evidence.skipped:
        return CheckResult(
            check,
            "partial",
            cases,
            f"the producer skipped {evidence.skipped} of {evidence.sent} case(s) of an operation "
            f"it declares ({skip_reason}); a check passes only when every case is judged",
            evidence=evidence,
        )
    return CheckResult(check, "passed", cases, evidence=evidence)


def _run_property(
    check: Check,
    plan: _Plan,
    runner: Runner,
    strategy: st.SearchStrategy[Trial],
    examples: int,
    seed: int,
    failures_dir: Path,
    cases_before: int,
) -> CheckResult:
    state: dict[str, Any] = {"cases": cases_before, "last": None, "errored": None, "skip": None}
    counts = {"judged": 0, "agreed": 0, "skipped": 0, "errored": 0}
    recorder = _Recorder(runner)

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @hypothesis_seed(seed)
    @given(strategy)
    def prop(trial: Trial) -> None:
        if state["errored"] is not None:
            raise _Errored(state["errored"][1])  # do not hammer a broken producer while shrinking
        state["cases"] += 1
        state["last"] = trial
        recorder.new_case()
        try:
            plan.judge(recorder, trial)
        except _Skip as skip:
            state["skip"] = str(skip)
            counts["skipped"] += 1
        except _Errored as errored:
            state["errored"] = (trial, errored.outcome)
            counts["errored"] += 1
            raise
        except _Failed:
            counts["judged"] += 1
            raise
        else:
            counts["judged"] += 1
            counts["agreed"] += 1

    try:
        try:
            with _fixed_generation():
                prop()
        except ExceptionGroup as group:
            # A failure that does not repeat (hypothesis calls it flaky) is
            # still a failure: nondeterminism is exactly what some checks find.
            inner = group.subgroup(lambda e: isinstance(e, _Failed | _Errored))
            if inner is None:
                raise
            first = inner.exceptions[0]
            while isinstance(first, ExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    except _Errored:
        trial, outcome = state["errored"]
        saved = _save(failures_dir, check, trial)
        message = f"{outcome.error_code}: {outcome.message}"
        return CheckResult(
            check,
            "errored",
            state["cases"],
            message,
            trial,
            str(saved),
            {"error_code": outcome.error_code, "stderr_tail": outcome.stderr_tail},
            Evidence(**counts),
        )
    except _Failed as failed:
        trial = state["last"]
        saved = _save(failures_dir, check, trial)
        # Hypothesis runs the shrunk case last: the recorder holds its answers.
        return CheckResult(
            check,
            "failed",
            state["cases"],
            str(failed),
            trial,
            str(saved),
            {},
            Evidence(**counts),
            **recorder.answers(),
        )
    # run_check settles the status from the evidence of all of a check's strategies.
    return CheckResult(
        check, "passed", state["cases"], state["skip"] or "", evidence=Evidence(**counts)
    )


def _runner_for(producer: ProducerProcess) -> Runner:
    """Send trials to ``producer`` as numbered cases."""
    counter = {"seq": 0}

    def runner(trial: Trial) -> CaseOutcome:
        counter["seq"] += 1
        case = {"operation": trial.operation, "input": dict(trial.input)}
        return producer.run(counter["seq"], case)

    return runner


def in_process_runner(handlers: Mapping[str, Handler]) -> Runner:
    """Trials answered by ``handlers`` in this process, as the protocol would answer them.

    Input and answer go through JSON as on the wire, so a handler sees a copy
    and the judge sees what a producer could send. For the tests and the
    reference's self-certification: no process, no pipe.
    """

    def runner(trial: Trial) -> CaseOutcome:
        # As on the wire (session_contracts/json/wire.py): integers of any size exact.
        case_input = loads_wire(dumps_wire(dict(trial.input)))
        answer = loads_wire(
            dumps_wire(
                answer_request(0, handlers.get(trial.operation), case_input, trial.operation)
            )
        )
        outcome = answer["outcome"]
        if outcome == "result":
            return CaseOutcome(0, "result", output=answer["output"])
        if outcome == "rejected":
            return CaseOutcome(0, "rejected", rejection=answer["rejection"])
        if outcome == "skipped":
            return CaseOutcome(0, "skipped", reason=answer["reason"])
        return CaseOutcome(
            0, "errored", error_code="producer_error", message=str(answer.get("message", ""))
        )

    return runner


def certify(
    producer: ProducerProcess,
    *,
    checks: Sequence[Check] = CHECKS,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    failures_dir: Path = Path(".session-contracts/failures"),
    progress: Callable[[Check, CheckResult], None] | None = None,
) -> list[CheckResult]:
    info = producer.info or producer.start()
    runner = _runner_for(producer)

    results = []
    for check in checks:
        result = run_check(
            check,
            runner,
            contracts=info.contracts,
            operations=info.operations,
            examples=examples,
            seed=seed,
            failures_dir=failures_dir,
        )
        results.append(result)
        if progress is not None:
            progress(check, result)
    return results


def replay_trial(producer: ProducerProcess, check: Check, trial: Trial) -> CheckResult:
    """Run exactly one saved case of one check again."""
    producer.info or producer.start()
    return judge_trial(_runner_for(producer), check, trial)


def judge_trial(runner: Runner, check: Check, trial: Trial) -> CheckResult:
    """Judge exactly one trial of one check with ``runner`` (a replay)."""
    try:
        PLANS[check.id].judge(runner, trial)
    except _Failed as failed:
        return CheckResult(check, "failed", 1, str(failed), trial, evidence=Evidence(judged=1))
    except _Errored as errored:
        message = f"{errored.outcome.error_code}: {errored.outcome.message}"
        return CheckResult(check, "errored", 1, message, trial, evidence=Evidence(errored=1))
    except _Skip as skip:
        return CheckResult(
            check,
            "skipped",
            1,
            f"the producer skipped the case: {skip}",
            trial,
            evidence=Evidence(skipped=1),
        )
    return CheckResult(check, "passed", 1, "", trial, evidence=Evidence(judged=1, agreed=1))


def reproduce_command(
    producer_command: str | None,
    saved: str,
    *,
    http: str | None = None,
    journal: str | None = None,
) -> str:
    parts = ["session-contracts", "certify"]
    if http:
        parts += ["--http", http, "--journal", journal or ""]
    elif producer_command:
        parts += ["--producer", producer_command]
    parts += ["--replay", saved]
    return shlex.join(parts)
