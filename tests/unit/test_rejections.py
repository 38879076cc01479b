"""The rejection vocabulary is one table, published in the protocol schema and in
docs/protocol.md; every code our validator and reference can answer is in it; a
rejection is judged by path and class; the reference reports every finding."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from session_contracts.conformance.protocol import Rejected
from session_contracts.conformance.reference.producer import HANDLERS, MAX_REJECTION_FINDINGS
from session_contracts.errors import json_path
from session_contracts.rejections import (
    CLASSES,
    REJECTION_CODES,
    RejectionFinding,
    agreement,
    answered_findings,
    rejection_class,
)
from session_contracts.validation.validator import KIND_CODES, default_validator, snake_name

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "schemas" / "producer-protocol.schema.json"
PROTOCOL_DOC = REPO / "docs" / "protocol.md"


# -- one source, published twice ----------------------------------------------------------------
def test_the_schema_publishes_the_vocabulary() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["$defs"]["RejectionCode"]["enum"] == list(REJECTION_CODES)
    assert schema["x-rejectionClasses"] == dict(REJECTION_CODES)
    assert set(REJECTION_CODES.values()) == set(CLASSES)
    rejection = schema["$defs"]["Rejection"]["properties"]
    assert rejection["code"] == {"$ref": "#/$defs/RejectionCode"}


def _docs_table() -> dict[str, list[str]]:
    text = PROTOCOL_DOC.read_text()
    section = text.split("### Rejection codes", 1)[1].split("\n### ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = re.findall(r"`([^`]+)`", cells[1])
    return rows


def test_the_docs_table_equals_the_vocabulary() -> None:
    by_class: dict[str, list[str]] = {}
    for code, kind in REJECTION_CODES.items():
        by_class.setdefault(kind, []).append(code)
    assert _docs_table() == by_class
    assert list(_docs_table()) == list(CLASSES)


# -- every code we can answer is in it ----------------------------------------------------------
# Codes in the scanned modules that never reach a protocol rejection, and why.
NOT_REJECTIONS = {
    # feedback's own wire rejections and states: part of a feedback.run result
    "request_conflict", "session_version_conflict", "session_missing",
    "usage_conflicting_sample", "usage_counter_decreased", "usage_future_timestamp",
    "usage_older_observation", "age_exceeded", "contract_mismatch", "no_session",
    "client_capability_unknown", "not_recorded",
    # recap availability states: part of a recap.project result
    "admission_terminal", "journal_unavailable", "projection_failed",
    # tool failures (the reference errs; the input is not at fault)
    "feedback_store_unavailable", "feedback_store_write_failed", "journal_corrupt",
    "journal_write_failed", "journal_write_rejected", "journal_missing",
    # `journal import`'s own refusal of a file (a command's finding, not a case input)
    "mixed_event_forms",
    # hash verification of stored documents (`verify`, `check`), not a case input
    "content_hash_mismatch", "projection_hash_mismatch", "record_hash_mismatch",
    "source_bounds_mismatch", "source_event_missing", "source_events_not_increasing",
    "extension_binding_stale",
    # the recap adapters' transports (HTTP, ACP): never a protocol case
    "duplicate_parameter", "invalid_utf8", "session_id_mismatch", "method_not_found",
    "http_error", "invalid_http", "overloaded",
    # `serve`'s own start-up (a usage error of the command, exit 2)
    "serve_host_invalid", "serve_port_invalid", "serve_port_busy",
    # run-record evidence gaps and parse warnings: part of a runrecord result
    "owner_not_recorded", "loop_state_malformed", "tool_call_unparsed", "projection_invalid",
    # constants that name things (a gap component, an event kind), not findings
    "completion_receipt", "execution_identity", "prior_measured_turns",
    "provider_call_response", "tool_calls",
}  # fmt: skip

SCANNED = [
    REPO / "session_contracts" / "validation/validator.py",
    REPO / "session_contracts" / "validation/xkeywords.py",
    REPO / "session_contracts" / "jsontext/strict.py",
    REPO / "session_contracts" / "jsontext/canonical.py",
    REPO / "session_contracts" / "errors.py",
    *sorted((REPO / "conformance" / "reference").rglob("*.py")),
]
_CODE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$|^(required|maximum|minimum|not|contains)$")


def _literal_codes(path: Path) -> set[str]:
    """Code-shaped string constants passed where a finding's code goes: the second
    argument of Finding and Violation, the first of Rejected and of the modules' own
    error helpers, and module constants (``SPAN_CYCLE: Final = "span_cycle"``)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
            position = {"Finding": 1, "Violation": 1}.get(name, 0)
            helper = name in ("Rejected", "_error", "_refusal", "_store_error", "unavailable")
            if (name in ("Finding", "Violation") or helper) and len(node.args) > position:
                arg = node.args[position]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Constant):
            value = node.value.value
            target = getattr(node.target, "id", "")
            if isinstance(value, str) and target.isupper() and _CODE.match(value):
                found.add(value)
    return {code for code in found if _CODE.match(code)}


def test_every_literal_code_is_in_the_vocabulary_or_never_a_rejection() -> None:
    codes = set().union(*(_literal_codes(path) for path in SCANNED))
    assert {"unknown_field", "span_cycle", "alias_conflict", "json_duplicate_key"} <= codes
    missing = sorted(codes - set(REJECTION_CODES) - NOT_REJECTIONS)
    assert missing == [], f"codes our reference can answer but the vocabulary lacks: {missing}"


_ASSERTIONS = {
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties",
    "required", "dependentRequired", "format", "not", "contains", "additionalProperties",
    "oneOf", "anyOf", "propertyNames",
}  # fmt: skip
_SPECIAL = {
    "type": "wrong_type",
    "enum": "not_allowed_value",
    "const": "not_allowed_value",
    "required": "required",
    "dependentRequired": "required",
    "additionalProperties": "unknown_field",
    "oneOf": "no_matching_variant",
    "anyOf": "no_matching_variant",
}


def _keywords(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            out.add(key)
            if key in ("properties", "$defs", "patternProperties", "dependentSchemas"):
                for item in value.values() if isinstance(value, dict) else ():
                    _keywords(item, out)
            elif not key.startswith("x-"):
                _keywords(value, out)
    elif isinstance(node, list):
        for item in node:
            _keywords(item, out)


def test_every_schema_keyword_code_is_in_the_vocabulary() -> None:
    used: set[str] = set()
    for schema in default_validator().schema_set.schemas.values():
        _keywords(schema, used)
    codes = {_SPECIAL.get(k, snake_name(k)) for k in used & _ASSERTIONS}
    codes |= set(KIND_CODES.values())
    assert {"max_items", "min_length", "unique_items", "exclusive_minimum"} <= codes
    assert sorted(codes - set(REJECTION_CODES)) == []


# -- judging --------------------------------------------------------------------------------------
REFERENCE = (
    RejectionFinding("max_utf8_bytes", "$.document.summary"),
    RejectionFinding("unknown_field", "$.document.extra"),
)


@pytest.mark.parametrize(
    ("answered", "verdict"),
    [
        ([("max_utf8_bytes", "$.document.summary")], ""),
        ([("max_length", "$.document.summary")], ""),  # same class, another code
        ([("unknown_field", "$.document.extra")], ""),  # not the reference's first
        ([("unknown_field", "$.document.extra"), ("max_length", "$.document.summary")], ""),
        ([("bogus", "$")], "rejection_code_unknown"),
        ([("unknown_field", "$")], "rejection_path_differs"),
        ([("unknown_field", "$.document")], "rejection_path_differs"),
        ([("wrong_type", "$.document.extra")], "rejection_class_differs"),
        ([("unknown_field", "$.document.extra"), ("wrong_type", "$.x")], "rejection_path_differs"),
        ([], "rejection_empty"),
    ],
)
def test_a_rejection_agrees_by_path_and_class(
    answered: list[tuple[str, str]], verdict: str
) -> None:
    result = agreement(REFERENCE, [RejectionFinding(code, path) for code, path in answered])
    assert result.agreed == (verdict == "")
    assert result.code == verdict
    if verdict:
        # The message says what the reference found and what the producer answered.
        assert "max_utf8_bytes at $.document.summary" in result.message
        assert result.hint


def test_answered_findings_reads_old_and_new_answers() -> None:
    old = {"code": "required", "path": "$.query.sessionId", "message": "missing"}
    assert answered_findings(old) == (RejectionFinding("required", "$.query.sessionId"),)
    new = dict(
        old,
        findings=[
            {"code": "required", "path": "$.query.sessionId"},
            {"code": "minimum", "path": "$.query.limit"},
        ],
    )
    assert [f.code for f in answered_findings(new)] == ["required", "minimum"]
    assert rejection_class("max_length") == rejection_class("max_utf8_bytes") == "limit"
    assert rejection_class("bogus") is None


def test_the_protocol_schema_takes_old_answers_and_refuses_codes_outside_the_vocabulary() -> None:
    validator = default_validator()
    old = {
        "seq": 1,
        "outcome": "rejected",
        "rejection": {"code": "required", "path": "$.a", "message": ""},
    }
    assert validator.validate("producer-protocol.response", old) == []
    listed = json.loads(json.dumps(old))
    listed["rejection"]["findings"] = [{"code": "required", "path": "$.a"}]
    assert validator.validate("producer-protocol.response", listed) == []
    bogus = json.loads(json.dumps(old))
    bogus["rejection"]["code"] = "bogus"
    (finding,) = validator.validate("producer-protocol.response", bogus)
    assert finding.path == "$.rejection.code"


# -- the path grammar -----------------------------------------------------------------------------
PATH_VECTORS = [
    ((), "$"),
    (("query", "limit"), "$.query.limit"),
    (("events", 12, "id"), "$.events[12].id"),
    (
        ("run", "spans", 0, "metadata", "harn.execution.id"),
        "$.run.spans[0].metadata['harn.execution.id']",
    ),
    (("document", "extensions", "my-key"), "$.document.extensions['my-key']"),
    (("document", "extensions", "1st"), "$.document.extensions['1st']"),
    (("document", "extensions", "it's"), "$.document.extensions['it\\'s']"),
    (("document", "extensions", "a\\b"), "$.document.extensions['a\\\\b']"),
    (("document", "extensions", "naïve"), "$.document.extensions['naïve']"),
    (("document", "extensions", ""), "$.document.extensions['']"),
]


@pytest.mark.parametrize(("parts", "path"), PATH_VECTORS)
def test_paths_follow_the_documented_grammar(parts: tuple[str | int, ...], path: str) -> None:
    assert json_path(parts) == path
    assert f"`{path}`" in PROTOCOL_DOC.read_text()


# -- the reference reports every finding ----------------------------------------------------------
def _event(event_id: int, **changes: Any) -> dict[str, Any]:
    event = {
        "id": event_id,
        "sessionId": "s1",
        "runId": None,
        "turnId": None,
        "iteration": None,
        "executionId": None,
        "topic": "session",
        "kind": "message",
        "recordedAtUnixMs": 1700000000000,
        "payload": {"role": "user", "visibility": None, "text": "hi"},
    }
    event.update(changes)
    return event


def _rejection(operation: str, case: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(Rejected) as caught:
        HANDLERS[operation](case)
    return caught.value.to_json()


def test_the_reference_reports_every_finding_sorted_with_the_first_on_top() -> None:
    case = {
        "events": [_event(1, kind="nope"), _event(2, bogus=1), _event(1)],
        "query": {"limit": -1, "session_id": "a", "sessionId": "b"},
    }
    rejection = _rejection("recap.project", case)
    found = [(f["code"], f["path"]) for f in rejection["findings"]]
    assert found == [
        ("not_allowed_value", "$.events[0].kind"),
        ("unknown_field", "$.events[1].bogus"),
        ("events_not_increasing", "$.events[2].id"),
        ("minimum", "$.query.limit"),
        ("alias_conflict", "$.query.session_id"),
    ]
    assert (rejection["code"], rejection["path"]) == found[0]


@pytest.mark.parametrize("ids", [[2, 1], [1, 1]])
@pytest.mark.parametrize("operation", ["recap.project", "runrecord.project"])
def test_non_increasing_event_ids_are_rejected_not_errored(ids: list[int], operation: str) -> None:
    case: dict[str, Any] = {"events": [_event(i) for i in ids]}
    case.update({"query": {"sessionId": "s1"}} if operation == "recap.project" else {"run": {}})
    rejection = _rejection(operation, case)
    assert (rejection["code"], rejection["path"]) == ("events_not_increasing", "$.events[1].id")


def test_an_unsafe_integer_in_an_open_payload_is_rejected_at_the_number() -> None:
    case = {"events": [_event(1, kind="other", payload={"n": 2**60})], "query": {"sessionId": "s1"}}
    rejection = _rejection("recap.project", case)
    assert (rejection["code"], rejection["path"]) == (
        "canonical_unsafe_integer",
        "$.events[0].payload.n",
    )
    assert rejection_class(rejection["code"]) == rejection_class("unsafe_integer")


def test_a_missing_query_is_rejected() -> None:
    rejection = _rejection("recap.project", {"events": []})
    assert (rejection["code"], rejection["path"]) == ("required", "$.query")


@pytest.mark.parametrize(
    "query", [{"sessionId": "a", "session_id": "a"}, {"session_id": "a", "sessionId": "a"}]
)
def test_alias_conflict_names_the_snake_case_spelling(query: dict[str, Any]) -> None:
    rejection = _rejection("recap.project", {"events": [], "query": query})
    assert (rejection["code"], rejection["path"]) == ("alias_conflict", "$.query.session_id")


def test_a_query_comes_back_in_canonical_camel_case() -> None:
    envelope = HANDLERS["recap.project"](
        {"events": [_event(1)], "query": {"session_id": "s1", "from_event_id": 1}}
    )
    assert envelope["snapshot"]["query"] == {
        "sessionId": "s1",
        "runId": None,
        "turnId": None,
        "fromEventId": 1,
        "limit": None,
    }


def test_a_rejection_of_many_findings_stays_within_the_protocol() -> None:
    # 1,200 bad events: the answer lists the first 1,000 findings by path, as the
    # schema allows, and still validates as a protocol response.
    events = [_event(i, bogus=1) for i in range(1200)]
    rejection = _rejection("recap.project", {"events": events, "query": {"sessionId": "s1"}})
    assert len(rejection["findings"]) == MAX_REJECTION_FINDINGS
    response = {"seq": 0, "outcome": "rejected", "rejection": rejection}
    assert default_validator().validate("producer-protocol.response", response) == []
