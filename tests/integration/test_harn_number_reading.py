"""A producer that reads numbers exactly and one that reads them as Harn's build does
(serde_json without float_roundtrip) are both certified and pass the golden fixtures;
one that changes a number any other way is not (docs/recap.md section 4, "Numbers as
Harn reads them")."""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from session_contracts.conformance.judge.golden import default_fixtures_dir, judge, load_corpus
from session_contracts.conformance.judge.trials import Trial
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.jsontext.serde_numbers import floats_as_harn_reads

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_defects import in_process, run_at_defaults

Reading = Callable[[Any], Any]

# The checks whose judges compare numbers exactly or hash over them.
CHECKS = (
    "recap.semantics",
    "recap.hashes",
    "recap.stored-events",
    "roundtrip.identity",
    "extensions.verbatim",
)


def _float32(value: Any) -> Any:
    """Every float rounded to single precision: a change of numbers of another kind."""
    if isinstance(value, float):
        rounded: float = struct.unpack("<f", struct.pack("<f", value))[0]
        return rounded
    if isinstance(value, dict):
        return {key: _float32(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_float32(item) for item in value]
    return value


def _reading(read: Reading) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """The reference with its case line read by ``read`` before any handler sees it."""

    def reading(handler: Callable[[Mapping[str, Any]], Any]) -> Callable[[Any], Any]:
        return lambda case: handler(read(case))

    return {operation: reading(handler) for operation, handler in HANDLERS.items()}


def _certify(check_id: str, read: Reading, failures_dir: Path) -> str:
    """The status of one check (default settings) for the reference reading cases by ``read``."""
    result = run_at_defaults(check_id, in_process(_reading(read)), failures_dir)
    return f"{result.status}: {result.message}"


@pytest.mark.integration
@pytest.mark.parametrize("check_id", CHECKS)
@pytest.mark.parametrize("name", ["exact", "harn"])
def test_exact_and_harn_readers_are_certified(name: str, check_id: str, tmp_path: Path) -> None:
    read: Reading = (lambda case: case) if name == "exact" else floats_as_harn_reads
    assert _certify(check_id, read, tmp_path).startswith("passed")


@pytest.mark.integration
@pytest.mark.parametrize("check_id", ["recap.semantics", "recap.hashes", "recap.stored-events"])
def test_a_single_precision_reader_is_not(check_id: str, tmp_path: Path) -> None:
    assert _certify(check_id, _float32, tmp_path).startswith("failed")


def test_a_harn_reader_passes_every_golden_fixture_and_changes_some() -> None:
    root = default_fixtures_dir()
    runner = in_process(_reading(floats_as_harn_reads))
    failed, changed = [], []
    for case in load_corpus(root).cases:
        trial = Trial(case.operation, case.input)
        if floats_as_harn_reads(case.input) != case.input:
            changed.append(case.name)
        if judge(case, runner(trial), root=root).status != "passed":
            failed.append(case.name)
    assert failed == []
    assert changed  # the corpus holds numbers Harn's build reads off (health rates)
