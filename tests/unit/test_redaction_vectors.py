"""The redaction vectors (docs/vectors/redaction.json) are fresh: regenerating them
from the reference gives the committed file byte for byte, and they cover every
detector of both built-in policies."""

from __future__ import annotations

import json
from pathlib import Path

from session_contracts.redaction.policy import default_policy, extended_policy
from session_contracts.redaction.vectors import (
    LATER_UNICODE_LETTERS,
    NO_DETECTOR,
    vectors_document,
    word_ranges_document,
)

VECTORS = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "redaction.json"
WORD_RANGES = VECTORS.with_name("unicode-word-14.json")


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


def test_the_committed_word_table_is_the_one_the_patterns_use() -> None:
    assert WORD_RANGES.read_text(encoding="utf-8") == word_ranges_document(), (
        "docs/vectors/unicode-word-14.json is stale: run `python -m "
        "session_contracts.redaction.vectors --word-ranges > docs/vectors/unicode-word-14.json`"
    )
    ranges = json.loads(WORD_RANGES.read_text(encoding="utf-8"))["ranges"]
    # The vectors' later letters are outside the table: that is what they test.
    for letter in LATER_UNICODE_LETTERS:
        assert not any(first <= ord(letter) <= last for first, last in ranges), hex(ord(letter))
    assert any(first <= ord("é") <= last for first, last in ranges)
