"""Every answer a producer can send gets a verdict and a report, never an internal error.

For each check, its first explicit case (or one drawn from its strategy) is answered with
arbitrary JSON (integers of any size, floats at the edges, text of any plane, nesting, big
and empty containers) or an arbitrary rejection; the judge must pass, fail or skip it,
and the JSON, HTML and JUnit reports of that result must be written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_contracts.conformance.judge.certify import (
    CheckResult,
    Trial,
    explicit_trials,
    judge_trial,
)
from session_contracts.conformance.judge.checks import CHECKS, Check
from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.judge.golden import answer_of
from session_contracts.conformance.judge.report import junit_xml, report_body, report_json
from session_contracts.conformance.judge.report_html import certify_html
from session_contracts.conformance.judge.runner import MAX_ANSWER_DEPTH, CaseOutcome
from session_contracts.contracts import CONTRACTS
from session_contracts.jsontext.wire import dumps_wire, loads_wire

ALL_CONTRACTS = tuple(contract.name for contract in CONTRACTS)
ALL_OPERATIONS = tuple(sorted({op for contract in CONTRACTS for op in contract.operations}))

# Text as JSON can carry it: any code point but a lone surrogate (the wire refuses those).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308, 2**53 + 1, -(2**63) - 1]),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=30,
)


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


ANSWERS = st.one_of(
    JSON_VALUES.map(lambda output: CaseOutcome(0, "result", output=output)),
    st.just(CaseOutcome(0, "result", output=_deep(MAX_ANSWER_DEPTH))),
    st.builds(
        lambda code, path, message, findings: CaseOutcome(
            0,
            "rejected",
            rejection={"code": code, "path": path, "message": message, "findings": findings},
        ),
        TEXT,
        TEXT,
        TEXT,
        st.lists(st.fixed_dictionaries({"code": TEXT, "path": TEXT}), max_size=3),
    ),
)


def _trial(check: Check, data: st.DataObject) -> Trial:
    """The check's first explicit case, else a case drawn from its own strategy."""
    trials = explicit_trials(check, ALL_CONTRACTS, ALL_OPERATIONS)
    if trials:
        return trials[0][0]
    planned = check.trials(ALL_CONTRACTS, ALL_OPERATIONS)
    strategy = planned[0] if isinstance(planned, list) else planned
    return data.draw(strategy, label="trial")


def _reports(result: CheckResult) -> None:
    body = report_body(
        [result],
        producer={"command": "x", "implementation": {}, "contracts": [], "operations": []},
        settings={"examples": 1, "seed": 0, "fail_on": "required", "timeout": None},
        summary={"certified": False},
        reproduce={},
        baseline=[],
    )
    assert report_json(body)
    assert certify_html(body, [result])
    assert junit_xml([result], seconds=0.0)


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.id)
@given(answer=ANSWERS, data=st.data())
def test_any_answer_gets_a_verdict_and_a_report(
    check: Check, answer: CaseOutcome, data: st.DataObject
) -> None:
    trial = _trial(check, data)
    # As the harness reads an answer off the wire.
    wired = replace(answer, output=loads_wire(dumps_wire(answer.output)))
    result = judge_trial(lambda _trial: wired, check, trial)
    assert result.status in ("passed", "failed", "skipped")
    reference = reference_outcome(trial.operation, dict(trial.input))
    _reports(
        replace(
            result,
            answer=answer_of(trial.operation, wired),
            reference_answer=answer_of(trial.operation, reference),
            later_answer=answer_of(trial.operation, reference),
        )
    )
