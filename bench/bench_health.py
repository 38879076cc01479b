"""Benchmark: the reference session-health reducer over a 10,000-iteration session.

    python -m bench.bench_health [repeats]

Times, as the median of ``repeats`` runs: ``reduce`` (the whole stream checked
against ``health-observation.stream``, then folded), and the fold alone
(``step`` over the observations, no contract check).  Prints the facts
emitted, the median milliseconds and facts per second.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from bench._timing import median_seconds, run_from_command_line
from session_contracts.health import initial_state, reduce, step

ITERATIONS = 10_000
SESSION_ID = "sess-0199a2b4c6d8e0f1"
_STOPS = ("natural", "natural", "natural", "policy_budget", "user_cancelled")


def make_session(iterations: int = ITERATIONS, seed: int = 2026) -> list[dict[str, Any]]:
    """A realistic session's observations: ``iterations`` model iterations.

    History is loaded once; prompt turns of 2-6 iterations each end with the
    loop's terminal outcome, and now and then a pending call is abandoned
    during closeout.  Each iteration completes 1-4 tool calls (one in 20 first
    seen as a streaming parse candidate; commands report an exit receipt, a
    few without a code; edits apply mutations; every third call or so carries
    a declared verification, with a diagnostic measurement most of the time),
    and finishes with its wall time and prose count (a few unmeasured).  A
    transcript reset every ~2,000 iterations.
    """
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [{"kind": "historical_messages_loaded", "count": 240}]
    call_number = 0
    turn_left = rng.randint(2, 6)
    for iteration in range(iterations):
        out.append({"kind": "iteration_started", "iteration": iteration})
        for _ in range(rng.randint(1, 4)):
            call_number += 1
            call_id = f"call-{call_number}"
            if rng.random() < 0.05:
                out.append(_completed(call_id, True, candidate=True))
            success = rng.random() < 0.9
            completed = _completed(call_id, success, candidate=False)
            tool = rng.random()
            if tool < 0.4:
                code = None if rng.random() < 0.05 else rng.choice((0, 0, 0, 1, 2))
                completed["telemetry"] = {
                    "command_id": f"cmd-{call_number}",
                    "command_exit_code": code,
                    "verification": None,
                }
                if rng.random() < 0.7:
                    measured = {
                        "set_fingerprint": f"sha256:{rng.randrange(16):02x}",
                        "count": rng.randint(0, 12),
                    }
                    completed["telemetry"]["verification"] = {
                        "diagnostics": measured if rng.random() < 0.85 else None
                    }
            elif tool < 0.7 and success:
                completed["mutation_applied"] = True
            out.append(completed)
        wall = None if rng.random() < 0.02 else rng.randint(800, 45_000)
        prose = None if rng.random() < 0.02 else rng.randint(0, 1500)
        out.append({"kind": "iteration_finished", "wall_time_ms": wall, "prose_characters": prose})
        turn_left -= 1
        if turn_left == 0:
            out.append({"kind": "terminal_outcome", "stop_class": rng.choice(_STOPS)})
            if rng.random() < 0.1:
                call_number += 1
                out.append({"kind": "tool_call_abandoned", "call_id": f"call-{call_number}"})
            turn_left = rng.randint(2, 6)
        if iteration and iteration % 2_000 == 0:
            out.append({"kind": "transcript_reset"})
    return out


def _completed(call_id: str, success: bool, *, candidate: bool) -> dict[str, Any]:
    return {
        "kind": "tool_call_completed",
        "call_id": call_id,
        "success": success,
        "streaming_parse_candidate": candidate,
    }


def _fold(observations: list[dict[str, Any]]) -> int:
    state, facts = initial_state(SESSION_ID), 0
    for observation in observations:
        state, emitted = step(state, observation)
        facts += len(emitted)
    return facts


def run(repeats: int = 5) -> dict[str, float]:
    """Time reduce and the bare fold; print and return the figures."""
    observations = make_session()
    facts = len(reduce(SESSION_ID, observations))
    if _fold(observations) != facts:
        raise AssertionError("the fold and reduce emitted different facts")
    reduce_s = median_seconds(lambda: reduce(SESSION_ID, observations), repeats)
    fold_s = median_seconds(lambda: _fold(observations), repeats)
    figures = {
        "iterations": float(ITERATIONS),
        "observations": float(len(observations)),
        "facts": float(facts),
        "reduce_ms": reduce_s * 1000,
        "reduce_facts_per_s": facts / reduce_s,
        "fold_ms": fold_s * 1000,
        "fold_facts_per_s": facts / fold_s,
    }
    print(
        f"session health benchmark: {ITERATIONS:,} iterations, {len(observations):,} "
        f"observations, {facts:,} facts, median of {repeats} runs"
    )
    print(
        f"  reduce (check + fold)   {figures['reduce_ms']:9.1f} ms  "
        f"{figures['reduce_facts_per_s']:12,.0f} facts/s  "
        f"({reduce_s / len(observations) * 1e6:.1f} us/observation)"
    )
    print(
        f"  fold only (step)        {figures['fold_ms']:9.1f} ms  "
        f"{figures['fold_facts_per_s']:12,.0f} facts/s  "
        f"({fold_s / len(observations) * 1e6:.1f} us/observation)"
    )
    return figures


if __name__ == "__main__":
    raise SystemExit(run_from_command_line(run, sys.argv))
