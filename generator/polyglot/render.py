"""Render the model into TypeScript, Go and Rust sources with our jinja2 templates.

Pure: reads schemas/ through :func:`build_model`, returns file contents. The
language-specific spelling (identifiers, type expressions) lives in the small
functions below; layout lives in ``templates/<language>/``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2

from session_contracts.generator.identifiers import member_identifiers, name_clash, snake
from session_contracts.generator.polyglot.model import (
    EnumDef,
    Field,
    Model,
    ObjectDef,
    OpaqueDef,
    TypeRef,
    UnionDef,
    build_model,
    pascal,
)

__all__ = ["LANGUAGES", "PolyglotFile", "render_all"]

LANGUAGES = ("typescript", "go", "rust")
_TEMPLATES = Path(__file__).with_name("templates")

# Output file (relative to generated/) -> template (relative to templates/).
_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "typescript": (
        ("typescript/session_contracts.ts", "typescript/session_contracts.ts.j2"),
        ("typescript/roundtrip.ts", "typescript/roundtrip.ts.j2"),
        ("typescript/tsconfig.json", "typescript/tsconfig.json.j2"),
    ),
    "go": (
        ("go/go.mod", "go/go.mod.j2"),
        ("go/runtime.go", "go/runtime.go.j2"),
        ("go/types.go", "go/types.go.j2"),
        ("go/cmd/roundtrip/main.go", "go/roundtrip.go.j2"),
    ),
    "rust": (
        ("rust/Cargo.toml", "rust/Cargo.toml.j2"),
        ("rust/Cargo.lock", "rust/Cargo.lock.j2"),
        ("rust/src/lib.rs", "rust/lib.rs.j2"),
        ("rust/src/bin/roundtrip.rs", "rust/roundtrip.rs.j2"),
    ),
}


@dataclass(frozen=True, slots=True)
class PolyglotFile:
    """One file of generated/<language>/, its name relative to generated/."""

    name: str
    content: str


def _identifier_like(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def _unique(names: list[str], where: str) -> None:
    if len(set(names)) != len(names):
        raise name_clash(f"{where}: two values map to one identifier: {sorted(names)}")


@dataclass(frozen=True, slots=True)
class _TypeSpelling:
    """How a language writes each kind of :class:`TypeRef`; ``array`` and ``map`` wrap the
    item's spelling (``{}``)."""

    string: str
    signed: str
    unsigned: str
    number: str
    boolean: str
    opaque: str
    array: str
    map: str

    def of(self, t: TypeRef) -> str:
        if t.kind == "named":
            return t.name
        if t.kind == "integer":
            return self.unsigned if t.unsigned else self.signed
        if t.kind in ("array", "map"):
            assert t.item is not None
            return (self.array if t.kind == "array" else self.map).format(self.of(t.item))
        spelling: str = getattr(self, t.kind)
        return spelling


# string, signed and unsigned integer, number, boolean, opaque, array of {}, map of {}
_TS_TYPES = _TypeSpelling(
    "string", "number", "number", "number", "boolean", "RawJson", "Array<{}>", "Map<string, {}>"
)
_GO_TYPES = _TypeSpelling(
    "string", "int64", "uint64", "float64", "bool", "json.RawMessage", "[]{}", "map[string]{}"
)
_RUST_TYPES = _TypeSpelling(
    "String", "i64", "u64", "f64", "bool", "Json", "Vec<{}>", "BTreeMap<String, {}>"
)


# -- TypeScript ---------------------------------------------------------------------------
def ts_type(t: TypeRef) -> str:
    return _TS_TYPES.of(t)


def _ts_codec(verb: str, t: TypeRef) -> str:
    """The runtime's ``decode...``/``encode...`` function for ``t`` (``verb``: decode, encode)."""
    if t.kind == "integer":
        return verb + ("Unsigned" if t.unsigned else "Integer")
    if t.kind == "opaque":
        return verb + "Raw"
    if t.kind == "named":
        return verb + t.name
    if t.kind in ("array", "map"):
        assert t.item is not None
        return f"{verb}{pascal(t.kind)}Of({_ts_codec(verb, t.item)})"
    return verb + pascal(t.kind)  # string, number, boolean


def ts_decoder(t: TypeRef) -> str:
    return _ts_codec("decode", t)


def ts_encoder(t: TypeRef) -> str:
    return _ts_codec("encode", t)


def ts_field_type(f: Field) -> str:
    if f.const is not None:
        return json.dumps(f.const)
    base = ts_type(f.type)
    return f"{base} | null" if f.nullable and f.type.kind != "opaque" else base


def ts_property(name: str) -> str:
    return name if _identifier_like(name) else json.dumps(name)


# -- Go -------------------------------------------------------------------------------------
_GO_INITIALISMS = {"Id": "ID", "Url": "URL", "Json": "JSON", "Http": "HTTP", "Usd": "USD"}


def go_name(json_name: str) -> str:
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", pascal(json_name)) or ["X"]
    name = "".join(_GO_INITIALISMS.get(w, w) for w in words)
    return name if name[0].isalpha() else "X" + name


def go_type(t: TypeRef) -> str:
    return _GO_TYPES.of(t)


def go_decoder(t: TypeRef) -> str:
    if t.kind == "opaque":
        return "decodeRaw"
    if t.kind == "integer":
        return "decodeUint64" if t.unsigned else "decodeInt64"
    if t.kind in ("array", "map"):
        assert t.item is not None
        helper = "decodeSlice" if t.kind == "array" else "decodeMap"
        return f"{helper}({go_decoder(t.item)})"
    return f"decodeInto[{go_type(t)}]"


def go_slot(f: Field) -> str:
    """How the member is held: value, optional (*T), nullable (*T), optional_nullable,
    raw (json.RawMessage, required) or optional_raw (nil when absent)."""
    if f.type.kind == "opaque":
        return "raw" if f.required else "optional_raw"
    if f.nullable:
        return "nullable" if f.required else "optional_nullable"
    return "value" if f.required else "optional"


def go_field_type(f: Field) -> str:
    base = go_type(f.type)
    return {
        "value": base,
        "raw": base,
        "optional_raw": base,
        "optional": f"*{base}",
        "nullable": f"*{base}",
        "optional_nullable": f"Optional[{base}]",
    }[go_slot(f)]


def go_const(f: Field) -> str:
    return json.dumps(f.const)


def go_path(json_name: str) -> str:
    return json.dumps(
        "." + json_name if _identifier_like(json_name) else f"[{json.dumps(json_name)}]"
    )


# -- Rust -----------------------------------------------------------------------------------
_RUST_KEYWORDS = {
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use",
    "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
    "typeof", "unsized", "virtual", "yield", "try", "gen",
}  # fmt: skip
_RUST_UNRAWABLE = {"self", "Self", "super", "crate"}


def rust_field(json_name: str) -> str:
    name = snake(json_name)
    if name[0].isdigit():
        name = "f_" + name
    if name in _RUST_UNRAWABLE:
        return name + "_"
    return f"r#{name}" if name in _RUST_KEYWORDS else name


def rust_variant(value: str) -> str:
    name = pascal(value) or "Empty"
    return name if name[0].isalpha() else "V" + name


def rust_type(t: TypeRef) -> str:
    return _RUST_TYPES.of(t)


def rust_const_type(const: str | int | bool | None) -> str:
    if isinstance(const, int):
        return f"ConstInt<{const}>"
    return "Const" + (rust_variant(str(const)))


def rust_field_type(f: Field) -> str:
    base = rust_const_type(f.const) if f.const is not None else rust_type(f.type)
    nullable = f.nullable and f.type.kind != "opaque"
    if f.required:
        return f"Option<{base}>" if nullable else base
    return f"Option<Option<{base}>>" if nullable else f"Option<{base}>"


def _holds_integers(t: TypeRef) -> bool:
    if t.kind == "integer":
        return True
    return t.kind == "array" and t.item is not None and _holds_integers(t.item)


def rust_serde(f: Field) -> str:
    """The member's serde attributes: JSON name, absent/null handling, integer reading."""
    parts = [f"rename = {json.dumps(f.json_name)}"]
    nullable = f.nullable and f.type.kind != "opaque"
    integral = f.const is None and _holds_integers(f.type)
    suffix = "_integral" if integral else ""
    if not f.required:
        parts += ["default", 'skip_serializing_if = "Option::is_none"']
        helper = "double_option" if nullable else "present"
        parts.append(f'deserialize_with = "de::{helper}{suffix}"')
    elif nullable:
        parts.append(f'deserialize_with = "de::nullable{suffix}"')
    elif integral:
        parts.append('deserialize_with = "de::integral"')
    return ", ".join(parts)


def _string_consts(model: Model) -> list[tuple[str, str]]:
    """(Rust type name, value) of every string const; two values may not share a name."""
    consts: dict[str, str] = {}
    for definition in model.definitions:
        if isinstance(definition, ObjectDef):
            for f in definition.fields:
                if isinstance(f.const, str):
                    name = rust_const_type(f.const)
                    if consts.setdefault(name, f.const) != f.const:
                        raise name_clash(
                            f"the consts {consts[name]!r} and {f.const!r} map to {name}"
                        )
    return sorted(consts.items())


def go_members(d: ObjectDef) -> tuple[str, ...]:
    """The Go field name of each member of ``d`` (generator/identifiers.py holds a name pair)."""
    return member_identifiers(
        [f.json_name for f in d.fields], go_name, lambda name, how: name + pascal(how), d.name
    )


def rust_members(d: ObjectDef) -> tuple[str, ...]:
    """The Rust field name of each member of ``d``; serde renames each to its JSON name."""

    def suffixed(name: str, how: str) -> str:
        return rust_field(f"{name.removeprefix('r#').rstrip('_')}_{how}")

    return member_identifiers([f.json_name for f in d.fields], rust_field, suffixed, d.name)


def _member_filter(spell: Any) -> Any:
    """A filter ``f | NAME(d)``: the identifier of member ``f`` of object ``d``."""
    cache: dict[str, dict[str, str]] = {}

    def member(f: Field, d: ObjectDef) -> str:
        if d.name not in cache:
            cache[d.name] = dict(zip((g.json_name for g in d.fields), spell(d), strict=True))
        return cache[d.name][f.json_name]

    return member


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    spellings = (
        *(ts_type, ts_decoder, ts_encoder, ts_field_type, ts_property),
        *(go_name, go_type, go_decoder, go_slot, go_field_type, go_const, go_path),
        *(rust_variant, rust_type, rust_field_type, rust_serde),
    )
    env.filters.update(
        {spell.__name__: spell for spell in spellings},  # a filter is named after its function
        go_member=_member_filter(go_members),
        rust_member=_member_filter(rust_members),
        json=lambda v: json.dumps(v, ensure_ascii=False),
        comment=lambda text, prefix: "\n".join(
            prefix + line if line else prefix.rstrip() for line in _wrap(str(text), 90)
        ),
    )
    env.tests.update(
        object=lambda d: isinstance(d, ObjectDef),
        enum=lambda d: isinstance(d, EnumDef),
        union=lambda d: isinstance(d, UnionDef),
        opaque=lambda d: isinstance(d, OpaqueDef),
    )
    return env


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or []


def _check_identifiers(model: Model) -> None:
    for definition in model.definitions:
        if isinstance(definition, ObjectDef):
            go_members(definition)
            rust_members(definition)
        if isinstance(definition, EnumDef):
            _unique([go_name(v) for v in definition.values], definition.name)
            _unique([rust_variant(v) for v in definition.values], definition.name)


def render_all(schemas_dir: Path) -> list[PolyglotFile]:
    """Every file of generated/{typescript,go,rust}/, sorted by name."""
    model = build_model(schemas_dir)
    _check_identifiers(model)
    env = _environment()
    context: dict[str, Any] = {
        "model": model,
        "tool_version": metadata.version("session-contracts"),
        "sources": model.sources,
        "string_consts": _string_consts(model),
    }
    files = [
        PolyglotFile(name, env.get_template(template).render(**context))
        for language in LANGUAGES
        for name, template in _FILES[language]
    ]
    return sorted(files, key=lambda f: f.name)
