"""Target: the command line starts at once. ``session-contracts validate`` of one small
document (a bundled example), started as a user starts it (``python -m session_contracts``,
a fresh process each run), costs at most 0.25 s of CPU (user + system, the median of
``repeats`` runs after one that warms the bytecode cache). ``--help``, ``doctypes`` and
``hash`` are measured beside it, for comparison; none of them loads the certify harness
(tests/cli/test_cli_imports.py).

    python -m bench.bench_cli [repeats]
"""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

if not __package__:  # run as a script: find the bench package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._timing import median_cpu_seconds

TARGET_SECONDS = 0.25
DOCTYPE = "session-feedback.usage"


def _command_cpu(args: list[str], repeats: int) -> float:
    def run() -> None:
        subprocess.run(
            [sys.executable, "-m", "session_contracts", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )

    run()  # the bytecode cache, written once
    return median_cpu_seconds(run, repeats)


def main(argv: list[str]) -> None:
    repeats = int(argv[0]) if argv else 9
    examples = resources.files("session_contracts.schemas").joinpath("examples")
    with resources.as_file(examples.joinpath(f"{DOCTYPE}.json")) as example:
        validate = _command_cpu(["validate", DOCTYPE, str(example)], repeats)
        others = {
            "--help": _command_cpu(["--help"], repeats),
            "doctypes": _command_cpu(["doctypes"], repeats),
            "hash": _command_cpu(["hash", str(example)], repeats),
        }
    print(
        f"- validate of one small document ({DOCTYPE}), a fresh process: median CPU "
        f"{validate:.3f} s of {repeats} runs (target <= {TARGET_SECONDS} s) "
        f"{'MET' if validate <= TARGET_SECONDS else 'MISSED'}"
    )
    print("- beside it: " + ", ".join(f"{name} {cpu:.3f} s" for name, cpu in others.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
