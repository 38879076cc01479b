"""Issue 6 target (measured early): `check` on captured recap snapshots, docs/s, and the
ratio against validating the same documents with jsonschema alone, in the same run.

The issue names 100,000 snapshots; jsonschema alone needs minutes for that many on this
machine, so this measures 5,000 and says so (throughput is per document)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from session_contracts.conformance._captured import check_documents

from session_contracts._validator import default_validator

COUNT = 5_000
EXAMPLE = (
    Path(__file__).resolve().parents[1] / "schemas" / "examples" / "session-recap.envelope.json"
)


def main() -> None:
    line = json.dumps(json.loads(EXAMPLE.read_text())) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "captured.jsonl"
        path.write_text(line * COUNT)
        started = time.perf_counter()
        errors = sum(
            any(f.level == "error" for f in findings)
            for _, _, findings in check_documents([str(path)])
        )
        ours = time.perf_counter() - started
        assert errors == 0
        validator = default_validator()
        registry: referencing.Registry[Any] = referencing.Registry().with_resources(
            (i, referencing.Resource.from_contents(s))
            for i, s in validator.schema_set.schemas.items()
        )
        document_type = validator.schema_set.document_type("session-recap.envelope")
        peer = jsonschema.Draft202012Validator({"$ref": document_type.ref}, registry=registry)
        started = time.perf_counter()
        with path.open("rb") as handle:
            for raw in handle:
                list(peer.iter_errors(json.loads(raw)))
        theirs = time.perf_counter() - started
    print(
        f"- check {COUNT:,} captured recap envelopes (detect, schema + x-, hashes, secret scan): "
        f"{COUNT / ours:,.0f} docs/s; jsonschema alone {COUNT / theirs:,.0f} docs/s; "
        f"ratio {theirs / ours:.1f}x (target >= 5x) {'MET' if theirs / ours >= 5 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
