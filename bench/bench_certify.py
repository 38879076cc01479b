"""Targets: certifying the reference producer with default settings (< 60 s), and
the protocol's cost per case against calling the reference in-process (< 1 ms)."""

from __future__ import annotations

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


def bench_certify(repeats: int) -> dict[str, Any]:
    samples = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder, ProducerProcess(REFERENCE, timeout=30) as p:
            p.start()
            started = time.perf_counter()
            results = certify(
                p, checks=CHECKS, examples=DEFAULT_EXAMPLES, seed=0, failures_dir=Path(folder)
            )
            samples.append(time.perf_counter() - started)
            assert all(r.status == "passed" for r in results), results
            info = p.info
    assert info is not None
    explicit = sum(len(explicit_trials(c, info.contracts, info.operations)) for c in CHECKS)
    return {"seconds": statistics.median(samples), "checks": len(CHECKS), "explicit": explicit}


def main() -> None:
    overhead = bench_protocol_overhead(5)
    print(
        f"- protocol overhead over {overhead['cases']} cases: in-process "
        f"{overhead['in_process_ms']:.0f} ms, over the protocol {overhead['protocol_ms']:.0f} ms: "
        f"{overhead['overhead_ms_per_case']:.3f} ms per case (target < 1 ms) "
        f"{'MET' if overhead['overhead_ms_per_case'] < 1 else 'MISSED'}"
    )
    run = bench_certify(3)
    print(
        f"- certify the reference producer, default settings ({run['checks']} checks x "
        f"{DEFAULT_EXAMPLES} random cases, {run['explicit']} explicit cases): "
        f"median {run['seconds']:.1f} s (target < 60 s) "
        f"{'MET' if run['seconds'] < 60 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
