"""Targets: certifying the reference producer with default settings (< 60 s), and
the protocol's cost per case against calling the reference in-process (< 1 ms).

Throughput: certify at default settings against a null producer (bench/null_producer.py:
it skips every case at once, so what is measured is the harness: drawing, sending,
judging) and against the reference: cases per second, and CPU per case, the harness's and
the producer's (medians of several runs). Target: every contract certified against the
reference in at most 20 s of CPU in all, and its first check result within 5 s of the
command's start. Against the reference the figures are the command's, as a user runs it
(``session-contracts certify``: start-up, the judge and the producer it starts, children
included, from getrusage); against the null producer, certify in this process."""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed

from session_contracts.conformance.judge.cases import operations as strategies
from session_contracts.conformance.judge.certify import (
    DEFAULT_EXAMPLES,
    CheckResult,
    Progress,
    certify,
    explicit_trials,
)
from session_contracts.conformance.judge.checks import CHECKS, Check
from session_contracts.conformance.judge.runner import ProducerProcess
from session_contracts.conformance.reference.producer import HANDLERS

REFERENCE = [sys.executable, "-m", "session_contracts", "reference-producer"]
NULL = [sys.executable, "-m", "bench.null_producer"]
# Every contract certified against the reference, harness and producer together.
CPU_TARGET_S = 20.0
# The first check's result, from the command's start.
FIRST_RESULT_TARGET_S = 5.0
# A line the command prints for each finished check (a plain line without a terminal).
_FINISHED = re.compile(rb"^[a-z0-9.-]+: (passed|failed|flaky|errored|partial|skipped) ")


def _draw_cases(count: int) -> list[tuple[str, Any]]:
    drawn: list[tuple[str, Any]] = []

    @settings(
        max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @hypothesis_seed(7)
    @given(strategies.health_streams())
    def collect(case: Any) -> None:
        drawn.append(("health.reduce", case))

    collect()
    examples = strategies.bundled_examples()
    drawn += [("document.roundtrip", {"doctype": n, "document": d}) for n, d in examples.items()]
    return drawn


def bench_protocol_overhead(repeats: int) -> dict[str, Any]:
    cases = _draw_cases(200)
    in_process, protocol = [], []
    with ProducerProcess(REFERENCE, timeout=30) as producer:
        producer.start()
        for _ in range(repeats):
            started = time.perf_counter()
            for operation, case in cases:
                HANDLERS[operation](case)
            in_process.append(time.perf_counter() - started)
            started = time.perf_counter()
            for seq, (operation, case) in enumerate(cases):
                producer.run(seq, {"operation": operation, "input": case})
            protocol.append(time.perf_counter() - started)
    per_case_ms = (statistics.median(protocol) - statistics.median(in_process)) / len(cases) * 1000
    return {
        "cases": len(cases),
        "in_process_ms": statistics.median(in_process) * 1000,
        "protocol_ms": statistics.median(protocol) * 1000,
        "overhead_ms_per_case": per_case_ms,
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _FirstResult(Progress):
    def __init__(self, began: float) -> None:
        self.began, self.seconds = began, 0.0

    def check_finished(self, check: Check, result: CheckResult) -> None:
        self.seconds = self.seconds or time.perf_counter() - self.began


def bench_command(repeats: int) -> dict[str, float]:
    """``session-contracts certify`` at default settings against the reference, as a user
    runs it: medians of wall time, CPU in all (the command and the producer it starts),
    the seconds to its first check result, and cases."""
    walls, cpus, firsts, counts = [], [], [], []
    env = {key: value for key, value in os.environ.items() if key != "GITHUB_ACTIONS"}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            report = Path(folder) / "report.json"
            command = [sys.executable, "-m", "session_contracts", "certify"]
            command += ["--failures-dir", folder, "--report-json", str(report)]
            children = _children_cpu()
            began = time.perf_counter()
            first = 0.0
            with subprocess.Popen(command, stdout=subprocess.PIPE, env=env) as process:
                assert process.stdout is not None
                for line in process.stdout:
                    if not first and _FINISHED.match(line):
                        first = time.perf_counter() - began
            walls.append(time.perf_counter() - began)
            assert process.returncode == 0, process.returncode
            cpus.append(_children_cpu() - children)
            firsts.append(first)
            counts.append(sum(check["cases"] for check in json.loads(report.read_text())["checks"]))
    cases = statistics.median(counts)
    wall_s, cpu_s = statistics.median(walls), statistics.median(cpus)
    return {
        "cases": cases,
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "first_result_s": statistics.median(firsts),
        "cases_per_s": cases / wall_s,
        "ms_per_case": cpu_s / cases * 1000,
    }


def bench_throughput(command: list[str], repeats: int, *, certified: bool) -> dict[str, float]:
    """Certify at default settings against ``command``: medians of wall time, cases,
    the harness's CPU and the producer's (a finished child's, from getrusage)."""
    walls, harness, producer, counts, firsts = [], [], [], [], []
    explicit = 0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            children = _children_cpu()
            wall, cpu = time.perf_counter(), time.process_time()
            first = _FirstResult(wall)
            with ProducerProcess(command, timeout=60) as p:
                p.start()
                results = certify(
                    p,
                    checks=CHECKS,
                    examples=DEFAULT_EXAMPLES,
                    seed=0,
                    failures_dir=Path(folder),
                    progress=first,
                )
                info = p.info
            if certified:
                assert all(r.status == "passed" for r in results), results
            assert info is not None
            explicit = sum(len(explicit_trials(c, info.contracts, info.operations)) for c in CHECKS)
            walls.append(time.perf_counter() - wall)
            harness.append(time.process_time() - cpu)
            producer.append(_children_cpu() - children)
            counts.append(sum(result.cases for result in results))
            firsts.append(first.seconds)
    cases = statistics.median(counts)
    wall_s, harness_s, producer_s = (statistics.median(x) for x in (walls, harness, producer))
    return {
        "cases": cases,
        "wall_s": wall_s,
        "harness_cpu_s": harness_s,
        "producer_cpu_s": producer_s,
        "cases_per_s": cases / wall_s,
        "harness_ms_per_case": harness_s / cases * 1000,
        "producer_ms_per_case": producer_s / cases * 1000,
        "explicit": explicit,
        "first_result_s": statistics.median(firsts),
    }


def _throughput_line(name: str, run: dict[str, float]) -> str:
    return (
        f"- certify against {name}, default settings: {run['cases']:.0f} cases in "
        f"{run['wall_s']:.1f} s ({run['cases_per_s']:.0f} cases/s); CPU: harness "
        f"{run['harness_cpu_s']:.1f} s ({run['harness_ms_per_case']:.2f} ms/case), producer "
        f"{run['producer_cpu_s']:.1f} s ({run['producer_ms_per_case']:.2f} ms/case); first "
        f"check result after {run['first_result_s']:.1f} s"
    )


def main() -> None:
    overhead = bench_protocol_overhead(5)
    print(
        f"- protocol overhead over {overhead['cases']} cases: in-process "
        f"{overhead['in_process_ms']:.0f} ms, over the protocol {overhead['protocol_ms']:.0f} ms: "
        f"{overhead['overhead_ms_per_case']:.3f} ms per case (target < 1 ms) "
        f"{'MET' if overhead['overhead_ms_per_case'] < 1 else 'MISSED'}"
    )
    null = bench_throughput(NULL, 3, certified=False)
    print(_throughput_line("the null producer (the harness alone)", null))
    # Once: the split between harness and producer (the command below gives the medians).
    reference = bench_throughput(REFERENCE, 1, certified=True)
    print(_throughput_line("the reference", reference))
    command = bench_command(3)
    total = command["cpu_s"]
    print(
        f"- `session-contracts certify` at default settings against the reference: "
        f"{command['cases']:.0f} cases in {command['wall_s']:.1f} s "
        f"({command['cases_per_s']:.0f} cases/s), {total:.1f} s CPU in all, the command and "
        f"the producer ({command['ms_per_case']:.2f} ms/case; target <= {CPU_TARGET_S:.0f} s) "
        f"{'MET' if total <= CPU_TARGET_S else 'MISSED'}"
    )
    first = command["first_result_s"]
    print(
        f"- its first check result {first:.1f} s after the command started "
        f"(target <= {FIRST_RESULT_TARGET_S:.0f} s) "
        f"{'MET' if first <= FIRST_RESULT_TARGET_S else 'MISSED'}"
    )
    print(
        f"- certify the reference producer, default settings ({len(CHECKS)} checks x "
        f"{DEFAULT_EXAMPLES} random cases, {reference['explicit']:.0f} explicit cases): "
        f"median {command['wall_s']:.1f} s (target < 60 s) "
        f"{'MET' if command['wall_s'] < 60 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
