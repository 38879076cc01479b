"""Benchmark: canonical bytes + SHA-256, both forms, on every document shape.

    python -m bench.bench_canonical [repeats]

Per document, four methods, each canonical bytes + SHA-256:

- ``jcs``: ours, ``session_contracts.jsontext.canonical.content_hash`` (RFC 8785);
- ``rfc8785``: the ``rfc8785`` package (the exact reference);
- ``floor``: ``orjson.dumps(OPT_SORT_KEYS)`` (the speed floor; not JCS in general);
- ``harn``: ours, ``session_contracts.jsontext.harn_canonical.harn_sha256`` (Harn's form).

After an untimed warm-up, each round runs the four once, one after the other
(who goes first rotates), with the garbage collector paused as ``timeit`` does;
``repeats`` such rounds, then 10 more of the three fast methods.  Times are
medians; each ratio is the median of the ratios within one round, so a busy
spell of the machine slows both sides of it alike.
Targets, on every document: rfc8785 / jcs >= 10, jcs / floor <= 2,
harn / floor <= 1.3.  Every document's bytes are checked first: ``jcs`` against
``rfc8785`` and ``harn`` against the exact encoder of Harn's form.

Documents: a session journal of integers and text (32,768 events); the same with
a float in every event (one in seven integral); health facts (a float in every
rate); the journal with keys whose UTF-16 and code point orders differ (U+FB33,
U+1F602, U+E000) in one object and in one event in 64; dense small values; and
one document per contract made of its own examples (``schemas/examples``).
"""

from __future__ import annotations

import gc
import hashlib
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import rfc8785

from session_contracts.jsontext.canonical import canonical_bytes, content_hash
from session_contracts.jsontext.harn_canonical import exact_bytes as harn_exact_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes, harn_sha256

EVENTS = 32_768
MIN_RATIO_VS_RFC8785 = 10.0
MAX_RATIO_VS_FLOOR = 2.0
MAX_HARN_RATIO_VS_FLOOR = 1.3
EXAMPLES = Path(__file__).resolve().parents[1] / "schemas" / "examples"
EXAMPLE_DOCUMENT_BYTES = 3_000_000

_KINDS = ("turn.started", "message.user", "message.assistant", "tool.call", "tool.result")
_WORDS = (
    "session", "recap", "café", "naïve", "Größe", "日本語", "résumé", "tool",
    "call", "🙂", "ação", "Ελληνικά", "snapshot", "cursor", "über", "emoji 😂",
    "hash", "канон", "turn", "line\nbreak", "tab\there", 'quote "q"', "path/to/file.py",
)  # fmt: skip


def build_document(events: int = EVENTS, seed: int = 8785) -> dict[str, Any]:
    """A session journal: ASCII keys, unicode-ish text, integers, no floats (~12.5 MB)."""
    rng = random.Random(seed)
    session = "sess-" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    out = []
    for n in range(events):
        out.append(
            {
                "id": n,
                "kind": rng.choice(_KINDS),
                "sessionId": session,
                "payload": {
                    "text": " ".join(rng.choices(_WORDS, k=rng.randint(16, 40))),
                    "n": [rng.randint(-(2**53) + 1, 2**53 - 1) for _ in range(rng.randint(1, 4))],
                },
            }
        )
    return {"schemaVersion": "session-journal/v1", "sessionId": session, "events": out}


def build_dense_document(events: int = EVENTS, seed: int = 8785) -> dict[str, Any]:
    """The same count of events, each a bag of 23 small values: the census's worst case."""
    rng = random.Random(seed)
    return {
        "events": [
            {
                "id": n,
                "flags": [rng.random() < 0.5 for _ in range(8)],
                "counts": [rng.randint(0, 999) for _ in range(8)],
                "tags": [rng.choice("abcd") for _ in range(6)],
            }
            for n in range(events)
        ]
    }


def build_float_document(events: int = EVENTS) -> dict[str, Any]:
    """The journal with a float in every event (one in seven integral: ``0.0``, ``1.0``)."""
    document = build_document(events)
    for event in document["events"]:
        event["payload"]["score"] = event["id"] / 7
    return document


def _rate(rng: random.Random) -> dict[str, Any] | None:
    denominator = rng.randint(0, 40)
    if denominator == 0:
        return None
    numerator = rng.randint(0, denominator)
    return {"numerator": numerator, "denominator": denominator, "value": numerator / denominator}


def _window(rng: random.Random) -> dict[str, Any]:
    expected = rng.choice((800.0, 1250.5, 90.25, 3000.0))
    milliseconds = rng.randint(10, 9000)
    prose, calls = rng.randint(0, 4000), rng.randint(1, 12)
    return {
        "tool_call_success_rate": _rate(rng),
        "nonzero_command_exit_rate": _rate(rng),
        "edits_since_verification": rng.randint(0, 9),
        "diagnostic_trend": rng.choice(("improving", "flat", "worsening", None)),
        "turn_wall_time": {
            "milliseconds": milliseconds,
            "sample_count": rng.randint(1, 30),
            "expected": {
                "milliseconds": expected,
                "source": "prior_measured_turns",
                "sample_count": 3,
            },
            "actual_to_expected": milliseconds / expected,
        },
        "prose_to_tool_balance": {
            "prose_characters": prose,
            "tool_calls": calls,
            "characters_per_tool_call": prose / calls,
        },
        "last_stop_class": rng.choice((None, "natural", "policy_budget")),
    }


def build_health_document(facts: int = EVENTS // 2, seed: int = 14) -> list[dict[str, Any]]:
    """Session-health facts (``session-health.fact``): a float in every rate and timing."""
    rng = random.Random(seed)
    return [
        {
            "schema_version": 1,
            "session_id": "sess-0199a2b4c6d8e0f1",
            "iteration": number,
            "turn": _window(rng),
            "rolling": _window(rng),
            "heuristics": {},
        }
        for number in range(facts)
    ]


def build_key_clash_document(every: int) -> dict[str, Any]:
    """The journal with keys U+FB33, U+1F602 and U+E000 in one payload of ``every``
    (in JCS U+1F602 sorts first, by code point last)."""
    document = build_document()
    events = document["events"]
    for event in events[EVENTS // 2 :: every] if every else [events[EVENTS // 2]]:
        event["payload"].update({"\ufb33": 1, "\U0001f602": [2, "x"], "\ue000": {"k": 3}})
    return document


def build_examples_documents() -> list[tuple[str, Any]]:
    """One document per contract (file name prefix): its examples, repeated to ~3 MB."""
    contracts: dict[str, list[bytes]] = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        contracts.setdefault(path.name.split(".")[0], []).append(path.read_bytes())
    documents = []
    for contract, texts in contracts.items():
        size = sum(len(orjson.dumps(orjson.loads(text))) for text in texts)
        copies = max(1, EXAMPLE_DOCUMENT_BYTES // size)
        # Fresh objects for every copy, as a parsed document has.
        documents.append(
            (f"examples: {contract}", [orjson.loads(text) for _ in range(copies) for text in texts])
        )
    return documents


def documents() -> list[tuple[str, Any]]:
    return [
        ("journal (ints, text)", build_document()),
        ("a float per event", build_float_document()),
        ("health facts", build_health_document()),
        ("keys clash in 1 object", build_key_clash_document(0)),
        ("keys clash, 1 event in 64", build_key_clash_document(64)),
        ("dense small values", build_dense_document()),
        *build_examples_documents(),
    ]


def _jcs(doc: Any) -> str:
    return content_hash(doc)


def _rfc8785(doc: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(doc)).hexdigest()


def _floor(doc: Any) -> str:
    return "sha256:" + hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _harn(doc: Any) -> str:
    return harn_sha256(doc)


_METHODS: dict[str, Callable[[Any], str]] = {
    "jcs": _jcs,
    "rfc8785": _rfc8785,
    "floor": _floor,
    "harn": _harn,
}


FAST_METHODS = ("jcs", "floor", "harn")
EXTRA_FAST_ROUNDS = 10


def _time_once(method: Callable[[Any], str], doc: Any) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        method(doc)
        return (time.perf_counter() - start) * 1000
    finally:
        gc.enable()


def _rounds(doc: Any, repeats: int) -> list[dict[str, float]]:
    """``repeats`` rounds of all four methods, then EXTRA_FAST_ROUNDS of the three fast
    ones (rfc8785 takes a second a round and its ratio has a wide margin)."""
    enabled = gc.isenabled()
    rounds: list[dict[str, float]] = []
    try:
        for name in FAST_METHODS:  # warm-up, not timed (rfc8785 ran in the check)
            _METHODS[name](doc)
        for round_number in range(repeats + EXTRA_FAST_ROUNDS):
            names = list(_METHODS) if round_number < repeats else list(FAST_METHODS)
            shift = round_number % len(names)  # rotate who goes first
            rounds.append(
                {name: _time_once(_METHODS[name], doc) for name in names[shift:] + names[:shift]}
            )
    finally:
        if not enabled:
            gc.disable()
    return rounds


def _median_of(rounds: list[dict[str, float]], key: Callable[[dict[str, float]], float]) -> float:
    return statistics.median(key(one) for one in rounds)


def run(repeats: int = 5) -> list[dict[str, Any]]:
    """Check, then time, the four methods on each document."""
    rows = []
    for name, doc in documents():
        if content_hash(doc) != _rfc8785(doc):
            raise AssertionError(f"{name}: content_hash differs from rfc8785")
        if harn_canonical_bytes(doc) != harn_exact_bytes(doc):
            raise AssertionError(f"{name}: Harn's fast path differs from its exact encoder")
        rounds = _rounds(doc, repeats)
        full = [one for one in rounds if "rfc8785" in one]
        rows.append(
            {
                "document": name,
                "canonical_mb": len(canonical_bytes(doc)) / 1e6,
                **{
                    f"{method}_ms": _median_of(
                        [one for one in rounds if method in one], lambda one, m=method: one[m]
                    )
                    for method in _METHODS
                },
                # Each ratio is the median of the ratios within a round: the two runs
                # are seconds apart, so a slow spell of the machine slows both.
                "rfc8785_over_jcs": _median_of(full, lambda one: one["rfc8785"] / one["jcs"]),
                "jcs_over_floor": _median_of(rounds, lambda one: one["jcs"] / one["floor"]),
                "harn_over_floor": _median_of(rounds, lambda one: one["harn"] / one["floor"]),
            }
        )
    for row in rows:
        row["met"] = {
            "rfc8785/jcs": row["rfc8785_over_jcs"] >= MIN_RATIO_VS_RFC8785,
            "jcs/floor": row["jcs_over_floor"] <= MAX_RATIO_VS_FLOOR,
            "harn/floor": row["harn_over_floor"] <= MAX_HARN_RATIO_VS_FLOOR,
        }
    return rows


def _verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


def main(argv: list[str]) -> int:
    repeats = int(argv[1]) if len(argv) > 1 else 5
    rows = run(repeats)
    print(
        f"medians of {repeats} rounds ({repeats + EXTRA_FAST_ROUNDS} for jcs, floor and harn), "
        "ms per document (canonical bytes + SHA-256); ratios: medians of the per-round ratios"
    )
    print(
        f"{'document':<32}{'MB':>6}{'jcs':>8}{'rfc8785':>9}{'floor':>8}{'harn':>8}"
        f"{'rfc8785/jcs':>13}{'jcs/floor':>17}{'harn/floor':>18}"
    )
    for row in rows:
        met = row["met"]
        print(
            f"{row['document']:<32}{row['canonical_mb']:>6.2f}{row['jcs_ms']:>8.1f}"
            f"{row['rfc8785_ms']:>9.1f}{row['floor_ms']:>8.1f}{row['harn_ms']:>8.1f}"
            f"{row['rfc8785_over_jcs']:>6.1f} {_verdict(met['rfc8785/jcs']):<6}"
            f"{row['jcs_over_floor']:>10.2f} {_verdict(met['jcs/floor']):<6}"
            f"{row['harn_over_floor']:>11.2f} {_verdict(met['harn/floor']):<6}"
        )
    print(
        f"targets, every document: rfc8785/jcs >= {MIN_RATIO_VS_RFC8785:g}, "
        f"jcs/floor <= {MAX_RATIO_VS_FLOOR:g}, harn/floor <= {MAX_HARN_RATIO_VS_FLOOR:g} "
        "(floor: orjson OPT_SORT_KEYS + SHA-256, not JCS in general)"
    )
    return 0 if all(all(row["met"].values()) for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
