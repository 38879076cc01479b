"""Run every benchmark module, each in its own process (`python -m bench [NAME...]`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODULES = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))


def main(argv: list[str]) -> int:
    chosen = [m for m in MODULES if not argv or any(a in m for a in argv)]
    failed = 0
    for module in chosen:
        print(f"== {module}", flush=True)
        failed += (
            subprocess.run([sys.executable, "-m", f"bench.{module}"], check=False).returncode != 0
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
