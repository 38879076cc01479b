"""Run records (seed 003) against Harn's own types, both ways.

Harn publishes no JSON Schema and no fixture file for run records, provider
responses or tapes, and has no types at all for session feedback (seed 001:
see docs/contracts.md). What exists are Rust types and the JSON literals of
Harn's own tests. ``tests/fixtures/upstream/harn/runrecord/`` holds those
literals and documents Harn's writer builds, plus ``serde-shapes.json``: the
member lists of the Rust types as serde writes and reads them (each with its
source file and commit; README.md there says how each fixture was made).

* Upstream to ours: every document Harn writes for a shape we share
  (evidence, span, gap, flight artifact) validates under our schema and
  round-trips through our bindings unchanged.
* Ours to upstream: our schema's members are exactly the Rust type's, and
  every example and reference output of ours is a document Harn's serde
  reader takes (no unknown member, null only where Harn has an Option, a
  missing member only where Harn's reader has a default).
* Known differences (the record envelope, the provider response payload, the
  tape line) are strict xfails: they fail today and must be revisited, with
  docs/contracts.md, the day ours accepts Harn's shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from session_contracts._validator import default_validator
from session_contracts.bindings import decode, encode

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO / "tests" / "fixtures" / "upstream" / "harn" / "runrecord"
SCHEMA = json.loads((REPO / "schemas" / "run-record.schema.json").read_text())
SHAPES: dict[str, Any] = json.loads((UPSTREAM / "serde-shapes.json").read_text())
STRUCTS = {name: shape for name, shape in SHAPES.items() if not name.startswith("_")}
VALIDATOR = default_validator()

EVIDENCE = "run-record.evidence"
SPAN = "run-record.span"


def upstream(name: str) -> Any:
    return json.loads((UPSTREAM / name).read_text())


def round_trips(doctype: str, value: Any) -> bool:
    return bool(encode(decode(doctype, value)) == value)


# --------------------------------------------------------------------------- upstream -> ours


@pytest.mark.parametrize(
    ("doctype", "fixture"),
    [
        # execution_evidence.rs tests: Harn-owned identity with a matching flight artifact.
        (EVIDENCE, "evidence.with-flight-recording.json"),
        # What Harn's evidence projection writes for the harn-cli runs-view test input.
        (EVIDENCE, "runs-view-unowned-evidence.projected-evidence.json"),
        # types.rs trace_span_record_round_trips_with_cost_and_token_metadata.
        (SPAN, "span.round-trip.json"),
    ],
)
def test_harn_written_documents_validate_and_round_trip(doctype: str, fixture: str) -> None:
    value = upstream(fixture)
    assert VALIDATOR.validate(doctype, value) == []
    assert round_trips(doctype, value)


def test_harn_flight_artifact_and_gap_are_ours_verbatim() -> None:
    """The artifact and the gap of Harn's own tests sit in our evidence unchanged."""
    artifact = upstream("flight-recording-artifact.json")
    gap = upstream("evidence-gap.projection-invalid.json")
    evidence = {
        "schema_version": 1,
        "execution_id": artifact["execution_id"],
        "trace_spans": [],
        "flight_recording": artifact,
        "gaps": [gap],
    }
    assert VALIDATOR.validate(EVIDENCE, evidence) == []
    assert round_trips(EVIDENCE, evidence)
    # Harn drops an artifact whose owner is not the evidence's (FlightRecordingIdentityMismatch);
    # ours refuses the document.
    foreign = {**evidence, "flight_recording": {**artifact, "execution_id": "hxe-other"}}
    assert [f.code for f in VALIDATOR.validate(EVIDENCE, foreign)] == ["same_value"]
    # Harn rejects other formats and hashes (UnsupportedFlightRecordingFormat,
    # InvalidFlightRecordingHash); so do we.
    for member, bad in (("format", "application/json"), ("content_hash", "blake3:not-a-digest")):
        broken = {**evidence, "flight_recording": {**artifact, member: bad}}
        assert VALIDATOR.validate(EVIDENCE, broken), member


def test_harn_historical_span_loads_only_as_history() -> None:
    """Harn still reads parent_id (serde alias); ours loads it with historical=True only."""
    legacy = upstream("span.historical-parent-id.json")
    # The write contract refuses the old name (and misses the new one).
    assert sorted(f.code for f in VALIDATOR.validate(SPAN, legacy)) == ["required", "unknown_field"]
    loaded = encode(decode(SPAN, legacy, historical=True))
    assert loaded["parent_span_id"] == legacy["parent_id"]
    assert "parent_id" not in loaded


# --------------------------------------------------------------------------- ours <-> serde shape


def _definition(name: str) -> dict[str, Any]:
    definition: dict[str, Any] = SCHEMA["$defs"][name]
    return definition


def _allows_null(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") == "null":
        return True
    if "$ref" in schema:
        return _allows_null(_definition(schema["$ref"].rsplit("/", 1)[-1]))
    return any(_allows_null(branch) for branch in schema.get("anyOf", []))


@pytest.mark.parametrize("struct", sorted(STRUCTS))
def test_our_definition_has_the_rust_types_members(struct: str) -> None:
    shape = STRUCTS[struct]
    ours = _definition(shape["ours"])
    fields: dict[str, Any] = shape["fields"]
    assert set(ours["properties"]) == set(fields), f"{shape['ours']} vs {struct}"
    for name, field in fields.items():
        # What Harn always writes we must accept; a member we require, Harn must write
        # (or we would refuse Harn's documents) and a member we may omit, Harn must default.
        if name in ours.get("required", []):
            assert field["written"] in ("always", "unknown"), name
        else:
            assert field["reader_default"], f"{struct}.{name}: Harn's reader needs it"
        # Null where Harn writes an Option; a skipped Option is never written as null, and the
        # seed says so for ttft_ms ("spans without an observed first token omit ttft_ms").
        writes_null = field["nullable"] and field["written"] != "when_some"
        assert _allows_null(ours["properties"][name]) == writes_null, name


def _shape_problems(value: Any, struct: str, where: str) -> Iterator[str]:
    """Why Harn's serde reader of ``struct`` would not take ``value`` as is."""
    fields: dict[str, Any] = STRUCTS[struct]["fields"]
    if not isinstance(value, dict):
        yield f"{where}: not an object"
        return
    for name in value.keys() - fields.keys():
        yield f"{where}.{name}: not a member of {struct}"
    for name, field in fields.items():
        if name not in value:
            if not field["reader_default"]:
                yield f"{where}.{name}: {struct} has no default for it"
        elif value[name] is None and not field["nullable"]:
            yield f"{where}.{name}: null, but {struct} has no Option there"
        elif "enum" in field and value[name] not in field["enum"]:
            yield f"{where}.{name}: {value[name]!r} is not a variant"
    nested = {
        "ExecutionEvidenceRecord": {
            "trace_spans": "RunTraceSpanRecord",
            "gaps": "RunEvidenceGapRecord",
        },
        "RunTraceSpanRecord": {"links": "SpanLink"},
    }.get(struct, {})
    for name, inner in nested.items():
        for index, item in enumerate(value.get(name) or []):
            yield from _shape_problems(item, inner, f"{where}.{name}[{index}]")
    if struct == "ExecutionEvidenceRecord" and value.get("flight_recording") is not None:
        yield from _shape_problems(
            value["flight_recording"], "FlightRecordingArtifact", f"{where}.flight_recording"
        )


def _our_evidence() -> Iterator[tuple[str, Any]]:
    examples = REPO / "schemas" / "examples"
    yield (
        "examples/run-record.evidence.json",
        json.loads((examples / "run-record.evidence.json").read_text()),
    )
    yield (
        "examples/run-record.record.json",
        json.loads((examples / "run-record.record.json").read_text())["evidence"],
    )
    for path in sorted((REPO / "conformance" / "fixtures").glob("**/*.expected.json")):
        output = json.loads(path.read_text()).get("output")
        if isinstance(output, dict) and isinstance(output.get("evidence"), dict):
            yield str(path.relative_to(REPO)), output["evidence"]


OUR_EVIDENCE = list(_our_evidence())


def test_our_outputs_cover_the_shared_shapes() -> None:
    """The next test is only worth something if our outputs exercise gaps and artifacts."""
    assert len(OUR_EVIDENCE) >= 5
    assert any(evidence["gaps"] for _, evidence in OUR_EVIDENCE)
    assert any(evidence["flight_recording"] for _, evidence in OUR_EVIDENCE)
    assert any(evidence["trace_spans"] for _, evidence in OUR_EVIDENCE)


@pytest.mark.parametrize(("where", "evidence"), OUR_EVIDENCE, ids=[w for w, _ in OUR_EVIDENCE])
def test_our_evidence_is_read_by_harns_serde_types(where: str, evidence: Any) -> None:
    assert list(_shape_problems(evidence, "ExecutionEvidenceRecord", "$")) == []
    assert VALIDATOR.validate(EVIDENCE, evidence) == []


def test_our_span_example_is_read_by_harns_serde_types() -> None:
    span = json.loads((REPO / "schemas" / "examples" / "run-record.span.json").read_text())
    assert list(_shape_problems(span, "RunTraceSpanRecord", "$")) == []


def test_shape_check_catches_what_harn_would_refuse() -> None:
    """The checker itself: our pre-Harn gap and artifact spellings are refused."""
    old = {
        "schema_version": 1,
        "execution_id": None,
        "trace_spans": [],
        "flight_recording": {"reference": "flights/x.bin", "byte_size": 1},
        "gaps": [{"kind": "execution_identity", "reason": "unknown"}],
    }
    problems = list(_shape_problems(old, "ExecutionEvidenceRecord", "$"))
    assert "$.gaps[0].kind: not a member of RunEvidenceGapRecord" in problems
    assert "$.flight_recording.reference: not a member of FlightRecordingArtifact" in problems
    assert "$.flight_recording.content_hash: FlightRecordingArtifact has no default for it" in (
        problems
    )


# --------------------------------------------------------------------------- known differences


@pytest.mark.xfail(
    strict=True,
    reason="Harn's RunRecord (_type, workflow_id, task, started_at, stages, ...) is not our "
    "record envelope (kind, session_id); docs/contracts.md, Run records",
)
def test_harn_run_record_validates_as_our_record() -> None:
    assert (
        VALIDATOR.validate("run-record.record", upstream("runs-view-unowned-evidence.input.json"))
        == []
    )


@pytest.mark.xfail(
    strict=True,
    reason="Harn's provider_call_response is an open json! object with type, timestamp, "
    "provider, model, token and cache counters, raw_tool_calls and no execution_id; ours is "
    "closed and requires execution_id; docs/contracts.md, Run records",
)
def test_harn_provider_call_response_validates_as_ours() -> None:
    payload = upstream("provider-call-response.payload.json")
    assert VALIDATOR.validate("run-record.provider-call-response", payload) == []


@pytest.mark.xfail(
    strict=True,
    reason="Harn's JSONL tape line is {id, event: {kind, payload, headers, occurred_at_ms}} "
    "(topic in the file name); ours is a flat envelope; docs/contracts.md, Run records",
)
def test_harn_tape_line_validates_as_our_tape_entry() -> None:
    assert (
        VALIDATOR.validate("run-record.tape-entry", upstream("tape-record.file-backend.json")) == []
    )
