"""Benchmark: canonical bytes + SHA-256 of a 32,768-event session journal.

    python bench/bench_canonical.py [repeats]

Times ``session_contracts._canonical.content_hash`` against ``rfc8785.dumps`` +
SHA-256 (the exact reference) and ``orjson.dumps(OPT_SORT_KEYS)`` + SHA-256 (the
speed floor; not JCS in general).  After an untimed warm-up, each round runs
the three once, one after the other (who goes first rotates), with the garbage
collector paused as ``timeit`` does; the table shows the median of ``repeats``
rounds, so a busy machine slows all three alike.  Targets on the journal:
rfc8785 / ours >= 10 and ours / orjson <= 2.

Untargeted rows: a document of many small values (the fast path's worst case:
its type census costs per value where orjson costs per byte); one non-ASCII key
(still the fast path); and two that take the exact path: keys whose code point
and UTF-16 orders differ (U+FB33 and U+1F602 in one object), and a float in
every event.
"""

from __future__ import annotations

import gc
import hashlib
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson
import rfc8785

from session_contracts._canonical import canonical_bytes, content_hash

EVENTS = 32_768
MIN_RATIO_VS_RFC8785 = 10.0
MAX_RATIO_VS_ORJSON = 2.0

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


def _ours(doc: Any) -> str:
    return content_hash(doc)


def _rfc8785(doc: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(doc)).hexdigest()


def _orjson(doc: Any) -> str:
    return "sha256:" + hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


_METHODS: dict[str, Callable[[Any], str]] = {
    "ours": _ours,
    "rfc8785": _rfc8785,
    "orjson": _orjson,
}


def _medians_ms(doc: Any, repeats: int) -> dict[str, float]:
    names = list(_METHODS)
    times: dict[str, list[float]] = {name: [] for name in names}
    enabled = gc.isenabled()
    try:
        for name in ("ours", "orjson"):  # warm-up, not timed (run() already ran rfc8785)
            _METHODS[name](doc)
        for round_number in range(repeats):
            shift = round_number % len(names)  # rotate who goes first
            for name in names[shift:] + names[:shift]:
                gc.collect()
                gc.disable()
                start = time.perf_counter()
                _METHODS[name](doc)
                times[name].append((time.perf_counter() - start) * 1000)
                gc.enable()
    finally:
        if not enabled:
            gc.disable()
    return {name: statistics.median(runs) for name, runs in times.items()}


def _documents() -> list[tuple[str, Any, bool]]:
    non_ascii_key = build_document()
    non_ascii_key["events"][EVENTS // 2]["payload"]["clé"] = "one non-ASCII key"
    key_clash = build_document()
    key_clash["events"][EVENTS // 2]["payload"].update({"\ufb33": 1, "\U0001f602": 2})
    with_floats = build_document()
    for event in with_floats["events"]:
        event["payload"]["score"] = event["id"] / 7
    return [
        ("journal", build_document(), True),
        ("dense small values", build_dense_document(), False),
        ("one non-ASCII key", non_ascii_key, False),
        ("keys U+FB33, U+1F602 *", key_clash, False),
        ("a float per event *", with_floats, False),
    ]


def run(repeats: int = 5) -> list[dict[str, Any]]:
    """Time the three methods on each document; the first row carries the targets."""
    rows = []
    for name, doc, targeted in _documents():
        if content_hash(doc) != _rfc8785(doc):
            raise AssertionError(f"{name}: content_hash differs from rfc8785")
        ms = _medians_ms(doc, repeats)
        vs_reference = ms["rfc8785"] / ms["ours"]
        vs_floor = ms["ours"] / ms["orjson"]
        rows.append(
            {
                "document": name,
                "canonical_mb": len(canonical_bytes(doc)) / 1e6,
                "ours_ms": ms["ours"],
                "rfc8785_ms": ms["rfc8785"],
                "orjson_ms": ms["orjson"],
                "rfc8785_over_ours": vs_reference,
                "ours_over_orjson": vs_floor,
                "targeted": targeted,
                "meets_targets": (
                    vs_reference >= MIN_RATIO_VS_RFC8785 and vs_floor <= MAX_RATIO_VS_ORJSON
                    if targeted
                    else None
                ),
            }
        )
    return rows


def main(argv: list[str]) -> int:
    repeats = int(argv[1]) if len(argv) > 1 else 5
    rows = run(repeats)
    print(f"medians of {repeats} rounds, ms per document (canonical bytes + SHA-256)")
    print(
        f"{'document':<24}{'MB':>7}{'ours':>9}{'rfc8785':>10}{'orjson':>9}"
        f"{'rfc8785/ours':>14}{'ours/orjson':>13}  targets"
    )
    for row in rows:
        verdict = "-" if not row["targeted"] else ("met" if row["meets_targets"] else "MISSED")
        print(
            f"{row['document']:<24}{row['canonical_mb']:>7.2f}{row['ours_ms']:>9.1f}"
            f"{row['rfc8785_ms']:>10.1f}{row['orjson_ms']:>9.1f}"
            f"{row['rfc8785_over_ours']:>14.1f}{row['ours_over_orjson']:>13.2f}  {verdict}"
        )
    print(
        f"targets (journal): rfc8785/ours >= {MIN_RATIO_VS_RFC8785:g}, "
        f"ours/orjson <= {MAX_RATIO_VS_ORJSON:g}; * = exact path (orjson is not JCS there)"
    )
    return 0 if all(row["meets_targets"] is not False for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
