"""Medians of repeated runs: wall time, or CPU time (user + system) on a shared machine."""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable
from typing import Any


def median_seconds(function: Callable[[], Any], repeats: int) -> float:
    """The median wall time of ``repeats`` runs of ``function``."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def cpu_seconds() -> float:
    """User + system CPU of this process and of its children that have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def median_cpu_seconds(function: Callable[[], Any], repeats: int) -> float:
    """The median CPU a run costs, a child process it starts and waits for included:
    unlike wall time, it does not grow while other work holds the cores."""
    samples = []
    for _ in range(repeats):
        started = cpu_seconds()
        function()
        samples.append(cpu_seconds() - started)
    return statistics.median(samples)


def run_from_command_line(run: Callable[[int], Any], argv: list[str]) -> int:
    """A benchmark module's ``python -m bench.NAME [repeats]``: ``run`` with the repeats
    its first argument gives (5 without one); the exit status."""
    run(int(argv[1]) if len(argv) > 1 else 5)
    return 0
