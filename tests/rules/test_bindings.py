"""The generated bindings: closed contract, exact round-trip, extensions kept verbatim."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts import InvalidDocument
from session_contracts.bindings import decode, decode_unchecked, encode, encode_json
from session_contracts.conformance.judge.cases.documents import documents, object_paths
from session_contracts.validation.schema_set import default_schema_set
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

DOCTYPES = sorted(default_schema_set().document_types)
# A tape entry's payload is opaque, but a provider_call_response payload is closed
# by an if/then on the entry's kind (run-record.schema.json#/$defs/TapeEntry).
# Where a payload's schema depends on a sibling (the event kind), by the path of the payload.
CONDITIONALLY_CLOSED = {
    ("run-record.tape-entry", ("payload",)),
    ("run-record.tape-record", ("event", "payload")),
}
EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"


def _at(document: Any, where: list[str | int]) -> Any:
    for part in where:
        document = document[part]
    return document


def _json_path(where: list[str | int]) -> str:
    from session_contracts import json_path

    return json_path(where)


@pytest.mark.sentence("recap.generated-languages")
@pytest.mark.parametrize("doctype", DOCTYPES)
def test_generated_documents_validate_and_round_trip(doctype: str) -> None:
    @given(documents(doctype))
    def check(document: Any) -> None:
        assert default_validator().validate(doctype, document) == []
        encoded = encode(decode(doctype, document))
        assert json_equal(encoded, _canonical_query(doctype, document))

    check()


def _canonical_query(doctype: str, document: Any) -> Any:
    return document  # generated queries use canonical names; aliases are tested below


@pytest.mark.parametrize("doctype", DOCTYPES)
def test_unknown_field_is_rejected_outside_extensions_and_kept_inside(doctype: str) -> None:
    @given(documents(doctype), st.data())
    def check(document: Any, data: st.DataObject) -> None:
        paths = object_paths(document)
        where = data.draw(st.sampled_from(paths), label="object path")
        mutated = copy.deepcopy(document)
        target = _at(mutated, where)
        key = "zz_unknown_field"
        if key in target:
            return
        target[key] = {"nested": [1, None]}
        # Whether this object is open is the schema's call (extensions, opaque
        # payloads); the bindings must agree with it either way.
        if default_validator().is_valid(doctype, mutated):
            encoded = encode(decode(doctype, mutated))
            assert json_equal(encoded, mutated), "open objects keep unknown data verbatim"
            return
        expected = _json_path([*where, key])
        with pytest.raises(InvalidDocument) as by_validator:
            decode(doctype, mutated)
        assert expected in {f.path for f in by_validator.value.findings}
        # The bindings alone (no schema pass) are closed too, except where the
        # closure is conditional (an if/then on a sibling member, which pydantic
        # models cannot state; `decode` enforces it through the schema).
        if any(
            (doctype, tuple(where[: len(prefix)])) == (closed, prefix)
            for closed, prefix in CONDITIONALLY_CLOSED
        ):
            return
        with pytest.raises(InvalidDocument) as by_model:
            decode_unchecked(doctype, mutated)
        assert expected in {f.path for f in by_model.value.findings}

    check()


def example(doctype: str) -> Any:
    return json.loads((EXAMPLES / f"{doctype}.json").read_text())


@pytest.mark.sentence("recap.extensions-preserved")
def test_extensions_come_back_verbatim() -> None:
    snapshot = example("session-recap.snapshot")
    snapshot["extensions"] = {
        "vendor.a": {"deep": {"deeper": [None, True, 1.5, -0.0, "é", {"x": None}]}},
        "vendor.b": None,
        "big": 9007199254740991,
        "camelCase": {"snake_case": 1},
    }
    encoded = encode(decode("session-recap.snapshot", snapshot))
    assert encoded["extensions"] == snapshot["extensions"]
    assert json_equal(encoded, snapshot)


def test_absent_stays_absent_and_null_stays_null() -> None:
    span = example("run-record.span")
    del span["ttft_ms"]
    span["parent_span_id"] = None
    encoded = encode(decode("run-record.span", span))
    assert "ttft_ms" not in encoded
    assert encoded["parent_span_id"] is None


def test_wire_names_keep_their_case() -> None:
    encoded = encode(decode("session-recap.snapshot", example("session-recap.snapshot")))
    assert {"schemaVersion", "sessionId", "contentHash", "projectionHash"} <= set(encoded)
    assert json.loads(encode_json(decode("session-recap.snapshot", encoded))) == encoded


def test_integers_up_to_the_safe_limit_stay_exact() -> None:
    usage = example("session-feedback.usage") | {
        "input_tokens": 9007199254740991,
        "cached_input_tokens": 9007199254740990,
    }
    encoded = encode(decode("session-feedback.usage", usage))
    assert encoded["input_tokens"] == 9007199254740991
    assert type(encoded["input_tokens"]) is int


@pytest.mark.parametrize(
    ("member", "value"),
    [("input_tokens", "3"), ("input_tokens", True), ("input_tokens", 3.0), ("coverage", 1)],
)
def test_bindings_alone_refuse_lax_coercion(member: str, value: Any) -> None:
    usage = example("session-feedback.usage") | {member: value}
    with pytest.raises(InvalidDocument) as caught:
        decode_unchecked("session-feedback.usage", usage)
    assert f"$.{member}" in {f.path for f in caught.value.findings}


def test_bindings_alone_refuse_snake_case_aliases_of_camel_case_names() -> None:
    snapshot = example("session-recap.snapshot")
    snapshot["schema_version"] = snapshot.pop("schemaVersion")
    with pytest.raises(InvalidDocument) as caught:
        decode_unchecked("session-recap.snapshot", snapshot)
    paths = {f.path for f in caught.value.findings}
    assert {"$.schema_version", "$.schemaVersion"} <= paths


def test_unknown_field_path_names_the_nested_member() -> None:
    envelope = example("session-recap.envelope")
    envelope["snapshot"]["coverage"]["extra"] = 1
    with pytest.raises(InvalidDocument) as caught:
        decode("session-recap.envelope", envelope)
    assert [f.path for f in caught.value.findings] == ["$.snapshot.coverage.extra"]


def test_query_aliases_decode_to_canonical_names() -> None:
    model = decode("session-recap.query", {"session_id": "s", "from_event_id": 4, "limit": 7})
    assert encode(model) == {"sessionId": "s", "fromEventId": 4, "limit": 7}


def test_decode_accepts_text_and_refuses_bad_json() -> None:
    assert decode("run-record.span", json.dumps(example("run-record.span"))) is not None
    with pytest.raises(InvalidDocument) as caught:
        decode("run-record.span", b'{"span_id": 1, "span_id": 2}')
    assert caught.value.findings[0].code == "json_duplicate_key"


@settings(max_examples=25)
@given(st.integers(min_value=0, max_value=2**53 - 1))
def test_safe_integers_round_trip_exactly(value: int) -> None:
    span = example("run-record.span") | {"start_ms": value}
    assert encode(decode("run-record.span", span))["start_ms"] == value


def test_historical_parent_id_loads_and_is_written_back_as_parent_span_id() -> None:
    record = example("run-record.record")
    for span in record["evidence"]["trace_spans"]:
        span["parent_id"] = span.pop("parent_span_id")
    with pytest.raises(InvalidDocument) as caught:
        decode("run-record.record", record)
    assert "$.evidence.trace_spans[0].parent_id" in {f.path for f in caught.value.findings}
    encoded = encode(decode("run-record.record", record, historical=True))
    spans = encoded["evidence"]["trace_spans"]
    assert [s["parent_span_id"] for s in spans] == [None, 3]
    assert all("parent_id" not in s for s in spans)


def test_historical_record_with_both_names_is_refused() -> None:
    span = example("run-record.span") | {"parent_id": 3}
    with pytest.raises(InvalidDocument) as caught:
        decode("run-record.span", span, historical=True)
    assert ("$.parent_id", "alias_conflict") in {(f.path, f.code) for f in caught.value.findings}


def test_decode_takes_an_integral_float_where_the_contract_says_integer() -> None:
    # JSON Schema's integer is any number without a fraction, so `validate` accepts 1.0;
    # decode must agree with it (the strict bindings alone would answer int_type).
    import json
    from pathlib import Path

    import session_contracts as sc

    fixture = (
        Path(__file__).resolve().parents[2]
        / "conformance/fixtures/health/a2a-completed-task-stays-completed.case.json"
    )
    fact = json.loads(fixture.read_text("utf-8"))["input"]["fact"]
    fact = {**fact, "schema_version": 1.0, "iteration": 4.0}
    assert sc.validate("session-health.fact", fact) == []
    model = sc.decode("session-health.fact", fact)
    assert (model.schema_version, model.iteration) == (1, 4)  # type: ignore[attr-defined]
    assert type(model.iteration) is int  # type: ignore[attr-defined]
