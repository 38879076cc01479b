"""Harn's recorded answers: what Harn's own code answered for case inputs of the protocol.

``conformance/recorded/`` ships them (with Harn's licence and the recordings' README):
299 ``recap.project`` cases and 400 ``health.reduce`` streams.  The rule (that README,
"The rule") is not golden's: a producer's output must equal Harn's as a JSON value in
which an integer and a float differ and integers keep every digit, so answers are
compared by Harn's canonical bytes; a case tagged ``seed-differs`` (a seed sentence says
what Harn's code does not do) is recorded for information and not judged.
``golden check --recorded`` replays them against a producer (docs/checks.md);
tests/rules/test_harn_recorded.py replays them through the reference.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from session_contracts.conformance.judge.golden import (
    FixtureResult,
    GoldenCase,
    default_fixtures_dir,
    differences,
)
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.errors import Finding, InvalidDocument, UsageError
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

__all__ = [
    "RECORDINGS",
    "SEED_DIFFERS",
    "RecordedCase",
    "default_recorded_dir",
    "judge_recorded",
    "load_recorded",
    "replay_cases",
    "same_json",
]

# operation -> the recording of its cases
RECORDINGS: Mapping[str, str] = {
    "recap.project": "recap.jsonl.gz",
    "health.reduce": "health.jsonl.gz",
}
# The tag of a case where a seed sentence says what Harn's code does not do, and the code of
# its result: recorded for information, not judged.
SEED_DIFFERS_TAG = "seed-differs"
SEED_DIFFERS = "seed_differs"


def default_recorded_dir() -> Path:
    """The recordings that ship with the package, beside the golden fixtures."""
    return default_fixtures_dir().parent / "recorded"


@dataclass(frozen=True, slots=True)
class RecordedCase:
    """One recorded case (the recordings' README, one case a line)."""

    name: str
    operation: str
    input: Any = field(compare=False)
    harn_output: Any = field(compare=False)
    tags: tuple[str, ...] = ()
    # recap only: the query and the stored events exactly as Harn's code received them
    harn_query: Any = field(default=None, compare=False)
    harn_events: Any = field(default=None, compare=False)


def load_recorded(operation: str, root: Path | None = None) -> tuple[RecordedCase, ...]:
    """Every recorded case of ``operation``, in the recording's order."""
    path = (root or default_recorded_dir()) / RECORDINGS[operation]
    try:
        lines = gzip.decompress(path.read_bytes()).splitlines()
        # The stdlib reader keeps what the rule compares: 1.0 a float, every digit of an integer.
        values = [json.loads(line) for line in lines if line.strip()]
    except (OSError, EOFError, ValueError) as exc:
        raise UsageError(
            [
                Finding(
                    "$.fixtures",
                    "recordings_unreadable",
                    f"cannot read {path}: {exc}",
                    "pass --fixtures DIR, a folder holding recap.jsonl.gz and health.jsonl.gz "
                    "(the package ships them)",
                )
            ]
        ) from None
    return tuple(
        RecordedCase(
            name=value["name"],
            operation=value["operation"],
            input=value["input"],
            harn_output=value["harn_output"],
            tags=tuple(value.get("tags", ())),
            harn_query=value.get("harn_query"),
            harn_events=value.get("harn_events"),
        )
        for value in values
    )


def same_json(a: Any, b: Any) -> bool:
    """Equal JSON values where an integer and a float differ (``1`` is not ``1.0``) and
    member order does not matter: Harn's canonical form keeps every number's kind."""
    try:
        return harn_canonical_bytes(a) == harn_canonical_bytes(b)
    except InvalidDocument:
        return False


def replay_cases(root: Path | None = None) -> Iterator[tuple[GoldenCase, RecordedCase]]:
    """Each case to send, named ``AREA/NAME``, with the recorded case it comes from.

    ``health/NAME`` sends a stream's input; ``recap/NAME`` sends the session as journal
    events (``input``), and ``recap-stored/NAME`` the same session as Harn's store held it
    (``storedEvents``: ``harn_events`` with ``harn_query``, docs/recap.md section 11):
    Harn's code answered both with ``harn_output``."""
    folder = root or default_recorded_dir()
    for operation, file_name in RECORDINGS.items():
        area = operation.split(".", 1)[0]
        path = folder / file_name
        for recorded in load_recorded(operation, folder):
            yield _case(f"{area}/{recorded.name}", path, recorded, recorded.input), recorded
            if recorded.harn_events is not None:
                stored = {"storedEvents": recorded.harn_events, "query": recorded.harn_query}
                yield _case(f"{area}-stored/{recorded.name}", path, recorded, stored), recorded


def _case(name: str, path: Path, recorded: RecordedCase, case_input: Any) -> GoldenCase:
    return GoldenCase(
        name=name,
        path=path,
        description=f"Harn's recorded answer to {recorded.name}",
        covers=(),
        tags=recorded.tags,
        operation=recorded.operation,
        input=case_input,
    )


def judge_recorded(case: GoldenCase, recorded: RecordedCase, outcome: CaseOutcome) -> FixtureResult:
    """A producer's answer to a recorded case, judged by the recordings' rule."""
    file = case.path.name
    if outcome.outcome in ("errored", "skipped"):
        status = outcome.outcome
        code = outcome.error_code or ("producer_error" if status == "errored" else "skipped")
        return FixtureResult(
            case.name,
            status,
            code,
            outcome.message or outcome.reason,
            file=file,
            seconds=outcome.seconds,
        )
    if outcome.outcome == "result" and same_json(outcome.output, recorded.harn_output):
        return FixtureResult(case.name, "passed", file=file, seconds=outcome.seconds)
    if SEED_DIFFERS_TAG in recorded.tags:
        return FixtureResult(
            case.name,
            "skipped",
            SEED_DIFFERS,
            "Harn's code answered otherwise than a seed sentence says (a transcript reset): "
            "recorded for information, not judged",
            file=file,
            seconds=outcome.seconds,
        )
    expected = {"outcome": "result", "output": recorded.harn_output}
    if outcome.outcome != "result":
        rejection = outcome.rejection or {}
        return FixtureResult(
            case.name,
            "failed",
            "wrong_outcome",
            f"rejected the input ({rejection.get('code')} at {rejection.get('path')}); "
            "Harn's code answered it with a result",
            _HINT,
            file=file,
            seconds=outcome.seconds,
            expected=expected,
            actual={"outcome": outcome.outcome, "rejection": rejection},
        )
    return FixtureResult(
        case.name,
        "failed",
        "answer_differs",
        "the output differs from Harn's recorded answer (an integer and a float differ)",
        _HINT,
        tuple(differences(recorded.harn_output, outcome.output, equal=same_json)),
        file=file,
        seconds=outcome.seconds,
        expected=expected,
        actual={"outcome": "result", "output": outcome.output},
    )


_HINT = (
    "the recordings' README (conformance/recorded/README.md) says how each member was "
    "computed; docs/recap.md and docs/health.md specify the rules"
)
