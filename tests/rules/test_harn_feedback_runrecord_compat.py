"""Run records (seed 003) against Harn's own types, both ways.

Harn publishes no JSON Schema and no fixture file for run records, provider
responses or tapes, and has no types at all for session feedback (seed 001:
see docs/contracts.md). What exists are Rust types and the JSON literals of
Harn's own tests. ``tests/fixtures/upstream/harn/runrecord/`` holds those
literals and documents Harn's writer builds, plus ``serde-shapes.json``: the
member lists of the Rust types as serde writes and reads them (each with its
source file and commit; README.md there says how each fixture was made).

* Upstream to ours: every document Harn writes (run record, evidence, span,
  gap, flight artifact, provider_call_response payload, file event-log line)
  validates under our schema, round-trips through our bindings unchanged and
  passes ``session-contracts check``.
* Ours to upstream: our schema's members are exactly the Rust type's (plus
  ours that serde ignores), and every example and reference output of ours
  (records, evidence, payloads, tape lines) is a document Harn's serde reader
  takes (no unknown member, null only where Harn has an Option, a missing
  member only where Harn's reader has a default), or, for the json! payload,
  uses only the members Harn writes.
* Harn's reader inputs that are not documents Harn writes (the harn-cli
  runs-view input, the historical ``parent_id`` span) are refused by the write
  contract exactly where Harn's serde defaults or the seed's history rule
  apply; ``serde-shapes.json`` describes types and is no document.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from session_contracts import runrecord as rr
from session_contracts.bindings import decode, encode
from session_contracts.validation.validator import default_validator

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "schemas" / "examples"
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
        # agent_observe.rs dump_llm_response with raw_tool_receipts.rs: an open json! literal.
        ("run-record.provider-call-response", "provider-call-response.payload.json"),
        # event_log/file.rs FileRecord around event_log/mod.rs LogEvent.
        ("run-record.tape-record", "tape-record.file-backend.json"),
        # The artifact of execution_evidence.rs's tests and the gap of view/evidence.rs.
        ("run-record.flight-recording", "flight-recording-artifact.json"),
        ("run-record.evidence-gap", "evidence-gap.projection-invalid.json"),
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


def _opaque(schema: Mapping[str, Any]) -> bool:
    """A member this contract leaves to Harn's own type (``JsonValue``): nullability unchecked."""
    return schema.get("$ref") == "#/$defs/JsonValue"


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
    # Our own members (never Harn's) are allowed only where serde ignores unknown members.
    ours_only = set(shape.get("ours_only", []))
    assert set(ours["properties"]) - ours_only == set(fields), f"{shape['ours']} vs {struct}"
    assert not ours_only & set(ours.get("required", [])), "Harn does not write them"
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
        if not _opaque(ours["properties"][name]):
            assert _allows_null(ours["properties"][name]) == writes_null, name


def _shape_problems(value: Any, struct: str, where: str) -> Iterator[str]:
    """Why Harn's serde reader of ``struct`` would not take ``value`` as is."""
    fields: dict[str, Any] = STRUCTS[struct]["fields"]
    if not isinstance(value, dict):
        yield f"{where}: not an object"
        return
    for name in value.keys() - fields.keys() - set(STRUCTS[struct].get("ours_only", [])):
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
    single = {
        "RunRecord": ("evidence", "ExecutionEvidenceRecord"),
        "FileRecord": ("event", "LogEvent"),
    }
    if struct in single and single[struct][0] in value:
        name, inner = single[struct]
        yield from _shape_problems(value[name], inner, f"{where}.{name}")
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


# ------------------------------------------------------------------- records, payloads, tapes


def _our_records() -> Iterator[tuple[str, Any]]:
    yield (
        "examples/run-record.record.json",
        json.loads((REPO / "schemas" / "examples" / "run-record.record.json").read_text()),
    )
    for path in sorted((REPO / "conformance" / "fixtures" / "runrecord").glob("*.expected.json")):
        output = json.loads(path.read_text()).get("output")
        if isinstance(output, dict) and "evidence" in output:
            yield str(path.relative_to(REPO)), output


def _our_payloads() -> Iterator[tuple[str, Any]]:
    yield (
        "examples/run-record.provider-call-response.json",
        json.loads(
            (REPO / "schemas" / "examples" / "run-record.provider-call-response.json").read_text()
        ),
    )
    for path in sorted((REPO / "conformance" / "fixtures" / "runrecord").glob("*.expected.json")):
        output = json.loads(path.read_text()).get("output")
        if isinstance(output, dict) and "call_id" in output:
            yield str(path.relative_to(REPO)), output


OUR_RECORDS = list(_our_records())
OUR_PAYLOADS = list(_our_payloads())


@pytest.mark.parametrize(("where", "record"), OUR_RECORDS, ids=[w for w, _ in OUR_RECORDS])
def test_our_records_are_read_by_harns_run_record(where: str, record: Any) -> None:
    """Ours -> Harn's: every member is RunRecord's (kind, session_id are ignored by serde)."""
    assert list(_shape_problems(record, "RunRecord", "$")) == []


def test_harn_run_record_as_serde_writes_it_validates_as_ours() -> None:
    """Harn's -> ours: the runs-view record with every member serde writes (RunRecord has no
    skip_serializing_if) and the evidence Harn's projection keeps is our record."""
    record = upstream("run-record.serde-written.json")
    assert set(record) == set(STRUCTS["RunRecord"]["fields"])
    assert list(_shape_problems(record, "RunRecord", "$")) == []
    assert VALIDATOR.validate("run-record.record", record) == []
    assert round_trips("run-record.record", record)


def test_harn_reader_input_is_refused_only_where_serde_defaults_apply() -> None:
    """The harn-cli runs-view input relies on Harn's #[serde(default)]: it omits the gaps and
    the span members Harn's writer always writes.  Ours refuses it for exactly those, and not
    for its foreign execution id: Harn's reader takes any id, its projection drops it."""
    findings = VALIDATOR.validate(
        "run-record.record", upstream("runs-view-unowned-evidence.input.json")
    )
    assert {(f.path, f.code) for f in findings} == {
        ("$.evidence.gaps", "required"),
        *(
            (f"$.evidence.trace_spans[0].{name}", "required")
            for name in ("trace_id", "span_id", "parent_span_id", "start_ms", "duration_ms")
        ),
    }


def test_our_projection_drops_an_id_harn_does_not_own_as_harn_does() -> None:
    """view/evidence.rs public_projection_does_not_trust_an_invalid_execution_identity: the
    runs-view input projected by our reference gives Harn's projected evidence."""
    harn_input = upstream("runs-view-unowned-evidence.input.json")["evidence"]
    expected = upstream("runs-view-unowned-evidence.projected-evidence.json")
    artifact = harn_input["flight_recording"]
    span = {**expected["trace_spans"][0], "metadata": harn_input["trace_spans"][0]["metadata"]}
    span = {k: v for k, v in span.items() if k not in ("links", "events")}
    spec = rr.RunSpec(
        kind="workflow",
        id="host-run-id-record",
        status="completed",
        session_id=None,
        execution_id=harn_input["execution_id"],
        spans=[rr.Span.from_json(span)],
        flight_recording=rr.FlightRecording.from_json(artifact),
    )
    evidence = rr.project_run_record(spec, [])["evidence"]
    assert evidence["execution_id"] is None
    assert evidence["flight_recording"] is None
    assert evidence["gaps"] == expected["gaps"]
    assert [s["metadata"] for s in evidence["trace_spans"]] == [
        s["metadata"] for s in expected["trace_spans"]
    ]
    # Harn's own valid identity is kept, with its artifact.
    owned = upstream("evidence.with-flight-recording.json")
    assert rr.is_harn_execution_id(owned["execution_id"])


# execution_evidence.rs and observability/execution_scope.rs test vectors.
@pytest.mark.parametrize(("candidate", "owned"), rr.HARN_EXECUTION_ID_VECTORS)
def test_harn_execution_id_rule(candidate: str, owned: bool) -> None:
    assert rr.is_harn_execution_id(candidate) is owned


def test_docs_list_every_execution_id_vector() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "runrecord.md").read_text("utf-8")
    table = docs.split("Test vectors (Harn's own", 1)[1].split("**Decision:**", 1)[0]
    for candidate, owned in rr.HARN_EXECUTION_ID_VECTORS:
        row = next(line for line in table.splitlines() if f"`{candidate}`" in line)
        assert row.split("|")[2].strip().startswith("yes" if owned else "no"), row


@pytest.mark.parametrize(("where", "payload"), OUR_PAYLOADS, ids=[w for w, _ in OUR_PAYLOADS])
def test_our_payloads_use_only_members_harn_writes(where: str, payload: Any) -> None:
    """Ours -> Harn's: dump_llm_response's members, plus execution_id (seed 003: "SQLite
    event-log records store it in both the payload and the indexed headers")."""
    harn = set(upstream("provider-call-response.payload.json")) | {"parsed_tool_calls"}
    assert set(payload) - harn <= {"execution_id"}
    resolved = rr.resolve_parsed_tool_calls(payload)
    assert resolved is not None


def test_our_tape_record_example_is_read_by_harns_file_record() -> None:
    example = json.loads(
        (REPO / "schemas" / "examples" / "run-record.tape-record.json").read_text()
    )
    assert list(_shape_problems(example, "FileRecord", "$")) == []
    harn = upstream("tape-record.file-backend.json")
    assert list(_shape_problems(harn, "FileRecord", "$")) == []


def test_tape_record_ties_the_execution_header_to_the_payload() -> None:
    """agent_events/sinks.rs EventLogSink writes the owner in headers.execution_id and
    payload.execution_id; a line where they differ is refused."""
    line = json.loads((EXAMPLES / "run-record.tape-record.json").read_text())
    assert VALIDATOR.validate("run-record.tape-record", line) == []
    line["event"]["headers"]["execution_id"] = "hxe-019c13e0-8080-7000-8000-000000000002"
    assert [f.code for f in VALIDATOR.validate("run-record.tape-record", line)] == ["same_value"]


NOT_DOCUMENTS = {
    # A description of Rust types, not a document.
    "serde-shapes.json",
    # A reader input relying on Harn's serde defaults (test above).
    "runs-view-unowned-evidence.input.json",
    # A historical span: "Harn still accepts that name when loading historical records,
    # while newly persisted records use parent_span_id" (loads with historical=True).
    "span.historical-parent-id.json",
}


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in UPSTREAM.glob("*.json") if p.name not in NOT_DOCUMENTS),
)
def test_check_passes_every_harn_document(name: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "session_contracts", "check", str(UPSTREAM / name)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
