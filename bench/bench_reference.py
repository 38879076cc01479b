"""Target: the reference producer answers certify's largest recap case, recap.limit's
"a limit of 32769 over 32,770 events" (conformance/judge/cases/regressions.py), in at most
1 s of CPU: the median of ``repeats`` answers in one producer, after one answer that
warms it (first imports, compiled validators), as ``reference-producer`` answers a case:
read the command line, answer it (check the 32,770 events, write them to a fresh journal,
held in memory as for every healthy recap case, read 32,768 back through the recap service),
write the answer line. Wall time is
printed beside it; the answer is checked against the one the producer gave first.

    python -m bench.bench_reference [repeats]
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import orjson

from session_contracts.conformance.judge.cases.regressions import recap_limit_cases
from session_contracts.conformance.protocol import serve
from session_contracts.conformance.reference.producer import HANDLERS, HELLO_CONTRACTS

if not __package__:  # run as a script: find the bench package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._timing import median_cpu_seconds, median_seconds

TARGET_SECONDS = 1.0
EVENTS = 32_770


def _answer(command: bytes) -> bytes:
    """One case through the producer loop, from its command line to its answer line."""
    out = io.BytesIO()
    serve(
        HANDLERS,
        implementation={"name": "reference", "version": "bench", "language": "python"},
        contracts=list(HELLO_CONTRACTS),
        stdin=io.BytesIO(command),
        stdout=out,
    )
    return out.getvalue()


def main(argv: list[str]) -> None:
    repeats = int(argv[0]) if argv else 5
    (case,) = recap_limit_cases()
    assert len(case.input["events"]) == EVENTS, len(case.input["events"])
    command = orjson.dumps(
        {"cmd": "run", "seq": 1, "case": {"operation": case.operation, "input": case.input}}
    )
    first = _answer(command + b"\n")
    assert orjson.loads(first)["outcome"] == "result", first[:200]

    def answer() -> None:
        assert _answer(command + b"\n") == first

    cpu = median_cpu_seconds(answer, repeats)
    wall = median_seconds(answer, repeats)
    print(
        f"- recap.limit, limit 32769 over {EVENTS:,} events ({len(command) / 1e6:.1f} MB in, "
        f"{len(first) / 1e6:.1f} MB out), answered by the reference producer: median CPU "
        f"{cpu:.2f} s of {repeats} (target <= {TARGET_SECONDS:.0f} s) "
        f"{'MET' if cpu <= TARGET_SECONDS else 'MISSED'}; median wall {wall:.2f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
