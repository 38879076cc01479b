"""Hypothesis strategies for every document type, built from the schemas.

:mod:`from_schema` compiles each document type's schema into a strategy once;
it draws schema-shaped data but not our x- rules.  Each draw is therefore
mended with the fixes the x- keywords themselves propose, then validated by the
real validator: only valid documents come out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import urljoin

from hypothesis import strategies as st

from session_contracts.conformance.judge.cases.from_schema import SchemaStrategies
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER
from session_contracts.validation.validator import DocumentValidator, default_validator

__all__ = ["apply_fix", "bundled_schema", "documents", "object_paths", "repair"]


def _walk_refs(node: Any, rewrite: Any) -> Any:
    if isinstance(node, dict):
        out = {key: _walk_refs(value, rewrite) for key, value in node.items()}
        if isinstance(out.get("$ref"), str):
            out["$ref"] = rewrite(out["$ref"])
        return out
    if isinstance(node, list):
        return [_walk_refs(item, rewrite) for item in node]
    return node


def bundled_schema(validator: DocumentValidator, doctype: str) -> dict[str, Any]:
    """One self-contained schema for a document type: external $defs copied in."""
    schema_set = validator.schema_set
    document_type = schema_set.document_type(doctype)
    defs: dict[str, Any] = {}
    pending = [document_type.schema_id]
    done: set[str] = set()

    def local_name(schema_id: str, name: str) -> str:
        if schema_id == document_type.schema_id:
            return name
        stem = schema_id.rsplit("/", 1)[-1].removesuffix(".schema.json").replace("-", "_")
        return f"{stem}__{name}"

    while pending:
        schema_id = pending.pop()
        if schema_id in done:
            continue
        done.add(schema_id)
        schema = schema_set.schemas[schema_id]

        def rewrite(ref: str, base: str = schema_id) -> str:
            target = urljoin(base, ref)
            target_id, _, fragment = target.partition("#")
            if target_id not in done:
                pending.append(target_id)
            return "#/$defs/" + local_name(target_id, fragment.removeprefix("/$defs/"))

        for name, definition in schema.get("$defs", {}).items():
            defs[local_name(schema_id, name)] = _walk_refs(definition, rewrite)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": "#/$defs/" + document_type.pointer.removeprefix("#/$defs/"),
    }


def apply_fix(document: Any, where: list[str | int], operation: str, value: Any) -> None:
    """Set or delete the member at ``where`` inside ``document`` (in place)."""
    if not where:
        return
    node = document
    for part in where[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    last = where[-1]
    if operation == "set" and isinstance(node, dict | list):
        try:
            node[last] = value  # type: ignore[index]
        except (IndexError, TypeError):
            return
    elif operation == "delete" and isinstance(node, dict):
        node.pop(last, None)


def repair(validator: DocumentValidator, doctype: str, document: Any) -> Any:
    """Mend x- rule violations with the fixes the keywords propose."""
    if validator.is_valid(doctype, document):
        return document
    document = copy.deepcopy(document)
    for _ in range(8):
        found = validator.violations(doctype, document)
        if not found:
            break
        for base, violation in found:
            if not violation.where and not base and violation.fix:
                # A root-level scalar fix: replace the whole document.
                for operation, where, value in violation.fix:
                    if operation == "set" and not where:
                        document = value
                continue
            for operation, where, value in violation.fix:
                apply_fix(document, [*base, *where], operation, value)
    return document


@cache
def _schema_strategy(doctype: str) -> st.SearchStrategy[Any]:
    """The schema's strategy, compiled once per document type and process."""
    return SchemaStrategies(bundled_schema(default_validator(), doctype)).root()


def _json_safe(value: Any) -> bool:
    """Every integer within JavaScript's safe range, as every producer must accept."""
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, bool):
            continue
        if isinstance(node, int) and abs(node) > MAX_SAFE_INTEGER:
            return False
        if isinstance(node, dict):
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return True


def documents(doctype: str, validator: DocumentValidator | None = None) -> st.SearchStrategy[Any]:
    """Valid documents of ``doctype``, x- rules included."""
    checker = validator or default_validator()
    return (
        _schema_strategy(doctype)
        .map(lambda document: repair(checker, doctype, document))
        .filter(lambda document: checker.is_valid(doctype, document) and _json_safe(document))
    )


def object_paths(document: Any) -> list[list[str | int]]:
    """The location of every JSON object in ``document``, outermost first."""
    found: list[list[str | int]] = []
    pending: list[tuple[Any, list[str | int]]] = [(document, [])]
    while pending:
        node, where = pending.pop(0)
        if isinstance(node, Mapping):
            found.append(where)
            pending.extend((value, [*where, key]) for key, value in node.items())
        elif isinstance(node, list):
            pending.extend((value, [*where, index]) for index, value in enumerate(node))
    return found
