"""The schemas themselves: valid draft 2020-12, closed everywhere, x- keywords known."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from schema_walk import object_schemas

from session_contracts.validation.schema_set import default_schema_set
from session_contracts.validation.xkeywords import ANNOTATION_KEYWORDS, CHECK_KEYWORDS

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = sorted(
    p for p in (REPO / "schemas").glob("*.schema.json") if "x-documentTypes" in p.read_text()
)
SCHEMA_FILES = sorted((REPO / "schemas").glob("*.schema.json"))

# Objects the seeds call opaque or forward-compatible, by definition name.
OPEN_BY_DESIGN = {
    "Extensions",  # seed 002: forward-compatible data belongs in extensions
    "ProviderToolCall",  # seed 003: provider-native receipt
    "ProviderCallResponse",  # Harn's dump_llm_response: a json! literal that grows between versions
    "RecapQuery",  # a recap query as received: Harn's runtime ignores members it does not name
}
OPEN_PROPERTIES = {
    "metadata",  # span metadata (seed 003) and the opaque tape payload
    "payload",
    "arguments",
    "receipts",
    "value",
    "attributes",  # span link and span event attributes (Harn's crate::tracing types, seed 003)
    "headers",  # Harn's LogEvent.headers: BTreeMap<String, String> (event_log/mod.rs)
    "input",  # a producer-protocol case input: shaped per operation (docs/protocol.md)
    "context",  # what a producer reports about its own error
}


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(path: Path) -> None:
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "/v1/" in schema["$id"], "every $id is versioned"


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_object_schema_states_additional_properties(path: Path) -> None:
    # An object schema without it becomes a pydantic model that silently drops
    # unknown keys (codegen-facts.md), so the closed contract would leak.
    schema = json.loads(path.read_text())
    unstated = [
        where
        for where, node in object_schemas(schema)
        if where.rsplit("/", 2)[-2:] != ["if", ""]  # `if` probes are not object schemas
        and "/if" not in where
        and "/then" not in where
        and "/contains" not in where
        and "additionalProperties" not in node
        and "unevaluatedProperties" not in node
    ]
    assert not unstated, f"object schemas without additionalProperties: {unstated}"


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.name)
def test_only_designated_objects_are_open(path: Path) -> None:
    schema = json.loads(path.read_text())
    open_objects = []
    for where, node in object_schemas(schema):
        if node.get("additionalProperties", False) is False:
            continue
        name = where.split("/")[-1]
        if name in OPEN_BY_DESIGN or name in OPEN_PROPERTIES or where.endswith("/items"):
            continue
        if "/if" in where or "/then" in where or "/loop_state" in where:
            continue
        open_objects.append(where)
    assert not open_objects, f"open objects outside extensions and opaque payloads: {open_objects}"


def _x_keywords(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key.startswith("x-"):
                yield key
            yield from _x_keywords(value)
    elif isinstance(node, list):
        for value in node:
            yield from _x_keywords(value)


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_x_keyword_is_known_and_documented(path: Path) -> None:
    known = set(CHECK_KEYWORDS) | ANNOTATION_KEYWORDS
    docs = (REPO / "docs" / "x-keywords.md").read_text()
    for keyword in set(_x_keywords(json.loads(path.read_text()))):
        assert keyword in known, f"{keyword} is not implemented by the validator"
        assert f"`{keyword}`" in docs, f"{keyword} is not documented in docs/x-keywords.md"


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_x_keyword_usage_matches_the_meta_schema(path: Path) -> None:
    meta = json.loads((REPO / "schemas" / "meta" / "x-keywords.schema.json").read_text())
    jsonschema.Draft202012Validator(meta).validate(json.loads(path.read_text()))


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.name)
def test_contract_roots_hold_no_ref(path: Path) -> None:
    # A root $ref to a oneOf definition makes datamodel-code-generator emit the
    # union as the root model and drop the named class the document type needs.
    assert "$ref" not in json.loads(path.read_text())


def test_the_seed_file_names_are_used() -> None:
    names = {p.name for p in SCHEMA_FILES}
    assert {"session-recap-v1.schema.json", "session-health.schema.json"} <= names
    assert {"session-feedback.schema.json", "run-record.schema.json"} <= names


def test_document_types_cover_the_required_list() -> None:
    required = {
        "session-health.fact",
        "session-health.acp-notification",
        "session-health.a2a-status-update",
        "session-feedback.client-info",
        "session-feedback.progress",
        "session-feedback.usage",
        "session-feedback.checkpoint",
        "session-feedback.checkpoint-receipt",
        "session-feedback.observation",
        "session-recap.query",
        "session-recap.envelope",
        "session-recap.snapshot",
        "run-record.record",
        "run-record.evidence",
        "run-record.span",
        "run-record.provider-call-response",
        "run-record.tape-entry",
    }
    assert required <= set(default_schema_set().document_types)


def test_every_document_type_has_a_valid_bundled_example() -> None:
    from session_contracts.jsontext.strict import loads_strict
    from session_contracts.validation.validator import default_validator

    validator = default_validator()
    for name in validator.schema_set.document_types:
        path = REPO / "schemas" / "examples" / f"{name}.json"
        assert path.is_file(), f"no example for {name}: add schemas/examples/{name}.json"
        assert validator.validate(name, loads_strict(path.read_bytes())) == [], name
