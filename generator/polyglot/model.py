"""One intermediate model of the contract schemas, shared by every language's templates.

The model is built once from schemas/ and is the only thing the templates see, so
TypeScript, Go and Rust get the same definitions under the same names. A definition
is identified by its schema file and ``$defs`` name: a ``$ref`` from another file
(``run-record.schema.json#/$defs/ExecutionId``) resolves to that one definition, so a
shared definition becomes one type, never a copy.

What becomes a named type: a closed object (``additionalProperties: false``), a string
``enum``, a tagged union (``oneOf`` of closed objects that each fix one discriminator
member with ``const``), and a document type whose root is none of these (an alias of
the opaque JSON value). Scalars (``SafeUnsignedInteger``) are inlined as the language's
primitive. Open objects, ``{}`` and multi-type scalars are opaque: kept as the verbatim
JSON text. Validation keywords (limits, patterns, if/then, x- rules) are not part of the
model: the bindings check structure; ``session-contracts validate`` checks the rest. The
one exception is an integer's sign: a lower bound of 0 or more makes it unsigned (64-bit
unsigned in Go and Rust), and ``domains.py`` names the members Harn's schema leaves
unbounded but its contract makes unsigned.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from session_contracts.errors import Finding, ToolError
from session_contracts.generator.identifiers import contract_name
from session_contracts.generator.polyglot.domains import SAME_DOMAIN, MemberPointer, SameDomain

__all__ = [
    "DocumentType",
    "EnumDef",
    "Field",
    "Model",
    "ObjectDef",
    "OpaqueDef",
    "Source",
    "TypeRef",
    "UnionDef",
    "Variant",
    "build_model",
]


@dataclass(frozen=True, slots=True)
class TypeRef:
    """A type expression.

    ``kind`` is one of ``string``, ``integer``, ``number``, ``boolean``, ``opaque``
    (any JSON value, kept verbatim), ``named`` (``name``), ``array`` (``item``) or
    ``map`` (an object whose every member has type ``item``). ``unsigned`` marks an
    integer bounded below at 0 or more (:func:`lower_bound`), or one that ``domains.py``
    ties to such a member.
    """

    kind: str
    name: str = ""
    item: TypeRef | None = None
    unsigned: bool = False


@dataclass(frozen=True, slots=True)
class Field:
    """One member of a closed object, under its JSON name."""

    json_name: str
    type: TypeRef
    required: bool
    nullable: bool
    const: str | int | bool | None  # the member's only allowed value, if any
    description: str


@dataclass(frozen=True, slots=True)
class ObjectDef:
    name: str
    fields: tuple[Field, ...]
    description: str
    origin: str  # schema file and JSON pointer


@dataclass(frozen=True, slots=True)
class EnumDef:
    name: str
    values: tuple[str, ...]
    description: str
    origin: str


@dataclass(frozen=True, slots=True)
class Variant:
    tag: str  # the discriminator member's value
    type_name: str


@dataclass(frozen=True, slots=True)
class UnionDef:
    name: str
    discriminator: str  # the member that selects the variant
    variants: tuple[Variant, ...]
    description: str
    origin: str


@dataclass(frozen=True, slots=True)
class OpaqueDef:
    """A document type whose root is an open object or any value: kept verbatim."""

    name: str
    description: str
    origin: str


Definition = ObjectDef | EnumDef | UnionDef | OpaqueDef


@dataclass(frozen=True, slots=True)
class DocumentType:
    doctype: str  # CONTRACT.KIND
    type_name: str


@dataclass(frozen=True, slots=True)
class Source:
    path: str  # schemas/NAME.schema.json
    sha256: str


@dataclass(frozen=True, slots=True)
class Model:
    definitions: tuple[Definition, ...]  # sorted by name
    document_types: tuple[DocumentType, ...]  # sorted by doctype
    sources: tuple[Source, ...]

    def definition(self, name: str) -> Definition:
        for definition in self.definitions:
            if definition.name == name:
                return definition
        raise KeyError(name)


_UNSUPPORTED_HINT = (
    "the polyglot generator supports the constructs docs/codegen-languages.md lists; "
    "extend generator/polyglot/model.py for a new one"
)


def _error(code: str, message: str, where: str, hint: str = _UNSUPPORTED_HINT) -> ToolError:
    return ToolError([Finding("$", code, message, hint, source=where)])


def _title(schema: Mapping[str, Any], fallback: str) -> str:
    """A type's name: its schema's ``title`` (the Python bindings' class name too), else
    ``fallback`` (a ``$defs`` key, or the owner's name and the member's)."""
    title = schema.get("title")
    return pascal(title) if isinstance(title, str) and title.strip() else fallback


def pascal(text: str) -> str:
    """``session-recap`` / ``tool_calls`` / ``sessionId`` -> ``SessionRecap`` / ``ToolCalls`` /
    ``SessionId``."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", text) if p]
    return "".join(p[0].upper() + p[1:] for p in parts)


_Key = tuple[str, str]  # (schema file name, $defs name)


class _Builder:
    def __init__(self, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        self.schemas = schemas
        self.names: dict[_Key, str] = {}
        self.definitions: dict[str, Definition] = {}
        self.origins: dict[str, str] = {}

    # -- naming -----------------------------------------------------------------------
    def assign_names(self) -> None:
        wanted: dict[str, list[_Key]] = {}
        for file, schema in sorted(self.schemas.items()):
            doc_roots = {
                str(p).removeprefix("#/$defs/") for p in schema.get("x-documentTypes", {}).values()
            }
            for def_name, definition in sorted(schema.get("$defs", {}).items()):
                if self._is_named(definition) or def_name in doc_roots:
                    name = _title(definition, pascal(def_name))
                    wanted.setdefault(name, []).append((file, def_name))
        for name, keys in sorted(wanted.items()):
            for key in keys:
                if len(keys) == 1:
                    self.names[key] = name
                else:  # two files define different things under one name
                    self.names[key] = pascal(contract_name(Path(key[0]))) + name

    @staticmethod
    def _is_named(definition: Mapping[str, Any]) -> bool:
        if definition.get("type") == "object" and definition.get("additionalProperties") is False:
            return True
        if "enum" in definition and all(isinstance(v, str) for v in definition["enum"]):
            return True
        branches = [
            b for b in definition.get("oneOf", definition.get("anyOf", [])) if not _is_null(b)
        ]
        return len(branches) > 1

    # -- resolution -------------------------------------------------------------------
    def resolve(self, file: str, ref: str) -> tuple[str, str, Mapping[str, Any]]:
        target_file, _, pointer = ref.partition("#")
        target_file = target_file or file
        if target_file not in self.schemas or not pointer.startswith("/$defs/"):
            raise _error("polyglot_ref_unsupported", f"cannot resolve $ref {ref!r}", file)
        def_name = pointer.removeprefix("/$defs/")
        definition = self.schemas[target_file].get("$defs", {}).get(def_name)
        if not isinstance(definition, dict) or "/" in def_name:
            raise _error("polyglot_ref_unsupported", f"$ref {ref!r} names no $defs entry", file)
        return target_file, def_name, definition

    def named(self, file: str, def_name: str) -> str:
        """The type name of a named definition, building it on first use."""
        name = self.names[(file, def_name)]
        if name not in self.definitions and name not in self.origins:
            origin = f"{file}#/$defs/{def_name}"
            self.origins[name] = origin
            definition = self.schemas[file]["$defs"][def_name]
            self.definitions[name] = self.build(file, name, definition, origin)
        return name

    def build(self, file: str, name: str, schema: Mapping[str, Any], origin: str) -> Definition:
        description = str(schema.get("description", ""))
        if schema.get("type") == "object" and schema.get("additionalProperties") is False:
            return self.build_object(file, name, schema, origin)
        if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
            return EnumDef(name, tuple(schema["enum"]), description, origin)
        branches = [b for b in schema.get("oneOf", schema.get("anyOf", [])) if not _is_null(b)]
        if len(branches) > 1:
            if len(branches) != len(schema.get("oneOf", schema.get("anyOf", []))):
                raise _error("polyglot_nullable_union", f"{origin}: a nullable union", file)
            return self.build_union(file, name, schema, branches, origin)
        return OpaqueDef(name, description, origin)

    def build_object(
        self, file: str, name: str, schema: Mapping[str, Any], origin: str
    ) -> ObjectDef:
        required = set(schema.get("required", []))
        fields = []
        for member, member_schema in schema.get("properties", {}).items():
            type_ref, nullable, const = self.type_of(file, member_schema, name + pascal(member))
            fields.append(
                Field(
                    json_name=member,
                    type=type_ref,
                    required=member in required,
                    nullable=nullable,
                    const=const,
                    description=str(member_schema.get("description", "")),
                )
            )
        return ObjectDef(name, tuple(fields), str(schema.get("description", "")), origin)

    def build_union(
        self,
        file: str,
        name: str,
        schema: Mapping[str, Any],
        branches: list[Mapping[str, Any]],
        origin: str,
    ) -> UnionDef:
        variant_names = []
        for branch in branches:
            type_ref, nullable, _ = self.type_of(file, branch, name + "Variant")
            definition = self.definitions.get(type_ref.name)
            if type_ref.kind != "named" or nullable or not isinstance(definition, ObjectDef):
                raise _error(
                    "polyglot_union_unsupported",
                    f"{origin}: a union branch is not a closed object",
                    file,
                )
            variant_names.append(definition)
        discriminator = schema.get("discriminator", {}).get("propertyName")
        if discriminator is None:  # infer: the one member every branch fixes with a const
            common = set.intersection(
                *(
                    {f.json_name for f in d.fields if isinstance(f.const, str)}
                    for d in variant_names
                )
            )
            if len(common) != 1:
                raise _error("polyglot_union_unsupported", f"{origin}: no discriminator", file)
            discriminator = common.pop()
        variants = []
        for definition in variant_names:
            tag = next(
                (f.const for f in definition.fields if f.json_name == discriminator and f.required),
                None,
            )
            if not isinstance(tag, str):
                raise _error(
                    "polyglot_union_unsupported",
                    f"{origin}: {definition.name} fixes no required {discriminator!r} "
                    "with a string const",
                    file,
                )
            variants.append(Variant(tag, definition.name))
        if len({v.tag for v in variants}) != len(variants):
            raise _error("polyglot_union_unsupported", f"{origin}: two variants share a tag", file)
        return UnionDef(
            name, discriminator, tuple(variants), str(schema.get("description", "")), origin
        )

    # -- type expressions -------------------------------------------------------------
    def type_of(
        self, file: str, schema: Any, synthetic: str
    ) -> tuple[TypeRef, bool, str | int | bool | None]:
        """(type, nullable, const) of a member schema; ``synthetic`` names inline types
        (the schema's own ``title`` wins)."""
        if schema is True or schema == {} or not isinstance(schema, dict):
            return TypeRef("opaque"), False, None
        synthetic = _title(schema, synthetic)
        if "$ref" in schema:
            target_file, def_name, target = self.resolve(file, schema["$ref"])
            if (target_file, def_name) in self.names and self._is_named(target):
                return TypeRef("named", self.named(target_file, def_name)), False, None
            inner, nullable, const = self.type_of(target_file, target, pascal(def_name))
            return _bounded(inner, schema), nullable, const
        if "const" in schema:
            const = schema["const"]
            if isinstance(const, bool) or not isinstance(const, str | int):
                raise _error("polyglot_const_unsupported", f"const {const!r}", file)
            kind = "string" if isinstance(const, str) else "integer"
            return _bounded(TypeRef(kind), schema), False, const
        for union_key in ("oneOf", "anyOf"):
            if union_key in schema:
                branches = schema[union_key]
                rest = [b for b in branches if not _is_null(b)]
                nullable = len(rest) != len(branches)
                if len(rest) == 1:
                    inner, inner_nullable, const = self.type_of(file, rest[0], synthetic)
                    return _bounded(inner, schema), nullable or inner_nullable, const
                if nullable:
                    raise _error("polyglot_nullable_union", f"{synthetic}: nullable union", file)
                return TypeRef("named", self.synthetic_union(file, schema, synthetic)), False, None
        types = schema.get("type")
        nullable = False
        if isinstance(types, list):
            nullable = "null" in types
            rest = [t for t in types if t != "null"]
            if len(rest) != 1:
                return TypeRef("opaque"), False, None  # a multi-type scalar: kept verbatim
            types = rest[0]
        if "enum" in schema:
            values = schema["enum"]
            if not all(isinstance(v, str) for v in values):
                return TypeRef("opaque"), nullable, None
            self.synthetic(synthetic, EnumDef(synthetic, tuple(values), "", f"{file} (inline)"))
            return TypeRef("named", synthetic), nullable, None
        if types == "object":
            extra = schema.get("additionalProperties", True)
            if extra is False:
                definition = self.build_object(file, synthetic, schema, f"{file} (inline)")
                self.synthetic(synthetic, definition)
                return TypeRef("named", synthetic), nullable, None
            if isinstance(extra, dict) and not schema.get("properties"):
                item, item_nullable, _ = self.type_of(file, extra, synthetic + "Value")
                if item_nullable:
                    item = TypeRef("opaque")
                return TypeRef("map", item=item), nullable, None
            return TypeRef("opaque"), nullable, None  # open object: verbatim
        if types == "array":
            item, item_nullable, _ = self.type_of(file, schema.get("items", {}), synthetic + "Item")
            if item_nullable:
                item = TypeRef("opaque")
            return TypeRef("array", item=item), nullable, None
        if types in ("string", "number", "boolean"):
            return TypeRef(str(types)), nullable, None
        if types == "integer":
            return _bounded(TypeRef("integer"), schema), nullable, None
        return TypeRef("opaque"), nullable, None

    def lower_bound(self, file: str, schema: Any) -> float | None:
        """The least value an integer member may take, following ``$ref`` and a nullable
        ``anyOf``/``oneOf`` (their bounds and the member's own all apply); None when
        nothing bounds it below."""
        if not isinstance(schema, dict):
            return None
        bounds: list[float | None] = [_own_lower_bound(schema)]
        if "$ref" in schema:
            target_file, _, target = self.resolve(file, schema["$ref"])
            bounds.append(self.lower_bound(target_file, target))
        for union_key in ("oneOf", "anyOf"):
            rest = [b for b in schema.get(union_key, []) if not _is_null(b)]
            if len(rest) == 1:
                bounds.append(self.lower_bound(file, rest[0]))
        known = [b for b in bounds if b is not None]
        return max(known) if known else None

    def member_schema(self, pointer: MemberPointer) -> Any:
        definition = self.schemas.get(pointer.file, {}).get("$defs", {}).get(pointer.definition)
        if not isinstance(definition, dict):
            return None
        return definition.get("properties", {}).get(pointer.member)

    def apply_domains(self, entries: tuple[SameDomain, ...]) -> None:
        """Make each member ``entries`` name unsigned, after checking the entry still fits."""
        for entry in entries:
            member, carries = entry.member, entry.carries
            name = self.names.get((member.file, member.definition))
            definition = self.definitions.get(name or "")
            field = None
            if isinstance(definition, ObjectDef):
                field = next((f for f in definition.fields if f.json_name == member.member), None)
            if field is None or field.type.kind != "integer" or field.const is not None:
                raise _stale(entry, f"{member} is not an integer member of a closed object")
            if self.lower_bound(member.file, self.member_schema(member)) is not None:
                raise _stale(entry, f"{member} has a lower bound of its own: the schema decides")
            carried = self.member_schema(carries)
            bound = self.lower_bound(carries.file, carried) if carried is not None else None
            if bound is None or bound < 0:
                raise _stale(entry, f"{carries} is not an integer bounded at 0 or more")
            assert isinstance(definition, ObjectDef)
            assert name is not None
            fields = tuple(
                Field(
                    f.json_name,
                    TypeRef("integer", unsigned=True),
                    f.required,
                    f.nullable,
                    f.const,
                    f.description,
                )
                if f is field
                else f
                for f in definition.fields
            )
            self.definitions[name] = ObjectDef(
                definition.name, fields, definition.description, definition.origin
            )

    def synthetic(self, name: str, definition: Definition) -> None:
        if name in self.definitions or name in set(self.names.values()):
            existing = self.definitions.get(name)
            if existing == definition:
                return
            raise _error(
                "polyglot_name_clash", f"two types would be named {name}", definition.origin
            )
        self.definitions[name] = definition

    def synthetic_union(self, file: str, schema: Mapping[str, Any], synthetic: str) -> str:
        # An inline union equal to a named one (the stream's observations) is that one.
        for def_name, definition in sorted(self.schemas[file].get("$defs", {}).items()):
            same = all(
                definition.get(k) == schema.get(k) for k in ("oneOf", "anyOf", "discriminator")
            )
            if same and self._is_named(definition) and (file, def_name) in self.names:
                return self.named(file, def_name)
        branches = list(schema.get("oneOf", schema.get("anyOf", [])))
        union = self.build_union(file, synthetic, schema, branches, f"{file} (inline)")
        self.synthetic(synthetic, union)
        return synthetic


def _own_lower_bound(schema: Mapping[str, Any]) -> float | None:
    """The lower bound this schema object's own keywords set on an integer."""
    bounds: list[float] = []
    minimum = schema.get("minimum")
    if isinstance(minimum, int | float) and not isinstance(minimum, bool):
        bounds.append(minimum)
    exclusive = schema.get("exclusiveMinimum")
    if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
        bounds.append(math.floor(exclusive) + 1)  # the least integer above it
    const = schema.get("const")
    if isinstance(const, int) and not isinstance(const, bool):
        bounds.append(const)
    return max(bounds) if bounds else None


def _bounded(t: TypeRef, schema: Mapping[str, Any]) -> TypeRef:
    """``t``, unsigned if it is an integer and ``schema``'s own keywords bound it at 0 or more."""
    bound = _own_lower_bound(schema)
    if t.kind != "integer" or t.unsigned or bound is None or bound < 0:
        return t
    return TypeRef("integer", unsigned=True)


def _stale(entry: SameDomain, message: str) -> ToolError:
    return _error(
        "polyglot_domain_stale",
        f"the unsigned domain of {entry.member}: {message}",
        entry.member.file,
        "update SAME_DOMAIN in generator/polyglot/domains.py to the schemas",
    )


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null" and len(schema) <= 2


def build_model(schemas_dir: Path) -> Model:
    """The model of every schema that declares document types (x-documentTypes)."""
    schemas: dict[str, dict[str, Any]] = {}
    sources = []
    for schema_file in sorted(schemas_dir.glob("*.schema.json")):
        raw = schema_file.read_bytes()
        try:
            schema = json.loads(raw)
        except ValueError as exc:
            raise _error(
                "polyglot_schema_unreadable", f"{schema_file.name}: {exc}", str(schema_file)
            ) from None
        if not isinstance(schema, dict):
            raise _error(
                "polyglot_schema_unreadable",
                f"{schema_file.name} is not an object",
                str(schema_file),
            )
        if "x-documentTypes" not in schema:
            continue  # helper schemas (the redaction policy) have no bindings
        schemas[schema_file.name] = schema
        sources.append((schema_file.name, hashlib.sha256(raw).hexdigest()))
    builder = _Builder(schemas)
    builder.assign_names()
    document_types = []
    used_sources = set()
    for file, schema in sorted(schemas.items()):
        for kind, pointer in sorted(schema.get("x-documentTypes", {}).items()):
            target_file, def_name, _ = builder.resolve(file, str(pointer))
            name = builder.named(target_file, def_name)
            document_types.append(DocumentType(f"{contract_name(Path(file))}.{kind}", name))
            used_sources.add(file)
    # Every named definition of a contract schema is a type, used by a document or not.
    for file, def_name in sorted(builder.names):
        if file in used_sources:
            builder.named(file, def_name)
    builder.apply_domains(SAME_DOMAIN)
    used_sources |= {origin.split("#")[0].split(" ")[0] for origin in builder.origins.values()}
    definitions = tuple(sorted(builder.definitions.values(), key=lambda d: d.name))
    return Model(
        definitions=definitions,
        document_types=tuple(sorted(document_types, key=lambda d: d.doctype)),
        sources=tuple(Source(f"schemas/{n}", h) for n, h in sources if n in used_sources),
    )
