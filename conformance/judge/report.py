"""Reports of a certification run: terminal, JSON, JUnit XML, badge, baseline (the HTML
page, built from the JSON report's body, is ``report_html``).

Every message goes through the redaction policy before it is written: a
report must never repeat a canary or any other secret a producer leaked.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from session_contracts.ci_annotations import github_annotation
from session_contracts.conformance.judge.certify import CheckResult, Evidence
from session_contracts.conformance.judge.junit import (
    JunitCase,
    JunitSuite,
    Outcome,
    junit_suites_xml,
)
from session_contracts.errors import Finding, UsageError
from session_contracts.input_files import read_regular_file
from session_contracts.jsontext.wire import dumps_wire
from session_contracts.redaction.scrub import scrub, scrubbed_value

__all__ = [
    "REPORT_VERSION",
    "BaselineEntry",
    "BaselineVerdict",
    "add_report_arguments",
    "badge",
    "check_report_paths",
    "compare_baseline",
    "github_annotations",
    "junit_xml",
    "read_baseline",
    "report_body",
    "report_json",
    "write_baseline",
]

#: The JSON report's version (schemas/certification-report.schema.json, x-schemaVersion).
REPORT_VERSION = 2


def add_report_arguments(parser: argparse.ArgumentParser, *, html_holds: str) -> None:
    """The report options certify and golden share: JSON, JUnit, badge and HTML page."""
    parser.add_argument("--report-json", help="write the JSON report here")
    parser.add_argument("--junit", help="write JUnit XML here")
    parser.add_argument("--badge", help="write a shields.io endpoint badge JSON here")
    parser.add_argument(
        "--report-html",
        metavar="FILE",
        help=f"write a self-contained HTML page here: {html_holds}",
    )


def check_report_paths(paths: Mapping[str, str | None]) -> None:
    """Refuse, before any case runs, a report path (by its option) that is a folder or
    whose folder is missing: otherwise the run would end in an error after all its cases."""
    for option, path in paths.items():
        if not path:
            continue
        target = Path(path)
        if target.is_dir():
            problem = "it is a folder"
        elif not target.parent.is_dir():
            problem = f"there is no folder {target.parent}"
        else:
            continue
        raise UsageError(
            [
                Finding(
                    "$",
                    "io_error",
                    f"cannot write {option} {path}: {problem}",
                    "pass a file path in an existing folder you may write to",
                )
            ]
        )


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    check_id: str
    message_prefix: str


@dataclass(frozen=True, slots=True)
class BaselineVerdict:
    """How one check's result compares with the baseline of expected failures."""

    check_id: str
    state: str  # expected | unexpected_failure | unexpected_pass | changed | ok
    detail: str = ""


def read_baseline(path: str) -> list[BaselineEntry]:
    """The entries of a baseline file (a regular file of UTF-8 text)."""
    data = read_regular_file(path, 1 << 20)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            [
                Finding(
                    "$",
                    "baseline_unreadable",
                    f"{path} is not UTF-8 text (byte {exc.start})",
                    "a baseline lists one check id a line, in UTF-8",
                )
            ]
        ) from None
    entries = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        check_id, _, prefix = line.partition("#")
        entries.append(BaselineEntry(check_id.strip(), prefix.strip()))
    return entries


def write_baseline(path: Path, results: Sequence[CheckResult]) -> None:
    lines = [
        "# Expected failures: one check id a line, optionally `# message prefix`.",
        "# Written by `session-contracts certify --update-baseline`.",
    ]
    for result in results:
        if not result.certifies:
            prefix = scrub(result.message)[:60].replace("\n", " ")
            lines.append(f"{result.check.id}  # {prefix}")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)


def compare_baseline(
    results: Sequence[CheckResult], entries: Sequence[BaselineEntry]
) -> list[BaselineVerdict]:
    listed = {entry.check_id: entry for entry in entries}
    verdicts = []
    for result in results:
        entry = listed.get(result.check.id)
        broken = not result.certifies
        if entry is None:
            state = "unexpected_failure" if broken else "ok"
            verdicts.append(BaselineVerdict(result.check.id, state))
        elif not broken:
            if result.status == "passed":
                verdicts.append(
                    BaselineVerdict(
                        result.check.id,
                        "unexpected_pass",
                        "listed as an expected failure but passes: remove it from the baseline",
                    )
                )
            else:
                verdicts.append(BaselineVerdict(result.check.id, "ok"))
        elif entry.message_prefix and not scrub(result.message).startswith(entry.message_prefix):
            verdicts.append(
                BaselineVerdict(
                    result.check.id,
                    "changed",
                    f"fails differently: expected a message starting {entry.message_prefix!r}",
                )
            )
        else:
            verdicts.append(BaselineVerdict(result.check.id, "expected"))
    ran = {result.check.id for result in results}
    verdicts += [
        BaselineVerdict(entry.check_id, "unknown", "the baseline names a check that did not run")
        for entry in entries
        if entry.check_id not in ran
    ]
    return verdicts


def report_json(body: Mapping[str, Any]) -> bytes:
    """The JSON report (schemas/certification-report.schema.json) of :func:`report_body`."""
    # Answers may hold integers beyond 64 bits: written exactly.
    return dumps_wire(body, option=orjson.OPT_INDENT_2) + b"\n"


def _answers_json(result: CheckResult) -> dict[str, Any]:
    """A faulty check's evidence: the producer's answer to the faulty case, the reference's,
    and (when flaky) the producer's later answer to the same case."""
    answers = {
        "answer": result.answer,
        "reference_answer": result.reference_answer,
        "later_answer": result.later_answer,
    }
    return {name: scrubbed_value(value) for name, value in answers.items() if value is not None}


def report_body(
    results: Sequence[CheckResult],
    *,
    producer: Mapping[str, Any],
    settings: Mapping[str, Any],
    summary: Mapping[str, Any],
    reproduce: Mapping[str, str],
    baseline: Sequence[BaselineVerdict],
) -> dict[str, Any]:
    """The JSON report's body, which the HTML page is built from too."""
    states = {verdict.check_id: verdict.state for verdict in baseline}
    return {
        "report_version": REPORT_VERSION,
        "producer": dict(producer),
        "settings": dict(settings),
        "summary": dict(summary),
        "checks": [
            {
                "id": r.check.id,
                "level": r.check.level,
                "contract": r.check.contract,
                "title": r.check.title,
                "seed": r.check.seed,
                "status": r.status,
                "applicable": r.applicable,
                "cases": r.cases,
                "seconds": round(r.seconds, 3),
                "evidence": asdict(r.evidence),
                "message": scrub(r.message),
                "saved_case": r.saved_to,
                "reproduce": reproduce.get(r.check.id),
                "baseline": states.get(r.check.id),
                **_answers_json(r),
            }
            for r in results
        ],
    }


def total_evidence(results: Sequence[CheckResult]) -> dict[str, int]:
    """The evidence of every check added up (the report's and the badge's figures)."""
    # The report's evidence object is Evidence's fields, named and ordered as it names them.
    return asdict(sum((r.evidence for r in results), Evidence()))


def junit_xml(results: Sequence[CheckResult], *, seconds: float) -> bytes:
    """One suite per contract, one case per check, its evidence as a property."""
    by_contract: dict[str, list[CheckResult]] = {}
    for result in results:
        by_contract.setdefault(result.check.contract, []).append(result)
    suites = [
        JunitSuite(contract, tuple(_junit_case(result) for result in members))
        for contract, members in sorted(by_contract.items())
    ]
    return junit_suites_xml("session-contracts certify", suites, seconds=seconds)


def _junit_case(result: CheckResult) -> JunitCase:
    evidence = result.evidence
    summary = (
        f"{evidence.agreed} agreed of {evidence.judged} judged, {evidence.skipped} "
        f"skipped, {evidence.errored} errored"
    )
    message = scrub(result.message)
    kind = _junit_kind(result)
    text = f"{result.status}: {message}"
    return JunitCase(
        result.check.contract,
        result.check.id,
        kind,
        message if kind == "skipped" else text,
        "" if kind == "skipped" else text,
        properties=(("evidence", summary),),
        seconds=result.seconds,
    )


def _junit_kind(result: CheckResult) -> Outcome:
    """An applicable check without evidence fails."""
    if result.status == "passed":
        return "passed"
    if result.status == "errored":
        return "error"
    if result.status == "skipped" and not result.applicable:
        return "skipped"
    return "failure"


def badge(results: Sequence[CheckResult]) -> bytes:
    """A shields.io endpoint badge: the share of the cases sent that were judged and agreed."""
    applicable = [r for r in results if r.applicable]
    evidence = sum((r.evidence for r in applicable), Evidence())
    sent = evidence.sent
    share = 100 * evidence.agreed // sent if sent else 0
    whole = bool(applicable) and all(r.status == "passed" for r in applicable)
    color = "brightgreen" if whole else "yellow" if share >= 80 else "red"
    return orjson.dumps(
        {
            "schemaVersion": 1,
            "label": "session-contracts",
            "message": f"{share}% of cases agreed" if sent else "no case judged",
            "color": color,
        }
    )


def github_annotations(
    results: Sequence[CheckResult],
    *,
    reproduce: Mapping[str, str],
    baseline: Sequence[BaselineVerdict] = (),
) -> list[str]:
    """GitHub workflow commands: ``::error title=<check id>::<message>`` per failed or
    errored required check, ``::warning`` for a recommended one or a failure the
    baseline expects, ``::error`` for a baseline entry that now passes."""
    verdicts = {verdict.check_id: verdict for verdict in baseline}
    lines = []
    for result in results:
        verdict = verdicts.get(result.check.id)
        if not result.certifies:
            level = "error" if result.check.level == "required" else "warning"
            message = f"{result.status}: {result.message}"
            if verdict is not None and verdict.state == "expected":
                level, message = "warning", message + " (an expected failure: in the baseline)"
            if result.check.id in reproduce:
                message += f"\nreproduce: {reproduce[result.check.id]}"
            lines.append(github_annotation(level, scrub(message), title=result.check.id))
        elif verdict is not None and verdict.state == "unexpected_pass":
            lines.append(github_annotation("error", scrub(verdict.detail), title=result.check.id))
    return lines
