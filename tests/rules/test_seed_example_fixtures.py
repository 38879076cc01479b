"""The seeds' own JSON examples are fixtures: each validates as its document type.

tests/fixtures/seed-examples.json keeps every JSON example of the four seeds,
verbatim, with the seed it comes from and the document type it is an example
of (``at`` is the JSON pointer of that document inside the example, since seed
003 wraps its documents in ``{"evidence": ...}``). The test re-extracts the
examples from the vendored seed texts (tests/vectors/seeds, held equal to
../shared/seeds by test_vendored.py), so an edit to a seed shows up here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from seed_text import json_examples

from session_contracts.validation.validator import DocumentValidator
from session_contracts.validation.xkeywords import resolve_pointer

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "tests" / "vectors" / "seeds"
FIXTURE = REPO / "tests" / "fixtures" / "seed-examples.json"
VALIDATOR = DocumentValidator()


def _fixture() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["examples"]
    return entries


def test_the_fixture_holds_every_example_of_every_seed_verbatim() -> None:
    kept: dict[str, list[Any]] = {}
    for entry in _fixture():
        kept.setdefault(entry["seed"], []).append(entry["example"])
    found = {
        path.name: examples
        for path in sorted(SEEDS.glob("00[0-3]_*.txt"))
        if (examples := json_examples(path.read_text(encoding="utf-8")))
    }
    assert found, "no seed example found: did the seed texts move?"
    assert kept == found


@pytest.mark.parametrize(
    "entry", _fixture(), ids=lambda e: f"{e['seed'][:3]}-{e['doctype']}{e['at'] or ''}"
)
@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
def test_each_seed_example_validates_as_its_document_type(
    entry: dict[str, Any], reference: bool
) -> None:
    document = resolve_pointer(entry["example"], entry["at"])
    findings = VALIDATOR.validate(entry["doctype"], document, reference=reference)
    assert [(f.path, f.code) for f in findings] == []


def test_the_seed_span_inside_the_seed_evidence_validates() -> None:
    """Seed 003's two examples together: its evidence holding its span 8 under an open
    parent 3 (the report that `validate run-record.evidence` refused this)."""
    entries = {(e["doctype"], e["at"]): e["example"] for e in _fixture()}
    evidence = dict(resolve_pointer(entries[("run-record.evidence", "/evidence")], "/evidence"))
    span = resolve_pointer(entries[("run-record.span", "/evidence/trace_spans/0")], "")
    evidence["trace_spans"] = list(span["evidence"]["trace_spans"])
    for reference in (False, True):
        assert VALIDATOR.validate("run-record.evidence", evidence, reference=reference) == []
