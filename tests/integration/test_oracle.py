"""A sound oracle and honest checks.

- A seed fixes each check's cases whatever else is selected (and whatever this
  process imported).
- Every check sends its explicit cases first, in order; they count as cases and
  evidence, and a failure on one names the rule it decides.
- Each check judges only its own rule: a defect another rule covers is left to that
  rule's check.
- The reference passes its own certification at 500 examples a check (slow).

The producers run in this process (``in_process_runner``: the same handlers
``tests/producers/faulty.py`` serves, answers through JSON as on the wire), so
these tests stay cheap; tests/integration/test_certify.py runs producers as processes.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from test_certify import MATRIX

from session_contracts.conformance.judge.certify import (
    DEFAULT_EXAMPLES,
    CheckResult,
    Runner,
    Trial,
    explicit_trials,
    in_process_runner,
    run_check,
)
from session_contracts.conformance.judge.checks import CHECKS, check_by_id
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.jsontext.wire import dumps_wire

pytestmark = pytest.mark.integration  # certifies the reference and faulty producers many times over

CONTRACTS = ("session-health", "session-feedback", "session-recap", "run-record")
OPERATIONS = tuple(sorted(HANDLERS))
FAULTY = Path(__file__).resolve().parents[1] / "producers" / "faulty.py"


def _faulty_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("faulty_producers_for_oracle", FAULTY)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def faulty_handlers(defect: str) -> dict[str, Any]:
    """The handlers ``faulty.py DEFECT`` serves: the reference with one defect."""
    operation, handler = _faulty_module().DEFECTS[defect]
    return {**HANDLERS, operation: handler}


def run(
    check_id: str,
    runner: Runner,
    tmp_path: Path,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
) -> CheckResult:
    check = check_by_id(check_id)
    assert check is not None
    return run_check(
        check,
        runner,
        contracts=CONTRACTS,
        operations=OPERATIONS,
        examples=examples,
        seed=seed,
        failures_dir=tmp_path / "failures",
    )


class Recorder:
    """A runner that records every trial sent, per check, as canonical JSON."""

    def __init__(self, inner: Runner) -> None:
        self.inner, self.current = inner, ""
        self.sent: dict[str, list[bytes]] = {}

    def __call__(self, trial: Trial) -> Any:
        body = {"operation": trial.operation, "input": trial.input}
        self.sent.setdefault(self.current, []).append(dumps_wire(body, option=orjson.OPT_SORT_KEYS))
        return self.inner(trial)

    def run_all(self, check_ids: list[str], tmp_path: Path, examples: int) -> dict[str, Any]:
        verdicts = {}
        for check_id in check_ids:
            self.current = check_id
            result = run(check_id, self, tmp_path, examples=examples)
            verdicts[check_id] = (result.status, result.cases, result.evidence)
        return verdicts


# -- a seed fixes each check's cases --
def _import_a_module_full_of_constants(tmp_path: Path) -> None:
    """Load a new local module with many distinctive constants: hypothesis harvests the
    constants of every local module loaded and used to draw from them."""
    folder = tmp_path / "probe_pkg"
    folder.mkdir()
    names = [f"probe-constant-{index}" for index in range(200)]
    numbers = [7_777_000 + index for index in range(200)]
    (folder / "oracle_constants_probe.py").write_text(
        f"STRINGS = {names!r}\nNUMBERS = {numbers!r}\nFLOATS = [0.123456, 98765.4321]\n"
    )
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module("oracle_constants_probe")
    finally:
        sys.path.remove(str(folder))


def test_a_checks_cases_and_verdicts_do_not_depend_on_the_other_checks(tmp_path: Path) -> None:
    target = ["redaction.recap-canaries", "feedback.semantics", "health.semantics"]
    alone = Recorder(in_process_runner(HANDLERS))
    alone_verdicts = alone.run_all(target, tmp_path, examples=15)
    # Then every other check first (fewer cases each: what they draw does not matter,
    # only that they ran and imported what they import), and a new module's constants.
    together = Recorder(in_process_runner(HANDLERS))
    together.run_all([c.id for c in CHECKS if c.id not in target], tmp_path, examples=2)
    _import_a_module_full_of_constants(tmp_path)
    together_verdicts = together.run_all(target, tmp_path, examples=15)
    for check_id in target:
        assert alone.sent[check_id] == together.sent[check_id], check_id
        assert alone_verdicts[check_id] == together_verdicts[check_id]


def test_the_same_seed_gives_the_same_cases_and_another_seed_other_ones(tmp_path: Path) -> None:
    first, again, other = (Recorder(in_process_runner(HANDLERS)) for _ in range(3))
    for recorder, seed in ((first, 5), (again, 5), (other, 6)):
        recorder.current = "recap.semantics"
        run("recap.semantics", recorder, tmp_path, examples=6, seed=seed)
    assert first.sent == again.sent
    assert first.sent != other.sent


def test_checks_sharing_a_strategy_get_cases_of_their_own(tmp_path: Path) -> None:
    recorder = Recorder(in_process_runner(HANDLERS))
    recorder.run_all(["recap.semantics", "recap.hashes"], tmp_path, examples=6)
    explicit = len(check_by_id("recap.semantics").explicit_cases())
    assert recorder.sent["recap.semantics"][explicit:] != recorder.sent["recap.hashes"][explicit:]


# -- explicit cases first --
def test_every_explicit_case_names_a_known_check_and_a_declared_operation() -> None:
    for check in CHECKS:
        for case in check.explicit_cases():
            assert case.operation in HANDLERS
            assert check.operation in ("*", case.operation), (check.id, case.operation)
            assert case.why.strip()
            json.dumps(case.input)  # plain JSON, as the wire carries it


def test_explicit_cases_are_sent_first_in_order_and_count_as_evidence(tmp_path: Path) -> None:
    recorder = Recorder(in_process_runner(HANDLERS))
    recorder.current = "health.semantics"
    result = run("health.semantics", recorder, tmp_path, examples=3)
    check = check_by_id("health.semantics")
    assert check is not None
    explicit = explicit_trials(check, CONTRACTS, OPERATIONS)
    assert len(explicit) == len(check_by_id("health.semantics").explicit_cases()) > 0
    expected = [
        dumps_wire({"operation": t.operation, "input": t.input}, option=orjson.OPT_SORT_KEYS)
        for t, _ in explicit
    ]
    assert recorder.sent["health.semantics"][: len(expected)] == expected
    assert result.status == "passed"
    assert result.cases == len(expected) + 3
    assert (result.evidence.judged, result.evidence.agreed) == (len(expected) + 3,) * 2


def test_explicit_cases_of_undeclared_contracts_are_not_sent(tmp_path: Path) -> None:
    recorder = Recorder(in_process_runner(HANDLERS))
    recorder.current = "closed.unknown-field-rejected"
    check = check_by_id("closed.unknown-field-rejected")
    assert check is not None
    result = run_check(
        check,
        recorder,
        contracts=("session-health",),
        operations=("document.roundtrip",),
        examples=2,
        seed=0,
        failures_dir=tmp_path,
    )
    assert result.status == "passed"
    doctypes = {json.loads(b)["input"]["doctype"] for b in recorder.sent[check.id]}
    assert doctypes
    assert all(d.startswith("session-health.") for d in doctypes)


def _wrong_on_first_explicit_case(check_id: str) -> Callable[[Trial], Any]:
    check = check_by_id(check_id)
    assert check is not None
    (first, _), *_ = explicit_trials(check, CONTRACTS, OPERATIONS)
    inner = in_process_runner(HANDLERS)

    def runner(trial: Trial) -> Any:
        outcome = inner(trial)
        if trial == first:
            facts = outcome.output["facts"]
            facts[-1]["turn"]["last_stop_class"] = "wrong"
        return outcome

    return runner


def test_a_failure_on_an_explicit_case_names_its_rule_and_is_saved(tmp_path: Path) -> None:
    result = run("health.semantics", _wrong_on_first_explicit_case("health.semantics"), tmp_path)
    why = check_by_id("health.semantics").explicit_cases()[0].why
    assert result.status == "failed"
    assert result.cases == 1
    assert why in result.message
    assert result.evidence.judged == 1
    assert result.evidence.agreed == 0
    assert result.saved_to is not None
    saved = json.loads(Path(result.saved_to).read_text())
    assert saved["check"] == "health.semantics"
    assert saved["input"] == dict(check_by_id("health.semantics").explicit_cases()[0].input)


# defect (tests/producers/faulty.py) -> the check whose explicit case catches it at any setting
CAUGHT_BY_AN_EXPLICIT_CASE = {
    "usage_future_tolerance_300_ms": "feedback.semantics",
    "open_heuristics": "closed.unknown-field-rejected",
    "accepts_unknown_member_below_turn": "closed.unknown-field-rejected",
    "reset_forgets_resolved_calls": "health.transcript-reset",
    "skips_null_receipt": "runrecord.semantics",
}


@pytest.mark.parametrize(("defect", "check_id"), sorted(CAUGHT_BY_AN_EXPLICIT_CASE.items()))
def test_defects_that_random_cases_missed_are_caught_by_an_explicit_case(
    defect: str, check_id: str, tmp_path: Path
) -> None:
    # One random example: only the explicit cases can be what catches the defect.
    result = run(check_id, in_process_runner(faulty_handlers(defect)), tmp_path, examples=1)
    assert result.status == "failed", result
    assert "(explicit case: " in result.message
    assert result.cases <= len(check_by_id(check_id).explicit_cases())


# -- each check judges only its own rule --
# defect -> (the check that must report it, a check of the same operation that must not)
OWN_RULE = {
    "stale_at_exactly_900_000_ms": ("feedback.semantics", "feedback.usage-never-summed"),
    "ignores_edits_of_failed_calls": ("health.semantics", "health.no-zero-rate"),
}


@pytest.mark.parametrize(("defect", "checks"), sorted(OWN_RULE.items()))
def test_a_defect_is_reported_by_its_own_rules_check_only(
    defect: str, checks: tuple[str, str], tmp_path: Path
) -> None:
    reporting, silent = checks
    runner = in_process_runner(faulty_handlers(defect))
    assert run(reporting, runner, tmp_path).status == "failed"
    assert run(silent, runner, tmp_path).status == "passed"


# The checks OWN_RULE keeps silent, each with the defect test_certify.py's matrix gives it.
STILL_CATCHING = {
    defect: check
    for defect, check in MATRIX.items()
    if check in {silent for _, silent in OWN_RULE.values()}
}


@pytest.mark.parametrize(("defect", "check_id"), sorted(STILL_CATCHING.items()))
def test_the_own_rule_checks_still_catch_their_defect(
    defect: str, check_id: str, tmp_path: Path
) -> None:
    result = run(check_id, in_process_runner(faulty_handlers(defect)), tmp_path)
    assert result.status == "failed", result


def _reported_usage(observation: Mapping[str, Any]) -> Any:
    return observation["usage"]["value"]


def test_usage_never_summed_judges_against_the_producers_own_receipts(tmp_path: Path) -> None:
    # A producer that refuses a snapshot the reference accepts (another rule) and then
    # shows the latest snapshot it did accept is right by this rule.
    result = run(
        "feedback.usage-never-summed",
        in_process_runner(faulty_handlers("usage_future_tolerance_300_ms")),
        tmp_path,
    )
    assert result.status == "passed", result


# -- the reference certifies itself --
@pytest.mark.slow
def test_the_reference_passes_every_check_at_500_examples(tmp_path: Path) -> None:
    runner = in_process_runner(HANDLERS)
    results = [run(check.id, runner, tmp_path, examples=500) for check in CHECKS]
    failures = {
        r.check.id: (r.status, r.message, r.saved_to) for r in results if r.status != "passed"
    }
    assert not failures, failures
