"""The x- keywords: rules of our schemas that plain JSON Schema cannot say.

Each keyword is a pure function ``(keyword value, instance) -> violations``,
used by both validators (the fast jsonschema-rs one and the python-jsonschema
reference).  docs/x-keywords.md is the specification of every keyword here;
schemas/meta/x-keywords.schema.json checks how schemas use them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER

__all__ = [
    "ANNOTATION_KEYWORDS",
    "CHECK_KEYWORDS",
    "RATIO_ABSOLUTE_TOLERANCE",
    "RATIO_RELATIVE_TOLERANCE",
    "Violation",
    "json_equal",
    "resolve_pointer",
]

RATIO_RELATIVE_TOLERANCE = 1e-9
# Near zero a relative bound is no bound: 0 / 1 written as 5e-230 is still 0 (docs/x-keywords.md).
RATIO_ABSOLUTE_TOLERANCE = 1e-12
_ABSENT = object()


@dataclass(frozen=True, slots=True)
class Violation:
    """A broken x- rule, located relative to the instance the keyword sits on."""

    where: tuple[str | int, ...]
    code: str
    message: str
    hint: str
    # The smallest edit that mends this violation, as ("set", where, value) or
    # ("delete", where, None) operations relative to the keyword's instance.
    # Test-data generators use it to turn schema-shaped data into valid data.
    fix: tuple[tuple[str, tuple[str | int, ...], Any], ...] = ()


def resolve_pointer(instance: Any, pointer: str) -> Any:
    """Resolve a JSON Pointer (RFC 6901) below ``instance``; ``_ABSENT`` if missing."""
    node = instance
    for token in _parts(pointer):
        if isinstance(node, dict):
            node = node.get(token, _ABSENT)
            if node is _ABSENT:
                return _ABSENT
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _ABSENT
    return node


# A schema names a handful of pointers, each resolved for every instance its
# keyword applies to: each is split and unescaped once.
_PARTS_CACHE: dict[str, tuple[str, ...]] = {}
_PARTS_CACHE_MAX = 4096


def _parts(pointer: str) -> tuple[str, ...]:
    parts = _PARTS_CACHE.get(pointer)
    if parts is None:
        parts = (
            tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer.lstrip("/").split("/"))
            if pointer
            else ()
        )
        if len(_PARTS_CACHE) >= _PARTS_CACHE_MAX:
            _PARTS_CACHE.clear()
        _PARTS_CACHE[pointer] = parts
    return parts


def _is_number(value: Any) -> bool:
    kind = type(value)
    if kind is int or kind is float:
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: unlike ``==``, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def max_utf8_bytes(limit: int, instance: Any) -> Iterator[Violation]:
    # Characters never outnumber UTF-8 bytes and never exceed them fourfold,
    # so most strings are decided without encoding them.
    if not isinstance(instance, str) or len(instance) * 4 <= limit:
        return
    size = len(instance) if len(instance) > limit else len(instance.encode("utf-8"))
    if size > limit:
        yield Violation(
            (),
            "max_utf8_bytes",
            f"the string is {size:,} UTF-8 bytes long; the limit is {limit:,} bytes",
            "shorten it: the limit counts UTF-8 bytes, and non-ASCII characters take 2-4 each",
            (("set", (), instance.encode("utf-8")[:limit].decode("utf-8", "ignore")),),
        )


def js_safe_integer(enabled: bool, instance: Any) -> Iterator[Violation]:
    if not enabled or isinstance(instance, bool):
        return
    if isinstance(instance, float):
        if instance.is_integer():
            yield Violation(
                (),
                "integer_literal_required",
                f"{instance!r} is written as a fraction or exponent; this field takes an "
                "integer literal",
                f"write it as {int(instance)}" if math.isfinite(instance) else "write an integer",
                (("set", (), int(instance)),),
            )
    elif isinstance(instance, int) and abs(instance) > MAX_SAFE_INTEGER:
        yield Violation(
            (),
            "unsafe_integer",
            f"{instance} is outside JavaScript's safe integer range (+-9007199254740991)",
            "carry larger values as strings; JavaScript readers would round this one",
            (("set", (), MAX_SAFE_INTEGER if instance > 0 else -MAX_SAFE_INTEGER),),
        )


def require_any_of(names: Sequence[str], instance: Any) -> Iterator[Violation]:
    if isinstance(instance, dict) and not any(name in instance for name in names):
        listed = ", ".join(names)
        yield Violation(
            (),
            "require_any_of",
            f"at least one of {listed} is required",
            f"add {names[0]} or another of: {listed}",
            (("set", (names[0],), 0),),
        )


def not_greater_than(pairs: Mapping[str, str], instance: Any) -> Iterator[Violation]:
    if not isinstance(instance, dict):
        return
    for small, large in pairs.items():
        low: Any = instance.get(small)
        high: Any = instance.get(large)
        if _is_number(low) and _is_number(high) and low > high:
            yield Violation(
                (small,),
                "not_greater_than",
                f"{small} ({low}) is greater than {large} ({high})",
                f"{small} is part of {large}, so it cannot exceed it",
                (("set", (small,), high),),
            )


def _pointer_name(pointer: str) -> str:
    return ".".join(_parts(pointer))


def ratio(spec: Mapping[str, str], instance: Any) -> Iterator[Violation]:
    if not isinstance(instance, dict):
        return
    value = resolve_pointer(instance, spec["value"])
    numerator = resolve_pointer(instance, spec["numerator"])
    denominator = resolve_pointer(instance, spec["denominator"])
    defined = _is_number(numerator) and _is_number(denominator) and denominator > 0
    if defined and _is_number(value):
        expected = numerator / denominator
        if math.isclose(
            value, expected, rel_tol=RATIO_RELATIVE_TOLERANCE, abs_tol=RATIO_ABSOLUTE_TOLERANCE
        ):
            return  # the usual case, decided before any message is built
    where = _parts(spec["value"])
    name = _pointer_name(spec["value"])
    if not defined:
        if spec.get("whenUndefined", "null") == "refused":
            if _is_number(denominator) and denominator <= 0:
                denominator_name = _pointer_name(spec["denominator"])
                yield Violation(
                    _parts(spec["denominator"]),
                    "ratio_undefined",
                    f"{denominator_name} is {denominator!r}: without qualifying observations "
                    "the whole measurement is null, not an object with a zero "
                    f"{denominator_name}",
                    f"write null in place of this object, or give a positive {denominator_name}",
                    (
                        (
                            "set",
                            _parts(spec["denominator"]),
                            max(1, numerator) if _is_number(numerator) else 1,
                        ),
                    ),
                )
        elif spec.get("whenUndefined", "null") == "absent":
            if value is not _ABSENT:
                yield Violation(
                    where,
                    "ratio_must_be_absent",
                    f"{name} is present, but {_pointer_name(spec['denominator'])} is not a "
                    "positive number",
                    f"omit {name} until a positive {_pointer_name(spec['denominator'])} exists",
                    (("delete", where, None),),
                )
        elif value is not _ABSENT and value is not None:
            yield Violation(
                where,
                "ratio_must_be_null",
                f"{name} is {value!r}, but {_pointer_name(spec['denominator'])} is zero or "
                "unmeasured",
                f"write null for {name}: no qualifying observations is not a zero ratio",
                (("set", where, None),),
            )
        return
    expected = numerator / denominator
    if value is _ABSENT or value is None:
        yield Violation(
            where,
            "ratio_missing",
            f"{name} is missing although {_pointer_name(spec['denominator'])} is positive",
            f"write {name} = {_pointer_name(spec['numerator'])} / "
            f"{_pointer_name(spec['denominator'])} = {expected!r}",
            (("set", where, expected),),
        )
    elif _is_number(value) and not math.isclose(
        value, expected, rel_tol=RATIO_RELATIVE_TOLERANCE, abs_tol=RATIO_ABSOLUTE_TOLERANCE
    ):
        yield Violation(
            where,
            "ratio_mismatch",
            f"{name} is {value!r}, but {_pointer_name(spec['numerator'])} / "
            f"{_pointer_name(spec['denominator'])} is {expected!r}",
            "compute the value from the numerator and denominator it carries",
            (("set", where, expected),),
        )


def same_value(pairs: Sequence[Sequence[str]], instance: Any) -> Iterator[Violation]:
    if not isinstance(instance, dict):
        return
    for first, second in pairs:
        a, b = resolve_pointer(instance, first), resolve_pointer(instance, second)
        if a is not _ABSENT and b is not _ABSENT and not json_equal(a, b):
            yield Violation(
                _parts(second),
                "same_value",
                f"{_pointer_name(second)} is {b!r} but {_pointer_name(first)} is {a!r}",
                "both name the same thing and must hold the same value",
                (("set", _parts(second), a),),
            )


def prefer_reference(spec: Mapping[str, str], instance: Any) -> Iterator[Violation]:
    if not isinstance(instance, dict):
        return
    inline = resolve_pointer(instance, spec["inline"])
    target = resolve_pointer(instance, spec["target"])
    if isinstance(inline, list) and inline and json_equal(inline, target):
        yield Violation(
            _parts(spec["inline"]),
            "prefer_reference",
            f"{_pointer_name(spec['inline'])} repeats {_pointer_name(spec['target'])} verbatim",
            f"write {spec['reference']}: {_pointer_name(spec['target'])!r} instead of "
            "serializing the same array twice",
            (
                ("delete", _parts(spec["inline"]), None),
                ("set", (spec["reference"],), _pointer_name(spec["target"])),
            ),
        )


def span_tree(spec: Mapping[str, str], instance: Any) -> Iterator[Violation]:
    spans = resolve_pointer(instance, spec["spans"]) if isinstance(instance, dict) else None
    if not isinstance(spans, list):
        return
    base = _parts(spec["spans"])
    parent_of: dict[int, int | None] = {}
    index_of: dict[int, int] = {}
    free_id = 1 + max(
        (s["span_id"] for s in spans if isinstance(s, dict) and isinstance(s.get("span_id"), int)),
        default=0,
    )
    for index, span in enumerate(spans):
        if not isinstance(span, dict) or not isinstance(span.get("span_id"), int):
            continue
        span_id = span["span_id"]
        if span_id in parent_of:
            yield Violation(
                (*base, index, "span_id"),
                "span_id_duplicate",
                f"span_id {span_id} is used by spans {index_of[span_id]} and {index}",
                "span ids are stable and unique within a record",
                (("set", (*base, index, "span_id"), free_id + index),),
            )
            continue
        parent = span.get("parent_span_id")
        parent_of[span_id] = parent if isinstance(parent, int) else None
        index_of[span_id] = index
    # A parent that is not in the list is no violation: evidence holds the
    # completed spans (seed 003), and a parent may still be open when its
    # child completes (the seed's own example names parent 3 beside span 8).
    reported: set[int] = set()
    for start in parent_of:
        seen: list[int] = []
        node: int | None = start
        while node is not None and node in parent_of and node not in seen:
            seen.append(node)
            node = parent_of[node]
        if node is not None and node in seen and node not in reported:
            cycle = seen[seen.index(node) :]
            reported.update(cycle)
            yield Violation(
                (*base, index_of[node], "parent_span_id"),
                "span_cycle",
                "spans " + " -> ".join(str(s) for s in [*cycle, node]) + " form a cycle",
                "parent links must form a tree rooted at spans whose parent_span_id is null",
                (("set", (*base, index_of[node], "parent_span_id"), None),),
            )


def each_same_value(specs: Sequence[Mapping[str, str]], instance: Any) -> Iterator[Violation]:
    """Every item of an array that carries ``member`` carries the value at ``equals``.

    Only a string at ``equals`` binds the items: a null owner (a historical
    record whose owner cannot be recovered) says nothing about its items.
    """
    if not isinstance(instance, dict):
        return
    for spec in specs:
        items = resolve_pointer(instance, spec["items"])
        owner = resolve_pointer(instance, spec["equals"])
        if not isinstance(items, list) or not isinstance(owner, str):
            continue
        for index, item in enumerate(items):
            value = resolve_pointer(item, spec["member"])
            if value is _ABSENT or json_equal(value, owner):
                continue
            where: tuple[str | int, ...] = (
                *_parts(spec["items"]),
                index,
                *_parts(spec["member"]),
            )
            yield Violation(
                where,
                "same_value",
                f"{_pointer_name(spec['member'])} of item {index} is {value!r} but "
                f"{_pointer_name(spec['equals'])} is {owner!r}",
                f"every item names the same owner as {_pointer_name(spec['equals'])}",
                (("set", where, owner),),
            )


def staleness(spec: Mapping[str, Any], instance: Any) -> Iterator[Violation]:
    """``stale`` is true exactly on a contract mismatch or an age beyond the limit,
    and ``stale_reasons`` names exactly those causes (in any order)."""
    if not isinstance(instance, dict):
        return
    match = resolve_pointer(instance, spec["match"])
    age = resolve_pointer(instance, spec["age"])
    stale = resolve_pointer(instance, spec["stale"])
    reasons = resolve_pointer(instance, spec["reasons"])
    if not isinstance(match, bool) or not _is_number(age) or not isinstance(stale, bool):
        return
    expected: list[str] = []
    if not match:
        expected.append(spec["mismatchReason"])
    if age > spec["maxAgeMs"]:
        expected.append(spec["ageReason"])
    if stale != bool(expected):
        causes = " and ".join(expected) if expected else "neither a contract mismatch nor an age"
        yield Violation(
            _parts(spec["stale"]),
            "stale_inconsistent",
            f"{_pointer_name(spec['stale'])} is {str(stale).lower()} but the report has "
            f"{causes}" + ("" if expected else f" beyond {spec['maxAgeMs']} ms"),
            f"a report is stale exactly on a contract mismatch or an age beyond "
            f"{spec['maxAgeMs']} ms",
            (("set", _parts(spec["stale"]), bool(expected)),),
        )
    if isinstance(reasons, list) and sorted(map(str, reasons)) != sorted(expected):
        yield Violation(
            _parts(spec["reasons"]),
            "stale_reasons_inconsistent",
            f"{_pointer_name(spec['reasons'])} is {reasons!r} but the causes are {expected!r}",
            "list each cause of staleness once, and nothing else",
            (("set", _parts(spec["reasons"]), expected),),
        )


CheckFunction = Callable[[Any, Any], Iterator[Violation]]

# Keywords that validate an instance.
CHECK_KEYWORDS: dict[str, CheckFunction] = {
    "x-maxUtf8Bytes": max_utf8_bytes,
    "x-jsSafeInteger": js_safe_integer,
    "x-requireAnyOf": require_any_of,
    "x-notGreaterThan": not_greater_than,
    "x-ratio": ratio,
    "x-sameValue": same_value,
    "x-preferReference": prefer_reference,
    "x-spanTree": span_tree,
    "x-eachSameValue": each_same_value,
    "x-staleness": staleness,
}

# Keywords that annotate and never fail validation on their own: they steer a
# reader (aliases), the redaction scan, or the generator.
ANNOTATION_KEYWORDS: frozenset[str] = frozenset({
    "x-inputAliases",
    "x-historicalAliases",
    "x-redacted",
    "x-documentTypes",
    "x-schemaVersion",
    "x-rejectionClasses",
})  # fmt: skip
