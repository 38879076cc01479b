"""Which validators get our x- keywords: only where a check keyword is in reach."""

from __future__ import annotations

from typing import Any

from session_contracts.validation.validator import _reaches_check_keyword, default_validator

A = "https://example.test/a.json"
B = "https://example.test/b.json"


def _schemas(b_defs: dict[str, Any]) -> dict[str, Any]:
    return {
        A: {"$id": A, "$defs": {"top": {"properties": {"x": {"$ref": "b.json#/$defs/leaf"}}}}},
        B: {"$id": B, "$defs": b_defs},
    }


def test_a_keyword_reached_through_a_reference_counts() -> None:
    schemas = _schemas({"leaf": {"type": "string", "x-maxUtf8Bytes": 8}})
    assert _reaches_check_keyword(schemas, {"$ref": f"{A}#/$defs/top"})


def test_a_keyword_out_of_reach_does_not() -> None:
    schemas = _schemas(
        {
            "leaf": {"allOf": [{"$ref": "#/$defs/list/0"}]},
            "list": [{}],
            "other": {"x-maxUtf8Bytes": 8},
        }
    )
    assert not _reaches_check_keyword(schemas, {"$ref": f"{A}#/$defs/top"})


def test_what_the_walk_cannot_follow_counts() -> None:
    unknown = _schemas({"leaf": {"$ref": "https://example.test/missing.json"}})
    anchor = _schemas({"leaf": {"$ref": "#named"}})
    nested_id = _schemas({"leaf": {"$id": "https://example.test/c.json"}})
    dynamic = _schemas({"leaf": {"$dynamicRef": "#meta"}})
    dangling = _schemas({"leaf": {"$ref": "#/$defs/nothing/0"}})
    for schemas in (unknown, anchor, nested_id, dynamic, dangling):
        assert _reaches_check_keyword(schemas, {"$ref": f"{A}#/$defs/top"})


def test_the_recap_types_reach_no_check_keyword_and_an_event_does() -> None:
    validator = default_validator()
    schemas = validator.schema_set.schemas
    for name in ("session-recap.envelope", "session-recap.snapshot", "session-recap.query"):
        assert not _reaches_check_keyword(
            schemas, {"$ref": validator.schema_set.document_type(name).ref}
        )
    assert _reaches_check_keyword(
        schemas, {"$ref": validator.schema_set.document_type("session-event.event").ref}
    )
