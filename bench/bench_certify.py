"""Targets: certifying the reference producer with default settings (< 60 s), and
the protocol's cost per case against calling the reference in-process (< 1 ms).

Throughput: certify at default settings against a null producer (bench/null_producer.py:
it skips every case at once, so what is measured is the harness: drawing, sending,
judging) and against the reference: cases per second, and CPU per case, the harness's and
the producer's (medians of several runs). Target: every contract certified against the
reference in at most 20 s of CPU in all."""

from __future__ import annotations

import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed

from session_contracts.conformance.judge.cases import operations as strategies
from session_contracts.conformance.judge.certify import DEFAULT_EXAMPLES, certify, explicit_trials
from session_contracts.conformance.judge.checks import CHECKS
from session_contracts.conformance.judge.runner import ProducerProcess
from session_contracts.conformance.reference.producer import HANDLERS

REFERENCE = [sys.executable, "-m", "session_contracts", "reference-producer"]
NULL = [sys.executable, "-m", "bench.null_producer"]
# Every contract certified against the reference, harness and producer together.
CPU_TARGET_S = 20.0


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


def bench_throughput(command: list[str], repeats: int, *, certified: bool) -> dict[str, float]:
    """Certify at default settings against ``command``: medians of wall time, cases,
    the harness's CPU and the producer's (a finished child's, from getrusage)."""
    walls, harness, producer, counts = [], [], [], []
    explicit = 0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            children = _children_cpu()
            wall, cpu = time.perf_counter(), time.process_time()
            with ProducerProcess(command, timeout=60) as p:
                p.start()
                results = certify(
                    p, checks=CHECKS, examples=DEFAULT_EXAMPLES, seed=0, failures_dir=Path(folder)
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
    }


def _throughput_line(name: str, run: dict[str, float]) -> str:
    return (
        f"- certify against {name}, default settings: {run['cases']:.0f} cases in "
        f"{run['wall_s']:.1f} s ({run['cases_per_s']:.0f} cases/s); CPU: harness "
        f"{run['harness_cpu_s']:.1f} s ({run['harness_ms_per_case']:.2f} ms/case), producer "
        f"{run['producer_cpu_s']:.1f} s ({run['producer_ms_per_case']:.2f} ms/case)"
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
    reference = bench_throughput(REFERENCE, 3, certified=True)
    print(_throughput_line("the reference", reference))
    total = reference["harness_cpu_s"] + reference["producer_cpu_s"]
    print(
        f"- every contract certified against the reference: {total:.1f} s CPU in all "
        f"(target <= {CPU_TARGET_S:.0f} s) {'MET' if total <= CPU_TARGET_S else 'MISSED'}"
    )
    print(
        f"- certify the reference producer, default settings ({len(CHECKS)} checks x "
        f"{DEFAULT_EXAMPLES} random cases, {reference['explicit']:.0f} explicit cases): "
        f"median {reference['wall_s']:.1f} s (target < 60 s) "
        f"{'MET' if reference['wall_s'] < 60 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
