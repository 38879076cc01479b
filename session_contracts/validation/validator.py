"""Validate documents against the contract schemas, x- rules included.

Two engines give the same verdicts: the fast one compiles each document type
once with jsonschema-rs and plugs the x- keywords in as custom keywords; the
reference one is python-jsonschema extended with the same keyword functions
(the tests hold the two to agreement).  Both turn every error into a
:class:`~session_contracts.Finding` with a JSON path, a stable code and a hint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import jsonschema_rs
import orjson

from session_contracts.accel import speedups
from session_contracts.errors import Finding, json_path
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER
from session_contracts.validation.schema_set import DocumentType, SchemaSet, default_schema_set
from session_contracts.validation.xkeywords import (
    CHECK_KEYWORDS,
    CheckFunction,
    Violation,
    resolve_pointer,
)

if TYPE_CHECKING:
    # The reference engine is loaded on first use (a large invalid document, or
    # ``reference=True``): most runs never need it, and it costs 60 ms to import.
    import jsonschema
    import referencing

# Documents checked per call into the engine by ``all_valid``: one crossing per batch,
# and a bounded copy of them on the engine's side.
VALIDATION_BATCH = 1024

_SCAN_LEVELS = 200

__all__ = [
    "DocumentValidator",
    "apply_historical_aliases",
    "apply_input_aliases",
    "compact_text_may_hold_integral_float",
    "default_validator",
    "holds_integral_float",
]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_SEPARATOR = "\x1f"

_HINTS = {
    "required": "add the missing member",
    "wrong_type": "give the value the JSON type the schema names (no strings for numbers, "
    "no true for 1)",
    "not_allowed_value": "use one of the values the schema allows",
    "pattern": "match the pattern the schema gives",
    "min_length": "give a longer value",
    "max_length": "give a shorter value",
    "minimum": "give a larger number",
    "maximum": "give a smaller number",
    "max_items": "send fewer entries",
    "min_items": "send more entries",
    "max_properties": "this object must have fewer members",
    "no_matching_variant": "the value matches none of the allowed shapes; check its "
    "discriminator (such as state) and members",
    "not": "this combination of members is not allowed",
    "contains": "the array lacks an entry the rule requires",
    "unique_items": "remove the repeated entries",
    "format": "write the value in the format the schema names",
}


def snake_name(name: str) -> str:
    out = []
    for i, char in enumerate(name):
        if char.isupper() and i:
            out.append("_")
        out.append(char.lower())
    return "".join(out)


KIND_CODES = {
    "Type": "wrong_type",
    "Enum": "not_allowed_value",
    "Constant": "not_allowed_value",
    "OneOfNotValid": "no_matching_variant",
    "AnyOf": "no_matching_variant",
    "OneOfMultipleValid": "ambiguous_variant",
}


def _violation_error(violation: Violation) -> ValueError:
    return ValueError(
        _SEPARATOR.join(
            [violation.code, json.dumps(list(violation.where)), violation.message, violation.hint]
        )
    )


def _keyword_class(function: CheckFunction) -> type:
    class Keyword:
        def __init__(self, parent: Any, value: Any, schema_path: Any) -> None:
            self.value = value

        def iter_errors(self, instance: Any) -> Iterator[ValueError]:
            for violation in function(self.value, instance):
                yield _violation_error(violation)

        def validate(self, instance: Any) -> None:
            # Called for every value the keyword applies to: one generator, not two.
            for violation in function(self.value, instance):
                raise _violation_error(violation)

    return Keyword


_FAST_KEYWORDS = {name: _keyword_class(function) for name, function in CHECK_KEYWORDS.items()}


def apply_input_aliases(document_type: DocumentType, instance: Any) -> tuple[Any, list[Finding]]:
    """Rename input-side alias members to their canonical names (x-inputAliases)."""
    aliases = document_type.input_aliases
    if not aliases or not isinstance(instance, dict):
        return instance, []
    findings: list[Finding] = []
    renamed: dict[str, Any] = {}
    for key, value in instance.items():
        canonical = aliases.get(key)
        if canonical is None:
            renamed.setdefault(key, value)
            continue
        if canonical in instance:
            findings.append(
                Finding(
                    json_path([key]),
                    "alias_conflict",
                    f"{key} and {canonical} are two spellings of one field and both are given",
                    f"send only {canonical} (or only {key})",
                )
            )
            continue
        renamed[canonical] = value
    return renamed, findings


def apply_historical_aliases(
    schema_set: SchemaSet, document_type: DocumentType, instance: Any
) -> tuple[Any, list[Finding]]:
    """Rename names that historical records used (x-historicalAliases), wherever
    a definition carrying them applies; for loading old records only."""
    findings: list[Finding] = []

    def resolve(ref: str, base: str) -> tuple[Mapping[str, Any], str]:
        target = urljoin(base, ref)
        schema_id, _, fragment = target.partition("#")
        node: Any = schema_set.schemas[schema_id]
        for part in fragment.lstrip("/").split("/") if fragment else []:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node, schema_id

    def walk(schema: Any, base: str, value: Any, where: list[str | int], depth: int) -> Any:
        if not isinstance(schema, Mapping) or depth > 64:
            return value
        if "$ref" in schema:
            target, target_base = resolve(schema["$ref"], base)
            value = walk(target, target_base, value, where, depth + 1)
        for keyword in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(keyword, ()):
                value = walk(branch, base, value, where, depth + 1)
        if isinstance(value, dict):
            aliases = schema.get("x-historicalAliases")
            if isinstance(aliases, Mapping):
                value = dict(value)
                for old, new in aliases.items():
                    if old in value:
                        if new in value:
                            findings.append(
                                Finding(
                                    json_path([*where, old]),
                                    "alias_conflict",
                                    f"{old} (historical) and {new} are both given",
                                    f"keep only {new}",
                                )
                            )
                            continue
                        value[new] = value.pop(old)
            properties = schema.get("properties", {})
            for key, child in properties.items():
                if key in value:
                    value[key] = walk(child, base, value[key], [*where, key], depth + 1)
        elif isinstance(value, list) and "items" in schema:
            value = [
                walk(schema["items"], base, item, [*where, index], depth + 1)
                for index, item in enumerate(value)
            ]
        return value

    start = {"$ref": document_type.ref}
    result = walk(start, document_type.schema_id, instance, [], 0)
    return result, findings


def _unknown_field(where: Sequence[str | int]) -> Finding:
    return Finding(
        json_path(where),
        "unknown_field",
        f"{where[-1]!r} is not a member of this object (the contract is closed)",
        "remove it; forward-compatible data belongs in an `extensions` object "
        "where the contract has one",
    )


# Keywords whose value is a subschema, a list of subschemas, or a map of them.
_SUBSCHEMA = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
              "propertyNames", "unevaluatedItems", "unevaluatedProperties")  # fmt: skip
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


def _ints_only_variant(schema: Any) -> Any:
    """The schema with the two per-value x- keywords restated for jsonschema-rs.

    ``x-maxUtf8Bytes: N`` becomes "at most N // 4 characters, or else the
    x-keyword": a character takes at most 4 UTF-8 bytes, so short strings
    (all of them, in practice) are decided inside jsonschema-rs, and only a
    longer one calls back into Python; the verdict is the same.
    ``x-jsSafeInteger`` becomes bounds of +-(2**53 - 1).  That verdict is the
    same only where integers are ints: the keyword also refuses an integral
    float such as ``5.0``, which JSON Schema counts as an integer.  Canonical
    rows hold none (``5.0`` is written ``5`` and parses back as an int), and a
    caller validating built documents must build ints.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA:
            out[key] = _ints_only_variant(value)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_ints_only_variant(item) for item in value]
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _ints_only_variant(item) for name, item in value.items()}
        elif key != "x-maxUtf8Bytes" and key != "x-jsSafeInteger":
            out[key] = value
    limit = schema.get("x-maxUtf8Bytes")
    if isinstance(limit, int):
        short = {"maxLength": limit // 4}
        out["allOf"] = [*out.get("allOf", []), {"anyOf": [short, {"x-maxUtf8Bytes": limit}]}]
    if schema.get("x-jsSafeInteger") is True:
        out["minimum"] = max(-MAX_SAFE_INTEGER, out.get("minimum", -MAX_SAFE_INTEGER))
        out["maximum"] = min(MAX_SAFE_INTEGER, out.get("maximum", MAX_SAFE_INTEGER))
    return out


def holds_integral_float(instance: Any) -> bool:
    """Whether ``instance`` holds a float with an integral value (``5.0``, ``-0.0``,
    ``1e20``): the C census where it is built and the value plain, else
    :func:`holds_integral_float_in_python`."""
    if speedups is not None:
        scanned = speedups.scan(instance, True, _SCAN_LEVELS)
        if scanned is not None:
            return bool(scanned[5] > 0)
    return holds_integral_float_in_python(instance)


def holds_integral_float_in_python(instance: Any) -> bool:
    """The Python twin of the C census's answer.

    orjson writes such a float ``5.0`` below 1e16 and with ``e+`` from there on, and no
    other float so: text without those marks holds none, found at C speed
    (:func:`compact_text_may_hold_integral_float`); text with them (a string may hold
    them too) is walked.
    """
    try:
        written = orjson.dumps(instance)
    except (TypeError, orjson.JSONEncodeError):  # big integers, deep nesting: walk it
        return _walk_for_integral_float(instance)
    if not compact_text_may_hold_integral_float(written):
        return False
    return _walk_for_integral_float(instance)


def compact_text_may_hold_integral_float(written: bytes) -> bool:
    """Whether orjson's compact text of a value (``orjson.dumps`` without indent, keys
    sorted or not) may hold a float with an integral value: False when it holds none.

    In compact text a number is followed by ``,``, ``]``, ``}`` or the end, so an
    integral float below 1e16 reads ``.0`` and one of those, and from 1e16 on holds
    ``e+``. Each mark holds a ``.`` or a ``+``: text with neither byte (one memchr each)
    holds none. A caller with the text at hand (a journal read has its rows' canonical
    text) need not write it again.
    """
    if b"." not in written and b"+" not in written:
        return False
    return (
        b".0," in written
        or b".0]" in written
        or b".0}" in written
        or b"e+" in written
        or written.endswith(b".0")
    )


def _walk_for_integral_float(instance: Any) -> bool:
    if isinstance(instance, float):
        return instance.is_integer()
    if isinstance(instance, Mapping):
        return any(_walk_for_integral_float(item) for item in instance.values())
    if isinstance(instance, list | tuple):
        return any(_walk_for_integral_float(item) for item in instance)
    return False


def _without_echoes(findings: list[Finding]) -> list[Finding]:
    """Sorted, each problem once: ``unsafe_integer`` says all that the plain
    ``maximum``/``minimum`` beside x-jsSafeInteger say at the same path."""
    unsafe = {f.path for f in findings if f.code == "unsafe_integer"}
    return sorted(
        {f for f in findings if not (f.path in unsafe and f.code in ("maximum", "minimum"))}
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """A document type with its two compiled validators (``_validate_fast``)."""

    document_type: DocumentType
    fast: Any
    ints_only: Any
    aliased: bool


class DocumentValidator:
    """Validate instances of document types; build once, reuse for every document."""

    def __init__(self, schema_set: SchemaSet | None = None) -> None:
        self.schema_set = schema_set or default_schema_set()
        self._fast: dict[str, Any] = {}
        self._plans: dict[str, _Plan] = {}
        self._reference: dict[str, jsonschema.protocols.Validator] = {}

    # -- fast engine -------------------------------------------------------
    @cached_property
    def _rs_registry(self) -> Any:
        resources: list[tuple[str, Any]] = list(self.schema_set.schemas.items())
        return jsonschema_rs.Registry(resources)

    @cached_property
    def _ints_only_schemas(self) -> dict[str, Any]:
        return {i: _ints_only_variant(schema) for i, schema in self.schema_set.schemas.items()}

    @cached_property
    def _ints_only_registry(self) -> Any:
        return jsonschema_rs.Registry(list(self._ints_only_schemas.items()))

    def ints_only_validator(self, doctype: str) -> Any:
        """A jsonschema-rs validator of ``doctype`` whose ``is_valid`` agrees with
        :meth:`validate` on documents whose integers are ints (see
        :func:`_ints_only_variant`), about three times faster on large documents.
        For hot paths that read canonical rows or check documents they built."""
        name = f"ints-only:{doctype}"
        validator = self._fast.get(name)
        if validator is None:
            validator = self._compile(
                name,
                {"$ref": self.schema_set.document_type(doctype).ref},
                self._ints_only_registry,
                self._ints_only_schemas,
            )
        return validator

    def ints_only_list_validator(self, doctype: str) -> Any:
        """:meth:`ints_only_validator` of a JSON array of ``doctype`` documents: valid
        exactly when each is, in one call (rows read in batches pay one crossing into
        the engine per batch instead of one per row)."""
        name = f"ints-only-list:{doctype}"
        validator = self._fast.get(name)
        if validator is None:
            validator = self._compile(
                name,
                {"type": "array", "items": {"$ref": self.schema_set.document_type(doctype).ref}},
                self._ints_only_registry,
                self._ints_only_schemas,
            )
        return validator

    def _plan(self, doctype: str) -> _Plan:
        """What ``_validate_fast`` needs of ``doctype``, looked up once per validator
        (``check`` validates document after document of a few types)."""
        document_type = self.schema_set.document_type(doctype)
        plan = _Plan(
            document_type,
            self._fast_validator(document_type),
            self.ints_only_validator(doctype),
            bool(document_type.input_aliases),
        )
        self._plans[doctype] = plan
        return plan

    def _fast_validator(self, document_type: DocumentType) -> Any:
        validator = self._fast.get(document_type.name)
        if validator is None:
            validator = self._compile(
                document_type.name,
                {"$ref": document_type.ref},
                self._rs_registry,
                self.schema_set.schemas,
            )
        return validator

    def _compile(
        self,
        name: str,
        root: dict[str, Any],
        registry: Any,
        schemas: Mapping[str, Any],
    ) -> Any:
        """The jsonschema-rs validator of ``root`` (a schema in the dialect, over
        ``registry``, which holds ``schemas``), kept under ``name`` for the next call.
        Our x- keywords are handed to jsonschema-rs only where ``root`` can reach one:
        with Python keywords registered every call pays for them, used or not (about
        two fifths of an envelope's validation)."""
        options: dict[str, Any] = {}
        if _reaches_check_keyword(schemas, root):
            options["keywords"] = _FAST_KEYWORDS
        validator = jsonschema_rs.validator_for(
            {"$schema": _DIALECT, **root},
            registry=registry,
            validate_formats=True,
            **options,
        )
        self._fast[name] = validator
        return validator

    def _convert_rs(self, error: Any, instance: Any) -> Iterable[Finding]:
        where = list(error.instance_path)
        kind = type(error.kind).__name__
        if kind == "Custom":
            code, relative, message, hint = str(error.message).split(_SEPARATOR, 3)
            yield Finding(json_path([*where, *json.loads(relative)]), code, message, hint)
            return
        if kind == "AdditionalProperties":
            for key in error.kind.unexpected:
                yield _unknown_field([*where, key])
            return
        if kind == "OneOfNotValid":
            location = str(error.absolute_keyword_location or "")
            node, base_id = _resolve_uri(self.schema_set, location.removesuffix("/oneOf"))
            index, finding = _discriminated(
                self.schema_set, node, base_id, _at(instance, where), where
            )
            if finding is not None:
                yield finding
                return
            if index is not None:
                for inner in error.kind.context[index]:
                    yield from self._convert_rs(inner, instance)
                return
        if kind in ("OneOfNotValid", "AnyOf"):
            if all(
                any(
                    type(e.kind).__name__ == "Type" and len(list(e.instance_path)) == len(where)
                    for e in branch
                )
                for branch in error.kind.context
            ):
                yield Finding(
                    json_path(where),
                    "wrong_type",
                    f"{_short(_at(instance, where))} is of none of the types allowed here",
                    _HINTS["wrong_type"],
                )
                return
            branch = _best_branch(error.kind.context, where, instance)
            if branch is not None:
                for inner in branch:
                    yield from self._convert_rs(inner, instance)
                return
        if kind == "FalseSchema":
            yield Finding(
                json_path(where),
                "unknown_field",
                "this member is not part of the contract (the contract is closed)",
                "remove it; forward-compatible data belongs in an `extensions` object "
                "where the contract has one",
            )
            return
        if kind == "Required":
            missing = error.kind.property
            yield Finding(
                json_path([*where, str(missing)]),
                "required",
                f"the required member {missing!r} is missing",
                f"add {missing!r}",
            )
            return
        code = KIND_CODES.get(kind, snake_name(kind))
        yield Finding(json_path(where), code, str(error.message), _HINTS.get(code, ""))

    # -- reference engine --------------------------------------------------
    @cached_property
    def _schema_ids(self) -> dict[int, str]:
        # python-jsonschema hands back the very dicts we loaded; remember which
        # file each one came from, to resolve a discriminated oneOf's branches.
        found: dict[int, str] = {}
        for schema_id, schema in self.schema_set.schemas.items():
            pending: list[Any] = [schema]
            while pending:
                node = pending.pop()
                if isinstance(node, Mapping):
                    found[id(node)] = schema_id
                    pending.extend(node.values())
                elif isinstance(node, list):
                    pending.extend(node)
        return found

    @cached_property
    def _py_registry(self) -> referencing.Registry[Any]:
        import referencing.jsonschema

        resources = [
            (schema_id, referencing.Resource.from_contents(schema))
            for schema_id, schema in self.schema_set.schemas.items()
        ]
        registry: referencing.Registry[Any] = referencing.Registry().with_resources(resources)
        return registry

    @cached_property
    def _py_class(self) -> Any:
        import jsonschema

        def wrap(function: CheckFunction) -> Any:
            def check(
                validator: Any, value: Any, instance: Any, schema: Any
            ) -> Iterator[jsonschema.ValidationError]:
                for violation in function(value, instance):
                    error = jsonschema.ValidationError(
                        _SEPARATOR.join(
                            [
                                violation.code,
                                json.dumps(list(violation.where)),
                                violation.message,
                                violation.hint,
                            ]
                        )
                    )
                    error.violation = violation  # type: ignore[attr-defined]
                    yield error

            return check

        return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            jsonschema.Draft202012Validator,
            {name: wrap(function) for name, function in CHECK_KEYWORDS.items()},
        )

    def _reference_validator(self, document_type: DocumentType) -> Any:
        validator = self._reference.get(document_type.name)
        if validator is None:
            import jsonschema

            validator = self._py_class(
                {"$schema": _DIALECT, "$ref": document_type.ref},
                registry=self._py_registry,
                format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
            )
            self._reference[document_type.name] = validator
        return validator

    def _convert_py(self, error: jsonschema.ValidationError) -> Iterable[Finding]:
        where = list(error.absolute_path)
        if error.validator in CHECK_KEYWORDS:
            code, relative, message, hint = str(error.message).split(_SEPARATOR, 3)
            yield Finding(json_path([*where, *json.loads(relative)]), code, message, hint)
            return
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            schema = error.schema if isinstance(error.schema, Mapping) else {}
            allowed = set(schema.get("properties", {}))
            for key in error.instance:
                if key not in allowed:
                    yield _unknown_field([*where, key])
            return
        if error.validator == "oneOf" and error.context:
            base_id = self._schema_ids.get(id(error.schema), "")
            index, finding = _discriminated(
                self.schema_set, error.schema, base_id, error.instance, where
            )
            if finding is not None:
                yield finding
                return
            if index is not None:
                for inner in error.context:
                    if int(inner.relative_schema_path[0]) == index:
                        yield from self._convert_py(inner)
                return
        if error.validator in ("oneOf", "anyOf") and error.context:
            alternatives = error.validator_value if isinstance(error.validator_value, list) else []
            wrong_type = {
                int(inner.relative_schema_path[0])
                for inner in error.context
                if inner.validator == "type" and len(inner.absolute_path) == len(where)
            }
            if alternatives and wrong_type == set(range(len(alternatives))):
                yield Finding(
                    json_path(where),
                    "wrong_type",
                    f"{_short(error.instance)} is of none of the types allowed here",
                    _HINTS["wrong_type"],
                )
                return
            branch = _best_py_branch(error)
            if branch is not None:
                for inner in branch:
                    yield from self._convert_py(inner)
                return
            yield Finding(
                json_path(where),
                "no_matching_variant",
                error.message,
                _HINTS["no_matching_variant"],
            )
            return
        if error.validator in ("required", "dependentRequired"):
            missing = str(error.message).split("'")[1] if "'" in error.message else "?"
            yield Finding(
                json_path([*where, missing]),
                "required",
                f"the required member {missing!r} is missing",
                f"add {missing!r}",
            )
            return
        code = {
            "type": "wrong_type",
            "enum": "not_allowed_value",
            "const": "not_allowed_value",
        }.get(str(error.validator), snake_name(str(error.validator)).replace("-", "_"))
        yield Finding(json_path(where), code, error.message, _HINTS.get(code, ""))

    # -- public ------------------------------------------------------------
    def validate(self, doctype: str, instance: Any, *, reference: bool = False) -> list[Finding]:
        """Every finding for ``instance`` as a ``doctype``; empty when valid.

        Input aliases (x-inputAliases) are applied first, as an adapter would.
        """
        if reference:
            document_type = self.schema_set.document_type(doctype)
            instance, findings = apply_input_aliases(document_type, instance)
            validator = self._reference_validator(document_type)
            for error in validator.iter_errors(instance):
                findings.extend(self._convert_py(error))
            return _without_echoes(findings)
        return self._validate_fast(doctype, instance, None)

    def _validate_fast(
        self, doctype: str, instance: Any, may_hold_integral_float: bool | None
    ) -> list[Finding]:
        """``validate`` with the fast engine.  ``may_hold_integral_float``: False when
        the strict reader's census found no integral float in ``instance``
        (``loads_strict_noting_floats``, for ``check``), None to take the census here."""
        plan = self._plans.get(doctype) or self._plan(doctype)
        document_type, fast = plan.document_type, plan.fast
        findings: list[Finding] = []
        if plan.aliased:
            instance, findings = apply_input_aliases(document_type, instance)
        if may_hold_integral_float is None:  # (aliases rename members: the fact holds)
            may_hold_integral_float = holds_integral_float(instance)
        # Same verdict, fewer calls back into Python (_ints_only_variant).
        screen = fast if may_hold_integral_float else plan.ints_only
        if screen.is_valid(instance):
            return findings
        if _json_size(instance) > FAST_FINDINGS_MAX_BYTES:
            # The fast engine's errors each carry a converted copy of the value
            # they are about (the whole document, for a root-level error, and
            # again in every oneOf/anyOf branch): hundreds of times a large
            # document. The reference engine points into the value instead;
            # both engines give the same findings (tests/rules/test_x_rules.py).
            validator = self._reference_validator(document_type)
            for error in validator.iter_errors(instance):
                findings.extend(self._convert_py(error))
            return _without_echoes(findings)
        for rs_error in fast.iter_errors(instance):
            findings.extend(self._convert_rs(rs_error, instance))
        return _without_echoes(findings)

    def violations(self, doctype: str, instance: Any) -> list[tuple[list[str | int], Violation]]:
        """Every broken x- rule with its absolute location (reference engine)."""
        document_type = self.schema_set.document_type(doctype)
        found: list[tuple[list[str | int], Violation]] = []
        pending = list(self._reference_validator(document_type).iter_errors(instance))
        while pending:
            error = pending.pop()
            pending.extend(error.context or ())
            violation = getattr(error, "violation", None)
            if violation is not None:
                found.append((list(error.absolute_path), violation))
        return found

    def is_valid(self, doctype: str, instance: Any) -> bool:
        document_type = self.schema_set.document_type(doctype)
        instance, findings = apply_input_aliases(document_type, instance)
        return not findings and bool(self._fast_validator(document_type).is_valid(instance))

    def all_valid(
        self,
        doctype: str,
        instances: Sequence[Any],
        *,
        may_hold_integral_float: bool | None = None,
    ) -> bool:
        """True only when :meth:`validate` finds nothing in any of ``instances``, decided
        in batches (one call into the engine per ``VALIDATION_BATCH`` documents instead of
        one per document). False when one is invalid, and also when the batch cannot be
        screened so (the document type has input aliases, an integral float such as 5.0
        is held, a value the engine cannot convert): then ask :meth:`validate` of each.
        ``may_hold_integral_float``: False when the caller knows that none of
        ``instances`` holds an integral float (:func:`compact_text_may_hold_integral_float`
        of their text), None to look here."""
        if self.schema_set.document_type(doctype).input_aliases:
            return False
        if may_hold_integral_float is None:
            may_hold_integral_float = holds_integral_float(instances)
        if may_hold_integral_float:  # the ints-only engine's one condition
            return False
        is_valid = self.ints_only_list_validator(doctype).is_valid
        try:
            return all(
                is_valid(instances[at : at + VALIDATION_BATCH])
                for at in range(0, len(instances), VALIDATION_BATCH)
            )
        except (ValueError, TypeError, OverflowError):
            return False

    def document_types(self) -> Mapping[str, DocumentType]:
        return self.schema_set.document_types


def _reaches_check_keyword(schemas: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    """Whether a check keyword (``CHECK_KEYWORDS``) may apply under ``root``, following
    every ``$ref`` into ``schemas`` (by ``$id``).  True also for what this walk does not
    follow (an unknown or non-pointer reference, a dynamic one, a nested ``$id``), and
    for a key of that name anywhere (a property so named), so False is sure."""
    pending: list[tuple[Any, str]] = [(root, "")]
    followed: set[str] = set()
    while pending:
        node, base = pending.pop()
        if isinstance(node, list):
            pending.extend((item, base) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        if any(key in CHECK_KEYWORDS for key in node) or "$dynamicRef" in node:
            return True
        if "$id" in node and not any(schema is node for schema in schemas.values()):
            return True  # a nested resource: its references resolve against its own $id
        for key, value in node.items():
            if key != "$ref":
                pending.append((value, base))
                continue
            target = urljoin(base, value) if isinstance(value, str) else ""
            if target in followed:
                continue
            followed.add(target)
            schema_id, _, fragment = target.partition("#")
            schema: Any = schemas.get(schema_id)
            if schema is None or (fragment and not fragment.startswith("/")) or "%" in fragment:
                return True
            resolved = resolve_pointer(schema, fragment)
            if not isinstance(resolved, dict | list | bool):  # missing, or not a schema
                return True
            pending.append((resolved, schema_id))
    return False


def _resolve_uri(schema_set: SchemaSet, uri: str) -> tuple[Any, str]:
    schema_id, _, fragment = uri.partition("#")
    node: Any = schema_set.schemas.get(schema_id)
    for part in fragment.lstrip("/").split("/") if fragment else []:
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, Mapping):
            node = node.get(part.replace("~1", "/").replace("~0", "~"))
        else:
            return None, schema_id
    return node, schema_id


def _discriminated(
    schema_set: SchemaSet,
    node: Any,
    base_id: str,
    value: Any,
    where: Sequence[str | int],
) -> tuple[int | None, Finding | None]:
    """Use a oneOf's ``discriminator`` to pick the branch the value meant to be.

    Returns (branch index, None), (None, a finding about the discriminator
    itself), or (None, None) when the oneOf has no usable discriminator.
    """
    if not isinstance(node, Mapping) or not isinstance(node.get("discriminator"), Mapping):
        return None, None
    name = node["discriminator"].get("propertyName")
    if not isinstance(value, dict) or not isinstance(name, str):
        return None, None
    tags: list[Any] = []
    for branch in node.get("oneOf", ()):
        target = branch
        if isinstance(branch, Mapping) and "$ref" in branch:
            target, _ = _resolve_uri(schema_set, urljoin(base_id, branch["$ref"]))
        member = target.get("properties", {}).get(name, {}) if isinstance(target, Mapping) else {}
        tags.append(member.get("const") if isinstance(member, Mapping) else None)
    allowed = ", ".join(repr(t) for t in tags if t is not None)
    if name not in value:
        return None, Finding(
            json_path([*where, name]),
            "required",
            f"the required member {name!r} is missing",
            f"add {name!r}: one of {allowed}",
        )
    for index, tag in enumerate(tags):
        if tag is not None and tag == value[name] and type(tag) is type(value[name]):
            return index, None
    return None, Finding(
        json_path([*where, name]),
        "not_allowed_value",
        f"{name} is {value[name]!r}, which names no variant",
        f"use one of {allowed}",
    )


def _at(instance: Any, where: Sequence[str | int]) -> Any:
    node = instance
    for part in where:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _best_branch(
    branches: Sequence[Sequence[Any]], where: Sequence[str | int], instance: Any
) -> Sequence[Any] | None:
    """The one alternative of a oneOf/anyOf the instance was meant to be, if clear.

    A branch is ruled out when the value is of the wrong type for it, or when a
    present member fails a const there (a discriminator such as ``state``).
    """
    value = _at(instance, where)
    depth = len(where)
    candidates = []
    for branch in branches:
        ruled_out = False
        for error in branch:
            path = list(error.instance_path)
            kind = type(error.kind).__name__
            if (kind == "Type" and len(path) == depth) or (
                kind == "Constant"
                and len(path) == depth + 1
                and isinstance(value, dict)
                and path[-1] in value
            ):
                ruled_out = True
        if not ruled_out:
            candidates.append(branch)
    return candidates[0] if len(candidates) == 1 else None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _best_py_branch(error: jsonschema.ValidationError) -> list[Any] | None:
    by_branch: dict[int, list[jsonschema.ValidationError]] = {}
    for inner in error.context or ():
        by_branch.setdefault(int(inner.relative_schema_path[0]), []).append(inner)
    depth = len(error.absolute_path)
    value = error.instance
    candidates = []
    alternatives = error.validator_value if isinstance(error.validator_value, list) else []
    for index in range(len(alternatives)):
        branch = by_branch.get(index, [])
        ruled_out = any(
            (inner.validator == "type" and len(inner.absolute_path) == depth)
            or (
                inner.validator == "const"
                and len(inner.absolute_path) == depth + 1
                and isinstance(value, dict)
                and inner.absolute_path[-1] in value
            )
            for inner in branch
        )
        if not ruled_out:
            candidates.append(branch)
    return candidates[0] if len(candidates) == 1 else None


_DEFAULT: DocumentValidator | None = None


# Above this JSON size an invalid document's findings come from the reference
# engine, whose memory does not grow with the number of errors times the size.
FAST_FINDINGS_MAX_BYTES = 1024 * 1024


def _json_size(instance: Any) -> int:
    try:
        return len(orjson.dumps(instance))
    except (TypeError, orjson.JSONEncodeError):
        return 0  # not plain JSON (an integer beyond 64 bits): the fast engine decides


def default_validator() -> DocumentValidator:
    """A shared validator over the packaged schemas."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = DocumentValidator()
    return _DEFAULT
