"""``session-contracts certify``: options, progress, reports and the exit status."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TextIO

import orjson
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.table import Table

from session_contracts.ci_annotations import annotations_wanted
from session_contracts.conformance.judge.budget import (
    BUDGET_FACTOR,
    BUDGET_FLOOR_SECONDS,
    TimeBudget,
)
from session_contracts.conformance.judge.certify import (
    DEFAULT_EXAMPLES,
    FAULTS,
    CheckResult,
    Progress,
    Trial,
    blocking_results,
    certify,
    gating_levels,
    replay_trial,
    reproduce_command,
)
from session_contracts.conformance.judge.checks import CHECKS, Check, check_by_id
from session_contracts.conformance.judge.report import (
    BaselineVerdict,
    add_report_arguments,
    badge,
    check_report_paths,
    compare_baseline,
    github_annotations,
    junit_xml,
    read_baseline,
    report_body,
    report_json,
    total_evidence,
    write_baseline,
)
from session_contracts.conformance.judge.report_html import certify_html
from session_contracts.conformance.judge.runner import ProducerProcess, require_producer_command
from session_contracts.errors import EXIT_FINDINGS, EXIT_OK, Finding, InvalidDocument, UsageError
from session_contracts.input_files import read_regular_file
from session_contracts.jsontext.strict import MAX_DOCUMENT_BYTES, loads_strict
from session_contracts.redaction.scrub import scrub

if TYPE_CHECKING:
    from session_contracts.conformance.judge.certify_http import HttpTarget

__all__ = ["add_arguments", "hypothesis_cache_directory", "list_checks", "run"]

REFERENCE_COMMAND = [sys.executable, "-m", "session_contracts", "reference-producer"]
STATUS_STYLE = {
    "passed": "green",
    "failed": "red",
    "flaky": "red",
    "errored": "magenta",
    "partial": "yellow",
    "skipped": "yellow",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--producer", help="the producer command (default: the reference producer)")
    parser.add_argument(
        "--http",
        metavar="URL",
        help="certify a running HTTP recap adapter at this base URL instead (needs --journal)",
    )
    parser.add_argument(
        "--journal",
        metavar="PATH",
        help="with --http: the SQLite journal the adapter reads; certify appends each case to it",
    )
    parser.add_argument(
        "--contract", action="append", default=[], help="only checks of this contract (repeatable)"
    )
    parser.add_argument(
        "--check", action="append", default=[], help="only this check id (repeatable)"
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        help=f"random cases per check, after its explicit ones (default {DEFAULT_EXAMPLES})",
    )
    parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same cases")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds the producer gets for every case (default: each case's budget follows "
        f"the reference's time for it: the greater of {BUDGET_FLOOR_SECONDS:g} s and "
        f"{BUDGET_FACTOR:g} times that)",
    )
    parser.add_argument("--fail-on", choices=["required", "recommended"], default="required")
    parser.add_argument("--baseline", help="a file of expected failures, one check id a line")
    parser.add_argument(
        "--update-baseline", action="store_true", help="rewrite --baseline from this run's failures"
    )
    add_report_arguments(
        parser,
        html_holds="the summary, every check's evidence, and each failure's case "
        "(shrunk when it was drawn at random), both answers and their difference",
    )
    parser.add_argument(
        "--failures-dir",
        default=".session-contracts/failures",
        help="where failing cases are saved (default .session-contracts/failures)",
    )
    parser.add_argument("--replay", help="run one saved failing case again")
    parser.add_argument(
        "--annotations",
        choices=["github", "none"],
        default=None,
        help="print a GitHub workflow annotation per failed check "
        "(default: github inside GitHub Actions, else none)",
    )


def list_checks(out: TextIO, fmt: str) -> int:
    if fmt == "json":
        rows = [
            {
                "id": c.id,
                "level": c.level,
                "contract": c.contract,
                "operation": c.operation,
                "title": c.title,
                "seed": c.seed,
            }
            for c in CHECKS
        ]
        out.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    table = Table(title="conformance checks")
    for column in ("id", "level", "contract", "what it checks", "seed sentence"):
        table.add_column(column)
    for check in CHECKS:
        # Text is data, never markup: a seed sentence holds "[extensions]".
        cells = (check.id, check.level, check.contract, check.title, check.seed)
        table.add_row(*map(escape, cells))
    Console(file=out, soft_wrap=True).print(table)
    return EXIT_OK


def _selected(args: argparse.Namespace) -> list[Check]:
    unknown = [c for c in args.check if check_by_id(c) is None]
    if unknown:
        raise UsageError(
            [
                Finding(
                    "$",
                    "unknown_check",
                    f"no check {unknown[0]!r}",
                    "list them with `session-contracts checks`",
                )
            ]
        )
    checks = [c for c in CHECKS if not args.check or c.id in args.check]
    if args.contract:
        checks = [c for c in checks if c.contract in args.contract or c.contract == "all"]
    if not checks:
        raise UsageError([Finding("$", "no_checks_selected", "the options select no check", "")])
    return checks


def _check_options(args: argparse.Namespace) -> None:
    if args.examples < 1:
        raise UsageError([Finding("$.examples", "usage", "--examples must be at least 1", "")])
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError([Finding("$.timeout", "usage", "--timeout must be positive", "")])
    http_hint = (
        "start the adapter on a journal, e.g. `session-contracts serve --journal recap.sqlite "
        "--port 8765`, then pass --http http://127.0.0.1:8765 --journal recap.sqlite"
    )
    require_producer_command(args.producer)
    if args.http and args.producer:
        raise UsageError(
            [
                Finding(
                    "$.producer",
                    "http_with_producer",
                    "--producer and --http are mutually exclusive: certify a stdio producer "
                    "or a running HTTP adapter",
                    "drop one of them",
                )
            ]
        )
    if args.http and not args.journal:
        raise UsageError(
            [
                Finding(
                    "$.journal",
                    "journal_required",
                    "--http needs --journal PATH: the SQLite journal the adapter reads, "
                    "which certify seeds with each case's events",
                    http_hint,
                )
            ]
        )
    if args.journal and not args.http:
        raise UsageError(
            [
                Finding(
                    "$.journal",
                    "journal_without_http",
                    "--journal is only used with --http",
                    "drop --journal, or add --http URL: " + http_hint,
                )
            ]
        )


def _producer(args: argparse.Namespace) -> ProducerProcess:
    return ProducerProcess(
        args.producer or REFERENCE_COMMAND, timeout=args.timeout or BUDGET_FLOOR_SECONDS
    )


def _http_target(args: argparse.Namespace) -> HttpTarget:
    # Imported here: a stdio run needs none of the HTTP machinery.
    from session_contracts.conformance.judge.certify_http import HttpTarget

    return HttpTarget(
        args.http,
        args.journal,
        timeout=args.timeout or BUDGET_FLOOR_SECONDS,
        budget=TimeBudget(args.timeout),
    )


def _replay(args: argparse.Namespace, console: Console) -> int:
    saved: Any = None
    try:
        saved = loads_strict(read_regular_file(args.replay, MAX_DOCUMENT_BYTES + 1))
        problem, where = "", "$"
    except OSError as exc:
        problem, where = exc.strerror or type(exc).__name__, "$"
    except InvalidDocument as exc:
        finding = exc.findings[0]
        problem, where = f"{finding.message} [{finding.code}]", finding.path
    if not problem:
        # A saved case is {"check": str, "operation": str, "input": object}.
        shape = {"check": str, "operation": str, "input": dict}
        if not isinstance(saved, dict):
            problem = "it is not a JSON object"
        for member, kind in shape.items():
            if not problem and not isinstance(saved.get(member), kind):
                what = "an object" if kind is dict else "a string"
                problem, where = f"its member {member!r} is missing or not {what}", f"$.{member}"
    if problem:
        raise UsageError(
            [
                Finding(
                    where,
                    "replay_unreadable",
                    f"cannot replay {args.replay}: {problem}",
                    "pass a file written by a failing certify run (in --failures-dir)",
                )
            ]
        )
    check = check_by_id(saved["check"])
    trial = Trial(saved["operation"], saved["input"])
    if check is None:
        raise UsageError([Finding("$.check", "unknown_check", f"no check {saved['check']!r}", "")])
    with _opened(args) as target:
        result = target.replay(check, trial)
    if result.status != "passed":
        label = "FAILED"
    elif saved.get("status") == "flaky":
        # It failed once and passed when sent again: a pass now is no fix.
        label = (
            "NOT REPRODUCED this time (the saved case was flaky: a pass now does not show a fix)"
        )
    else:
        label = "FIXED"
    console.print(
        escape(f"{label}: {check.id} on {args.replay}: {result.status} {scrub(result.message)}")
    )
    return EXIT_OK if label == "FIXED" else EXIT_FINDINGS


class _ConsoleProgress(Progress):
    """On a terminal, a live line per running check (its id, cases judged of planned,
    elapsed time) under a bar of the checks; in a CI log (no terminal), one plain line per
    finished check with its duration. Every finished check's line stays."""

    def __init__(self, console: Console, bar: RichProgress, total: int) -> None:
        self.console, self.bar = console, bar
        self.overall = bar.add_task("checks", total=total, unit="checks")
        self.running: dict[str, TaskID] = {}

    def check_started(self, check: Check, planned: int) -> None:
        if self.console.is_terminal:
            self.running[check.id] = self.bar.add_task(
                escape(check.id), total=max(planned, 1), unit="cases"
            )

    def case_judged(self, check: Check) -> None:
        task = self.running.get(check.id)
        if task is not None:
            self.bar.advance(task)

    def check_finished(self, check: Check, result: CheckResult) -> None:
        task = self.running.pop(check.id, None)
        if task is not None:
            self.bar.remove_task(task)
        self.bar.advance(self.overall)
        evidence = result.evidence
        self.console.print(
            escape(
                f"{check.id}: {result.status} ({evidence.agreed}/{evidence.judged} agreed, "
                f"{evidence.skipped} skipped) in {result.seconds:.1f} s"
            )
        )


@contextmanager
def _progress(console: Console, total: int) -> Iterator[Progress]:
    with RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        yield _ConsoleProgress(console, bar, total)


# Hypothesis keeps its caches (Unicode tables, constants it harvests) in ./.hypothesis unless
# told otherwise; certify runs in users' checkouts, so they go to the user's cache folder.
HYPOTHESIS_CACHE_VARIABLE: Final = "HYPOTHESIS_STORAGE_DIRECTORY"


def hypothesis_cache_directory(environ: Mapping[str, str]) -> Path:
    """Where certify lets Hypothesis keep its caches: ``$HYPOTHESIS_STORAGE_DIRECTORY`` when
    set, else ``session-contracts/hypothesis`` in the user's cache folder."""
    chosen = environ.get(HYPOTHESIS_CACHE_VARIABLE)
    if chosen:
        return Path(chosen)
    caches = environ.get("XDG_CACHE_HOME") or environ.get("LOCALAPPDATA")
    base = Path(caches) if caches else Path.home() / ".cache"
    return base / "session-contracts" / "hypothesis"


def run(args: argparse.Namespace, out: TextIO) -> int:
    os.environ[HYPOTHESIS_CACHE_VARIABLE] = str(hypothesis_cache_directory(os.environ))
    console = Console(file=out, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        # A CI log has no width: 80 columns would fold every cell of the table.
        console = Console(file=out, highlight=False, soft_wrap=True, width=200)
    _check_options(args)
    if args.replay:
        return _replay(args, console)
    check_report_paths(
        {
            "--report-json": args.report_json,
            "--junit": args.junit,
            "--badge": args.badge,
            "--report-html": args.report_html,
        }
    )
    if args.update_baseline and not args.baseline:
        raise UsageError([Finding("$", "usage", "--update-baseline needs --baseline FILE", "")])
    checks = _selected(args)
    started = time.perf_counter()
    with _opened(args) as target:
        plan = (
            f"{len(checks)} check(s), explicit cases and {args.examples} random case(s) each, "
            f"seed {args.seed}"
        )
        console.print(escape(f"{target.heading}: {plan}{target.note}"))
        with _progress(console, len(checks)) as progress:
            results = target.certify(
                checks=checks,
                examples=args.examples,
                seed=args.seed,
                failures_dir=Path(args.failures_dir),
                progress=progress,
            )
        restarts = target.restarts()
    seconds = time.perf_counter() - started
    return _finish(args, console, target.info, results, seconds, restarts)


class _Certify(Protocol):
    """certify or certify_http, bound to its producer."""

    def __call__(
        self,
        *,
        checks: Sequence[Check],
        examples: int,
        seed: int,
        failures_dir: Path,
        progress: Progress,
    ) -> list[CheckResult]: ...


@dataclass(frozen=True, slots=True)
class _Target:
    """A producer under certification, started: what it says of itself, the words the
    opening line names it with (``heading``) and adds after the plan (``note``), certify
    and replay bound to it, and its restarts (stdio) or reconnects (HTTP) so far."""

    info: Any
    heading: str
    note: str
    certify: _Certify
    replay: Callable[[Check, Trial], CheckResult]
    restarts: Callable[[], int]


@contextmanager
def _opened(args: argparse.Namespace) -> Iterator[_Target]:
    """The producer ``args`` name (the HTTP recap adapter with --http), started."""
    if args.http:
        from session_contracts.conformance.judge.certify_http import certify_http, replay_http

        with _http_target(args) as target:
            info = target.check_reachable()
            yield _Target(
                info,
                f"certifying the HTTP recap adapter at {scrub(target.url)} "
                f"({info.implementation.get('version')}), journal {args.journal}",
                "",
                partial(certify_http, target),
                partial(replay_http, target),
                lambda: target.reconnects,
            )
        return
    with _producer(args) as producer:
        info = producer.start()
        yield _Target(
            info,
            f"certifying {info.implementation.get('name')} "
            f"{info.implementation.get('version')} "
            f"({info.implementation.get('language')})",
            "" if args.producer else "; no --producer given: the built-in reference",
            partial(certify, producer, budget=TimeBudget(args.timeout)),
            partial(replay_trial, producer, budget=TimeBudget(args.timeout)),
            lambda: producer.restarts,
        )


def _finish(
    args: argparse.Namespace,
    console: Console,
    info: Any,
    results: list[CheckResult],
    seconds: float,
    restarts: int,
) -> int:
    counts = {s: sum(r.status == s for r in results) for s in STATUS_STYLE}
    cases = sum(r.cases for r in results)
    evidence = total_evidence(results)
    ran = [r for r in results if r.status != "skipped"]
    looks_broken = bool(ran) and all(r.status in FAULTS for r in ran)
    if looks_broken:
        console.print(
            "[bold red]the producer failed or errored every check that ran: the harness looks "
            "broken[/] (a protocol mistake, a crash at start-up, or a wrong command is likelier "
            "than a wrong implementation); first error: "
            + escape(scrub(next(r.message for r in ran)))
        )
    table = Table(title="certification")
    widest = max((len(r.check.id) for r in results), default=5)
    for column in (
        "contract",
        "check",
        "level",
        "status",
        "agreed/judged",
        "skipped",
        "seconds",
        "detail",
    ):
        # A check id is never cut, in a terminal or in a CI log.
        table.add_column(
            column,
            overflow="fold",
            no_wrap=column == "check",
            min_width=widest if column == "check" else None,
        )
    reproduce: dict[str, str] = {}
    for result in sorted(results, key=lambda r: (r.check.contract, r.check.id)):
        if result.saved_to:
            reproduce[result.check.id] = reproduce_command(
                args.producer, result.saved_to, http=args.http, journal=args.journal
            )
        style = STATUS_STYLE[result.status]
        table.add_row(
            escape(result.check.contract),
            escape(result.check.id),
            result.check.level,
            f"[{style}]{result.status}[/]",
            f"{result.evidence.agreed}/{result.evidence.judged}",
            str(result.evidence.skipped),
            f"{result.seconds:.1f}",
            escape(scrub(result.message)[:160]),
        )
    console.print(table)
    for check_id, command in reproduce.items():
        console.print(escape(f"reproduce {check_id}: {command}"))

    verdicts: list[BaselineVerdict] = []
    if args.baseline and args.update_baseline:
        write_baseline(Path(args.baseline), results)
        console.print(escape(f"baseline written to {args.baseline}"))
    if args.baseline:
        try:
            entries = read_baseline(args.baseline)
        except OSError as exc:
            raise UsageError(
                [
                    Finding(
                        "$",
                        "baseline_unreadable",
                        f"cannot read {args.baseline}: {exc.strerror}",
                        "",
                    )
                ]
            ) from None
        verdicts = compare_baseline(results, entries)
        for verdict in verdicts:
            if verdict.state in ("unexpected_pass", "changed", "unknown"):
                console.print(
                    f"[red]baseline[/] {escape(verdict.check_id)}: {escape(verdict.detail)}"
                )

    gating = gating_levels(args.fail_on)
    if args.baseline:
        bad = [
            v
            for v in verdicts
            if v.state in ("unexpected_failure", "unexpected_pass", "changed", "unknown")
        ]
        bad = [
            v
            for v in bad
            if v.state != "unexpected_failure"
            or next(r for r in results if r.check.id == v.check_id).check.level in gating
        ]
        findings = bool(bad)
    else:
        findings = bool(blocking_results(results, args.fail_on))
    if annotations_wanted(args.annotations):
        # Raw lines, not through rich: GitHub reads them only verbatim, at a line's start.
        for line in github_annotations(results, reproduce=reproduce, baseline=verdicts):
            console.file.write(line + "\n")
    zero = evidence["agreed"] == 0
    if zero:
        console.print(
            "[red]no case was judged and agreed: a run without evidence never certifies[/]"
        )
    certified = not findings and not zero
    summary = {
        **counts,
        "cases": cases,
        "evidence": evidence,
        "seconds": round(seconds, 3),
        "producer_restarts": restarts,
        "certified": certified,
        "harness_looks_broken": looks_broken,
    }
    producer: dict[str, Any] = {
        "command": None if args.http else args.producer,
        "implementation": dict(info.implementation),
        "contracts": list(info.contracts),
        "operations": list(info.operations),
    }
    if args.http:
        producer["http"] = {"url": args.http, "journal": args.journal}
    settings = {
        "examples": args.examples,
        "seed": args.seed,
        "fail_on": args.fail_on,
        "timeout": args.timeout,
        "checks": [r.check.id for r in results],
    }
    body = report_body(
        results,
        producer=producer,
        settings=settings,
        summary=summary,
        reproduce=reproduce,
        baseline=verdicts,
    )
    if args.report_json:
        Path(args.report_json).write_bytes(report_json(body))
    if args.report_html:
        Path(args.report_html).write_bytes(certify_html(body, results))
    if args.junit:
        Path(args.junit).write_bytes(junit_xml(results, seconds=seconds))
    if args.badge:
        Path(args.badge).write_bytes(badge(results))
    console.print(
        f"{'CERTIFIED' if certified else 'NOT CERTIFIED'}: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; {evidence['agreed']} of {evidence['judged']} judged case(s) agreed, "
        f"{evidence['skipped']} skipped, {evidence['errored']} errored, in {seconds:.1f} s"
    )
    return EXIT_OK if certified else EXIT_FINDINGS
