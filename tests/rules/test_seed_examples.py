"""Every JSON example in the seeds validates as its document type."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from seed_text import json_examples

from session_contracts.bindings import decode, encode
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal


def _seed(shared: Path, number: str) -> str:
    (path,) = (shared / "seeds").glob(f"{number}_*.txt")
    return path.read_text()


def _check(doctype: str, document: Any) -> None:
    assert default_validator().validate(doctype, document) == []
    assert json_equal(encode(decode(doctype, document)), document)


@pytest.mark.sentence("feedback.client-info-optional")
def test_seed_001_client_info_progress_and_usage_examples(shared: Path) -> None:
    client_info, progress, usage = json_examples(_seed(shared, "001"))
    _check("session-feedback.client-info", client_info)
    _check("session-feedback.progress", progress)
    _check("session-feedback.usage", usage)


@pytest.mark.sentence("runrecord.one-evidence", "runrecord.workflow-spans")
def test_seed_003_evidence_and_span_examples(shared: Path) -> None:
    evidence_example, span_example = json_examples(_seed(shared, "003"))
    _check("run-record.evidence", evidence_example["evidence"])
    for span in span_example["evidence"]["trace_spans"]:
        _check("run-record.span", span)


@pytest.mark.sentence("recap.other-fields-optional", "recap.snake-case-aliases")
def test_seed_002_query_fields_in_both_spellings(shared: Path) -> None:
    text = _seed(shared, "002")
    camel = re.findall(r"^(\w+Id|limit) \| (string|unsigned integer)", text, re.M)
    assert {name for name, _ in camel} == {"runId", "turnId", "fromEventId", "limit"}
    query = {"sessionId": "s", "runId": "r", "turnId": "t", "fromEventId": 1, "limit": 32768}
    _check("session-recap.query", query)
    snake = {"session_id": "s", "run_id": "r", "turn_id": "t", "from_event_id": 1, "limit": 1}
    assert default_validator().validate("session-recap.query", snake) == []


@pytest.mark.sentence("recap.unavailable-reasons")
def test_seed_002_unavailable_reasons_are_the_schema_enum(shared: Path) -> None:
    reasons = set(re.findall(r"^(\w+) \| ", _seed(shared, "002"), re.M)) - {
        "runId",
        "turnId",
        "fromEventId",
        "limit",
        "Reason",
        "Field",
    }
    for reason in reasons:
        _check("session-recap.envelope", {"state": "unavailable", "reason": reason})
    assert reasons == {
        "journal_unavailable",
        "session_missing",
        "projection_failed",
        "admission_terminal",
    }


@pytest.mark.sentence("feedback.missing-reasons")
def test_seed_001_missing_reasons_are_the_schema_enum(shared: Path) -> None:
    text = _seed(shared, "001")
    sentence = re.search(r"Missing reasons distinguish (.*?)\.", text).group(1)  # type: ignore[union-attr]
    reasons = set(re.findall(r"[a-z_]{5,}", sentence)) - {"and"}
    schema = default_validator().schema_set
    enum = set(
        schema.schemas[schema.document_type("session-feedback.observation").schema_id]["$defs"][
            "MissingReason"
        ]["enum"]
    )
    assert reasons == enum


@pytest.mark.sentence("feedback.phases")
def test_seed_001_phases_are_the_schema_enum(shared: Path) -> None:
    text = _seed(shared, "001")
    sentence = re.search(r"^Phases: (.*?)\. ", text, re.M).group(1)  # type: ignore[union-attr]
    phases = {p.strip() for p in sentence.split(",")}
    for phase in phases:
        _check("session-feedback.progress", {"phase": phase, "summary": "x"})
    assert len(phases) == 6
