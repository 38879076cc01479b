"""Every single-defect producer of tests/producers/defects.py is caught twice at
default settings: by ``certify`` (``--seed 0``, the default number of examples),
under the id of the check that names the broken rule, and by ``golden check``
(the fixture the matrix names fails).

The producers run in-process through the same judge certify uses (a runner
that round-trips every case and answer through JSON, as the wire does), so
the whole matrix costs seconds, not one certify process per defect.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import defects
import pytest
import serving

from session_contracts.conformance.judge.certify import CheckResult, Trial, certify, run_check
from session_contracts.conformance.judge.checks import check_by_id
from session_contracts.conformance.judge.golden import default_fixtures_dir, judge, load_corpus
from session_contracts.conformance.judge.runner import CaseOutcome, ProducerProcess
from session_contracts.conformance.protocol import Rejected, Skipped
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.jsontext.wire import dumps_wire, loads_wire

PRODUCER = Path(__file__).resolve().parents[1] / "producers" / "defects.py"
DEFAULT_EXAMPLES: int = inspect.signature(certify).parameters["examples"].default
DEFAULT_SEED: int = inspect.signature(certify).parameters["seed"].default
CONTRACTS = tuple(serving.CONTRACTS)
OPERATIONS = tuple(sorted(HANDLERS))


def in_process(handlers: Mapping[str, Callable[[Mapping[str, Any]], Any]]) -> Callable[..., Any]:
    """A runner calling ``handlers`` directly; inputs and answers go through JSON."""

    def run(trial: Trial) -> CaseOutcome:
        case_input = loads_wire(dumps_wire(trial.input))
        try:
            output = handlers[trial.operation](case_input)
        except Rejected as rejected:
            rejection = {"code": rejected.code, "path": rejected.path, "message": rejected.message}
            return CaseOutcome(0, "rejected", rejection=rejection)
        except Skipped as skipped:
            return CaseOutcome(0, "skipped", reason=skipped.reason)
        return CaseOutcome(0, "result", output=loads_wire(dumps_wire(output)))

    return run


def run_at_defaults(
    check_id: str,
    runner: Callable[..., Any],
    failures_dir: Path,
    *,
    operations: tuple[str, ...] = OPERATIONS,
) -> CheckResult:
    """One check run in process as ``certify`` runs it at its default settings."""
    check = check_by_id(check_id)
    assert check is not None, check_id
    return run_check(
        check, runner, contracts=CONTRACTS, operations=operations,
        examples=DEFAULT_EXAMPLES, seed=DEFAULT_SEED, failures_dir=failures_dir,
    )  # fmt: skip


# The operations a producer of another operation's rules is most tempted to leave out: every
# rule must also be reached through the operation that applies it.
OPTIONAL_ELSEWHERE = ("redaction.apply", "document.roundtrip")


def test_the_defaults_are_the_cli_defaults() -> None:
    assert (DEFAULT_EXAMPLES, DEFAULT_SEED) == (25, 0)


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(defects.DEFECTS))
def test_certify_catches_the_defect_under_its_check(name: str, tmp_path: Path) -> None:
    defect = defects.DEFECTS[name]
    # Every operation is optional (docs/protocol.md): a defect outside redaction.apply and
    # document.roundtrip is caught by a producer that declares neither.
    operations = tuple(
        operation
        for operation in OPERATIONS
        if operation not in OPTIONAL_ELSEWHERE or operation == defect.operation
    )
    result = run_at_defaults(
        defect.check, in_process(defects.handlers_for(name)), tmp_path, operations=operations
    )
    assert result.status == "failed", (name, result.status, result.message, result.evidence)
    assert result.check.id == defect.check


# Defects no fixture of a reasonable size can show: certify's explicit cases catch them.
WITHOUT_FIXTURE = {
    "clamps_limit_to_32769": "needs a journal of more than 32,768 events",
    "redaction_reads_no_windows": "needs a text over 256 KiB",
    "float64_reader": "expected files hash in RFC 8785, which holds no integer beyond 2^53 - 1",
    "recap_redaction_reads_no_windows": "needs a text over 256 KiB",
}


def test_only_the_listed_defects_lack_a_fixture() -> None:
    assert {n for n, d in defects.DEFECTS.items() if not d.fixture} == set(WITHOUT_FIXTURE)


@pytest.mark.parametrize("name", sorted(set(defects.DEFECTS) - set(WITHOUT_FIXTURE)))
def test_golden_check_catches_the_defect(name: str) -> None:
    defect = defects.DEFECTS[name]
    root = default_fixtures_dir()
    corpus = load_corpus(root)
    runner = in_process(defects.handlers_for(name))
    # Only the fixtures of the defect's operation: the others never reach it.
    failed = {
        case.name
        for case in corpus.cases
        if case.operation == defect.operation
        and judge(case, runner(Trial(case.operation, case.input)), root=root).status != "passed"
    }
    assert defect.fixture in {case.name for case in corpus.cases}, defect.fixture
    assert defect.fixture in failed, (name, sorted(failed))


@pytest.mark.integration
@pytest.mark.parametrize("check_id", sorted({d.check for d in defects.DEFECTS.values()}))
def test_the_reference_passes_the_checks_of_the_matrix(check_id: str, tmp_path: Path) -> None:
    result = run_at_defaults(check_id, in_process(HANDLERS), tmp_path)
    assert result.status == "passed", (result.message, result.trial)


@pytest.mark.integration
def test_a_defect_runs_as_a_producer_process(tmp_path: Path) -> None:
    check = check_by_id("runrecord.semantics")
    assert check is not None
    command = [sys.executable, str(PRODUCER), "refuses_child_before_parent"]
    with ProducerProcess(command, timeout=30) as producer:
        producer.start()
        (result,) = certify(producer, checks=[check], failures_dir=tmp_path)
    assert result.status == "failed", result


def test_docs_show_every_defect_in_the_matrix() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text("utf-8")
    matrix = docs.split("## Defect matrix", 1)[1]
    for name, defect in defects.DEFECTS.items():
        row = next((line for line in matrix.splitlines() if f"(`{name}`)" in line), "")
        assert f"`{defect.check}`" in row, name
        assert f"`{defect.rule}`" in row, name


# The older producers of tests/producers/faulty.py, with the check test_certify.py names.
def _faulty() -> dict[str, tuple[str, Any, str]]:
    import faulty
    from test_certify import MATRIX

    return {name: (*faulty.DEFECTS[name], check) for name, check in MATRIX.items()}


FAULTY = _faulty()


def _faulty_handlers(name: str) -> dict[str, Any]:
    operation, handler, _ = FAULTY[name]
    return {**HANDLERS, operation: handler}


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(FAULTY))
def test_certify_catches_the_older_defects_at_default_settings(name: str, tmp_path: Path) -> None:
    result = run_at_defaults(FAULTY[name][2], in_process(_faulty_handlers(name)), tmp_path)
    assert result.status == "failed", (name, result.status, result.message)


@pytest.mark.parametrize("name", sorted(FAULTY))
def test_golden_check_catches_the_older_defects(name: str) -> None:
    operation = FAULTY[name][0]
    root = default_fixtures_dir()
    runner = in_process(_faulty_handlers(name))
    failed = [
        case.name
        for case in load_corpus(root).cases
        if case.operation == operation
        and judge(case, runner(Trial(case.operation, case.input)), root=root).status != "passed"
    ]
    assert failed, name


def test_a_producer_that_skips_every_stored_event_case_is_not_certified(tmp_path: Path) -> None:
    # 002 (recap.deterministic-projection), as Harn's store holds the session (docs/recap.md
    # section 11): declaring recap.project and skipping storedEvents is silence, not evidence.
    from session_contracts.conformance.judge.certify import is_certified

    def skips_stored_events(case: Mapping[str, Any]) -> Any:
        if isinstance(case, Mapping) and "storedEvents" in case:
            raise Skipped("stored events are not supported")
        return HANDLERS["recap.project"](case)

    runner = in_process({**HANDLERS, "recap.project": skips_stored_events})
    results = [
        run_at_defaults(check_id, runner, tmp_path)
        for check_id in ("recap.query-aliases", "recap.stored-events")
    ]
    aliases, stored = results
    assert aliases.status == "passed", aliases.message  # evidence elsewhere: not silence
    assert stored.status == "skipped", stored.message
    assert stored.evidence.skipped > 0
    assert stored.evidence.agreed == 0
    assert not is_certified(results, "required")
