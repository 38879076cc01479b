"""Targets: regenerate-all wall time, and `validate` throughput against
jsonschema's Draft202012Validator alone on the same 10,000 documents, and
`validate` (strict reading + schema + x- rules) within 1.5x of the engine alone
(``json.loads`` + jsonschema-rs on the schemas without x- keywords, bench/_engine.py)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
import referencing

from bench._engine import engine_validators
from bench._timing import median_seconds
from session_contracts.jsontext.strict import loads_strict
from session_contracts.validation.validator import DocumentValidator

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "schemas" / "examples"


def _documents(count: int) -> list[tuple[str, bytes]]:
    """A realistic mix: every document type, values varied, snapshots with many turns."""
    examples = {
        path.name.removesuffix(".json"): json.loads(path.read_text())
        for path in sorted(EXAMPLES.glob("*.json"))
    }
    snapshot = examples["session-recap.snapshot"]
    turn = snapshot["turns"][0]
    snapshot["turns"] = [copy.deepcopy(turn) | {"turnId": f"turn-{i}"} for i in range(20)]
    examples["session-recap.envelope"]["snapshot"] = snapshot
    names = sorted(examples)
    out = []
    for index in range(count):
        name = names[index % len(names)]
        document = copy.deepcopy(examples[name])
        if isinstance(document, dict) and "session_id" in document:
            document["session_id"] = f"sess-{index}"
        out.append((name, json.dumps(document).encode()))
    return out


def bench_generate(repeats: int) -> dict[str, Any]:
    # A fresh process each time: what `session-contracts generate` costs a user.
    with tempfile.TemporaryDirectory() as tmp:

        def once() -> None:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "session_contracts",
                    "generate",
                    "--root",
                    str(REPO),
                    "--check",
                ],
                check=True,
                capture_output=True,
                cwd=tmp,
            )

        seconds = median_seconds(once, repeats)
    return {
        "name": "regenerate all (generate --check, fresh process)",
        "seconds": seconds,
        "target": "< 10 s",
        "met": seconds < 10,
    }


def bench_validate(repeats: int, count: int = 10_000) -> list[dict[str, Any]]:
    documents = _documents(count)
    ours = DocumentValidator()
    # Warm both: compile every document type once, outside the timing.
    for name, raw in documents[:50]:
        ours.validate(name, loads_strict(raw))

    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (schema_id, referencing.Resource.from_contents(schema))
        for schema_id, schema in ours.schema_set.schemas.items()
    )
    peers = {
        name: jsonschema.Draft202012Validator(
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": dt.ref},
            registry=registry,
        )
        for name, dt in ours.schema_set.document_types.items()
    }

    def run_ours() -> int:
        invalid = 0
        for name, raw in documents:
            invalid += bool(ours.validate(name, loads_strict(raw)))
        return invalid

    def run_peer() -> int:
        invalid = 0
        for name, raw in documents:
            invalid += bool(list(peers[name].iter_errors(json.loads(raw))))
        return invalid

    engine = engine_validators(ours.schema_set)

    def run_engine() -> int:
        invalid = 0
        for name, raw in documents:
            invalid += not engine[name].is_valid(json.loads(raw))
        return invalid

    assert run_ours() == 0, "the benchmark documents must be valid"
    assert run_engine() == 0, "the engine alone must find them valid too"
    ours_times: list[float] = []
    engine_times: list[float] = []
    for _ in range(max(repeats, 9)):  # alternate, so load on the machine falls on both alike
        ours_times.append(median_seconds(run_ours, 1))
        engine_times.append(median_seconds(run_engine, 1))
    ours_s = sorted(ours_times)[len(ours_times) // 2]
    engine_s = sorted(engine_times)[len(engine_times) // 2]
    # The ratio is the median of the ratios of each pair of back-to-back runs: a slow
    # spell of the machine falls on both runs of a pair.
    pair_ratios = sorted(o / e for o, e in zip(ours_times, engine_times, strict=True))
    peer_s = median_seconds(run_peer, max(1, repeats // 2 + 1))
    ratio = peer_s / ours_s
    engine_ratio = pair_ratios[len(pair_ratios) // 2]
    return [
        {
            "name": f"validate {count:,} documents (parse + schema + x- rules)",
            "ours_docs_per_s": count / ours_s,
            "peer_docs_per_s": count / peer_s,
            "ratio": ratio,
            "target": ">= 5x jsonschema Draft202012Validator alone",
            "met": ratio >= 5,
        },
        {
            "name": f"validate {count:,} documents against the engine alone",
            "ours_docs_per_s": count / ours_s,
            "engine_docs_per_s": count / engine_s,
            "ratio": engine_ratio,
            "target": "<= 1.5x the time of json.loads + jsonschema-rs without x- keywords",
            "met": engine_ratio <= 1.5,
        },
    ]


def run(repeats: int = 5) -> list[dict[str, Any]]:
    return [bench_generate(max(3, repeats // 2)), *bench_validate(repeats)]


def report(results: list[dict[str, Any]]) -> None:
    for result in results:
        print(f"- {result['name']}")
        if "seconds" in result:
            print(
                f"    median {result['seconds']:.2f} s   target {result['target']}   "
                f"{'MET' if result['met'] else 'MISSED'}"
            )
        elif "engine_docs_per_s" in result:
            print(
                f"    ours {result['ours_docs_per_s']:,.0f} docs/s   engine alone "
                f"{result['engine_docs_per_s']:,.0f} docs/s   ours/engine time "
                f"{result['ratio']:.2f}x   target {result['target']}   "
                f"{'MET' if result['met'] else 'MISSED'}"
            )
        else:
            print(
                f"    ours {result['ours_docs_per_s']:,.0f} docs/s   jsonschema "
                f"{result['peer_docs_per_s']:,.0f} docs/s   ratio {result['ratio']:.1f}x   "
                f"target {result['target']}   {'MET' if result['met'] else 'MISSED'}"
            )


if __name__ == "__main__":
    started = time.perf_counter()
    report(run())
    print(f"({time.perf_counter() - started:.0f} s)")
