"""Canonical JSON (RFC 8785, JCS) and the content hashes built on it.

Every hash the toolkit writes or checks comes from here: ``canonical_bytes``
turns a parsed JSON value into its RFC 8785 bytes, ``content_hash`` hashes
them as ``sha256:<64 lowercase hex>``.  ``docs/hashing.md`` is the
specification; this module is its reference implementation.

Accepted values are exactly the types ``json.loads`` produces: ``dict`` with
``str`` keys, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``.
Subclasses (``OrderedDict``, ``IntEnum``, ``StrEnum``) and look-alikes
(``tuple``) are refused, so a hash never depends on how a subclass overrides
``__str__`` or ``__iter__``.

How it is fast and still exact.  ``orjson.dumps(value, OPT_SORT_KEYS)`` is the
JCS form of ``value`` except in three respects, each repaired after the fact:

1. types: orjson also writes tuples, enums, UUIDs and ``orjson.Fragment``,
   which this module refuses, and NaN as ``null``.  A census of the type of
   every value (C calls a few thousand values at a time) runs first and
   collects the floats; with ``OPT_STRICT_INTEGER`` and ``OPT_PASSTHROUGH_*``
   orjson itself raises on unsafe integers, lone surrogates, subclasses of
   ``str``/``int``/``dict``/``list`` and keys that are not exactly ``str``;
2. float notation: orjson writes the shortest round-trip digits, as ECMAScript
   does, but ``56.0``, ``1e+16`` and ``1e-6`` where JCS writes ``56``,
   ``10000000000000000`` and ``0.000001``.  Such tokens are rewritten in the
   output, at once when the census's count of them equals the count of their
   patterns in the output (so none is inside a string), else one by one,
   telling tokens from text by the quotes before them;
3. key order: orjson sorts by code point, JCS by UTF-16 code units.  The two
   differ only where one key has a character in U+E000..U+FFFF and another a
   character above U+FFFF, so only when the output holds both ranges are the
   objects whose keys hold both found and their bytes replaced by the exact
   path's.

Anything the fast path does not vouch for goes through the exact path: a
validating walk that reports the first problem with its JSON path, then an
encoder that formats floats per ECMAScript, sorts keys by UTF-16 code units and
still hands every clean subtree to orjson.  docs/hashing.md section 5 has the
details and the measurements.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from itertools import chain, compress, repeat
from math import copysign, isfinite
from operator import is_, not_
from typing import Any

import orjson

from session_contracts.accel import speedups
from session_contracts.errors import Finding, InvalidDocument, json_path
from session_contracts.jsontext.strict import loads_strict

__all__ = [
    "FAST_MAX_LEVELS",
    "HASH_PREFIX",
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "canonical_bytes",
    "canonical_bytes_from_text",
    "content_hash",
    "depth_refusal",
    "has_lone_surrogate",
    "hash_bytes",
    "is_plain_json",
    "key_refusal",
    "refusal",
    "scalar_problem",
    "shortest_digits",
    "type_census",
    "type_name",
]

HASH_PREFIX = "sha256:"
MAX_SAFE_INTEGER = 2**53 - 1
# Deeper than any contract needs, shallow enough to turn a reference cycle into
# a finding quickly.  Depth counts containers: ``[]`` is 1, ``[[]]`` is 2.
MAX_DEPTH = 1000

_FAST_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)
_NONE_TYPE = type(None)
_PLAIN_TYPES: frozenset[type] = frozenset({dict, list, str, int, bool, _NONE_TYPE})
_PLAIN_OR_FLOAT: frozenset[type] = _PLAIN_TYPES | {float}
_CONTAINER_OR_FLOAT: frozenset[type] = frozenset({dict, list, float})
FAST_MAX_LEVELS = 200
_UTF8_LEADS_E000_FFFF = (b"\xee", b"\xef")
_UTF8_LEADS_ASTRAL = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
_CHARS_E000_FFFF = re.compile("[\ue000-\uffff]")
_CHARS_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


# --------------------------------------------------------------------------- public


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a parsed JSON value.

    Raises :class:`InvalidDocument` with one finding (code ``canonical_*``,
    path of the offending value) for what has no canonical form.
    """
    out = _fast_bytes(value)
    if out is not None:
        return out
    return exact_bytes(value)


def content_hash(value: Any) -> str:
    """``sha256:`` + 64 lowercase hex digits of SHA-256 over ``canonical_bytes(value)``."""
    return HASH_PREFIX + hashlib.sha256(canonical_bytes(value)).hexdigest()


def hash_bytes(data: bytes) -> str:
    """The same hash form over bytes that are already canonical."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def canonical_bytes_from_text(data: bytes | str) -> bytes:
    """Parse one JSON text strictly (see ``loads_strict``), then canonicalize it."""
    return canonical_bytes(loads_strict(data))


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` is built only of plain ``dict`` (str keys), ``list``, ``str``,
    ``int``, finite ``float``, ``bool`` and ``None``, fewer than 200 levels deep
    (the census of the fast path)."""
    if speedups is not None:
        return speedups.scan(value, False, FAST_MAX_LEVELS) is not None
    floats = type_census(value)
    return floats is not None and (not floats or all(map(isfinite, floats)))


# ------------------------------------------------------------------------ fast path


def _fast_bytes(value: Any) -> bytes | None:
    """The JCS bytes by way of orjson, or None where the exact path must decide.

    The census comes first: orjson 3.13 recurses without limit into tuples (a
    self-containing tuple crashes the interpreter), and the census refuses a
    tuple before anything descends into it.
    """
    if type(value) is float:
        return _format_number(value).encode("ascii") if isfinite(value) else None
    if speedups is not None:
        return _fast_bytes_by_c_census(value)
    out = _fast_bytes_in_code_point_order(value)
    if out is None or _orders_agree_in(out):
        return out
    return _utf16_key_order(value, out)


def _fast_bytes_by_c_census(value: Any) -> bytes | None:
    """The fast path with the C census, which also counts the float tokens to rewrite
    and finds the objects whose key orders clash (with the containers above them)."""
    assert speedups is not None
    scanned = speedups.scan(value, True, FAST_MAX_LEVELS)
    if scanned is None:
        return None
    dot_zero, negative_zero, exponent, clashing, dirty, _ = scanned
    target: Any = value
    if clashing is not None:
        target = _clashing_as_fragments(value, clashing, dirty or {})
        if target is None or type(target) is bytes:
            return target
    try:
        out = orjson.dumps(target, option=_FAST_OPTIONS)
    except orjson.JSONEncodeError:
        return None  # an unsafe integer, a lone surrogate, a str subclass key: exact path
    if exponent:
        if not _exponent_tokens_fixed_fast(out, exponent):
            return _es6_numbers_by_quotes(out)
        out = _fix_exponent_tokens(out)
    if dot_zero:
        stripped = speedups.strip_dot_zero(out, dot_zero, negative_zero)
        if stripped is None:  # some string holds text like ``1.0,``
            return _es6_numbers_by_quotes(out)
        out = stripped
    return out


def _clashing_as_fragments(
    value: Any, clashing: list[dict[str, Any]], edits: dict[int, list[tuple[Any, Any]]]
) -> Any:
    """A copy of the containers above clashing objects, each clashing object replaced
    by a fragment of its JCS bytes (or those bytes, when ``value`` itself clashes).

    ``edits`` names, for each container above a clashing object (by id), the
    ``(key or index, child)`` slots that lead to one; only those are copied.
    None when a clashing object has no canonical form: the exact path then finds
    the problem and its path in the whole value.
    """
    clashing_ids = {id(node) for node in clashing}
    try:
        if id(value) in clashing_ids:
            return _clashing_object_bytes(value)
        copy: Any = dict(value) if type(value) is dict else list(value)
        stack: list[tuple[Any, Any]] = [(value, copy)]
        while stack:
            node, mirror = stack.pop()
            for slot, child in edits[id(node)]:
                if id(child) in clashing_ids:
                    mirror[slot] = orjson.Fragment(_clashing_object_bytes(child))
                else:
                    inner = dict(child) if type(child) is dict else list(child)
                    mirror[slot] = inner
                    stack.append((child, inner))
    except (InvalidDocument, orjson.JSONEncodeError, RecursionError):
        return None
    return copy


def _clashing_object_bytes(node: dict[str, Any]) -> bytes:
    """One object in UTF-16 key order, each member's value by ``canonical_bytes``."""
    ordered = sorted(node.items(), key=_utf16_order)
    # Insertion order is kept (no OPT_SORT_KEYS): containers and floats go in as
    # their own canonical bytes; strings, integers, booleans and null as themselves.
    return orjson.dumps(
        {
            key: orjson.Fragment(canonical_bytes(child))
            if type(child) in _CONTAINER_OR_FLOAT
            else child
            for key, child in ordered
        },
        option=orjson.OPT_STRICT_INTEGER,
    )


def _fast_bytes_in_code_point_order(value: Any) -> bytes | None:
    """orjson's bytes with every number in ECMAScript form: JCS except perhaps key order."""
    floats = type_census(value)
    if floats is None:
        return None
    try:
        out = orjson.dumps(value, option=_FAST_OPTIONS)
    except orjson.JSONEncodeError:
        return None  # an unsafe integer, a lone surrogate, a str subclass key: exact path
    return _es6_numbers(out, floats) if floats else out


# The census decides whether every value in the tree is a plain dict, list,
# str, int, float, bool or None, nested at most FAST_MAX_LEVELS deep (so the
# walk ends on a reference cycle, and orjson's own limit of 254 levels is never
# reached), and collects the floats.  A chunk's types are checked before
# anything in it is descended into, so a tuple, an enum or any other object is
# never traversed.


def _census_by_iteration(value: Any) -> list[float] | None:
    """Returns the floats of ``value`` (any order), or None if some value is not of a
    plain type or the nesting is deeper than the fast path goes: level by level, with
    ``dict.values`` and list iteration (the Python twin of the C census)."""
    kind = type(value)
    if kind is not dict and kind is not list:
        if kind not in _PLAIN_OR_FLOAT:
            return None
        return [value] if kind is float else []
    floats: list[float] = []
    dicts: list[dict[Any, Any]] = [value] if kind is dict else []
    lists: list[list[Any]] = [value] if kind is list else []
    level = 1
    while dicts or lists:
        if level >= FAST_MAX_LEVELS:
            return None
        values = list(
            chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists))
        )
        kinds = list(map(type, values))
        present = set(kinds)
        if not present <= _PLAIN_OR_FLOAT:
            return None
        if float in present:
            floats.extend(compress(values, map(is_, kinds, repeat(float))))
        dicts = list(compress(values, map(is_, kinds, repeat(dict)))) if dict in present else []
        lists = list(compress(values, map(is_, kinds, repeat(list)))) if list in present else []
        level += 1
    return floats


type_census: Callable[[Any], list[float] | None] = _census_by_iteration


# Numbers.  orjson writes a float with the same shortest round-trip digits as
# ECMAScript (and Python's repr); the notation differs only for
#   A. integral values below 1e16: orjson ``56.0``, ``0.0``, ``-0.0``; JCS ``56``, ``0``;
#   B. 1e16 <= |x| < 1e21: orjson ``1e+16``, ``1.5e+20``; JCS all the digits;
#   C. 1e-6 <= |x| < 1e-5: orjson ``1e-6``, ``1.5e-6``; JCS ``0.000001``, ``0.0000015``.
# Every other float token is already JCS, and integers are written alike.  The
# census counts the floats of each class; each such float is one token in the
# output, outside any string, ending in ``.0`` (A) or in ``e+16``..``e+20`` or
# ``e-6`` (B, C), followed by ``,``, ``]`` or ``}``.  When the output holds
# exactly as many such patterns as the census counted, none is inside a string,
# and all of them are rewritten at once.  Otherwise (a string holds text like
# ``1.0,``) the tokens are told from text by counting the quotes before them.

_DOT_ZERO = re.compile(rb"\.0(?=[,\]}])")
_NEGATIVE_ZERO = re.compile(rb"-0\.0(?=[,\]}])")
_EXPONENT_MARKS = (b"e+16", b"e+17", b"e+18", b"e+19", b"e+20", b"e-6")
_ANY_CANDIDATE = re.compile(rb"-?[0-9][0-9.]*(?:e[+-][0-9]+)?(?=[,\]}])")
_DELIMITERS = frozenset(b",]}")
_NUMBER_BYTES = frozenset(b"-+.0123456789e")


def _es6_numbers(out: bytes, floats: list[float]) -> bytes | None:
    """``out`` with every float token in ECMAScript form (None: a float is not finite)."""
    if not isfinite(sum(floats)) and not all(map(isfinite, floats)):
        return None  # orjson wrote NaN or an infinity as null
    integral = list(compress(floats, map(float.is_integer, floats)))
    dot_zero = len(integral)
    exponent = 0
    negative_zero = 0
    if integral:
        if max(map(abs, integral)) >= 1e16:
            big = [number for number in integral if abs(number) >= 1e16]
            dot_zero -= len(big)
            exponent += sum(1 for number in big if abs(number) < 1e21)
        zeros = list(compress(integral, map(not_, integral)))
        if zeros:  # -0.0 and 0.0 are equal: count the signs
            negative_zero = (len(zeros) - round(sum(map(copysign, repeat(1.0), zeros)))) // 2
    if min(map(abs, floats)) < 1e-5:
        exponent += sum(1 for number in floats if 1e-6 <= abs(number) < 1e-5)
    if exponent and not _exponent_tokens_fixed_fast(out, exponent):
        return _es6_numbers_by_quotes(out)
    if exponent:
        out = _fix_exponent_tokens(out)
    if negative_zero:
        pieces = _NEGATIVE_ZERO.split(out)
        if len(pieces) - 1 != negative_zero:
            return _es6_numbers_by_quotes(out)
        out = b"0.0".join(pieces)
    if dot_zero:
        pieces = _DOT_ZERO.split(out)
        if len(pieces) - 1 != dot_zero:
            return _es6_numbers_by_quotes(out)
        out = b"".join(pieces)
    return out


def _exponent_token_spans(out: bytes) -> list[tuple[int, int]]:
    """Spans of what looks like a class B or C token (maybe inside a string)."""
    spans: list[tuple[int, int]] = []
    for mark in _EXPONENT_MARKS:
        at = out.find(mark)
        while at >= 0:
            end = at + len(mark)
            start = at
            while start > 0 and out[start - 1] in _NUMBER_BYTES:
                start -= 1
            if end < len(out) and out[end] in _DELIMITERS and start > 0:
                spans.append((start, end))
            at = out.find(mark, end)
    spans.sort()
    return spans


def _exponent_tokens_fixed_fast(out: bytes, expected: int) -> bool:
    return len(_exponent_token_spans(out)) == expected


def _fix_exponent_tokens(out: bytes) -> bytes:
    pieces: list[bytes] = []
    done = 0
    for start, end in _exponent_token_spans(out):
        pieces += [out[done:start], _es6_token(out[start:end])]
        done = end
    pieces.append(out[done:])
    return b"".join(pieces)


def _es6_token(token: bytes) -> bytes:
    return _format_number(float(token)).encode("ascii")


def _es6_numbers_by_quotes(out: bytes) -> bytes:
    """The slow and sure way, when some string holds number-like text: a number-like
    run after ``:``, ``,`` or ``[`` is a token when an even number of unescaped quotes
    precede it.  Float tokens are rewritten; text is left alone."""
    # With each escaped backslash blanked, an escaped quote is a quote after a backslash.
    quotes = out.replace(b"\\\\", b"\0\0") if b"\\\\" in out else out
    escaped = b'\\"' in quotes
    pieces: list[bytes] = []
    done = 0
    counted = 0  # quotes are counted up to here
    inside = 0  # parity of the quotes before ``counted``
    for match in _ANY_CANDIDATE.finditer(out):
        start, end = match.span()
        token = match[0]
        if start == 0 or out[start - 1] not in b":,[" or (b"." not in token and b"e" not in token):
            continue
        quoted = quotes.count(b'"', counted, start)
        if escaped:
            quoted -= quotes.count(b'\\"', counted, start)
        inside ^= quoted & 1
        counted = start
        if not inside:
            pieces += [out[done:start], _es6_token(token)]
            done = end
    pieces.append(out[done:])
    return b"".join(pieces)


# Key order.  orjson sorts keys by code point, JCS by UTF-16 code units.  The
# two orders differ only where one key has a character in U+E000..U+FFFF and
# another a character above U+FFFF at the first position where they differ, so
# they agree whenever the whole output lacks characters of one of those two
# ranges, which a byte scan decides (UTF-8 lead bytes 0xEE/0xEF versus
# 0xF0..0xF4).  Only when both occur are the keys read.


def _orders_agree_in(out: bytes) -> bool:
    """Whether no text in ``out`` can sort differently by code point and by UTF-16."""
    if out.isascii():
        return True
    has_e000_ffff = any(lead in out for lead in _UTF8_LEADS_E000_FFFF)
    return not has_e000_ffff or not any(lead in out for lead in _UTF8_LEADS_ASTRAL)


def _clashing_objects(value: Any) -> list[dict[str, Any]]:
    """Every object (each time it occurs) whose keys may sort differently by code point
    and by UTF-16 (after the census: the value is plain and shallow).

    The keys of all objects are joined and searched at once; a group of objects
    holding both ranges is halved until the objects holding both are found.
    """
    found: list[dict[str, Any]] = []
    groups = [_all_objects(value)]
    while groups:
        group = groups.pop()
        keys = "".join(chain.from_iterable(group))
        if keys.isascii() or not _orders_may_differ(keys):
            continue
        if len(group) == 1:
            found.append(group[0])
            continue
        middle = len(group) // 2
        groups += [group[middle:], group[:middle]]
    return found


def _all_objects(value: Any) -> list[dict[str, Any]]:
    """Every dict in a value the census accepted, each time it occurs."""
    dicts: list[dict[str, Any]] = []
    kind = type(value)
    level: list[Any] = [value] if kind is dict or kind is list else []
    while level:
        kinds = list(map(type, level))
        dicts.extend(compress(level, map(is_, kinds, repeat(dict))))
        level = list(
            chain.from_iterable(
                node.values() if kind is dict else node
                for node, kind in zip(level, kinds, strict=True)
                if kind is dict or kind is list
            )
        )
    return dicts


_MAX_CLASHING_FORMS = 64


def _utf16_key_order(value: Any, out: bytes) -> bytes | None:
    """``out`` with the members of each clashing object put in UTF-16 order.

    Each clashing object is written by the exact path, and the bytes orjson
    wrote for it (a whole object, starting ``{"``) are replaced.  That is sound
    when the output holds those bytes exactly as often as such objects occur:
    then none of the occurrences starts inside a string.  Nested clashing
    objects, and too many different ones, are left to the exact path.
    """
    clashing = _clashing_objects(value)
    if not clashing:
        return out
    occurrences: dict[bytes, list[Any]] = {}
    for node in clashing:
        written = _fast_bytes_in_code_point_order(node)
        if written is None:
            return None
        occurrences.setdefault(written, [node, 0])[1] += 1
    if len(occurrences) > _MAX_CLASHING_FORMS:
        return None
    for written, (node, times) in occurrences.items():
        if out.count(written) != times:
            return None
        out = out.replace(written, exact_bytes(node))
    return out


# ----------------------------------------------------------------------- exact path
#
# _scan checks everything in one pass over the containers and marks "dirty"
# each container holding a float, or whose keys sort differently by code point
# and by UTF-16, together with all containers above it.  When it meets a
# problem it only says so; _first_problem then walks the value depth first in
# document order (list order, dict insertion order) and names the first problem
# there, so the finding does not depend on the order of the scan.
#
# _encode then has two ways, both ending in orjson:
# - no object needs its keys reordered (the usual case: floats are the reason
#   for the exact path): copy the dirty containers, put each float in as an
#   orjson.Fragment holding its ECMAScript form, and serialize the copy once
#   with OPT_SORT_KEYS; clean subtrees are shared, not copied;
# - otherwise, or past orjson's nesting limit: write the dirty containers
#   bottom-up, each as one orjson call over a shallow copy whose floats and
#   dirty children are fragments, objects in UTF-16 key order.


class _Problem(Exception):
    """Raised by the scan; the finding comes from _first_problem."""


# Every container this many levels down is marked dirty, so a clean subtree
# handed to orjson whole never reaches orjson's limit of 254 levels.
_HAND_ENCODE_EVERY = 128
_STR_TYPE_ONLY = frozenset({str})


def exact_bytes(value: Any) -> bytes:
    try:
        dirty, reorder = _scan(value)
    except _Problem:
        raise _first_problem(value) from None
    return _encode(value, dirty, reorder)


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (no UTF-8 form, so no JSON text)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _orders_may_differ(keys: str) -> bool:
    """Whether keys joined in ``keys`` may sort differently by code point and by UTF-16."""
    return bool(_CHARS_E000_FFFF.search(keys)) and bool(_CHARS_ASTRAL.search(keys))


def _scan(value: Any) -> tuple[set[int], bool]:
    """Raise ``_Problem`` if ``value`` has no canonical form.

    Otherwise return the ids of the dirty containers and whether some object
    needs its keys put in UTF-16 order by hand.
    """
    root_kind = type(value)
    if root_kind is not dict and root_kind is not list:
        if scalar_problem(value) is not None:
            raise _Problem
        return set(), False
    parents: list[int] = [-1]  # container number -> its parent's number
    ids: list[int] = [id(value)]
    dirty: set[int] = set()
    reorder = False

    def mark_dirty(index: int) -> None:
        while index >= 0 and index not in dirty:
            dirty.add(index)
            index = parents[index]

    stack: list[tuple[Any, int, int]] = [(value, 0, 1)]
    while stack:
        node, index, level = stack.pop()
        if type(node) is dict:
            if not _STR_TYPE_ONLY.issuperset(map(type, node)):
                raise _Problem
            keys = "".join(node)
            if not keys.isascii():
                if has_lone_surrogate(keys):
                    raise _Problem
                if _orders_may_differ(keys):
                    reorder = True
                    mark_dirty(index)
            children: Any = node.values()
        else:
            children = node
        for child in children:
            kind = type(child)
            if kind is str:
                if not child.isascii() and has_lone_surrogate(child):
                    raise _Problem
            elif kind is int:
                if not -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:
                    raise _Problem
            elif kind is float:
                if not math.isfinite(child):
                    raise _Problem
                mark_dirty(index)
            elif kind is dict or kind is list:
                if level >= MAX_DEPTH:
                    raise _Problem
                number = len(parents)
                parents.append(index)
                ids.append(id(child))
                stack.append((child, number, level + 1))
                if level % _HAND_ENCODE_EVERY == 0:
                    mark_dirty(number)
            elif kind is not bool and kind is not _NONE_TYPE:
                raise _Problem
    return {ids[index] for index in dirty}, reorder


def scalar_problem(value: Any) -> tuple[str, str, str] | None:
    """(code, message, hint) for a value that is not a container, or None if it is fine.
    Harn's form words its refusals of strings, floats and other types the same way."""
    kind = type(value)
    if kind is str:
        if has_lone_surrogate(value):
            return (
                "canonical_lone_surrogate",
                "the string holds a lone UTF-16 surrogate, which is not Unicode text",
                "pair the surrogate or remove it; such a string has no UTF-8 form",
            )
    elif kind is int:
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return (
                "canonical_unsafe_integer",
                f"the integer {value} is outside +-(2**53 - 1), where JSON numbers "
                "stop being exact",
                "carry large ids and counters as strings",
            )
    elif kind is float:
        if not math.isfinite(value):
            return (
                "canonical_non_finite",
                f"{value} is not a finite number; JSON has no NaN or Infinity",
                "write null or a finite number",
            )
    elif kind is not bool and kind is not _NONE_TYPE:
        return (
            "canonical_unsupported_type",
            f"a {type_name(kind)} is not a JSON value",
            "use only dict (str keys), list, str, int, float, bool and None: turn "
            "tuples into lists and subclasses or enums into their plain values",
        )
    return None


def refusal(code: str, message: str, hint: str, parts: Sequence[str | int]) -> InvalidDocument:
    """A canonical form's refusal of the value at ``parts``."""
    return InvalidDocument([Finding(json_path(tuple(parts)), code, message, hint)])


def depth_refusal(limit: int, parts: Sequence[str | int]) -> InvalidDocument:
    """The refusal of a container at depth ``limit`` (each form has its own limit)."""
    return refusal(
        "canonical_too_deep",
        f"the value nests deeper than {limit} levels (or contains itself)",
        "flatten the document; a value that contains itself has no JSON form",
        parts,
    )


def key_refusal(key: Any, parts: Sequence[str | int]) -> InvalidDocument | None:
    """The refusal of an object key that is not Unicode text, or None: both forms' rule."""
    if type(key) is not str:
        return refusal(
            "canonical_unsupported_type",
            f"the object has a key {key!r} of type {type_name(type(key))}; "
            "JSON object keys are strings",
            "convert the keys to str before hashing",
            parts,
        )
    if has_lone_surrogate(key):
        return refusal(
            "canonical_lone_surrogate",
            "the key holds a lone UTF-16 surrogate, which is not Unicode text",
            "pair the surrogate or remove it; such a key has no UTF-8 form",
            (*parts, key.encode("utf-8", "backslashreplace").decode("utf-8")),
        )
    return None


def _first_problem(value: Any) -> InvalidDocument:
    """The first problem in document order, as a refusal with the path of the offending value."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        node, parts = stack.pop()
        kind = type(node)
        if kind is dict or kind is list:
            if len(parts) >= MAX_DEPTH:
                return depth_refusal(MAX_DEPTH, parts)
            if kind is list:
                stack.extend((child, (*parts, at)) for at, child in reversed(list(enumerate(node))))
                continue
            for key in node:
                if (refused := key_refusal(key, parts)) is not None:
                    return refused
            stack.extend((child, (*parts, key)) for key, child in reversed(node.items()))
            continue
        problem = scalar_problem(node)
        if problem is not None:
            return refusal(*problem, parts)
    raise AssertionError("the scan refused a value in which no problem was found")


def type_name(kind: type) -> str:
    """A type as a refusal names it: ``dict``, or ``module.Class`` outside the builtins."""
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def _float_fragment(number: float) -> orjson.Fragment:
    return orjson.Fragment(_format_number(number).encode("ascii"))


def _encode(value: Any, dirty: set[int], reorder: bool) -> bytes:
    """JCS bytes of a value ``_scan`` accepted (see the comment above ``_Problem``)."""
    kind = type(value)
    if kind is float:
        return _format_number(value).encode("ascii")
    if (kind is not dict and kind is not list) or id(value) not in dirty:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    if not reorder:
        try:
            return orjson.dumps(_floats_as_fragments(value, dirty), option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # nested past orjson's limit
            pass
    return _encode_bottom_up(value, dirty)


def _floats_as_fragments(value: Any, dirty: set[int]) -> Any:
    """A copy of the dirty containers of ``value`` with every float as a fragment."""
    copy: Any = dict(value) if type(value) is dict else list(value)
    stack: list[tuple[Any, Any]] = [(value, copy)]
    while stack:
        node, mirror = stack.pop()
        slots: Any = node.items() if type(node) is dict else enumerate(node)
        for slot, child in slots:
            kind = type(child)
            if kind is float:
                mirror[slot] = _float_fragment(child)
            elif (kind is dict or kind is list) and id(child) in dirty:
                inner = dict(child) if kind is dict else list(child)
                mirror[slot] = inner
                stack.append((child, inner))
    return copy


def _encode_bottom_up(value: Any, dirty: set[int]) -> bytes:
    done: dict[int, bytes] = {}
    stack: list[Any] = [value]
    while stack:  # post-order: a container is written once its dirty children are
        node = stack[-1]
        if id(node) in done:
            stack.pop()
            continue
        children = node.values() if type(node) is dict else node
        waiting = [
            child
            for child in children
            if (type(child) is dict or type(child) is list)
            and id(child) in dirty
            and id(child) not in done
        ]
        if waiting:
            stack.extend(waiting)
            continue
        stack.pop()
        done[id(node)] = _encode_one(node, dirty, done)
    return done[id(value)]


def _encode_one(node: Any, dirty: set[int], done: dict[int, bytes]) -> bytes:
    """One dirty container, its floats and dirty children as ready-made fragments."""

    def piece(child: Any, every_container: bool) -> Any:
        kind = type(child)
        if kind is float:
            return _float_fragment(child)
        if kind is dict or kind is list:
            if id(child) in dirty:
                return orjson.Fragment(done[id(child)])
            if every_container:
                return orjson.Fragment(orjson.dumps(child, option=orjson.OPT_SORT_KEYS))
        return child

    if type(node) is dict:
        if not _orders_may_differ("".join(node)):  # orjson's key order is JCS order
            copy = {key: piece(child, False) for key, child in node.items()}
            return orjson.dumps(copy, option=orjson.OPT_SORT_KEYS)
        # Insert in UTF-16 order and keep it: every child container is a fragment.
        ordered = sorted(node.items(), key=_utf16_order)
        return orjson.dumps({key: piece(child, True) for key, child in ordered})
    return orjson.dumps([piece(child, False) for child in node], option=orjson.OPT_SORT_KEYS)


def _utf16_order(item: tuple[str, Any]) -> bytes:
    return item[0].encode("utf-16-be")


def shortest_digits(number: float) -> tuple[str, str, int]:
    """A finite nonzero double as ``(sign, digits, point)``: ``sign`` is ``""`` or ``"-"``,
    ``digits`` the shortest digit string that round-trips (Python's ``repr`` finds it),
    without leading or trailing zeros, and the value is ``0.<digits> * 10**point``.

    RFC 8785's form and serde_json's place the decimal point of these same digits;
    only their notations differ.
    """
    text = repr(number)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    every_digit = whole + fraction
    significant = every_digit.lstrip("0")
    point = len(whole) + int(exponent or "0") - (len(every_digit) - len(significant))
    return sign, significant.rstrip("0"), point


def _format_number(number: float) -> str:
    """ECMAScript Number.prototype.toString of a finite double (RFC 8785 3.2.2.3).

    Python's ``repr`` gives the shortest digits that round-trip, choosing the
    closest when several do, which is the digit string ECMAScript asks for; only
    the placement of the decimal point and the exponent differs.
    """
    if number == 0:
        return "0"  # both +0 and -0
    sign, digits, point = shortest_digits(number)
    count = len(digits)
    if count <= point <= 21:
        body = digits + "0" * (point - count)
    elif 0 < point <= 21:
        body = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        power = point - 1
        head = digits[0] if count == 1 else f"{digits[0]}.{digits[1:]}"
        body = f"{head}e{'+' if power > 0 else '-'}{abs(power)}"
    return sign + body
