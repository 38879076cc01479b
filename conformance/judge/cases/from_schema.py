"""A strategy for the JSON values one of our schemas accepts, built once.

Certify draws documents of every type from the schemas. This compiles a
bundled schema (:func:`documents.bundled_schema`: one document, ``$ref`` into
its own ``$defs``) into a Hypothesis strategy once, with Hypothesis's public API
only: each node's strategy is built when the schema is compiled, never per draw,
and no schema is checked again while drawing. The keywords our schemas use are
covered (a schema with another one is refused when compiled, not drawn from
loosely); combinators are drawn branch by branch, and a node whose branches may
overlap (``oneOf``, ``if``, ``not``, ``contains``) keeps only what its own
subschema accepts, checked by a validator built once. The x- rules are not
drawn: :func:`documents.documents` mends and re-validates each draw.

Every primitive comes from :mod:`draws`, so the cases are a function of the
seed alone.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema_rs
from hypothesis import strategies as st

from session_contracts.conformance.judge.cases import draws
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER

__all__ = ["SchemaStrategies", "UnsupportedSchema"]

# Arrays drawn with at most this many items (unless minItems asks more): nested lists
# (a snapshot's turns, iterations, tools) otherwise multiply into large documents.
ITEMS = 3
# Strings drawn with at most this many characters (unless minLength asks more).
CHARACTERS = 20

# Keywords that say nothing about which values are valid.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"}
    | {"discriminator", "deprecated", "readOnly", "writeOnly"}
)
_COMBINATORS = ("allOf", "anyOf", "oneOf", "if", "not")
_SUPPORTED = frozenset(
    {"$ref", "type", "const", "enum", *_COMBINATORS, "then", "else"}
    | {"properties", "required", "additionalProperties", "dependentRequired"}
    | {"items", "minItems", "maxItems", "uniqueItems", "contains"}
    | {"minLength", "maxLength", "pattern", "format"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
)
_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


class UnsupportedSchema(ValueError):
    """A schema uses a keyword this compiler does not draw from."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _merge(left: Mapping[str, Any], right: Mapping[str, Any]) -> dict[str, Any]:
    """One schema of plain keywords accepting (about) what both accept.

    Where both constrain a member or the items, the two are kept as an allOf,
    compiled in turn; where both give a const, a pattern or a format, the left
    one is drawn and the node's validator decides.
    """
    out = dict(left)
    for key, value in right.items():
        if key not in out:
            out[key] = value
        elif key == "type":
            mine = {out[key]} if isinstance(out[key], str) else set(out[key])
            theirs = {value} if isinstance(value, str) else set(value)
            out[key] = sorted(mine & theirs)
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "properties":
            merged = dict(out[key])
            for name, schema in value.items():
                merged[name] = _both(merged[name], schema) if name in merged else schema
            out[key] = merged
        elif key in ("items", "additionalProperties"):
            out[key] = _both(out[key], value)
        elif key == "enum":
            out[key] = [item for item in out[key] if any(item == other for other in value)]
        elif key in ("minimum", "exclusiveMinimum", "minLength", "minItems"):
            out[key] = max(out[key], value)
        elif key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems"):
            out[key] = min(out[key], value)
        elif key == "dependentRequired":
            out[key] = {**out[key], **value}
    return out


def _both(left: Any, right: Any) -> Any:
    if left is True or left == {}:
        return right
    if right is True or right == {}:
        return left
    if left is False or right is False:
        return False
    return {"allOf": [left, right]}


class _Regex:
    """Strings a (simple) pattern matches: anchors, literals, classes, quantifiers.

    A pattern with a construct beyond those (groups, alternation, lookaround)
    is drawn as any string and filtered by the pattern.
    """

    _CLASSES: Mapping[str, Callable[[str], bool]] = {
        "d": str.isdigit,
        "w": lambda c: c.isalnum() or c == "_",
        "s": str.isspace,
    }

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.compiled = re.compile(pattern)

    def strategy(self) -> st.SearchStrategy[str]:
        try:
            parts = self._parse()
        except UnsupportedSchema:
            return draws.text(max_size=CHARACTERS).filter(self.compiled.search)
        return st.tuples(*parts).map("".join).filter(self.compiled.search)

    def _parse(self) -> list[st.SearchStrategy[str]]:
        pattern, parts, index = self.pattern, [], 0
        if not pattern.startswith("^"):
            parts.append(draws.text(max_size=8))
        else:
            index = 1
        anchored_end = False
        while index < len(pattern):
            char = pattern[index]
            if char == "$" and index == len(pattern) - 1:
                anchored_end = True
                index += 1
                continue
            if char in "()|?*+{}^$":
                raise UnsupportedSchema(self.pattern)
            if char == "[":
                end = pattern.index("]", index + 1)
                atom = self._class(pattern[index + 1 : end])
                index = end + 1
            elif char == "\\":
                atom = self._escape(pattern[index + 1])
                index += 2
            elif char == ".":
                atom = draws.characters(exclude="\n")
                index += 1
            else:
                atom = st.just(char)
                index += 1
            low, high, index = self._quantifier(index)
            parts.append(atom if (low, high) == (1, 1) else draws.strings_of(atom, low, high))
        if not anchored_end:
            parts.append(draws.text(max_size=8))
        return parts

    def _quantifier(self, index: int) -> tuple[int, int, int]:
        pattern = self.pattern
        if index >= len(pattern):
            return 1, 1, index
        char = pattern[index]
        if char == "*":
            return 0, 8, index + 1
        if char == "+":
            return 1, 8, index + 1
        if char == "?":
            return 0, 1, index + 1
        if char == "{":
            end = pattern.index("}", index)
            low_text, comma, high_text = pattern[index + 1 : end].partition(",")
            low = int(low_text)
            high = low if not comma else (int(high_text) if high_text else low + 8)
            return low, high, end + 1
        return 1, 1, index

    def _escape(self, char: str) -> st.SearchStrategy[str]:
        if char.lower() in self._CLASSES:
            test = self._CLASSES[char.lower()]
            wanted = char.islower()
            return draws.characters().filter(lambda c: test(c) == wanted)
        if char.isalnum():
            raise UnsupportedSchema(self.pattern)
        return st.just(char)

    def _class(self, body: str) -> st.SearchStrategy[str]:
        if body.startswith("^") or "\\" in body:
            raise UnsupportedSchema(self.pattern)
        members: list[str] = []
        index = 0
        while index < len(body):
            if index + 2 < len(body) and body[index + 1] == "-":
                members += [chr(c) for c in range(ord(body[index]), ord(body[index + 2]) + 1)]
                index += 3
            else:
                members.append(body[index])
                index += 1
        return draws.pick(sorted(set(members)))


class SchemaStrategies:
    """Strategies for the subschemas of one bundled schema (``$ref`` into its ``$defs``)."""

    def __init__(self, bundled: Mapping[str, Any]) -> None:
        self._root = bundled
        self._defs: Mapping[str, Any] = bundled.get("$defs", {})
        self._built: dict[str, st.SearchStrategy[Any]] = {}
        self._building: set[str] = set()

    def root(self) -> st.SearchStrategy[Any]:
        """Values of the whole schema."""
        return self.strategy({k: v for k, v in self._root.items() if k != "$defs"})

    def strategy(self, schema: Any) -> st.SearchStrategy[Any]:
        """Values of ``schema``, a subschema of the bundled one (built once per distinct node)."""
        if schema is True or schema == {}:
            return draws.json_values()
        if schema is False:
            return st.nothing()
        key = _canonical(schema)
        if key in self._built:
            return self._built[key]
        if key in self._building:  # a recursive $ref: drawn lazily
            return st.deferred(lambda: self._built[key])
        self._building.add(key)
        try:
            built = self._compile(schema)
        finally:
            self._building.discard(key)
        self._built[key] = built
        return built

    def _validator(self, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
        checked = {**schema, "$defs": self._defs}
        validator = jsonschema_rs.validator_for(checked)
        is_valid: Callable[[Any], bool] = validator.is_valid
        return is_valid

    def _split(self, schema: Any) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """``schema`` as plain keywords (its $ref and allOf merged in) and the
        combinators still to draw, one per entry; None when nothing is valid."""
        base: dict[str, Any] = {}
        pending: list[dict[str, Any]] = []
        todo: list[Any] = [schema]
        for _ in range(256):
            if not todo:
                return base, pending
            part = todo.pop(0)
            if part is True:
                continue
            if part is False:
                return None
            part = {k: v for k, v in part.items() if k not in _ANNOTATIONS}
            unknown = {k for k in part if k not in _SUPPORTED and not k.startswith("x-")}
            if unknown:
                raise UnsupportedSchema(f"cannot draw from a schema with {sorted(unknown)}")
            if "$ref" in part:
                ref = part.pop("$ref")
                if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
                    raise UnsupportedSchema(f"$ref {ref!r} outside the bundled $defs")
                todo.append(self._defs[ref.removeprefix("#/$defs/")])
            todo.extend(part.pop("allOf", []))
            for key in ("oneOf", "anyOf", "not"):
                if key in part:
                    pending.append({key: part.pop(key)})
            if "if" in part:
                pending.append({k: part.pop(k) for k in ("if", "then", "else") if k in part})
            part.pop("then", None)
            part.pop("else", None)
            if "contains" in part and "contains" in base:
                pending.append({"contains": part.pop("contains")})
            base = _merge(base, part)
        raise UnsupportedSchema("$ref and allOf nested too deep to merge (a recursive $ref?)")

    def _compile(self, schema: Any) -> st.SearchStrategy[Any]:
        split = self._split(schema)
        if split is None:
            return st.nothing()
        base, pending = split
        drawn = self._first_combinator(base, pending[0], pending[1:]) if pending else None
        if drawn is None:
            drawn = self._typed(base)
        if "contains" in base or any(set(p) & {"oneOf", "if", "not", "contains"} for p in pending):
            # Branches drawn apart may overlap, an else branch may meet the if, the
            # items may miss what contains asks: keep what the node accepts. (An
            # anyOf's branches are drawn as they are: the final validation decides.)
            drawn = drawn.filter(self._validator(schema if isinstance(schema, dict) else {}))
        return drawn

    def _first_combinator(
        self, base: dict[str, Any], first: dict[str, Any], rest: list[dict[str, Any]]
    ) -> st.SearchStrategy[Any]:
        """The node drawn branch by branch of its first combinator."""

        def with_rest(*parts: Any) -> st.SearchStrategy[Any]:
            return self.strategy({"allOf": [base, *parts, *rest]})

        for key in ("oneOf", "anyOf"):
            if key in first:
                return st.one_of([with_rest(branch) for branch in first[key]])
        if "if" in first:
            return st.one_of(
                with_rest(first["if"], first.get("then", True)), with_rest(first.get("else", True))
            )
        return with_rest()  # not, a second contains: the node's validator decides

    def _typed(self, node: dict[str, Any]) -> st.SearchStrategy[Any]:
        if "const" in node:
            return st.just(node["const"]).map(copy.deepcopy)
        if "enum" in node:
            return draws.pick(node["enum"]).map(copy.deepcopy)
        types = node.get("type")
        if types is None:
            types = [t for t in _TYPES if self._implied(node, t)] or list(_TYPES)
        elif isinstance(types, str):
            types = [types]
        if not types:
            return st.nothing()
        return st.one_of([self._of_type(node, kind) for kind in types])

    @staticmethod
    def _implied(node: Mapping[str, Any], kind: str) -> bool:
        keywords = {
            "object": ("properties", "required", "additionalProperties", "dependentRequired"),
            "array": ("items", "minItems", "maxItems", "uniqueItems", "contains"),
            "string": ("minLength", "maxLength", "pattern", "format"),
            "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
        }.get(kind, ())
        return any(k in node for k in keywords)

    def _of_type(self, node: dict[str, Any], kind: str) -> st.SearchStrategy[Any]:
        if kind == "null":
            return st.none()
        if kind == "boolean":
            return st.booleans()
        if kind == "integer":
            low, high = self._integer_bounds(node)
            return draws.integers(low, high) if low <= high else st.nothing()
        if kind == "number":
            low, high = self._integer_bounds(node)
            numbers = draws.floats(
                node.get("minimum", node.get("exclusiveMinimum")),
                node.get("maximum", node.get("exclusiveMaximum")),
                exclude_min="exclusiveMinimum" in node,
            ).map(lambda n: n if n != 0 else 0.0)
            if "exclusiveMaximum" in node:
                numbers = numbers.filter(lambda n: n < node["exclusiveMaximum"])
            if low > high:
                return numbers
            return st.one_of(draws.integers(low, high), numbers, numbers, numbers)
        if kind == "string":
            return self._string(node)
        if kind == "array":
            return self._array(node)
        return self._object(node)

    @staticmethod
    def _integer_bounds(node: Mapping[str, Any]) -> tuple[int, int]:
        low, high = -MAX_SAFE_INTEGER, MAX_SAFE_INTEGER
        if "minimum" in node:
            low = max(low, math.ceil(node["minimum"]))
        if "exclusiveMinimum" in node:
            low = max(low, math.floor(node["exclusiveMinimum"]) + 1)
        if "maximum" in node:
            high = min(high, math.floor(node["maximum"]))
        if "exclusiveMaximum" in node:
            high = min(high, math.ceil(node["exclusiveMaximum"]) - 1)
        return low, high

    def _string(self, node: Mapping[str, Any]) -> st.SearchStrategy[str]:
        low = node.get("minLength", 0)
        high = node.get("maxLength", max(low, CHARACTERS))
        if node.get("format") == "date-time":
            strings = draws.date_times()
        elif "pattern" in node:
            strings = _Regex(node["pattern"]).strategy()
        else:
            return draws.text(min_size=low, max_size=high)
        if low or "maxLength" in node:
            strings = strings.filter(lambda s: low <= len(s) <= high)
        return strings

    def _array(self, node: Mapping[str, Any]) -> st.SearchStrategy[list[Any]]:
        items = self.strategy(node.get("items", {}))
        low = node.get("minItems", 0)
        high = min(node.get("maxItems", ITEMS), max(low, ITEMS))
        unique = _canonical if node.get("uniqueItems") else None
        lists = st.lists(items, min_size=low, max_size=high, unique_by=unique)
        if "contains" not in node or high == 0:
            return lists
        wanted = self.strategy(_both(node.get("items", {}), node["contains"]))

        return _with_one_contained(items, wanted, low, high)

    def _object(self, node: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        properties: Mapping[str, Any] = node.get("properties", {})
        required = [name for name in node.get("required", []) if name not in properties]
        if required:  # required members without a schema of their own: any JSON value
            properties = {**properties, **{name: {} for name in required}}
        required_names = set(node.get("required", []))
        values = {name: self.strategy(schema) for name, schema in properties.items()}
        additional = node.get("additionalProperties", True)
        if additional is False:
            extra = None
        elif additional is True or additional == {}:
            # An open object: a map when it names no member, else now and then a stranger.
            extra = draws.json_values() if not properties else None
        else:
            extra = self.strategy(additional)
        dependent: Mapping[str, list[str]] = node.get("dependentRequired", {})
        unknown_members = extra is not None and (not properties or additional is not True)
        strangers: st.SearchStrategy[dict[str, Any]] | None = None
        if unknown_members and extra is not None:
            names = draws.text(min_size=1, max_size=12).filter(lambda n: n not in properties)
            strangers = st.dictionaries(names, extra, max_size=3)
        return _objects(values, frozenset(required_names), dependent, strangers)


# The composites below are defined once, not in each call of the compiler's methods:
# hypothesis reads the source of every function given to ``st.composite`` (a tenth of a
# second for the hundred objects of the contracts). Their draws are those the nested
# definitions made, and one label for all their strategies, as before.
@st.composite
def _with_one_contained(
    draw: st.DrawFn,
    items: st.SearchStrategy[Any],
    wanted: st.SearchStrategy[Any],
    low: int,
    high: int,
) -> list[Any]:
    drawn: list[Any] = draw(st.lists(items, min_size=max(low - 1, 0), max_size=high - 1))
    drawn.insert(draw(draws.integers(0, len(drawn))), draw(wanted))
    return drawn


@st.composite
def _objects(
    draw: st.DrawFn,
    values: Mapping[str, st.SearchStrategy[Any]],
    required_names: frozenset[str],
    dependent: Mapping[str, list[str]],
    strangers: st.SearchStrategy[dict[str, Any]] | None,
) -> dict[str, Any]:
    """An object of ``values``' members (the required ones always, the others now and
    then), with ``dependentRequired`` kept, and the unknown members ``strangers`` draws
    (when not None)."""
    out: dict[str, Any] = {}
    for name, strategy in values.items():
        if name in required_names or draw(st.booleans()):
            out[name] = draw(strategy)
    for name, needs in dependent.items():
        if name in out and any(need not in out for need in needs):
            if name in required_names:
                for need in needs:
                    if need in values and need not in out:
                        out[need] = draw(values[need])
            else:
                del out[name]
    if strangers is not None:
        out.update(draw(strangers))
    return out
