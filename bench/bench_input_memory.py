"""Targets: peak RSS of the FILE commands on large single-line documents.

    python -m bench.bench_input_memory

Each command runs in a fresh process (peak RSS from ``os.wait4``, the child's
own ``ru_maxrss``, which on Linux starts from this process's peak at the exec:
so this process stays small). A 30 MB document is over the default limit (16 MiB): it is
refused after reading 16 MiB + 1 byte, so the peak stays near the interpreter's
baseline (target under 150 MiB; on main before the limit it was about 0.9 GB for
``validate``, ``hash`` and ``check`` and 1.4 GB for ``roundtrip``). A document of
just under 16 MiB of tiny objects is the worst accepted case: reported, with a
target of under 1 GiB (Python objects are about 40 times the JSON of ``{"a":1}``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REFUSED_TARGET_MIB = 150
ACCEPTED_TARGET_MIB = 1024


def _tiny_objects(path: Path, size: int) -> None:
    head, tail = b'{"sessionId":"s","x":[', b"]}"
    count = (size - len(head) - len(tail)) // 8
    chunk = b'{"a":1},' * 65536  # written a chunk at a time: this process stays small
    with path.open("wb") as handle:
        handle.write(head)
        for _ in range((count - 1) // 65536):
            handle.write(chunk)
        handle.write(b'{"a":1},' * ((count - 1) % 65536) + b'{"a":1}' + tail)


def _peak_mib(args: list[str]) -> tuple[float, int, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "session_contracts", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, process.returncode, time.perf_counter() - started


def main() -> int:
    missed = 0
    with tempfile.TemporaryDirectory(prefix="bench-input-memory-") as folder:
        big, limit = Path(folder) / "30mb.json", Path(folder) / "16mib.json"
        _tiny_objects(big, 30_000_000)
        _tiny_objects(limit, 16 * 1024 * 1024 - 16)
        runs = [
            (big, ["validate", "session-recap.query"], REFUSED_TARGET_MIB),
            (big, ["roundtrip", "session-recap.query"], REFUSED_TARGET_MIB),
            (big, ["hash"], REFUSED_TARGET_MIB),
            (big, ["check"], REFUSED_TARGET_MIB),
            (limit, ["hash"], ACCEPTED_TARGET_MIB),
        ]
        for path, command, target in runs:
            peak, status, seconds = _peak_mib([*command, str(path)])
            verdict = "MET" if peak < target else "MISSED"
            missed += verdict == "MISSED"
            print(
                f"{' '.join(command)} {path.name} ({path.stat().st_size / 1e6:.1f} MB): "
                f"peak RSS {peak:,.0f} MiB, exit {status}, {seconds:.1f} s "
                f"(target < {target} MiB) {verdict}",
                flush=True,
            )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
