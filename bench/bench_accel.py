"""What the C census earns: what a user waits for, with it and without it.

    python -m bench.bench_accel [--rounds N] [--lines N] [--examples N] [--only NAME...]
    nox -s bench -- accel

Each measurement runs in a fresh process in each configuration: with the C module
``session_contracts_c._speedups`` and without it (``SESSION_CONTRACTS_PURE_PYTHON=1``,
read by ``session_contracts.accel``: the state of an install built without a C compiler).
The configurations run back to back, their order turning from round to round (the
machine is shared: a slow spell then falls on both); the figures are medians over the
rounds, wall time and CPU time (user + system, the process and what it waited for; CPU
decides on a loaded machine, docs/hashing.md section 5):

* **recap (CLI)**: ``session-contracts recap --journal J --session S --limit 32768``
  over a SQLite journal of the journal benchmark's 32,768-event session
  (``bench_journal.make_session``), the envelope written to a file: the whole
  process, start-up and imports included;
* **recap (served)**: the same recap in a process that already answered it once
  (``RecapService.answer`` and ``envelope_bytes``, as ``serve`` and ``acp`` answer):
  the second answer;
* **check**: ``session-contracts check ARCHIVE`` over ``--lines`` (100,000) captured
  recap envelopes in JSON Lines (``bench_check.recap_envelopes``);
* **certify**: ``session-contracts certify --contract session-recap --seed 0`` at
  defaults (every explicit case of the recap's checks and 25 random cases each; the
  reference producer it starts inherits the configuration's environment), with both
  module and without it (a minute and more a run).

A ratio is the median of the per-round ratios (the time without over the time with);
above 1 the module makes it faster.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: find the bench package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PURE_PYTHON_VARIABLE = "SESSION_CONTRACTS_PURE_PYTHON"
CLI = [sys.executable, "-m", "session_contracts"]
LINES = 100_000
ROUNDS = 5
# name -> whether SESSION_CONTRACTS_PURE_PYTHON is set
CONFIGURATIONS = {"with C": False, "without": True}


def _prepare(folder: Path, lines: int) -> tuple[Path, Path]:
    """The 32,768-event journal and the archive of ``lines`` captured envelopes."""
    from bench.bench_check import _cycled, recap_envelopes, write_lines
    from bench.bench_journal import make_session
    from session_contracts.journal import SqliteJournal

    journal = folder / "events.sqlite"
    with SqliteJournal.open(journal, create=True) as writer:
        writer.append(make_session())
    archive = folder / "captured.jsonl"
    write_lines(archive, _cycled(recap_envelopes(), lines))
    return journal, archive


def _served_recap_seconds(journal: Path) -> tuple[float, float]:
    """In this process: answer the recap once, then time a second answer."""
    from bench.bench_journal import EVENTS, SESSION_ID
    from session_contracts.recap import RecapService, envelope_bytes, query_echo

    query = query_echo({"sessionId": SESSION_ID, "limit": EVENTS})
    with RecapService(journal) as service:
        envelope_bytes(service.answer(query).envelope)
        started, cpu = time.perf_counter(), time.process_time()
        outcome = service.answer(query)
        envelope_bytes(outcome.envelope)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    if outcome.status != "available":
        raise AssertionError(f"the recap service answered {outcome.status}")
    return seconds, cpu


def _environment(configuration: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != PURE_PYTHON_VARIABLE}
    if CONFIGURATIONS[configuration]:
        environment[PURE_PYTHON_VARIABLE] = "1"
    return environment


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process(command: list[str], configuration: str, output: Path) -> tuple[float, float]:
    """Wall and CPU seconds of the whole process."""
    cpu = _children_cpu()
    started = time.perf_counter()
    with output.open("wb") as sink:
        done = subprocess.run(
            command,
            env=_environment(configuration),
            stdout=sink,
            stderr=subprocess.PIPE,
            check=False,
        )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise AssertionError(f"exit {done.returncode} in {configuration}: {done.stderr[-2000:]!r}")
    return seconds, _children_cpu() - cpu


def _served(journal: Path, configuration: str) -> tuple[float, float]:
    """A measurement timed inside a fresh process (it prints its seconds)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_accel", "--served-recap", str(journal)],
        env=_environment(configuration),
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = done.stdout.split()[-2:]
    return float(wall), float(cpu)


def _check_switches() -> None:
    for configuration, pure in CONFIGURATIONS.items():
        done = subprocess.run(
            [sys.executable, "-c", "from session_contracts import accel; print(accel.speedups)"],
            env=_environment(configuration),
            capture_output=True,
            text=True,
            check=True,
        )
        if (done.stdout.strip() == "None") != pure:
            raise SystemExit(f"{configuration}: the C census is not built, or not switched")


Measure = Callable[[str], tuple[float, float]]


def _measurements(
    journal: Path, archive: Path, examples: int | None, output: Path
) -> dict[str, Measure]:
    from bench.bench_journal import EVENTS, SESSION_ID

    recap = [*CLI, "recap", "--journal", str(journal), "--session", SESSION_ID]
    certify = [*CLI, "certify", "--contract", "session-recap"]
    if examples is not None:
        certify += ["--examples", str(examples)]
    return {
        "recap (CLI)": lambda c: _process([*recap, "--limit", str(EVENTS)], c, output),
        "recap (served)": lambda c: _served(journal, c),
        "check": lambda c: _process([*CLI, "check", str(archive)], c, output),
        "certify": lambda c: _process([*certify, "--seed", "0"], c, output),
    }


def run(
    rounds: int, lines: int, examples: int | None, only: list[str]
) -> dict[str, dict[str, float]]:
    _check_switches()
    Samples = dict[str, list[tuple[float, float]]]
    samples: dict[str, Samples] = {}
    with tempfile.TemporaryDirectory(prefix="bench-accel-") as name:
        folder = Path(name)
        started = time.perf_counter()
        journal, archive = _prepare(folder, lines)
        print(
            f"inputs: journal of 32,768 events ({journal.stat().st_size / 1e6:.0f} MB), "
            f"archive of {lines:,} envelopes ({archive.stat().st_size / 1e6:.0f} MB), "
            f"made in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        measurements = _measurements(journal, archive, examples, folder / "output")
        chosen = {k: v for k, v in measurements.items() if not only or any(o in k for o in only)}
        for label in chosen:
            samples[label] = {c: [] for c in CONFIGURATIONS}
        for number in range(rounds):
            for label, measure in chosen.items():
                order = list(CONFIGURATIONS)
                turn = number % len(order)
                for configuration in order[turn:] + order[:turn]:
                    samples[label][configuration].append(measure(configuration))
                line = ", ".join(f"{c} {s[-1][0]:.2f} s" for c, s in samples[label].items())
                print(f"  round {number + 1}/{rounds} {label}: {line}", flush=True)
    return _report(samples, rounds)


def _report(samples: dict[str, dict[str, list[tuple[float, float]]]], rounds: int) -> Any:
    figures: dict[str, dict[str, float]] = {}
    print(f"\nthe C census: medians of {rounds} rounds, wall (CPU) seconds; ratio to 'with C'")
    for label, by_configuration in samples.items():
        base = by_configuration["with C"]
        cells = []
        for configuration, runs in by_configuration.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            ratio = statistics.median(r[0] / b[0] for r, b in zip(runs, base, strict=True))
            cpu_ratio = statistics.median(r[1] / b[1] for r, b in zip(runs, base, strict=True))
            figures[f"{label}: {configuration}"] = {
                "wall_s": wall,
                "cpu_s": cpu,
                "ratio": ratio,
                "cpu_ratio": cpu_ratio,
            }
            cell = f"{configuration} {wall:.2f} ({cpu:.2f})"
            if configuration != "with C":
                cell += f" {ratio:.2f}x ({cpu_ratio:.2f}x)"
            cells.append(cell)
        print(f"  {label:<15} " + " | ".join(cells))
    return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_accel")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--lines", type=int, default=LINES)
    parser.add_argument("--examples", type=int, default=None, help="certify's (its default)")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--served-recap", metavar="JOURNAL", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.served_recap:
        print("{:.6f} {:.6f}".format(*_served_recap_seconds(Path(options.served_recap))))
        return 0
    run(options.rounds, options.lines, options.examples, options.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
