"""Decode JSON into the generated typed models and encode them back.

``decode`` is the strict door: strict JSON, input aliases, the schema with its
x- rules, then the pydantic model (closed everywhere but ``extensions``).
``encode`` gives back the same JSON value: absent stays absent, null stays
null, wire names keep their case, ``extensions`` comes back verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic

from session_contracts.errors import Finding, InvalidDocument, json_path, json_path_steps
from session_contracts.jsontext.strict import loads_strict
from session_contracts.jsontext.wire import dumps_wire
from session_contracts.validation.validator import (
    DocumentValidator,
    apply_historical_aliases,
    apply_input_aliases,
    default_validator,
)

__all__ = ["decode", "decode_unchecked", "encode", "encode_json", "model_class"]


def model_class(doctype: str) -> type[pydantic.BaseModel]:
    """The generated model class of a document type."""
    from session_contracts.generated import DOCUMENT_TYPES

    default_validator().schema_set.document_type(doctype)  # a clear error for unknown names
    cls: type[pydantic.BaseModel] = DOCUMENT_TYPES[doctype]
    return cls


def _located(value: Any, loc: Sequence[int | str]) -> list[str | int]:
    # pydantic puts union tags and model names into ``loc``; keep only the
    # steps that exist in the document, so the path is a real JSON path.
    where: list[str | int] = []
    node = value
    for part in loc:
        in_object = isinstance(node, dict) and isinstance(part, str) and part in node
        in_array = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_object or in_array:
            node = node[part]
            where.append(part)
    return where


def pydantic_findings(error: pydantic.ValidationError, value: Any) -> list[Finding]:
    findings = []
    for item in error.errors(include_url=False):
        kind = item["type"]
        code = {
            "extra_forbidden": "unknown_field",
            "missing": "required",
            "union_tag_invalid": "no_matching_variant",
        }.get(kind, kind)
        where = _located(value, item["loc"])
        if kind in ("missing", "extra_forbidden") and item["loc"]:
            last = item["loc"][-1]
            if isinstance(last, str) and (not where or where[-1] != last):
                where.append(last)
        findings.append(
            Finding(json_path(where), code, item["msg"], "see the schema of this document type")
        )
    return sorted(set(findings))


def decode(
    doctype: str,
    data: bytes | str | Any,
    *,
    validator: DocumentValidator | None = None,
    historical: bool = False,
) -> pydantic.BaseModel:
    """Parse (if given text), validate and build the typed model of ``doctype``.

    ``historical=True`` loads records written before the current contract:
    names the schema lists in x-historicalAliases (a span's ``parent_id``) are
    read as their current names, and :func:`encode` writes the current names.
    Raises :class:`InvalidDocument` with every finding, each with a JSON path.
    """
    validator = validator or default_validator()
    document_type = validator.schema_set.document_type(doctype)
    value = (
        loads_strict(bytes(data) if isinstance(data, bytearray) else data)
        if isinstance(data, bytes | bytearray | str)
        else data
    )
    value, findings = apply_input_aliases(document_type, value)
    if historical:
        value, more = apply_historical_aliases(validator.schema_set, document_type, value)
        findings += more
    findings += validator.validate(doctype, value)
    if findings:
        raise InvalidDocument(sorted(set(findings)))
    try:
        return decode_unchecked(doctype, value)
    except InvalidDocument as exc:
        if not all(finding.code == "int_type" for finding in exc.findings):
            raise
        # The schema pass accepted an integral float such as 1.0 where the contract says
        # integer (JSON Schema's integer is any number without a fraction; a member that
        # needs an integer literal, x-jsSafeInteger, never gets here), but the strict
        # bindings refuse it: the number keeps its value and becomes the integer it is.
        integral = _integers_at(value, [finding.path for finding in exc.findings])
        return decode_unchecked(doctype, integral)


def _integers_at(document: Any, paths: Sequence[str]) -> Any:
    """``document`` with the integral float at each of ``paths`` as an integer; every
    other value (a float in ``extensions`` among them) as given."""
    for path in paths:
        steps = json_path_steps(path)
        if steps is not None:
            document = _integer_at(document, steps)
    return document


def _integer_at(value: Any, steps: Sequence[str | int]) -> Any:
    if not steps:
        return int(value) if isinstance(value, float) and value.is_integer() else value
    step, rest = steps[0], steps[1:]
    if isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
        return [_integer_at(item, rest) if i == step else item for i, item in enumerate(value)]
    if isinstance(value, dict) and isinstance(step, str) and step in value:
        return {
            key: _integer_at(item, rest) if key == step else item for key, item in value.items()
        }
    return value


def decode_unchecked(doctype: str, value: Any) -> pydantic.BaseModel:
    """Build the model with the bindings alone (no schema pass): closed, strict types."""
    cls = model_class(doctype)
    try:
        return cls.model_validate(value, by_name=False)
    except pydantic.ValidationError as exc:
        raise InvalidDocument(pydantic_findings(exc, value)) from None


def encode(model: pydantic.BaseModel) -> Any:
    """The JSON value of a model, with wire names and without absent members."""
    return model.model_dump(mode="json", by_alias=True)


def encode_json(model: pydantic.BaseModel) -> bytes:
    """Compact JSON bytes of :func:`encode` (keys in schema order, not canonical)."""
    return dumps_wire(encode(model))
