"""Certify a producer: run every check as a property against it.

Each check is a hypothesis property whose test calls the producer; a failure
shrinks to a minimal case, is saved to a file, and comes with a one-line
command that replays exactly that case.  Outcomes are kept apart: passed,
failed (a wrong answer), flaky (a wrong answer, crash or timeout that did not
repeat when the same case was sent again), errored (the producer broke: crash,
hang, invalid JSON, wrong seq, or an error it reported), skipped (with the
reason).  Each case's time budget follows the reference's time for it
(``budget``), so a loaded machine does not change the verdict.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from session_contracts.conformance.judge.budget import TimeBudget
from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.conformance.judge.checks import CHECKS, Check, in_run_order
from session_contracts.conformance.judge.expected import reference_answer, reference_outcome
from session_contracts.conformance.judge.golden import answer_of
from session_contracts.conformance.judge.judges import Errored, Failed, Runner, Skip
from session_contracts.conformance.judge.runner import CaseOutcome, ProducerProcess
from session_contracts.conformance.judge.trials import Trial, copy_json
from session_contracts.conformance.protocol import Handler
from session_contracts.conformance.protocol.producer_loop import answer_request
from session_contracts.contracts import CONTRACT_DOCTYPES
from session_contracts.jsontext.wire import dumps_wire, loads_wire

__all__ = [
    "DEFAULT_EXAMPLES",
    "DERIVED_BUDGET",
    "FAULTS",
    "SILENT",
    "CheckResult",
    "Evidence",
    "Progress",
    "Runner",
    "TimeBudget",
    "Trial",
    "blocking_results",
    "certify",
    "explicit_trials",
    "gating_levels",
    "in_process_runner",
    "is_certified",
    "judge_trial",
    "replay_trial",
    "run_check",
]


# Random cases a check draws after its explicit ones, unless --examples says otherwise.
DEFAULT_EXAMPLES = 25
#: Each case's budget follows the reference's time for it (``budget``).
DERIVED_BUDGET = TimeBudget()
#: The statuses that end a check at its first faulty case.
FAULTS = frozenset({"failed", "flaky", "errored"})


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
    wrong answer), flaky (a wrong answer or a break that did not repeat when the
    case was sent again: the producer answers one input two ways), errored (the
    producer broke), partial (the producer skipped some cases of an operation it
    declared; the rest agreed) or skipped (no case was judged).  ``applicable`` is
    False when the producer does not declare the check's contract or operation:
    only then may a skip leave a certificate standing.
    """

    check: Check
    status: str  # passed | failed | flaky | errored | partial | skipped
    cases: int
    message: str = ""
    trial: Trial | None = None
    saved_to: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    evidence: Evidence = field(default_factory=Evidence)
    applicable: bool = True
    # On a failure: the producer's answer to the failing case and the reference's
    # answer to the same input, both in golden's comparable form (``answer_of``).
    answer: Mapping[str, Any] | None = None
    reference_answer: Mapping[str, Any] | None = None
    # When flaky: the producer's answer when the same case was sent again, which agreed.
    later_answer: Mapping[str, Any] | None = None
    # The part of ``evidence`` that the explicit cases gave; the rest is random cases'.
    explicit: Evidence = field(default_factory=Evidence)
    # How long the check ran, the reference's answers included (for the reports).
    seconds: float = 0.0

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


class Progress:
    """What certify tells while it runs: a check starts (with the cases it plans), a case
    is judged, a check ends. Each method does nothing here; the CLI shows them."""

    def check_started(self, check: Check, planned: int) -> None:
        """``check`` starts: ``planned`` cases, its explicit ones and the random ones to
        draw (shrinking a failure sends a few more)."""

    def case_judged(self, check: Check) -> None:
        """One more case of ``check`` was judged (or skipped, or broke the producer)."""

    def check_finished(self, check: Check, result: CheckResult) -> None:
        """``check`` ended with ``result``."""


SILENT = Progress()


# -- the checks -----------------------------------------------------------------------------------


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
        """The producer's answer that shows the fault and the reference's to the same input
        (the fields ``answer`` and ``reference_answer`` of a faulty result): the first
        answer of the case that is not the reference's (a judge may send a case twice),
        else the last."""
        if not self._sent:
            return {}
        shown: dict[str, Any] = {}
        for trial, outcome in self._sent:
            reference = reference_outcome(trial.operation, dict(trial.input))
            shown = {
                "answer": answer_of(trial.operation, outcome),
                "reference_answer": answer_of(trial.operation, reference),
            }
            if not _same_json(shown["answer"], shown["reference_answer"]):
                break
        return shown


def _save(folder: Path, check: Check, trial: Trial, status: str) -> Path:
    """Save a faulty case for ``--replay``, with the status it got (a flaky one that
    passes when replayed is not thereby fixed)."""
    body = dumps_wire(
        {"check": check.id, "operation": trial.operation, "input": trial.input, "status": status},
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
        (Trial(case.operation, copy_json(dict(case.input))), case.why)
        for case in check.explicit_cases()
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
    progress: Progress = SILENT,
) -> CheckResult:
    """Run one check against ``runner``: its explicit cases first, then its property.

    The explicit cases (``check.explicit_cases()``) are the rare but
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
    ``progress`` hears of the check's start, of each case judged and of its end.
    """

    # One place where every outcome leaves, the skipped ones included: it is timed and heard.
    def outcome() -> CheckResult:
        unclaimed = _unclaimed(check, contracts, operations)
        if unclaimed is not None:
            return CheckResult(check, "skipped", 0, unclaimed, applicable=False)
        try:
            planned = check.trials(contracts, operations)
        except Skip as skip:
            return CheckResult(check, "skipped", 0, str(skip), applicable=False)
        drawn = planned if isinstance(planned, list) else [planned]
        if prepare is not None:
            drawn = [strategy.map(prepare) for strategy in drawn]
        explicit = explicit_trials(check, contracts, operations, golden=golden)
        if expressible is not None:
            explicit = [(trial, why) for trial, why in explicit if expressible(trial)]
        if prepare is not None:
            explicit = [(prepare(trial), why) for trial, why in explicit]
        progress.check_started(check, len(explicit) + examples * len(drawn))

        def judged() -> None:
            progress.case_judged(check)

        result = _run_explicit(check, runner, explicit, failures_dir, judged)
        evidence = explicit_evidence = result.evidence
        if result.status in FAULTS:
            return replace(result, explicit=explicit_evidence)
        total = result.cases
        skip_reason: str | None = result.message or None
        for part, strategy in enumerate(drawn):
            result = _run_property(
                check,
                runner,
                strategy,
                examples,
                _seed_for(seed, check.id, part),
                failures_dir,
                total,
                judged,
            )
            evidence += result.evidence
            if result.status in FAULTS:
                return replace(result, evidence=evidence, explicit=explicit_evidence)
            total = result.cases
            skip_reason = skip_reason or result.message or None
        return replace(_settled(check, total, evidence, skip_reason), explicit=explicit_evidence)

    began = time.perf_counter()
    result = replace(outcome(), seconds=time.perf_counter() - began)
    progress.check_finished(check, result)
    return result


def _unclaimed(check: Check, contracts: tuple[str, ...], operations: tuple[str, ...]) -> str | None:
    """Why ``check`` is not the producer's to pass (an operation it does not declare, a
    contract it does not claim), or None when it is."""
    if check.operation != "*" and check.operation not in operations:
        return f"the producer does not declare {check.operation}"
    if check.contract != "all" and check.contract not in contracts:
        return f"the producer does not claim {check.contract}"
    return None


def _judge(check: Check, recorder: _Recorder, trial: Trial) -> None:
    """``check.judge`` on one trial, which raises Failed, Errored or Skip, or returns.

    A judge that breaks on an answer (a value it did not foresee) still gives a
    verdict: failed, when the answer is not the reference's. On the reference's own
    answer a break is ours to fix, and it is raised as it is.
    """
    try:
        check.judge(recorder, trial)
    except (Failed, Errored, Skip):
        raise
    except Exception as exc:
        answers = recorder.answers()
        if not answers or _same_json(answers["answer"], answers["reference_answer"]):
            raise
        raise Failed(
            f"the answer could not be judged ({type(exc).__name__}: {exc}); "
            "it is not the reference's answer"
        ) from exc


def _same_json(one: Any, two: Any) -> bool:
    try:
        return dumps_wire(one, option=orjson.OPT_SORT_KEYS) == dumps_wire(
            two, option=orjson.OPT_SORT_KEYS
        )
    except TypeError:  # a value orjson cannot write (nesting past its limit): not the same
        return False


def _sent_again(check: Check, runner: Runner, trial: Trial) -> Mapping[str, Any] | None:
    """Judge ``trial`` once more after a fault: None when the fault repeats, else the
    producer's answer this time, which agreed (or was skipped): the fault was flaky."""
    recorder = _Recorder(runner)
    try:
        _judge(check, recorder, trial)
    except (Failed, Errored):
        return None
    except Skip:
        pass
    later: Mapping[str, Any] = recorder.answers().get("answer", {})
    return later


def _faulted(
    check: Check,
    cases: int,
    trial: Trial,
    problem: Failed | Errored,
    where: str,
    answers: Mapping[str, Any],
    evidence: Evidence,
    failures_dir: Path,
    later: Mapping[str, Any] | None,
) -> CheckResult:
    """A fault on ``trial``: flaky when the same case sent again was answered correctly
    (``later``, that answer; the faulty answer is the evidence), else failed or errored
    (the fault repeated)."""
    if later is not None:
        return CheckResult(
            check,
            "flaky",
            cases,
            f"{problem}{where}; flaky: the same case sent again was answered correctly, "
            "and a producer must answer one input one way",
            trial,
            str(_save(failures_dir, check, trial, "flaky")),
            {
                **({"explicit": where} if where else {}),
                **(
                    {"error_code": problem.outcome.error_code}
                    if isinstance(problem, Errored)
                    else {}
                ),
            },
            evidence,
            later_answer=later,
            **answers,
        )
    if isinstance(problem, Errored):
        outcome = problem.outcome
        return CheckResult(
            check,
            "errored",
            cases,
            f"{outcome.error_code}: {outcome.message}{where}",
            trial,
            str(_save(failures_dir, check, trial, "errored")),
            {"error_code": outcome.error_code, "stderr_tail": outcome.stderr_tail},
            evidence,
        )
    return CheckResult(
        check,
        "failed",
        cases,
        f"{problem}{where}",
        trial,
        str(_save(failures_dir, check, trial, "failed")),
        {"explicit": where} if where else {},
        evidence,
        **answers,
    )


def _counted(problem: Failed | Errored) -> Evidence:
    return Evidence(errored=1) if isinstance(problem, Errored) else Evidence(judged=1)


def _run_explicit(
    check: Check,
    runner: Runner,
    trials: Sequence[tuple[Trial, str]],
    failures_dir: Path,
    judged: Callable[[], None],
) -> CheckResult:
    """Judge the explicit cases in order; the first failure or error ends the check.

    An explicit case is not shrunk (it is already the deciding input): a
    failure reports the rule it decides (its ``why``) and is saved like a
    random case, so ``--replay`` runs it again. A fault is sent once more
    before it is reported: one that does not repeat is flaky.
    """
    counts = Evidence()
    skip_reason = ""
    recorder = _Recorder(runner)
    for cases, (trial, why) in enumerate(trials, start=1):
        recorder.new_case()
        try:
            _judge(check, recorder, trial)
            judged()
        except Skip as skip:
            judged()
            skip_reason = skip_reason or str(skip)
            counts += Evidence(skipped=1)
        except (Failed, Errored) as problem:
            judged()
            answers = recorder.answers()
            evidence = counts + _counted(problem)
            where = f" (explicit case: {why})"
            later = _sent_again(check, runner, trial)
            return _faulted(
                check, cases, trial, problem, where, answers, evidence, failures_dir, later
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


class _Stop(Exception):
    """Raised for every draw after a break or a flaky fault: a broken producer is not
    hammered, and a flaky one is not sent cases that shrinking would misread."""


def _run_property(
    check: Check,
    runner: Runner,
    strategy: st.SearchStrategy[Trial],
    examples: int,
    seed: int,
    failures_dir: Path,
    cases_before: int,
    judged: Callable[[], None],
) -> CheckResult:
    state: dict[str, Any] = {"cases": cases_before, "skip": None, "stop": False}
    # The last fault that repeated (trial, problem, answers): shrinking moves to smaller
    # cases only, so the last is the smallest. A flaky one ends the search.
    fault: list[tuple[Trial, Failed | Errored, Mapping[str, Any]]] = []
    flaky: list[tuple[Trial, Failed | Errored, Mapping[str, Any], Mapping[str, Any]]] = []
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
        if state["stop"]:
            raise _Stop
        state["cases"] += 1
        recorder.new_case()
        try:
            _judge(check, recorder, trial)
        except Skip as skip:
            judged()
            state["skip"] = str(skip)
            counts["skipped"] += 1
        except (Failed, Errored) as problem:
            judged()
            counts["errored" if isinstance(problem, Errored) else "judged"] += 1
            answers = recorder.answers()
            later = _sent_again(check, runner, trial)
            if later is not None:
                flaky.append((trial, problem, answers, later))
                state["stop"] = True
            else:
                fault.append((trial, problem, answers))
                state["stop"] = isinstance(problem, Errored)
            raise
        else:
            judged()
            counts["judged"] += 1
            counts["agreed"] += 1

    final_replay_passed = False
    try:
        # The cases are a function of the seed alone: every strategy draws
        # through cases/draws.py, which nothing harvested from loaded modules fits.
        prop()
    except (Failed, Errored, _Stop):
        pass
    except ExceptionGroup as group:
        # Hypothesis's flaky failure: the smallest failing case, sent once more at the
        # end, was answered correctly; or, after a break, our own _Stop differing from the
        # break it stands for (no case was sent: not flaky). Anything else is ours: raised.
        if group.split(lambda e: isinstance(e, Failed | Errored | _Stop))[1] is not None:
            raise
        final_replay_passed = not state["stop"]
    else:
        # run_check settles the status from the evidence of all of a check's strategies.
        return CheckResult(
            check, "passed", state["cases"], state["skip"] or "", evidence=Evidence(**counts)
        )
    evidence = Evidence(**counts)
    later: Mapping[str, Any] | None
    if flaky:
        trial, problem, answers, later = flaky[0]
    else:
        trial, problem, answers = fault[-1]
        # The recorder holds the last call: the final replay, which agreed.
        later = recorder.answers().get("answer", {}) if final_replay_passed else None
    return _faulted(
        check, state["cases"], trial, problem, "", answers, evidence, failures_dir, later
    )


def _runner_for(producer: ProducerProcess, budget: TimeBudget) -> Runner:
    """Send trials to ``producer`` as numbered cases, each within its time budget."""
    counter = {"seq": 0}

    def runner(trial: Trial) -> CaseOutcome:
        counter["seq"] += 1
        case = {"operation": trial.operation, "input": dict(trial.input)}

        def full_budget() -> float:
            return budget.seconds(reference_answer(trial.operation, case["input"]))

        # Every case gets at least the floor (or the fixed budget); the reference's
        # time, which may raise a case's budget above the floor, is asked for only
        # when the producer has not answered by then: a judge that compares with the
        # reference's answer computes it anyway, one that does not never pays for it.
        outcome = producer.run(
            counter["seq"],
            case,
            timeout=budget.at_least(),
            full_budget=None if budget.fixed is not None else full_budget,
        )
        if outcome.error_code == "timeout":
            reference = reference_answer(trial.operation, case["input"])
            return replace(outcome, message=f"{outcome.message} ({budget.explain(reference)})")
        return outcome

    return runner


def in_process_runner(handlers: Mapping[str, Handler]) -> Runner:
    """Trials answered by ``handlers`` in this process, as the protocol would answer them.

    Input and answer go through JSON as on the wire, so a handler sees a copy
    and the judge sees what a producer could send. For the tests and the
    reference's self-certification: no process, no pipe.
    """

    def runner(trial: Trial) -> CaseOutcome:
        # As on the wire (session_contracts/jsontext/wire.py): integers of any size exact.
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
    progress: Progress = SILENT,
    budget: TimeBudget = DERIVED_BUDGET,
) -> list[CheckResult]:
    """Run ``checks`` against ``producer`` in the run order (``checks.RUN_ORDER``: the
    contracts of small cases first); the results come in the order of ``checks``."""
    info = producer.info or producer.start()
    runner = _runner_for(producer, budget)

    results: dict[int, CheckResult] = {}
    for check in in_run_order(checks):
        results[id(check)] = run_check(
            check,
            runner,
            contracts=info.contracts,
            operations=info.operations,
            examples=examples,
            seed=seed,
            failures_dir=failures_dir,
            progress=progress,
        )
    return [results[id(check)] for check in checks]


def replay_trial(
    producer: ProducerProcess, check: Check, trial: Trial, budget: TimeBudget = DERIVED_BUDGET
) -> CheckResult:
    """Run exactly one saved case of one check again."""
    producer.info or producer.start()
    return judge_trial(_runner_for(producer, budget), check, trial)


def judge_trial(runner: Runner, check: Check, trial: Trial) -> CheckResult:
    """Judge exactly one trial of one check with ``runner`` (a replay)."""
    try:
        _judge(check, _Recorder(runner), trial)
    except Failed as failed:
        return CheckResult(check, "failed", 1, str(failed), trial, evidence=Evidence(judged=1))
    except Errored as errored:
        message = f"{errored.outcome.error_code}: {errored.outcome.message}"
        return CheckResult(check, "errored", 1, message, trial, evidence=Evidence(errored=1))
    except Skip as skip:
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
