"""Golden fixtures: the corpus of cases and the reference producer's answers.

The corpus lives in ``conformance/fixtures/<area>/``: each ``NAME.case.json``
holds one protocol case (operation and input) with the seed sentences it
covers; each ``NAME.expected.json`` holds the reference producer's answer to
it, written by ``golden update`` and never by hand.  ``golden check`` replays
every case against a producer and compares its answer with the expected one,
by JSON value and by the SHA-256 of its RFC 8785 form.

This module is the pure core (reading the corpus, comparing answers, building
expected files); ``golden_cli`` does the I/O of a run.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.judge.json_diff import ABSENT, mismatches
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.contracts import (
    contracts_of_doctype,
    contracts_of_operation,
)
from session_contracts.errors import Finding, InvalidDocument, json_path
from session_contracts.jsontext.canonical import content_hash
from session_contracts.jsontext.strict import loads_strict
from session_contracts.jsontext.wire import dumps_wire
from session_contracts.redaction.scrub import scrub
from session_contracts.rejections import RejectionFinding, agreement, answered_findings
from session_contracts.validation.xkeywords import json_equal

__all__ = [
    "AREAS",
    "CASE_SUFFIX",
    "EXPECTED_SUFFIX",
    "NOT_DECLARED",
    "Corpus",
    "Difference",
    "FixtureResult",
    "GoldenCase",
    "Update",
    "answer_of",
    "coverage_markdown",
    "default_fixtures_dir",
    "differences",
    "expected_bytes",
    "fixture_contract",
    "fixture_contracts",
    "judge",
    "load_corpus",
    "plan_update",
    "undeclared_reason",
    "write_atomically",
]

CASE_SUFFIX = ".case.json"
EXPECTED_SUFFIX = ".expected.json"
AREAS = ("documents", "feedback", "health", "recap", "runrecord")
_CASE_KEYS = {"description", "covers", "tags", "operation", "input"}
_MAX_DIFFERENCES = 5
_COMPARED = ("outcome", "output", "findings")


def default_fixtures_dir() -> Path:
    """The corpus that ships with the package."""
    return Path(__file__).resolve().parent.parent / "fixtures"


# -- the corpus --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GoldenCase:
    """One case: ``name`` is ``area/stem``, stable across machines."""

    name: str
    path: Path
    description: str
    covers: tuple[str, ...]
    tags: tuple[str, ...]
    operation: str
    input: Any = field(compare=False)

    @property
    def expected_path(self) -> Path:
        return self.path.with_name(self.path.name[: -len(CASE_SUFFIX)] + EXPECTED_SUFFIX)


@dataclass(frozen=True, slots=True)
class Corpus:
    """The cases, the expected files present, and what is wrong with the corpus itself."""

    root: Path
    cases: tuple[GoldenCase, ...]
    expected_files: tuple[Path, ...]
    problems: tuple[Finding, ...]

    @property
    def orphans(self) -> tuple[Path, ...]:
        """Expected files that no case uses any more."""
        used = {case.expected_path for case in self.cases}
        return tuple(path for path in self.expected_files if path not in used)


def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _read_case(root: Path, path: Path, operations: frozenset[str]) -> GoldenCase | Finding:
    where = _relative(root, path)
    try:
        value = loads_strict(path.read_bytes())
    except InvalidDocument as exc:
        return exc.findings[0].at(where)
    except OSError as exc:
        return Finding("$", "fixture_unreadable", f"cannot read the case: {exc}", "").at(where)

    def bad(parts: tuple[str | int, ...], message: str, hint: str) -> Finding:
        return Finding(json_path(parts), "fixture_invalid", message, hint).at(where)

    if not isinstance(value, dict):
        return bad((), "a case file holds one JSON object", "see conformance/fixtures/README.md")
    missing = sorted(_CASE_KEYS - value.keys())
    if missing:
        return bad((missing[0],), f"{missing[0]} is missing", "see conformance/fixtures/README.md")
    unknown = sorted(value.keys() - _CASE_KEYS)
    if unknown:
        return bad((unknown[0],), f"unknown member {unknown[0]}", "remove it")
    if not isinstance(value["description"], str) or not value["description"].strip():
        return bad(("description",), "description must be a non-empty string", "say what it shows")
    for key in ("covers", "tags"):
        items = value[key]
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            return bad((key,), f"{key} must be a list of non-empty strings", "")
    if not isinstance(value["operation"], str) or value["operation"] not in operations:
        return bad(
            ("operation",),
            f"unknown operation {value['operation']!r}",
            f"one of {', '.join(sorted(operations))}",
        )
    expanded = _expand_secrets(value["input"], ("input",))
    if isinstance(expanded, tuple):
        return bad(*expanded)
    stem = path.name[: -len(CASE_SUFFIX)]
    return GoldenCase(
        name=f"{path.parent.name}/{stem}",
        path=path,
        description=value["description"],
        covers=tuple(value["covers"]),
        tags=tuple(value["tags"]),
        operation=value["operation"],
        input=expanded.value,
    )


_SECRET = re.compile(r"\{\{secret:([A-Za-z0-9_]+)\}\}")


@dataclass(frozen=True, slots=True)
class _Expanded:
    value: Any


def _expand_secrets(
    value: Any, parts: tuple[str | int, ...]
) -> _Expanded | tuple[tuple[str | int, ...], str, str]:
    """``{{secret:KIND}}`` in a case's strings becomes the built-in fake secret of
    that detector kind: the files hold no secret-shaped text for a repository's
    secret scanner to flag, and the values follow the redaction module's canaries."""
    from session_contracts.redaction.canaries import known_canary_secrets

    secrets = known_canary_secrets()
    problem: list[tuple[tuple[str | int, ...], str, str]] = []

    def walk(node: Any, where: tuple[str | int, ...]) -> Any:
        if isinstance(node, str) and "{{secret:" in node:

            def swap(match: re.Match[str]) -> str:
                if match[1] not in secrets:
                    problem.append(
                        (where, f"no built-in secret {match[1]!r}", f"one of {', '.join(secrets)}")
                    )
                    return match[0]
                return secrets[match[1]]

            return _SECRET.sub(swap, node)
        if isinstance(node, dict):
            return {key: walk(item, (*where, key)) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item, (*where, index)) for index, item in enumerate(node)]
        return node

    expanded = walk(value, parts)
    return problem[0] if problem else _Expanded(expanded)


def load_corpus(root: Path, operations: Sequence[str] | None = None) -> Corpus:
    """Every case under ``root`` (one folder per area), sorted by name."""
    from session_contracts.conformance.reference.producer import HANDLERS

    known = frozenset(operations if operations is not None else HANDLERS)
    cases: list[GoldenCase] = []
    problems: list[Finding] = []
    expected: list[Path] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for path in sorted(folder.iterdir()):
            if path.name.endswith(CASE_SUFFIX):
                read = _read_case(root, path, known)
                if isinstance(read, Finding):
                    problems.append(read)
                else:
                    cases.append(read)
            elif path.name.endswith(EXPECTED_SUFFIX):
                expected.append(path)
            elif path.name.endswith(".json"):
                problems.append(
                    Finding(
                        "$",
                        "fixture_misnamed",
                        "neither a case nor an expected file",
                        f"name it NAME{CASE_SUFFIX}",
                    ).at(_relative(root, path))
                )
    return Corpus(root, tuple(cases), tuple(expected), tuple(problems))


# -- answers ------------------------------------------------------------------------------------


def _normalize(operation: str, output: Any) -> Any:
    """Members that are the implementation's own choice are not compared."""
    if operation != "feedback.run":
        return output
    # Checkpoint ids are the producer's own, messages are for people: both
    # are compared as certify compares them.
    from session_contracts.conformance.judge.trials import normalize_feedback

    return normalize_feedback(output)


def answer_of(operation: str, outcome: CaseOutcome) -> dict[str, Any]:
    """The comparable part of an answer.

    A rejection is its findings, each ``{"code", "path"}`` (messages are people's
    text): the reference's are every finding of the input, a producer's are judged
    against them by path and class (:func:`judge`, docs/protocol.md).  Rejections
    that the contracts define, such as feedback's usage rejections, are part of an
    output and compared in full.  An answer that is neither (the producer broke or
    skipped) is its outcome and why, for a report to show.
    """
    if outcome.outcome == "rejected":
        found = answered_findings(outcome.rejection)
        return {"outcome": "rejected", "findings": [finding.to_json() for finding in found]}
    if outcome.outcome == "errored":
        return {"outcome": "errored", "error_code": outcome.error_code, "message": outcome.message}
    if outcome.outcome == "skipped":
        return {"outcome": "skipped", "reason": outcome.reason}
    return {"outcome": "result", "output": _normalize(operation, outcome.output)}


def expected_bytes(case: GoldenCase, answer: Mapping[str, Any]) -> bytes:
    """The expected file: the answer and the hash of its RFC 8785 form.

    Sorted keys and two-space indentation keep diffs in review readable and the
    bytes stable, so ``golden update`` rewrites only what changed.
    """
    document = {
        "case": case.name,
        "operation": case.operation,
        **answer,
        "sha256": content_hash(dict(answer)),
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


# -- comparison ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the answer differs from the expected one."""

    path: str
    expected: str
    actual: str

    def render(self) -> str:
        return f"{self.path}: got {self.actual}, expected {self.expected}"


def _show(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    try:
        text = dumps_wire(value).decode()
    except TypeError:  # nesting past orjson's limit: show it as Python would
        text = repr(value)
    if len(text) > 100:
        text = text[:97] + "..."
    # Fixtures plant fake secrets; a report still never repeats one.
    return scrub(text)


def differences(
    expected: Any,
    actual: Any,
    limit: int = _MAX_DIFFERENCES,
    *,
    equal: Callable[[Any, Any], bool] = json_equal,
) -> list[Difference]:
    """The first ``limit`` differences, in document order, at their JSON paths (values
    compared with ``equal``: by JSON value unless told otherwise)."""
    found: list[Difference] = []
    for mismatch in mismatches(expected, actual, limit=limit, equal=equal):
        shown_e, shown_a = _show(mismatch.expected), _show(mismatch.actual)
        if shown_e == shown_a:
            shown_a += " (differs in a secret the report does not repeat)"
        found.append(Difference(mismatch.path, shown_e, shown_a))
    return found


# The skip reason golden gives a fixture whose contract or operation the producer
# does not declare (a producer's own skip of a declared operation is "skipped").
NOT_DECLARED = "not_declared"


def fixture_contracts(case: GoldenCase) -> tuple[str, ...]:
    """The contracts a fixture exercises; a producer claiming any of them is sent it."""
    if case.operation == "document.roundtrip":
        doctype = case.input.get("doctype") if isinstance(case.input, dict) else None
        return contracts_of_doctype(str(doctype))
    return contracts_of_operation(case.operation)


def fixture_contract(case: GoldenCase) -> str:
    """The contract a fixture is counted under in summaries."""
    contracts = fixture_contracts(case)
    return contracts[0] if contracts else case.operation


def undeclared_reason(case: GoldenCase, operations: set[str], contracts: set[str]) -> str | None:
    """Why the producer is not sent this fixture, or None when it declares what it needs."""
    if case.operation not in operations:
        return f"the producer does not declare {case.operation}"
    wanted = fixture_contracts(case)
    if wanted and not contracts.intersection(wanted):
        return f"the producer does not claim {' or '.join(wanted)}"
    return None


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """The verdict on one fixture: passed, failed (a wrong answer or a broken
    fixture), errored (the producer broke) or skipped (with the reason).  A wrong
    answer keeps both answers in comparable form (``answer_of``) for the reports."""

    case: str
    status: str
    code: str = ""
    message: str = ""
    hint: str = ""
    differences: tuple[Difference, ...] = ()
    file: str = ""
    seconds: float = 0.0
    expected: Mapping[str, Any] | None = None
    actual: Mapping[str, Any] | None = None


def _read_expected(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:
        value = loads_strict(path.read_bytes())
    except FileNotFoundError:
        return None, "expected_missing"
    except (OSError, InvalidDocument):
        return None, "expected_unreadable"
    if not isinstance(value, dict) or value.get("outcome") not in ("result", "rejected"):
        return None, "expected_unreadable"
    return value, ""


def _not_canonical(case: GoldenCase, exc: InvalidDocument, status: str, file: str) -> FixtureResult:
    first = exc.findings[0]
    return FixtureResult(
        case.name,
        status,
        "answer_not_json",
        f"the answer has no RFC 8785 form: {first.message} at {first.path}",
        first.hint,
        file=file,
    )


def _case_hint(case: GoldenCase, root: Path) -> str:
    return (
        f"{case.description} Answer as {_relative(root, case.expected_path)} does "
        f"(add `--case {case.name}` to run it alone)"
    )


def judge(case: GoldenCase, outcome: CaseOutcome, *, root: Path) -> FixtureResult:
    """Compare a producer's answer to one case with the case's expected file."""
    file = _relative(root, case.path)
    if outcome.outcome == "errored":
        return FixtureResult(
            case.name,
            "errored",
            outcome.error_code or "producer_error",
            outcome.message,
            "the producer broke on this case (an error, not a wrong answer): fix the "
            "producer, or the case input if the reference broke; --report-json keeps a "
            "producer process's stderr tail",
            file=file,
            seconds=outcome.seconds,
        )
    if outcome.outcome == "skipped":
        code = NOT_DECLARED if outcome.error_code == NOT_DECLARED else "skipped"
        return FixtureResult(case.name, "skipped", code, outcome.reason, file=file)
    expected, problem = _read_expected(case.expected_path)
    if expected is None:
        what = "is missing" if problem == "expected_missing" else "is unreadable"
        return FixtureResult(
            case.name,
            "failed",
            problem,
            f"the case's expected file {what}: {_relative(root, case.expected_path)}",
            "run `session-contracts golden update` and review the new file",
            file=file,
        )
    wanted = {k: v for k, v in expected.items() if k in _COMPARED}
    try:
        wanted_hash = content_hash(wanted)
    except InvalidDocument:
        wanted_hash = ""  # no RFC 8785 form: not a file golden update wrote
    if expected.get("sha256") != wanted_hash:
        return FixtureResult(
            case.name,
            "failed",
            "expected_edited",
            "the expected file's sha256 does not match its content (edited by hand?)",
            "never edit expected files: run `session-contracts golden update`",
            file=file,
        )
    if outcome.outcome == "rejected" and wanted.get("outcome") == "rejected":
        return _judge_rejection(case, wanted, outcome, root=root, file=file)
    actual = answer_of(case.operation, outcome)
    try:
        actual_hash = content_hash(actual)
    except InvalidDocument as exc:
        return _not_canonical(case, exc, "failed", file)
    if actual_hash == expected["sha256"] and json_equal(actual, wanted):
        return FixtureResult(case.name, "passed", file=file, seconds=outcome.seconds)
    if _as_harn_reads_it(case, actual):
        return FixtureResult(case.name, "passed", file=file, seconds=outcome.seconds)
    if actual["outcome"] != wanted["outcome"]:
        if actual["outcome"] == "rejected":
            rejection = outcome.rejection or {}
            message = (
                f"rejected the input ({rejection.get('code')} at {rejection.get('path')}: "
                f"{rejection.get('message')}); expected a result"
            )
        else:
            message = (
                "answered with a result; expected a rejection (the reference found "
                f"{_show_findings(wanted)})"
            )
        return FixtureResult(
            case.name,
            "failed",
            "wrong_outcome",
            message,
            _case_hint(case, root),
            file=file,
            seconds=outcome.seconds,
            expected=wanted,
            actual=actual,
        )
    found = tuple(differences(wanted, actual))
    return FixtureResult(
        case.name,
        "failed",
        "answer_differs",
        f"the answer differs from the expected one (sha256 {actual_hash[7:19]}…, "
        f"expected {str(expected['sha256'])[7:19]}…)",
        _case_hint(case, root),
        found,
        file=file,
        seconds=outcome.seconds,
        expected=wanted,
        actual=actual,
    )


def _as_harn_reads_it(case: GoldenCase, actual: Mapping[str, Any]) -> bool:
    """Whether ``actual`` is the reference's answer to the case's input as a producer
    built like Harn reads it (serde_json without float_roundtrip: docs/recap.md section
    4, "Numbers as Harn reads them"); certify's judges accept the same two answers."""
    from session_contracts.conformance.judge.trials import Trial, as_harn_reads

    harn = as_harn_reads(Trial(case.operation, case.input))
    if harn is None:
        return False
    answer = answer_of(case.operation, reference_outcome(case.operation, harn.input))
    return answer.get("outcome") == "result" and json_equal(actual, answer)


def _reference_findings(wanted: Mapping[str, Any]) -> tuple[RejectionFinding, ...]:
    listed = wanted.get("findings")
    return answered_findings({"findings": listed}) if isinstance(listed, list) else ()


def _show_findings(wanted: Mapping[str, Any]) -> str:
    shown = [finding.render() for finding in _reference_findings(wanted)]
    return ", ".join(shown[:6]) + (f" (and {len(shown) - 6} more)" if len(shown) > 6 else "")


def _judge_rejection(
    case: GoldenCase, wanted: Mapping[str, Any], outcome: CaseOutcome, *, root: Path, file: str
) -> FixtureResult:
    """A rejection agrees when each finding the producer answers names the path of
    one of the reference's findings with a code of that finding's class."""
    reference = _reference_findings(wanted)
    if not reference:
        return FixtureResult(
            case.name,
            "failed",
            "expected_outdated",
            "the expected file lists no findings of the rejection (written before "
            "rejections were judged by their reason)",
            "run `session-contracts golden update` and review the new file",
            file=file,
        )
    verdict = agreement(reference, answered_findings(outcome.rejection))
    if verdict.agreed:
        return FixtureResult(case.name, "passed", file=file, seconds=outcome.seconds)
    return FixtureResult(
        case.name,
        "failed",
        verdict.code,
        verdict.message,
        f"{verdict.hint}. {_case_hint(case, root)}",
        file=file,
        seconds=outcome.seconds,
        expected=wanted,
        actual=answer_of(case.operation, outcome),
    )


# -- update -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Update:
    """What ``golden update`` does to one file: added, changed, unchanged or deleted."""

    path: Path
    action: str
    content: bytes = b""
    differences: tuple[Difference, ...] = ()


def plan_update(
    corpus: Corpus, answer: Callable[[GoldenCase], CaseOutcome]
) -> Iterator[Update | FixtureResult]:
    """The writes that make every expected file the reference's answer, and the
    deletions of orphans; a case the reference cannot answer yields its result."""
    for case in corpus.cases:
        outcome = answer(case)
        if outcome.outcome not in ("result", "rejected"):
            yield judge(case, outcome, root=corpus.root)
            continue
        new = answer_of(case.operation, outcome)
        try:
            content = expected_bytes(case, new)
        except InvalidDocument as exc:
            # The reference broke: errored, as a producer that broke would be.
            yield _not_canonical(case, exc, "errored", _relative(corpus.root, case.path))
            continue
        try:
            old_bytes = case.expected_path.read_bytes()
        except FileNotFoundError:
            yield Update(case.expected_path, "added", content)
            continue
        if old_bytes == content:
            yield Update(case.expected_path, "unchanged")
            continue
        old, _ = _read_expected(case.expected_path)
        before = {k: v for k, v in (old or {}).items() if k in _COMPARED}
        yield Update(case.expected_path, "changed", content, tuple(differences(before, new)))
    for orphan in corpus.orphans:
        yield Update(orphan, "deleted")


def write_atomically(path: Path, content: bytes) -> None:
    """Write through a temporary file in the same folder and rename it over
    the target: a reader sees the old file or the new one, never half."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# -- coverage -----------------------------------------------------------------------------------


def coverage_markdown(corpus: Corpus, catalogue: Mapping[str, Any]) -> str:
    """Sentence by sentence, the fixtures that show each rule of the seeds, or
    why no producer output can (``sentences.json``'s ``not_by_fixture``)."""
    by_sentence: dict[str, list[str]] = {}
    for case in corpus.cases:
        for sentence in case.covers:
            by_sentence.setdefault(sentence, []).append(case.name)
    sentences = list(catalogue["sentences"])
    excused = sum(1 for s in sentences if s.get("not_by_fixture"))
    lines = [
        "# Sentence coverage of the golden fixtures",
        "",
        "Generated by `session-contracts golden coverage` from",
        "`conformance/fixtures/sentences.json` and the case files; do not edit.",
        "",
        f"{len(sentences)} rule-bearing sentences of the seeds; {len(sentences) - excused} "
        f"shown by {len(corpus.cases)} fixtures, {excused} that no producer output can show, "
        "each with the reason and where the rule is enforced instead.",
    ]
    for seed, entry in sorted(catalogue["seeds"].items()):
        lines += ["", f"## Seed {seed}: {entry['title']}", ""]
        lines += ["| sentence | fixtures (or why none) |", "|---|---|"]
        for sentence in sentences:
            if str(sentence["seed"]) != seed:
                continue
            text = " ".join(str(sentence["text"]).split()).replace("|", "\\|")
            names = by_sentence.get(sentence["id"], [])
            if names:
                shown = ", ".join(f"`{name}`" for name in names[:6])
                if len(names) > 6:
                    shown += f" and {len(names) - 6} more"
            else:
                shown = "none: " + str(sentence.get("not_by_fixture", "UNCOVERED")).replace(
                    "|", "\\|"
                )
            lines.append(f"| **{sentence['id']}**: {text} | {shown} |")
    return "\n".join(lines) + "\n"
