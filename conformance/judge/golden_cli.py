"""``session-contracts golden check|update``: the I/O of a golden-fixture run.

``check`` replays every fixture against a producer (the reference, in-process,
by default) and prints what differs; ``update`` rewrites the expected files
from the reference producer.  The comparison itself is in ``golden``.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import orjson

from session_contracts.ci_annotations import annotations_wanted, github_annotation
from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.judge.golden import (
    NOT_DECLARED,
    Corpus,
    FixtureResult,
    GoldenCase,
    Update,
    coverage_markdown,
    default_fixtures_dir,
    fixture_contract,
    judge,
    load_corpus,
    plan_update,
    undeclared_reason,
    write_atomically,
)
from session_contracts.conformance.judge.junit import (
    JunitCase,
    JunitSuite,
    Outcome,
    junit_suites_xml,
)
from session_contracts.conformance.judge.recorded import (
    SEED_DIFFERS,
    default_recorded_dir,
    judge_recorded,
    replay_cases,
)
from session_contracts.conformance.judge.report import add_report_arguments, check_report_paths
from session_contracts.conformance.judge.report_html import golden_html
from session_contracts.conformance.judge.runner import (
    CaseOutcome,
    ProducerProcess,
    require_producer_command,
)
from session_contracts.errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    Finding,
    InvalidDocument,
    ToolError,
    UsageError,
)
from session_contracts.jsontext.strict import loads_strict

__all__ = ["add_arguments", "run"]

_STATUSES = ("passed", "failed", "errored", "skipped")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="golden_action", required=True)
    check = actions.add_parser(
        "check", help="replay every fixture against a producer and compare the answers"
    )
    update = actions.add_parser(
        "update", help="rewrite the expected files from the reference producer"
    )
    for command in (check, update):
        command.add_argument(
            "--fixtures", help="the corpus folder (default: the one shipped with session-contracts)"
        )
        command.add_argument(
            "--case",
            action="append",
            default=[],
            metavar="GLOB",
            help="only fixtures whose name (area/name) matches, e.g. 'recap/*' (repeatable)",
        )
    coverage = actions.add_parser(
        "coverage", help="print, sentence by sentence, the fixtures that show each seed rule"
    )
    coverage.add_argument("--fixtures", help="the corpus folder (default: the shipped one)")
    coverage.add_argument("--case", action="append", default=[], help=argparse.SUPPRESS)
    check.add_argument("--producer", help="the producer command (default: the reference producer)")
    check.add_argument(
        "--recorded",
        action="store_true",
        help="replay Harn's recorded answers instead of the golden fixtures (299 recap "
        "sessions, also as stored events, and 400 health streams; --fixtures names their "
        "folder), judged as the recordings say: an integer and a float differ",
    )
    check.add_argument("--timeout", type=float, default=10.0, help="seconds per case (default 10)")
    check.add_argument("--format", choices=["text", "json"], default="text")
    check.add_argument(
        "--annotations",
        choices=["github", "none"],
        help="also print GitHub workflow annotations (default: github inside GitHub Actions)",
    )
    add_report_arguments(
        check,
        html_holds="every fixture's verdict, and for each "
        "failure its input, the expected and actual answers and their difference",
    )


def _corpus(args: argparse.Namespace) -> Corpus:
    root = Path(args.fixtures) if args.fixtures else default_fixtures_dir()
    if not root.is_dir():
        raise UsageError(
            [
                Finding(
                    "$.fixtures",
                    "fixtures_not_found",
                    f"no fixture folder at {root}",
                    "pass --fixtures DIR, a folder with one sub-folder of *.case.json per area",
                )
            ]
        )
    corpus = load_corpus(root)
    if args.case:
        chosen = tuple(
            c for c in corpus.cases if any(fnmatch.fnmatchcase(c.name, g) for g in args.case)
        )
        if not chosen:
            raise UsageError(
                [Finding("$.case", "no_fixture_selected", "--case matches no fixture", "")]
            )
        # A partial run judges only what it selected: orphans are a whole-corpus matter.
        corpus = Corpus(corpus.root, chosen, (), corpus.problems)
    return corpus


# -- check --------------------------------------------------------------------------------------

# After this many fixtures in a row time out, the rest are errored without being sent.
MAX_TIMEOUTS_IN_A_ROW = 3


def _answers(
    args: argparse.Namespace,
) -> tuple[Callable[[GoldenCase, int], CaseOutcome], Callable[[], None], dict[str, Any]]:
    """How to get an answer to a case, how to stop, and who answers."""
    require_producer_command(args.producer)
    if args.producer is None:
        info: dict[str, Any] = {
            "command": None,
            "implementation": {"name": "session-contracts reference"},
        }
        return (
            (lambda case, seq: reference_outcome(case.operation, case.input, seq)),
            (lambda: None),
            info,
        )
    if args.timeout <= 0:
        raise UsageError([Finding("$.timeout", "usage", "--timeout must be positive", "")])
    producer = ProducerProcess(args.producer, timeout=args.timeout)
    started = producer.start()
    operations = set(started.operations)
    contracts = set(started.contracts)

    timeouts_in_a_row = 0

    def answer(case: GoldenCase, seq: int) -> CaseOutcome:
        nonlocal timeouts_in_a_row
        undeclared = undeclared_reason(case, operations, contracts)
        if undeclared is not None:
            return CaseOutcome(seq, "skipped", reason=undeclared, error_code=NOT_DECLARED)
        if timeouts_in_a_row >= MAX_TIMEOUTS_IN_A_ROW:
            # A hung producer would cost --timeout on every remaining fixture.
            return CaseOutcome(
                seq,
                "errored",
                error_code="not_sent_after_timeouts",
                message=f"not sent: the producer timed out on {timeouts_in_a_row} fixtures "
                "in a row",
            )
        outcome = producer.run(seq, {"operation": case.operation, "input": case.input})
        timeouts_in_a_row = timeouts_in_a_row + 1 if outcome.error_code == "timeout" else 0
        return outcome

    info = {
        "command": args.producer,
        "implementation": dict(started.implementation),
        "contracts": sorted(contracts),
        "operations": sorted(operations),
    }
    return answer, producer.stop, info


def _orphan_results(corpus: Corpus) -> list[FixtureResult]:
    return [
        FixtureResult(
            path.relative_to(corpus.root).as_posix(),
            "failed",
            "expected_orphan",
            "an expected file that no case uses",
            "delete it, or run `session-contracts golden update`, which deletes orphans",
            file=path.relative_to(corpus.root).as_posix(),
        )
        for path in corpus.orphans
    ]


def _problem_results(corpus: Corpus) -> list[FixtureResult]:
    return [
        FixtureResult(
            problem.source,
            "failed",
            problem.code,
            f"{problem.path}: {problem.message}",
            problem.hint,
            file=problem.source,
        )
        for problem in corpus.problems
    ]


def _render_text(result: FixtureResult, out: TextIO) -> None:
    out.write(f"{result.status.upper()} {result.case} [{result.code}]: {result.message}\n")
    for difference in result.differences:
        out.write(f"  {difference.render()}\n")
    if result.hint:
        out.write(f"  hint: {result.hint}\n")


def _render_github(result: FixtureResult, root: Path, out: TextIO) -> None:
    lines = [result.message, *(d.render() for d in result.differences)]
    if result.hint:
        lines.append(f"hint: {result.hint}")
    level = "error" if result.status in ("failed", "errored") else "notice"
    path = root / result.file if result.file else None
    out.write(
        github_annotation(
            level,
            "\n".join(lines),
            title=f"golden {result.case}: {result.code}",
            file=str(path) if path else None,
        )
        + "\n"
    )


def _result_json(result: FixtureResult) -> dict[str, Any]:
    return {
        "case": result.case,
        "status": result.status,
        "code": result.code,
        "message": result.message,
        "hint": result.hint,
        "differences": [
            {"path": d.path, "expected": d.expected, "actual": d.actual} for d in result.differences
        ],
        "file": result.file,
        "seconds": round(result.seconds, 6),
    }


def junit_xml(results: Sequence[FixtureResult], *, seconds: float) -> bytes:
    """One suite per area (the case name's first segment), one case per fixture."""
    by_area: dict[str, list[FixtureResult]] = {}
    for result in results:
        by_area.setdefault(result.case.split("/", 1)[0], []).append(result)
    suites = [
        JunitSuite(f"golden.{area}", tuple(_junit_case(f"golden.{area}", r) for r in members))
        for area, members in sorted(by_area.items())
    ]
    return junit_suites_xml("session-contracts golden", suites, seconds=seconds)


_JUNIT_OUTCOMES: dict[str, Outcome] = {
    "failed": "failure",
    "errored": "error",
    "skipped": "skipped",
}


def _junit_case(classname: str, result: FixtureResult) -> JunitCase:
    text = "\n".join([result.message, *(d.render() for d in result.differences), result.hint])
    return JunitCase(
        classname,
        result.case,
        _JUNIT_OUTCOMES.get(result.status, "passed"),
        f"[{result.code}] {result.message}",
        text.strip(),
        seconds=result.seconds,
    )


def badge(counts: Counter[str]) -> bytes:
    """A shields.io endpoint badge: fixtures passed of those that ran."""
    ran = counts["passed"] + counts["failed"] + counts["errored"]
    ok = ran > 0 and counts["passed"] == ran
    return orjson.dumps(
        {
            "schemaVersion": 1,
            "label": "golden fixtures",
            "message": f"{counts['passed']}/{ran} passing" if ran else "none ran",
            "color": "brightgreen" if ok else "red",
        }
    )


def _recorded_corpus(
    args: argparse.Namespace,
) -> tuple[Corpus, Callable[[GoldenCase, CaseOutcome], FixtureResult]]:
    """Harn's recorded answers as a corpus (``--case`` selects as for fixtures), and the
    judge of the recordings' rule."""
    root = Path(args.fixtures) if args.fixtures else default_recorded_dir()
    pairs = [
        (case, origin)
        for case, origin in replay_cases(root)
        if not args.case or any(fnmatch.fnmatchcase(case.name, g) for g in args.case)
    ]
    if not pairs:
        raise UsageError([Finding("$.case", "no_fixture_selected", "--case matches no case", "")])
    origins = {case.name: origin for case, origin in pairs}
    return (
        Corpus(root, tuple(case for case, _origin in pairs), (), ()),
        lambda case, outcome: judge_recorded(case, origins[case.name], outcome),
    )


def _check(args: argparse.Namespace, out: TextIO) -> int:
    check_report_paths(
        {
            "--junit": args.junit,
            "--report-json": args.report_json,
            "--badge": args.badge,
            "--report-html": args.report_html,
        }
    )
    if args.recorded:
        corpus, judge_one = _recorded_corpus(args)
    else:
        corpus = _corpus(args)
        judge_one = functools.partial(judge, root=corpus.root)
    fmt = args.format
    annotate = annotations_wanted(args.annotations)
    started = time.perf_counter()
    answer, stop, producer = _answers(args)
    if args.producer is None:
        (sys.stderr if fmt == "json" else out).write(
            "golden check: no --producer given: replaying against the built-in reference producer\n"
        )
    results: list[FixtureResult] = _problem_results(corpus) + _orphan_results(corpus)
    try:
        for seq, case in enumerate(corpus.cases, start=1):
            results.append(judge_one(case, answer(case, seq)))
    finally:
        stop()
    seconds = time.perf_counter() - started
    counts = Counter(r.status for r in results)
    by_name = {case.name: case for case in corpus.cases}
    not_declared = Counter(
        fixture_contract(by_name[r.case]) for r in results if r.code == NOT_DECLARED
    )
    # Harn's answers where a seed sentence says otherwise: not judged, and no skip of the
    # producer's.
    not_judged = sum(r.code == SEED_DIFFERS for r in results)
    for result in results:
        if result.status == "passed" or result.code in (NOT_DECLARED, SEED_DIFFERS):
            continue
        if fmt == "json":
            out.write(orjson.dumps(_result_json(result)).decode() + "\n")
        else:
            _render_text(result, out)
        if annotate:
            _render_github(result, corpus.root, sys.stderr if fmt == "json" else out)
    # A skip the producer chose for an operation it declares is no evidence: not ok.
    producer_skipped = counts["skipped"] - sum(not_declared.values()) - not_judged
    ok = (
        counts["failed"] == 0
        and counts["errored"] == 0
        and producer_skipped == 0
        and counts["passed"] > 0
    )
    summary = {
        "fixtures": len(corpus.cases),
        **{status: counts[status] for status in _STATUSES},
        "not_declared": dict(sorted(not_declared.items())),
        "seed_differs": not_judged,
        "seconds": round(seconds, 3),
        "ok": ok,
    }
    if args.junit:
        Path(args.junit).write_bytes(junit_xml(results, seconds=seconds))
    report = {
        "producer": producer,
        "fixtures_dir": str(corpus.root),
        "summary": summary,
        "results": [_result_json(r) for r in results],
    }
    if args.report_json:
        Path(args.report_json).write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    if args.report_html:
        inputs = {case.name: case.input for case in corpus.cases}
        Path(args.report_html).write_bytes(golden_html(report, results, inputs))
    if args.badge:
        Path(args.badge).write_bytes(badge(counts))
    if counts["passed"] == 0:
        sys.stderr.write("no fixture passed: a run that passes zero fixtures never succeeds\n")
    what = "recorded case(s)" if args.recorded else "fixture(s)"
    line = (
        f"golden check ({producer['implementation'].get('name')}): {len(corpus.cases)} {what}: "
        + ", ".join(f"{counts[s]} {s}" for s in _STATUSES)
        + f" in {seconds:.1f} s"
    )
    if not_judged:
        line += f"; {not_judged} skipped where a seed sentence differs from Harn (not judged)"
    if not_declared:
        line += "; skipped as not declared by the producer: " + ", ".join(
            f"{contract} {n}" for contract, n in sorted(not_declared.items())
        )
    if producer_skipped:
        line += (
            f"; {producer_skipped} fixture(s) of declared operations answered skipped: "
            "no evidence, not ok"
        )
    out.write((orjson.dumps({"summary": summary}).decode() if fmt == "json" else line) + "\n")
    return EXIT_OK if ok else EXIT_FINDINGS


# -- update -------------------------------------------------------------------------------------


def _update(args: argparse.Namespace, out: TextIO) -> int:
    corpus = _corpus(args)
    if corpus.problems:
        for result in _problem_results(corpus):
            _render_text(result, out)
        out.write("golden update: fix the case files first; nothing was written\n")
        return EXIT_FINDINGS
    steps = list(plan_update(corpus, lambda case: reference_outcome(case.operation, case.input)))
    broken = [s for s in steps if isinstance(s, FixtureResult)]
    if broken:
        for result in broken:
            _render_text(result, out)
        raise ToolError(
            [
                Finding(
                    "$",
                    "reference_failed",
                    f"the reference producer could not answer {len(broken)} case(s)",
                    "nothing was written; fix the reference or the case",
                )
            ]
        )
    counts: Counter[str] = Counter()
    for step in steps:
        assert isinstance(step, Update)
        counts[step.action] += 1
        name = step.path.relative_to(corpus.root).as_posix()
        if step.action in ("added", "changed"):
            write_atomically(step.path, step.content)
            out.write(f"{step.action} {name}\n")
            for difference in step.differences:
                out.write(f"  {difference.render()}\n")
        elif step.action == "deleted":
            step.path.unlink()
            out.write(f"deleted {name} (no case uses it)\n")
    out.write(
        f"golden update: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['deleted']} deleted, {counts['unchanged']} unchanged\n"
    )
    return EXIT_OK


def _coverage(args: argparse.Namespace, out: TextIO) -> int:
    corpus = _corpus(args)
    path = corpus.root / "sentences.json"
    try:
        catalogue = loads_strict(path.read_bytes())
    except (OSError, InvalidDocument) as exc:
        raise UsageError(
            [
                Finding(
                    "$",
                    "sentences_unreadable",
                    f"cannot read {path}: {exc}",
                    "the corpus needs its sentences.json",
                )
            ]
        ) from None
    out.write(coverage_markdown(corpus, catalogue))
    return EXIT_OK


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.golden_action == "check":
        return _check(args, out)
    if args.golden_action == "coverage":
        return _coverage(args, out)
    return _update(args, out)
