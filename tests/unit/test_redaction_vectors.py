"""The redaction vectors (docs/vectors/redaction.json) are fresh: regenerating them
from the reference gives the committed file byte for byte, and they cover every
detector of both built-in policies."""

from __future__ import annotations

import json
from pathlib import Path

from session_contracts.redaction.policy import default_policy, extended_policy
from session_contracts.redaction.vectors import NO_DETECTOR, vectors_document

VECTORS = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "redaction.json"


def test_the_committed_vectors_are_what_the_reference_generates() -> None:
    assert VECTORS.read_text(encoding="utf-8") == vectors_document(), (
        "docs/vectors/redaction.json is stale: run "
        "`python -m session_contracts.redaction.vectors > docs/vectors/redaction.json`"
    )


def test_the_vectors_cover_every_detector_of_both_policies() -> None:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
    assert len(vectors) >= 300
    seen = {(v["policy"], kind) for v in vectors for kind in v["detectors"]}
    default = {*default_policy().kinds, "url_credentials", "sensitive_key", NO_DETECTOR}
    extended = {*extended_policy().kinds, NO_DETECTOR}
    assert {("default", kind) for kind in default} <= seen
    assert {("extended", kind) for kind in extended} <= seen
    assert {v["policy"] for v in vectors} == {"default", "extended"}
    for vector in vectors:
        assert set(vector["input"]) in ({"text"}, {"value"})
        assert set(vector["output"]) == set(vector["input"])
