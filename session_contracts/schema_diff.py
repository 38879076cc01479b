"""Every change between two schema sets, and what it does to writers and readers.

The core is pure: :func:`diff_schema_sets` takes two loaded schema sets (file
name -> parsed schema) and returns :class:`SchemaChange` records, each with a
stable code from :data:`CHANGE_KINDS`, the JSON pointer of the change inside
its schema file and the document types that reach it. Reading a folder or a
git revision's ``schemas/`` lives at the edge (:func:`load_schema_set`).

The contracts are closed (``additionalProperties: false`` everywhere but
``extensions``), so a reader refuses what it does not know: a new member or
enum value breaks old readers; a removed member, a newly required one or a
tightened limit breaks old writers. The table is specified in
docs/schema-diff.md.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from session_contracts.errors import Finding, ToolError, UsageError

__all__ = [
    "CHANGE_KINDS",
    "ChangeKind",
    "SchemaChange",
    "SchemaSetFiles",
    "blocking_changes",
    "diff_schema_sets",
    "git_toplevel",
    "load_schema_set",
    "revision_has_schemas",
    "schema_version",
]

SchemaSetFiles = Mapping[str, Mapping[str, Any]]  # file name -> parsed schema


@dataclass(frozen=True, slots=True)
class ChangeKind:
    """What one kind of change does to programs written against the old schema."""

    code: str
    breaking: bool
    writers: str  # effect on old writers (their documents checked by the new schema)
    readers: str  # effect on old readers (new documents read by the old schema)
    fix: str


def _kind(code: str, breaking: bool, writers: str, readers: str, fix: str) -> ChangeKind:
    return ChangeKind(code, breaking, writers, readers, fix)


_NONE = "none"
_BUMP = "bump the schema's x-schemaVersion (a new major version), or revert the change"

CHANGE_KINDS: Mapping[str, ChangeKind] = {
    kind.code: kind
    for kind in (
        _kind("schema_added", False, _NONE, _NONE, "nothing to do"),
        _kind(
            "schema_removed",
            True,
            "every document of its types is refused",
            "documents of its types are no longer produced",
            _BUMP,
        ),
        _kind("document_type_added", False, _NONE, _NONE, "nothing to do"),
        _kind(
            "document_type_removed",
            True,
            "documents of that type are refused",
            "the type is no longer produced",
            _BUMP,
        ),
        _kind(
            "document_type_changed",
            True,
            "documents of that type are checked against another definition",
            "documents of that type have another shape",
            _BUMP,
        ),
        _kind("definition_added", False, _NONE, _NONE, "nothing to do"),
        _kind(
            "definition_removed",
            False,
            "none by itself: every place that referenced it is a change of its own",
            "external schemas that reference it by $id no longer resolve",
            "keep the definition if other schema sets reference it",
        ),
        _kind(
            "member_added",
            True,
            _NONE,
            "old readers refuse documents carrying the member (closed object)",
            "put new data under `extensions`, or bump the version",
        ),
        _kind(
            "member_added_open",
            False,
            "old writers that already sent this name with another shape are refused",
            _NONE,
            "nothing to do",
        ),
        _kind(
            "member_added_required",
            True,
            "old writers omit the member and are refused",
            "old readers refuse documents carrying the member when the object is closed",
            "make the member optional, or bump the version",
        ),
        _kind(
            "member_removed",
            True,
            "old writers that send the member are refused (closed object)",
            "old readers that required the member refuse documents without it",
            "keep the member (optional, documented as deprecated), or bump the version",
        ),
        _kind(
            "member_removed_open",
            False,
            "none: the open object still accepts it, unchecked",
            "old readers that required the member refuse documents without it",
            "nothing to do unless it was required",
        ),
        _kind(
            "member_now_required",
            True,
            "old writers that omit the member are refused",
            _NONE,
            "keep the member optional, or bump the version",
        ),
        _kind(
            "member_now_optional",
            False,
            _NONE,
            "old readers that validate with the old schema refuse documents without it",
            "regenerate readers before writers start omitting it",
        ),
        _kind(
            "object_closed",
            True,
            "old writers that send members the schema does not name are refused",
            _NONE,
            "keep the object open, or bump the version",
        ),
        _kind(
            "object_opened",
            True,
            _NONE,
            "old readers refuse members they do not know",
            "keep the object closed and add named members or `extensions`, or bump the version",
        ),
        _kind(
            "type_narrowed",
            True,
            "old writers that send a type no longer allowed are refused",
            _NONE,
            _BUMP,
        ),
        _kind(
            "type_widened",
            True,
            _NONE,
            "old readers refuse values of the new type",
            _BUMP,
        ),
        _kind(
            "type_changed",
            True,
            "old writers' values of the old type are refused",
            "old readers refuse values of the new type",
            _BUMP,
        ),
        _kind(
            "enum_value_added",
            True,
            _NONE,
            "old readers refuse the new value",
            "bump the version, or map the new case onto an existing value",
        ),
        _kind(
            "enum_value_removed",
            True,
            "old writers that send the value are refused",
            _NONE,
            "keep the value (documented as deprecated), or bump the version",
        ),
        _kind(
            "const_changed",
            True,
            "old writers' constant is refused",
            "old readers refuse the new constant",
            _BUMP,
        ),
        _kind(
            "limit_tightened",
            True,
            "old writers' values beyond the new limit are refused",
            _NONE,
            "keep the old limit, or bump the version",
        ),
        _kind(
            "limit_relaxed",
            False,
            _NONE,
            "old readers that enforce the old limit refuse values beyond it",
            "regenerate readers before writers use the room",
        ),
        _kind(
            "pattern_changed",
            True,
            "old writers' values that do not match the new pattern are refused",
            "old readers refuse values that do not match the old pattern",
            "keep the pattern, or bump the version",
        ),
        _kind(
            "format_changed",
            True,
            "old writers' values in the old format are refused",
            "old readers refuse values in the new format",
            "keep the format, or bump the version",
        ),
        _kind(
            "ref_changed",
            True,
            "the value is checked against another definition",
            "the value has another shape",
            _BUMP,
        ),
        _kind(
            "ref_renamed",
            False,
            "none: the new target's text is the old target's",
            _NONE,
            "nothing to do",
        ),
        _kind(
            "variant_added",
            True,
            _NONE,
            "old readers refuse values of the new variant",
            _BUMP,
        ),
        _kind(
            "variant_removed",
            True,
            "old writers' values of the removed variant are refused",
            _NONE,
            _BUMP,
        ),
        _kind(
            "constraint_added",
            True,
            "old writers' values that break the new constraint are refused",
            _NONE,
            "drop the constraint, or bump the version",
        ),
        _kind(
            "constraint_removed",
            False,
            _NONE,
            "old readers that enforce the constraint refuse values that break it",
            "regenerate readers before writers rely on it",
        ),
        _kind(
            "x_rule_added",
            True,
            "old writers' documents that break the new x- rule are refused",
            _NONE,
            "drop the rule, or bump the version",
        ),
        _kind(
            "x_rule_removed",
            False,
            _NONE,
            "old readers that enforce the rule refuse documents that break it",
            "regenerate readers before writers rely on it",
        ),
        _kind(
            "x_rule_changed",
            True,
            "old writers' documents may break the changed x- rule",
            "old readers may refuse documents that follow the new rule",
            "keep the rule, or bump the version",
        ),
        _kind(
            "alias_added",
            True,
            _NONE,
            "old readers refuse input that uses the new alias",
            "bump the version, or send the canonical name",
        ),
        _kind(
            "alias_removed",
            True,
            "old writers that use the alias are refused",
            _NONE,
            "keep the alias, or bump the version",
        ),
        _kind(
            "alias_changed",
            True,
            "input that uses the alias lands on another member",
            "old readers rename the alias to the old member",
            "keep the alias's target, or bump the version",
        ),
        _kind("version_changed", False, _NONE, _NONE, "nothing to do: the version moved"),
        _kind(
            "id_changed",
            True,
            _NONE,
            "readers that resolve the schema by its $id no longer find it",
            "keep the $id, or bump the version with it",
        ),
        _kind("annotation_changed", False, _NONE, _NONE, "nothing to do (documentation only)"),
        _kind(
            "keyword_changed",
            True,
            "old writers' documents may be refused (the direction is not classified)",
            "old readers may refuse new documents (the direction is not classified)",
            "review the change by hand; revert it or bump the version",
        ),
    )
}

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "examples",
        "$comment",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "x-redacted",  # marks text for the redaction scan; documents stay valid either way
    }
)
_UPPER_LIMITS = frozenset(
    {
        "maxLength",
        "maxItems",
        "maxProperties",
        "maxContains",
        "maximum",
        "exclusiveMaximum",
        "x-maxUtf8Bytes",
    }
)
_LOWER_LIMITS = frozenset(
    {"minLength", "minItems", "minProperties", "minContains", "minimum", "exclusiveMinimum"}
)
_FLAGS = frozenset({"uniqueItems", "x-jsSafeInteger"})  # true adds a constraint
_SUBSCHEMA = frozenset(
    {"items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems"}
)
_SUBSCHEMA_MAPS = frozenset({"$defs", "properties", "patternProperties", "dependentSchemas"})
_VARIANTS = frozenset({"anyOf", "oneOf"})
_ALIASES = frozenset({"x-inputAliases", "x-historicalAliases"})
_ROOT_ONLY = frozenset({"x-documentTypes", "x-schemaVersion", "$id"})
_HANDLED = (
    _ANNOTATIONS
    | _UPPER_LIMITS
    | _LOWER_LIMITS
    | _FLAGS
    | _SUBSCHEMA
    | _SUBSCHEMA_MAPS
    | _VARIANTS
    | _ALIASES
    | _ROOT_ONLY
    | {"$ref", "type", "enum", "const", "required", "additionalProperties", "pattern", "format"}
    | {"allOf", "prefixItems", "unevaluatedProperties"}
)


@dataclass(frozen=True, slots=True, order=True)
class SchemaChange:
    """One change between two schema sets, located in its schema file."""

    schema: str  # file name under schemas/
    pointer: str  # JSON pointer into that file ("" is the root)
    code: str
    detail: str  # what changed, in words
    document_types: tuple[str, ...] = ()  # CONTRACT.KIND of every type that reaches it

    @property
    def kind(self) -> ChangeKind:
        return CHANGE_KINDS[self.code]

    @property
    def breaking(self) -> bool:
        return self.kind.breaking

    def render(self) -> str:
        kind = self.kind
        label = "BREAKING" if kind.breaking else "ok"
        types = (
            f" (document types: {', '.join(self.document_types)})" if self.document_types else ""
        )
        return (
            f"{label} {self.schema}#{self.pointer}: {self.detail} [{self.code}]{types}\n"
            f"  writers: {kind.writers}; readers: {kind.readers}\n"
            f"  fix: {kind.fix}"
        )

    def to_json(self) -> dict[str, Any]:
        kind = self.kind
        return {
            "code": self.code,
            "breaking": kind.breaking,
            "schema": self.schema,
            "pointer": self.pointer,
            "documentTypes": list(self.document_types),
            "detail": self.detail,
            "writers": kind.writers,
            "readers": kind.readers,
            "fix": kind.fix,
        }

    def to_finding(self) -> Finding:
        """As a finding (error when breaking), located in its schema file."""
        return Finding(
            self.pointer or "/",
            self.code,
            self.detail,
            self.kind.fix,
            "error" if self.breaking else "warning",
            self.schema,
        )


# ---------------------------------------------------------------------------
# The pure core.


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _show(value: Any) -> str:
    text = _canonical(value)
    return text if len(text) <= 80 else text[:77] + "..."


_ID_VERSION = re.compile(r"/v(\d+)/")


def schema_version(schema: Mapping[str, Any]) -> int | None:
    """A schema's version: ``x-schemaVersion``, else the ``/vN/`` segment of its ``$id``."""
    declared = schema.get("x-schemaVersion")
    if isinstance(declared, int) and not isinstance(declared, bool):
        return declared
    schema_id = schema.get("$id")
    if isinstance(schema_id, str):
        match = _ID_VERSION.search(schema_id)
        if match:
            return int(match.group(1))
    return None


def _contract(file_name: str) -> str:
    return re.sub(r"-v\d+$", "", file_name.removesuffix(".schema.json"))


def _resolve(pointer: str, node: Any) -> Any:
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _reach(files: SchemaSetFiles) -> dict[str, set[tuple[str, str]]]:
    """For each document type, the (file, pointer) of every subtree it reaches via $ref."""
    reached: dict[str, set[tuple[str, str]]] = {}
    for file_name, schema in sorted(files.items()):
        document_types = schema.get("x-documentTypes")
        if not isinstance(document_types, dict):
            continue
        for kind, target in sorted(document_types.items()):
            if not isinstance(target, str):
                continue
            seen: set[tuple[str, str]] = set()
            pending = [(file_name, target.removeprefix("#"))]
            while pending:
                where = pending.pop()
                if where in seen or where[0] not in files:
                    continue
                seen.add(where)
                for ref in _refs_under(_resolve(where[1], files[where[0]])):
                    other, _, pointer = ref.partition("#")
                    pending.append((other or where[0], pointer))
            reached[f"{_contract(file_name)}.{kind}"] = seen
    return reached


def _refs_under(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _is_under(pointer: str, root: str) -> bool:
    return pointer == root or pointer.startswith(root + "/") or root == ""


class _Collector:
    def __init__(self, file_name: str, base: SchemaSetFiles, new: SchemaSetFiles) -> None:
        self.file_name = file_name
        self.base, self.new = base, new
        self.changes: list[tuple[str, str, str]] = []

    def same_target(self, old_ref: Any, new_ref: Any) -> bool:
        """Whether two $refs name definitions of identical text (a renamed definition)."""
        if not isinstance(old_ref, str) or not isinstance(new_ref, str):
            return False
        targets = []
        for files, ref in ((self.base, old_ref), (self.new, new_ref)):
            other, _, pointer = ref.partition("#")
            schema = files.get(other or self.file_name)
            targets.append(_resolve(pointer, schema) if schema is not None else None)
        return targets[0] is not None and targets[0] == targets[1]

    def add(self, pointer: str, code: str, detail: str) -> None:
        assert code in CHANGE_KINDS, code
        self.changes.append((pointer, code, detail))


def _closed(node: Mapping[str, Any]) -> bool:
    return node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False


def _types(node: Mapping[str, Any]) -> set[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        return set(declared)
    return None


def _covered(type_name: str, types: set[str]) -> bool:
    return type_name in types or (type_name == "integer" and "number" in types)


def _compare(base: Any, new: Any, pointer: str, out: _Collector) -> None:
    if base == new:
        return
    if not isinstance(base, dict) or not isinstance(new, dict):
        out.add(pointer, "keyword_changed", f"schema {_show(base)} became {_show(new)}")
        return
    _compare_members(base, new, pointer, out)
    _compare_types(base, new, pointer, out)
    for keyword in sorted(set(base) | set(new)):
        if keyword in ("properties", "required", "type"):
            continue  # _compare_members and _compare_types
        _compare_keyword(keyword, base, new, pointer, out)


def _compare_keyword(
    keyword: str, base: Mapping[str, Any], new: Mapping[str, Any], pointer: str, out: _Collector
) -> None:
    here = f"{pointer}/{_escape(keyword)}"
    old_value, new_value = base.get(keyword, _ABSENT), new.get(keyword, _ABSENT)
    if old_value == new_value or (pointer == "" and keyword in _ROOT_ONLY):
        return
    added, removed = old_value is _ABSENT, new_value is _ABSENT
    if keyword in _ANNOTATIONS:
        out.add(here, "annotation_changed", f"{keyword} changed")
    elif keyword in _UPPER_LIMITS or keyword in _LOWER_LIMITS:
        _compare_limit(keyword, old_value, new_value, here, out)
    elif keyword in _FLAGS:
        tightened = new_value is True and old_value is not True
        code = "limit_tightened" if tightened else "limit_relaxed"
        out.add(here, code, f"{keyword} {_show_change(old_value, new_value)}")
    elif keyword == "pattern":
        code = "limit_relaxed" if removed else "pattern_changed"
        out.add(here, code, f"pattern {_show_change(old_value, new_value)}")
    elif keyword == "format":
        code = "limit_relaxed" if removed else "format_changed"
        out.add(here, code, f"format {_show_change(old_value, new_value)}")
    elif keyword == "$ref":
        code = "ref_renamed" if out.same_target(old_value, new_value) else "ref_changed"
        out.add(here, code, f"$ref {_show_change(old_value, new_value)}")
    elif keyword == "enum":
        _compare_enum(old_value, new_value, here, out)
    elif keyword == "const":
        code = "const_changed" if not (added or removed) else _added_or_removed(added)
        out.add(here, code, f"const {_show_change(old_value, new_value)}")
    elif keyword == "additionalProperties" or keyword == "unevaluatedProperties":
        _compare_openness(keyword, old_value, new_value, here, out)
    elif keyword in _SUBSCHEMA:
        if added or removed:
            out.add(here, _added_or_removed(added), f"{keyword} {'added' if added else 'removed'}")
        else:
            _compare(old_value, new_value, here, out)
    elif keyword in _SUBSCHEMA_MAPS:
        _compare_map(keyword, old_value, new_value, here, out)
    elif keyword in _VARIANTS or keyword == "allOf":
        _compare_list(keyword, old_value, new_value, here, out)
    elif keyword in _ALIASES:
        _compare_aliases(keyword, old_value, new_value, here, out)
    elif keyword.startswith("x-"):
        code = "x_rule_added" if added else "x_rule_removed" if removed else "x_rule_changed"
        out.add(here, code, f"{keyword} {_show_change(old_value, new_value)}")
    else:
        out.add(here, "keyword_changed", f"{keyword} {_show_change(old_value, new_value)}")


class _Absent:
    def __repr__(self) -> str:
        return "absent"


_ABSENT: Any = _Absent()


def _show_change(old: Any, new: Any) -> str:
    if old is _ABSENT:
        return f"added ({_show(new)})"
    if new is _ABSENT:
        return f"removed (was {_show(old)})"
    return f"changed from {_show(old)} to {_show(new)}"


def _added_or_removed(added: bool) -> str:
    return "constraint_added" if added else "constraint_removed"


def _compare_limit(keyword: str, old: Any, new: Any, here: str, out: _Collector) -> None:
    numbers = all(
        v is _ABSENT or (isinstance(v, int | float) and not isinstance(v, bool)) for v in (old, new)
    )
    if not numbers:
        out.add(here, "keyword_changed", f"{keyword} {_show_change(old, new)}")
        return
    if old is _ABSENT or new is _ABSENT:
        tightened = old is _ABSENT
    elif keyword in _UPPER_LIMITS:
        tightened = new < old
    else:
        tightened = new > old
    code = "limit_tightened" if tightened else "limit_relaxed"
    out.add(here, code, f"{keyword} {_show_change(old, new)}")


def _compare_enum(old: Any, new: Any, here: str, out: _Collector) -> None:
    if old is _ABSENT or new is _ABSENT or not isinstance(old, list) or not isinstance(new, list):
        code = "constraint_added" if old is _ABSENT else "constraint_removed"
        if old is not _ABSENT and new is not _ABSENT:
            code = "keyword_changed"
        out.add(here, code, f"enum {_show_change(old, new)}")
        return
    old_values = {_canonical(v): v for v in old}
    new_values = {_canonical(v): v for v in new}
    for key in sorted(set(old_values) - set(new_values)):
        out.add(here, "enum_value_removed", f"enum value {key} removed")
    for key in sorted(set(new_values) - set(old_values)):
        out.add(here, "enum_value_added", f"enum value {key} added")


def _compare_openness(keyword: str, old: Any, new: Any, here: str, out: _Collector) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _compare(old, new, here, out)
        return
    old_closed, new_closed = old is False, new is False
    if old_closed and not new_closed:
        out.add(here, "object_opened", f"{keyword} {_show_change(old, new)}: the object is open")
    elif new_closed and not old_closed:
        out.add(here, "object_closed", f"{keyword} {_show_change(old, new)}: the object is closed")
    else:
        out.add(here, "keyword_changed", f"{keyword} {_show_change(old, new)}")


def _compare_map(keyword: str, old: Any, new: Any, here: str, out: _Collector) -> None:
    old_map = old if isinstance(old, dict) else {}
    new_map = new if isinstance(new, dict) else {}
    for name in sorted(set(old_map) | set(new_map)):
        at = f"{here}/{_escape(name)}"
        if name not in new_map:
            code = "definition_removed" if keyword == "$defs" else "constraint_removed"
            out.add(at, code, f"{keyword} entry {name!r} removed")
        elif name not in old_map:
            code = "definition_added" if keyword == "$defs" else "constraint_added"
            out.add(at, code, f"{keyword} entry {name!r} added")
        else:
            _compare(old_map[name], new_map[name], at, out)


def _compare_list(keyword: str, old: Any, new: Any, here: str, out: _Collector) -> None:
    if old is _ABSENT or new is _ABSENT:
        out.add(here, _added_or_removed(old is _ABSENT), f"{keyword} {_show_change(old, new)}")
        return
    if not isinstance(old, list) or not isinstance(new, list):
        out.add(here, "keyword_changed", f"{keyword} {_show_change(old, new)}")
        return
    if len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            _compare(a, b, f"{here}/{index}", out)
        return
    old_keys = [_canonical(v) for v in old]
    new_keys = [_canonical(v) for v in new]
    variants = keyword in _VARIANTS
    for index, key in enumerate(old_keys):
        if key not in new_keys:
            code = "variant_removed" if variants else "constraint_removed"
            out.add(f"{here}/{index}", code, f"{keyword} branch {_show(old[index])} removed")
    for index, key in enumerate(new_keys):
        if key not in old_keys:
            code = "variant_added" if variants else "constraint_added"
            out.add(f"{here}/{index}", code, f"{keyword} branch {_show(new[index])} added")


def _compare_entries(
    old: Any,
    new: Any,
    here: str,
    out: _Collector,
    *,
    codes: tuple[str, str, str],
    noun: Callable[[str], str],
    added: Callable[[Any], str],
    now: str,
) -> None:
    """Each entry of two name -> value maps (a non-object reads as empty) that was
    removed, added or changed, under ``codes`` in that order."""
    removed_code, added_code, changed_code = codes
    old_map = old if isinstance(old, dict) else {}
    new_map = new if isinstance(new, dict) else {}
    for name in sorted(set(old_map) | set(new_map)):
        at = f"{here}/{_escape(name)}"
        if name not in new_map:
            out.add(at, removed_code, f"{noun(name)} removed")
        elif name not in old_map:
            out.add(at, added_code, f"{noun(name)}{added(new_map[name])} added")
        elif old_map[name] != new_map[name]:
            out.add(
                at,
                changed_code,
                f"{noun(name)} {now} {new_map[name]!r}, not {old_map[name]!r}",
            )


def _compare_aliases(keyword: str, old: Any, new: Any, here: str, out: _Collector) -> None:
    _compare_entries(
        old,
        new,
        here,
        out,
        codes=("alias_removed", "alias_added", "alias_changed"),
        noun=lambda alias: f"{keyword} alias {alias!r}",
        added=lambda target: f" -> {target!r}",
        now="now names",
    )


def _compare_members(
    base: Mapping[str, Any], new: Mapping[str, Any], pointer: str, out: _Collector
) -> None:
    old_props = _mapping(base.get("properties"))
    new_props = _mapping(new.get("properties"))
    old_required = {n for n in _sequence(base.get("required")) if isinstance(n, str)}
    new_required = {n for n in _sequence(new.get("required")) if isinstance(n, str)}
    here = f"{pointer}/properties"
    for name in sorted(set(old_props) | set(new_props)):
        at = f"{here}/{_escape(name)}"
        if name not in new_props:
            code = "member_removed" if _closed(new) else "member_removed_open"
            out.add(at, code, f"member {name!r} removed")
        elif name not in old_props:
            if name in new_required:
                out.add(at, "member_added_required", f"required member {name!r} added")
            else:
                code = "member_added" if _closed(base) else "member_added_open"
                out.add(at, code, f"member {name!r} added")
        else:
            _compare(old_props[name], new_props[name], at, out)
    both = set(old_props) & set(new_props)
    for name in sorted(new_required - old_required):
        if name in both or name not in new_props:
            out.add(f"{pointer}/required", "member_now_required", f"member {name!r} now required")
    for name in sorted(old_required - new_required):
        if name in both or name not in old_props:
            out.add(f"{pointer}/required", "member_now_optional", f"member {name!r} now optional")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _compare_types(
    base: Mapping[str, Any], new: Mapping[str, Any], pointer: str, out: _Collector
) -> None:
    if base.get("type") == new.get("type"):
        return
    here = f"{pointer}/type"
    old_types, new_types = _types(base), _types(new)
    if old_types is None and new_types is None:
        old_value, new_value = base.get("type", _ABSENT), new.get("type", _ABSENT)
        out.add(here, "keyword_changed", f"type {_show_change(old_value, new_value)}")
        return
    if old_types is None:
        out.add(here, "type_narrowed", f"type {sorted(new_types or ())} added")
        return
    if new_types is None:
        out.add(here, "type_widened", f"type {sorted(old_types)} removed")
        return
    narrowed = sorted(t for t in old_types if not _covered(t, new_types))
    widened = sorted(t for t in new_types if not _covered(t, old_types))
    detail = f"type {sorted(old_types)} became {sorted(new_types)}"
    if narrowed and widened:
        out.add(here, "type_changed", detail)
    elif narrowed:
        out.add(here, "type_narrowed", detail)
    elif widened:
        out.add(here, "type_widened", detail)


def _compare_root(
    file_name: str, base: Mapping[str, Any], new: Mapping[str, Any], out: _Collector
) -> None:
    contract = _contract(file_name)
    _compare_entries(
        base.get("x-documentTypes"),
        new.get("x-documentTypes"),
        "/x-documentTypes",
        out,
        codes=("document_type_removed", "document_type_added", "document_type_changed"),
        noun=lambda kind: f"document type {contract}.{kind}",
        added=lambda _: "",
        now="now",
    )
    old_version, new_version = schema_version(base), schema_version(new)
    if old_version != new_version or base.get("x-schemaVersion") != new.get("x-schemaVersion"):
        out.add(
            "/x-schemaVersion",
            "version_changed",
            f"version {old_version} became {new_version}",
        )
    if base.get("$id") != new.get("$id"):
        code = "version_changed" if old_version != new_version else "id_changed"
        out.add(
            "/$id", code, f"$id {_show_change(base.get('$id', _ABSENT), new.get('$id', _ABSENT))}"
        )


def diff_schema_sets(base: SchemaSetFiles, new: SchemaSetFiles) -> list[SchemaChange]:
    """Every change from ``base`` to ``new``, sorted by file, pointer and code."""
    reach = {**_reach(base)}
    for name, where in _reach(new).items():
        reach[name] = reach.get(name, set()) | where
    changes: list[SchemaChange] = []
    for file_name in sorted(set(base) | set(new)):
        out = _Collector(file_name, base, new)
        if file_name not in new:
            out.add("", "schema_removed", f"schema {file_name} removed")
        elif file_name not in base:
            out.add("", "schema_added", f"schema {file_name} added")
        else:
            try:
                _compare_root(file_name, base[file_name], new[file_name], out)
                _compare(base[file_name], new[file_name], "", out)
            except RecursionError:
                raise _refusal(
                    ToolError,
                    "diff_schema_too_deep",
                    f"{file_name} nests schemas too deeply to compare",
                    "flatten the schema with $defs and $ref",
                    source=file_name,
                ) from None
        for pointer, code, detail in out.changes:
            types = tuple(
                sorted(
                    name
                    for name, where in reach.items()
                    if any(f == file_name and _is_under(pointer, p) for f, p in where)
                    # a change outside $defs (the root's keywords) concerns the whole contract
                    or (
                        not pointer.startswith("/$defs/")
                        and name.startswith(_contract(file_name) + ".")
                    )
                )
            )
            changes.append(SchemaChange(file_name, pointer, code, detail, types))
    return sorted(set(changes))


def blocking_changes(
    base: SchemaSetFiles, new: SchemaSetFiles, changes: list[SchemaChange]
) -> list[SchemaChange]:
    """The breaking changes to schemas whose version did not move (what `generate` refuses)."""
    blocked = []
    for change in changes:
        if not change.breaking:
            continue
        old_schema, new_schema = base.get(change.schema), new.get(change.schema)
        if old_schema is not None and new_schema is not None:
            old_version, new_version = schema_version(old_schema), schema_version(new_schema)
            if old_version != new_version:
                continue
        blocked.append(change)
    return blocked


# ---------------------------------------------------------------------------
# The edge: reading a folder or a git revision's schemas/.

_GIT_TIMEOUT = 60

_Refusal = TypeVar("_Refusal", UsageError, ToolError)


def _refusal(
    error: type[_Refusal], code: str, message: str, hint: str, source: str = ""
) -> _Refusal:
    """``error`` with its one finding, about the request as a whole (path ``$``)."""
    return error([Finding("$", code, message, hint, source=source)])


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            timeout=_GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _refusal(
            ToolError,
            "git_unavailable",
            f"cannot run git in {folder}: {exc}",
            "install git, or compare two folders instead of a revision",
        ) from None


def git_toplevel(folder: Path) -> tuple[Path, str] | None:
    """The repository holding ``folder`` and ``folder``'s prefix in it; None outside git."""
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
        prefix = _git(folder, "rev-parse", "--show-prefix")
    except ToolError:
        return None
    if top.returncode != 0 or prefix.returncode != 0:
        return None
    return Path(top.stdout.decode().strip()), prefix.stdout.decode().strip()


def revision_has_schemas(top: Path, prefix: str, revision: str) -> bool:
    """Whether ``revision`` of the repository at ``top`` has a ``schemas/`` folder."""
    probe = _git(top, "rev-parse", "--verify", "--quiet", f"{revision}:{prefix}schemas")
    return probe.returncode == 0


def _parse(text: bytes, source: str) -> Mapping[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise _refusal(
            ToolError,
            "diff_schema_unreadable",
            f"{source} is not JSON: {exc}",
            "fix the file, or compare another revision",
            source=source,
        ) from None
    if not isinstance(value, dict):
        raise _refusal(
            ToolError,
            "diff_schema_unreadable",
            f"{source} is not a JSON object",
            "a schema file holds one JSON object",
            source=source,
        )
    return value


def _load_folder(folder: Path) -> dict[str, Mapping[str, Any]]:
    try:
        paths = sorted(folder.glob("*.schema.json"))
        files = {path.name: _parse(path.read_bytes(), str(path)) for path in paths}
    except OSError as exc:
        raise _refusal(
            UsageError,
            "diff_folder_unreadable",
            f"cannot read {folder}: {exc.strerror or exc}",
            "pass a readable schemas folder or a git revision",
        ) from None
    return _some_schemas(
        files,
        f"{folder} holds no *.schema.json file",
        "pass the schemas/ folder itself (or a git revision)",
    )


def _some_schemas(
    files: dict[str, Mapping[str, Any]], holds_none: str, hint: str
) -> dict[str, Mapping[str, Any]]:
    """``files``, refused (``diff_no_schemas``) when there are none to compare."""
    if not files:
        raise _refusal(UsageError, "diff_no_schemas", holds_none, hint)
    return files


def _load_revision(revision: str, root: Path) -> dict[str, Mapping[str, Any]]:
    located = git_toplevel(root)
    if located is None:
        raise _refusal(
            UsageError,
            "diff_not_a_repository",
            f"{revision!r} is not a folder, and {root} is not in a git repository",
            "pass a schemas folder, or run inside the repository (or pass --root)",
        )
    top, prefix = located
    resolved = _git(
        top, "rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"
    )
    if revision.startswith("-") or resolved.returncode != 0:
        raise _refusal(
            UsageError,
            "diff_revision_unknown",
            f"{revision!r} is neither a folder nor a revision of {top}",
            "pass a schemas folder or a revision (HEAD~1, origin/main, a commit id); "
            "fetch first if it is a remote branch",
        )
    commit = resolved.stdout.decode().strip()
    tree = f"{commit}:{prefix}schemas"
    listing = _git(top, "ls-tree", "-z", "--name-only", tree)
    if listing.returncode != 0:
        raise _refusal(
            UsageError,
            "diff_no_schemas",
            f"revision {revision} has no {prefix}schemas/ folder",
            "compare against a revision that has the schemas",
        )
    files: dict[str, Mapping[str, Any]] = {}
    for raw_name in listing.stdout.split(b"\0"):
        name = raw_name.decode("utf-8", "replace")
        if not name.endswith(".schema.json"):
            continue
        blob = _git(top, "cat-file", "blob", f"{tree}/{name}")
        if blob.returncode != 0:
            raise _refusal(
                ToolError,
                "diff_revision_unreadable",
                f"cannot read {prefix}schemas/{name} at {revision}",
                "check the repository with `git fsck`",
            )
        files[name] = _parse(blob.stdout, f"{revision}:{prefix}schemas/{name}")
    return _some_schemas(
        files,
        f"revision {revision} has no *.schema.json under {prefix}schemas/",
        "compare against a revision that has the schemas",
    )


def load_schema_set(spec: str, root: Path) -> dict[str, Mapping[str, Any]]:
    """A folder's schemas, or a git revision's ``schemas/`` of the repository holding ``root``."""
    path = Path(spec)
    if path.is_dir():
        return _load_folder(path)
    if path.exists():
        raise _refusal(
            UsageError,
            "diff_folder_unreadable",
            f"{spec} is a file, not a schemas folder",
            "pass the folder that holds the *.schema.json files, or a git revision",
        )
    return _load_revision(spec, root)
