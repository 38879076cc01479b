"""Harn's canonical JSON: the bytes Harn's runtime hashes a session recap with.

Harn does not hash with RFC 8785.  Its one canonicalizer (``canonical_json``
in the harn-vm crate, a facade over the session store's canonical bytes) is
specified in ``docs/hashing.md`` section "Harn canonical JSON"; in short:

- object keys sorted by their UTF-8 bytes (the same order as code points),
  recursively; arrays keep their order; no insignificant whitespace;
- strings escaped as serde_json escapes them: ``\\"``, ``\\\\``, ``\\b``,
  ``\\f``, ``\\n``, ``\\r``, ``\\t``, every other control character below
  U+0020 as ``\\u00xx`` (lowercase hex); everything else, ``/`` and U+007F
  included, written as UTF-8;
- integers from -2**63 to 2**64 - 1 written exactly; a float written as
  serde_json writes it (since 1.0.14x through the ``zmij`` crate, which Harn's
  Cargo.lock pins): the shortest digits that round-trip, ``1.0``, ``-0.0``,
  ``0.00001``, ``1e-7``, ``1e+16``; an integer outside the 64-bit range is what
  serde_json reads it as: the nearest double, written as a float.

The hash is ``sha256:`` + 64 lowercase hex digits of SHA-256 over those bytes.

Fast and exact: orjson with ``OPT_SORT_KEYS`` writes exactly these bytes for
plain values: it sorts keys by code point, formats floats with the same rules
and escapes as serde_json does (measured against serde_json 1.0.154 on 200,000
random doubles, and held by property tests against ``serde_float_format``).
With the C extension, ``speedups.harn_dumps`` writes those bytes in the one walk
that checks the types (plain ``dict``/``list``/``str``/``int``/``float``/``bool``/
``None``, every float finite), leaving the floats to orjson; without it a type
census decides whether orjson may be used.  Everything else takes the exact
path below, which reports the first problem with its JSON path; property tests
hold the paths equal.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import orjson

from session_contracts.accel import speedups
from session_contracts.errors import InvalidDocument
from session_contracts.jsontext.canonical import (
    FAST_MAX_LEVELS,
    depth_refusal,
    has_lone_surrogate,
    key_refusal,
    refusal,
    scalar_problem,
    shortest_digits,
    type_census,
)

__all__ = [
    "HARN_MAX_DEPTH",
    "harn_canonical_bytes",
    "harn_canonical_bytes_of_parsed",
    "harn_sha256",
    "harn_sha256_of_parsed",
    "serde_float_format",
]

HARN_MAX_DEPTH = 1000
_HASH_PREFIX = "sha256:"
_I64_MIN = -(2**63)
_U64_MAX = 2**64 - 1
_NONE_TYPE = type(None)
_FAST_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def harn_canonical_bytes(value: Any) -> bytes:
    """Harn's canonical JSON bytes of a parsed JSON value.

    Raises :class:`InvalidDocument` with one finding (code ``canonical_*``, the
    JSON path of the offending value) for what has no such form.
    """
    if speedups is not None:
        written = speedups.harn_dumps(value, FAST_MAX_LEVELS, orjson.dumps)
        # None: something is not plain JSON (or too deep); the exact path names it.
        return written if written is not None else exact_bytes(value)
    if _fast_path_applies(value):
        try:
            return orjson.dumps(value, option=_FAST_OPTIONS)
        except orjson.JSONEncodeError:
            pass  # an integer beyond 64 bits or a lone surrogate: the exact path decides
    return exact_bytes(value)


def harn_sha256(value: Any) -> str:
    """``sha256:`` + 64 lowercase hex digits of SHA-256 over ``harn_canonical_bytes(value)``."""
    return _HASH_PREFIX + hashlib.sha256(harn_canonical_bytes(value)).hexdigest()


def harn_sha256_of_parsed(value: Any) -> str:
    """``harn_sha256`` of a value as ``loads_strict`` returned it, unchanged since (or
    built of such values with dicts and lists), without the census.

    The strict reader returns only JSON's own types (exact ``dict``, ``list``,
    ``str``, ``int``, ``float``, ``bool``, ``None``), every float finite and no lone
    surrogate: what the census vouches for.  What orjson still refuses (an integer
    beyond 64 bits, nesting past its limit) takes the exact path, as it does after
    the census.
    """
    return _HASH_PREFIX + hashlib.sha256(harn_canonical_bytes_of_parsed(value)).hexdigest()


def harn_canonical_bytes_of_parsed(value: Any) -> bytes:
    """``harn_canonical_bytes`` of a value as ``loads_strict`` or ``orjson.loads``
    returned it, unchanged since (or built of such values with dicts and lists),
    without the census (see ``harn_sha256_of_parsed``; ``orjson.loads`` too returns
    only JSON's own types, refusing NaN, infinities and lone surrogates)."""
    try:
        return orjson.dumps(value, option=_FAST_OPTIONS)
    except orjson.JSONEncodeError:
        return exact_bytes(value)


def serde_float_format(number: float) -> str:
    """A finite float as serde_json writes it.

    The digits are the shortest that round-trip (Python's ``repr`` finds the same
    ones); only the notation differs: with ``d`` the digit string and the value
    ``0.d * 10**point``, serde_json writes the digits, zeros and ``.0`` when the
    number is an integer and ``point <= 16``, plain decimals when
    ``0 < point <= 16``, ``0.000d`` when ``-5 < point <= 0``, otherwise
    ``d[.ddd]e+x`` or ``d[.ddd]e-x`` with ``x = point - 1`` (no zero padding).
    """
    if number == 0.0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    sign, digits, point = shortest_digits(number)
    length = len(digits)
    if length <= point <= 16:
        return f"{sign}{digits}{'0' * (point - length)}.0"
    if 0 < point <= 16:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -5 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    head = digits[0] if length == 1 else f"{digits[0]}.{digits[1:]}"
    exponent = point - 1
    return f"{sign}{head}e{'+' if exponent > 0 else ''}{exponent}"


# ------------------------------------------------------------------------ fast path


def _fast_path_applies(value: Any) -> bool:
    """Whether every value is of a plain type, every float finite, and nesting is shallow
    (the RFC 8785 module's census).  Keys are left to orjson, which refuses keys that
    are not exactly ``str``."""
    floats = type_census(value)
    if floats is None:
        return False
    # A sum of finite floats is finite unless it overflows; NaN and infinities never are.
    return not floats or math.isfinite(sum(floats)) or all(map(math.isfinite, floats))


# ----------------------------------------------------------------------- exact path


def _scalar_refusal(node: Any, parts: list[str | int]) -> InvalidDocument:
    # Strings, floats and other types are refused as RFC 8785's form refuses them.
    problem = scalar_problem(node)
    assert problem is not None
    return refusal(*problem, parts)


def _scalar_bytes(node: Any, parts: list[str | int]) -> bytes:
    kind = type(node)
    if kind is str:
        if has_lone_surrogate(node):
            raise _scalar_refusal(node, parts)
        return orjson.dumps(node)
    if kind is bool:
        return b"true" if node else b"false"
    if node is None:
        return b"null"
    if kind is int:
        if _I64_MIN <= node <= _U64_MAX:
            return str(node).encode("ascii")
        try:
            return serde_float_format(float(node)).encode("ascii")
        except OverflowError:
            raise refusal(
                "canonical_number_out_of_range",
                "the integer is beyond the range of a double, which is where Harn's JSON "
                "reader stops",
                "carry such numbers as strings",
                parts,
            ) from None
    if kind is float:
        if not math.isfinite(node):
            raise _scalar_refusal(node, parts)
        return serde_float_format(node).encode("ascii")
    raise _scalar_refusal(node, parts)


def exact_bytes(value: Any) -> bytes:
    """An iterative encoder (no recursion limit) that refuses the first problem in order."""
    out: list[bytes] = []
    # Work items: ("v", node, parts) encodes a value; ("b", bytes) writes literal bytes.
    stack: list[tuple[Any, ...]] = [("v", value, [])]
    while stack:
        item = stack.pop()
        if item[0] == "b":
            out.append(item[1])
            continue
        node, parts = item[1], item[2]
        kind = type(node)
        if kind is not dict and kind is not list:
            out.append(_scalar_bytes(node, parts))
            continue
        if len(parts) >= HARN_MAX_DEPTH:
            raise depth_refusal(HARN_MAX_DEPTH, parts)
        work: list[tuple[Any, ...]] = []
        if kind is list:
            out.append(b"[")
            for at, child in enumerate(node):
                if at:
                    work.append(("b", b","))
                work.append(("v", child, [*parts, at]))
            work.append(("b", b"]"))
        else:
            for key in node:
                if (refused := key_refusal(key, parts)) is not None:
                    raise refused
            out.append(b"{")
            # Code point order is UTF-8 byte order.
            for at, key in enumerate(sorted(node)):
                prefix = b"," if at else b""
                work.append(("b", prefix + orjson.dumps(key) + b":"))
                work.append(("v", node[key], [*parts, key]))
            work.append(("b", b"}"))
        stack.extend(reversed(work))
    return b"".join(out)
