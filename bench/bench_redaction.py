"""Benchmark: redaction stays linear on adversarial text.

    python -m bench.bench_redaction [repeats]

Each adversarial text (a megabyte or so of what a backtracking pattern would choke on:
repeated prefixes of secrets, unclosed quotes, assignments without values) is redacted
under both policies, Harn's default and our extended one, whole and a quarter of it; the
ratio of the two medians (whole / quarter) is 4 for linear work and 16 for quadratic work.
Target: every ratio <= 8. Each text is redacted once untimed first: the first run
compiles the patterns and builds RE2's automata, a cost paid once per process that
would otherwise land in whichever row comes first. Times are CPU seconds (user +
system), not wall time: on a shared machine a 2 ms run is often preempted for a whole
4 ms time slice, which made a linear text read as 10 times its quarter. Prose of
the same length is timed beside it, for scale. The tests only check that each redaction
settles (redacting its output again changes nothing): a time belongs here, measured
against a peer in the same run.
"""

from __future__ import annotations

import sys

from bench._timing import median_cpu_seconds
from session_contracts.redaction.engine import RedactionPolicy, redact_text
from session_contracts.redaction.policy import default_policy, extended_policy

TARGET_RATIO = 8.0
ADVERSARIAL = {
    "unclosed quote after a key": 'password="' + "ab" * 500_000,
    "a million dashes": "-" * 1_000_000,
    "AKIA repeated": "AKIA" * 250_000,
    "assignments without secrets": "a=b " * 250_000,
    "PEM headers after a letter": "-----BEGIN PRIVATE KEY-----é" * 37_000,
    "key names without values": "password: " * 100_000,
    "bearer prefixes": "Bearer é" * 100_000,
    "token assignments": "token= " * 150_000,
}
PROSE_WORDS = "the session ended after four tool calls and one verification step "


def prose(length: int) -> str:
    return (PROSE_WORDS * (length // len(PROSE_WORDS) + 1))[:length]


def _median(text: str, policy: RedactionPolicy, repeats: int) -> float:
    redact_text(text, policy)  # untimed: compiling the patterns and RE2's first DFA states
    return median_cpu_seconds(lambda: redact_text(text, policy), repeats)


def main(argv: list[str]) -> int:
    repeats = int(argv[0]) if argv else 5
    worst = 0.0
    for policy_name, policy in (("default", default_policy()), ("extended", extended_policy())):
        for name, text in ADVERSARIAL.items():
            whole = _median(text, policy, repeats)
            quarter = _median(text[: len(text) // 4], policy, repeats)
            plain = _median(prose(len(text)), policy, repeats)
            ratio = whole / quarter
            worst = max(worst, ratio)
            print(
                f"{policy_name:8} {name:30} {len(text):>9,} chars: {whole * 1000:8.1f} ms "
                f"(a quarter {quarter * 1000:8.1f} ms, ratio {ratio:5.2f}; "
                f"prose {plain * 1000:8.1f} ms)"
            )
    verdict = "met" if worst <= TARGET_RATIO else "MISSED"
    print(
        f"worst whole/quarter ratio {worst:.2f} (linear: 4; target <= {TARGET_RATIO:g}): {verdict}"
    )
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
