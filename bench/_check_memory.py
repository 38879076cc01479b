"""Peak RSS of one check run, in a process of its own (bench_check.py calls it).

    python bench/_check_memory.py FILE

Warms up on one bundled example first (imports, compiled validators, the secret
screen) and takes its peak RSS so far as the baseline; then checks FILE, streaming,
counting statistics as the command does, and prints JSON: baseline_kb, peak_kb (VmHWM,
or ru_maxrss where there is no /proc), documents, seconds, how many unknown members
(each named as never before) the stream had and how many names the statistics kept.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from session_contracts.conformance.judge.check_cli import CheckStats, check_documents

EXAMPLE = (
    Path(__file__).resolve().parents[1] / "schemas" / "examples" / "session-recap.envelope.json"
)


def _status_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status (Linux), in kB.

    ``VmHWM`` is the peak resident set size of this program.  getrusage's
    ru_maxrss is not used where /proc is there: Linux carries the parent's peak
    over an exec, so a child forked from a big parent would report the parent's.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(path: str) -> int:
    list(check_documents([str(EXAMPLE)]))
    baseline = _status_kb("VmHWM")
    stats = CheckStats()
    unknown = 0
    started = time.perf_counter()
    for _, doctype, findings in check_documents([path]):
        stats.add(doctype, findings)
        # The bench names each unknown member as never before: one distinct name each.
        unknown += sum(f.code == "unknown_field" for f in findings)
    seconds = time.perf_counter() - started
    peak = _status_kb("VmHWM")
    report = {
        "baseline_kb": baseline,
        "peak_kb": peak,
        "documents": stats.read,
        "with_errors": stats.with_errors,
        "seconds": seconds,
        "unknown_names": unknown,
        "unknown_kept": len(stats.unknown_fields),
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
