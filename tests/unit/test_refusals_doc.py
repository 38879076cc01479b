"""docs/refusals.md states what the reference refuses: each case of its tables is sent to
the reference in-process, and the paths it reports, with the classes of the codes at each,
must be exactly the rows of the case (so the tables hold each operation's stages too)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.rejections import CLASSES, answered_findings, rejection_class

DOC = Path(__file__).resolve().parents[2] / "docs" / "refusals.md"
HEADER = "| input | path | class | why |"
ACCEPTED = "accepted"


@dataclass
class Case:
    operation: str
    text: str
    line: int
    # path -> the classes stated there; {"—": {"accepted"}} for a result
    rows: dict[str, set[str]] = field(default_factory=dict)

    @property
    def input(self) -> Any:
        return json.loads(self.text)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _code(cell: str) -> str:
    match = re.fullmatch(r"`(.*)`", cell)
    assert match, f"{cell!r} is not one code span"
    return match.group(1)


def doc_cases() -> list[Case]:
    cases: list[Case] = []
    operation = ""
    in_table = False
    for number, line in enumerate(DOC.read_text(encoding="utf-8").splitlines(), 1):
        heading = re.fullmatch(r"## `([a-z0-9_.]+)`", line)
        if heading:
            operation, in_table = heading.group(1), False
        elif line == HEADER:
            assert operation, f"line {number}: a table before any operation heading"
            in_table = True
        elif in_table and line.startswith("|---"):
            continue
        elif in_table and line.startswith("|"):
            text, path, classes, _why = _cells(line)
            if text:
                cases.append(Case(operation, _code(text), number))
            assert cases, f"line {number}: no input above"
            assert cases[-1].operation == operation, f"line {number}: no input above"
            named = {name.strip() for name in classes.split(",")}
            cases[-1].rows[path if path == "—" else _code(path)] = named
        else:
            in_table = False
    return cases


CASES = doc_cases()


def test_the_doc_has_a_table_for_every_operation() -> None:
    assert {case.operation for case in CASES} == set(HANDLERS)


def test_every_row_names_a_class_or_accepted() -> None:
    for case in CASES:
        for path, classes in case.rows.items():
            if path == "—":
                assert classes == {ACCEPTED}, f"line {case.line}"
            else:
                assert classes <= set(CLASSES), f"line {case.line}: {classes - set(CLASSES)}"


@pytest.mark.parametrize("case", CASES, ids=[f"line{case.line}" for case in CASES])
def test_the_reference_answers_as_the_doc_says(case: Case) -> None:
    outcome = reference_outcome(case.operation, case.input)
    if case.rows == {"—": {ACCEPTED}}:
        assert outcome.outcome == "result", (outcome.outcome, outcome.rejection)
        return
    assert outcome.outcome == "rejected", (outcome.outcome, outcome.output, outcome.message)
    found: dict[str, set[str]] = {}
    for finding in answered_findings(outcome.rejection):
        found.setdefault(finding.path, set()).add(rejection_class(finding.code) or finding.code)
    assert found == case.rows
