"""The engine alone: jsonschema-rs on the contract schemas without our x- keywords.

What `validate` and `check` are compared with: the same documents, read
with ``json.loads`` (no strict reading: duplicate keys, NaN and deep nesting pass)
and validated by jsonschema-rs against the schemas with every ``x-`` keyword
removed (no x- rules), formats checked as ours are.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs

from session_contracts.validation.schema_set import SchemaSet

_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Keywords whose value maps names to subschemas: a member named "x-..." there is a
# property, not a keyword, and stays.
_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def without_x_keywords(schema: Any) -> Any:
    if isinstance(schema, list):
        return [without_x_keywords(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key.startswith("x-"):
            continue
        if key in _NAME_MAPS and isinstance(value, dict):
            out[key] = {name: without_x_keywords(item) for name, item in value.items()}
        else:
            out[key] = without_x_keywords(value)
    return out


def engine_validators(schema_set: SchemaSet) -> dict[str, Any]:
    """A jsonschema-rs validator per document type, x- keywords removed."""
    registry = jsonschema_rs.Registry(
        [(name, without_x_keywords(schema)) for name, schema in schema_set.schemas.items()]
    )
    return {
        name: jsonschema_rs.validator_for(
            {"$schema": _DIALECT, "$ref": document_type.ref},
            registry=registry,
            validate_formats=True,
        )
        for name, document_type in schema_set.document_types.items()
    }
