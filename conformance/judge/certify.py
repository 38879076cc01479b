"""Certify a producer: run every check as a property against it.

Each check is a hypothesis property whose test calls the producer; a failure
shrinks to a minimal case, is saved to a file, and comes with a one-line
command that replays exactly that case.  Outcomes are kept apart: passed,
failed (a wrong answer), errored (the producer broke: crash, hang, invalid
JSON, wrong seq, or an error it reported), skipped (with the reason).
"""

from __future__ import annotations

import copy
import hashlib
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.conformance.judge.checks import CHECKS, Check
from session_contracts.conformance.judge.golden import answer_of, reference_outcome
from session_contracts.conformance.judge.judges import Errored, Failed, Runner, Skip, Trial
from session_contracts.conformance.judge.runner import CaseOutcome, ProducerProcess
from session_contracts.conformance.protocol import Handler
from session_contracts.conformance.protocol.producer_loop import answer_request
from session_contracts.contracts import CONTRACT_DOCTYPES
from session_contracts.json.wire import dumps_wire, loads_wire

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
    "judge_trial",
    "replay_trial",
    "run_check",
]


# Random cases a check draws after its explicit ones, unless --examples says otherwise.
DEFAULT_EXAMPLES = 25


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
    """
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
    result = _run_explicit(check, runner, explicit, failures_dir)
    evidence = explicit_evidence = result.evidence
    if result.status in ("failed", "errored"):
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
        )
        evidence += result.evidence
        if result.status in ("failed", "errored"):
            return replace(result, evidence=evidence, explicit=explicit_evidence)
        total = result.cases
        skip_reason = skip_reason or result.message or None
    return replace(_settled(check, total, evidence, skip_reason), explicit=explicit_evidence)


def _run_explicit(
    check: Check,
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
            check.judge(recorder, trial)
        except Skip as skip:
            skip_reason = skip_reason or str(skip)
            counts += Evidence(skipped=1)
        except Errored as errored:
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
        except Failed as failed:
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
            raise Errored(state["errored"][1])  # do not hammer a broken producer while shrinking
        state["cases"] += 1
        state["last"] = trial
        recorder.new_case()
        try:
            check.judge(recorder, trial)
        except Skip as skip:
            state["skip"] = str(skip)
            counts["skipped"] += 1
        except Errored as errored:
            state["errored"] = (trial, errored.outcome)
            counts["errored"] += 1
            raise
        except Failed:
            counts["judged"] += 1
            raise
        else:
            counts["judged"] += 1
            counts["agreed"] += 1

    try:
        try:
            # The cases are a function of the seed alone: every strategy draws
            # through cases/draws.py, which nothing harvested from loaded modules fits.
            prop()
        except ExceptionGroup as group:
            # A failure that does not repeat (hypothesis calls it flaky) is
            # still a failure: nondeterminism is exactly what some checks find.
            inner = group.subgroup(lambda e: isinstance(e, Failed | Errored))
            if inner is None:
                raise
            first = inner.exceptions[0]
            while isinstance(first, ExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    except Errored:
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
    except Failed as failed:
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
        check.judge(runner, trial)
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
