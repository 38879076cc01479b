"""Strict JSON reading: the one door every document comes in through.

Python's ``json`` accepts things a contract must refuse (duplicate keys keep
the last value, ``NaN``, lone surrogates, ``1e400`` as infinity) and fails
with a RecursionError on deep nesting.  Each of those becomes a
:class:`~session_contracts.Finding` with a stable code here.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

import orjson

from session_contracts.accel import speedups
from session_contracts.errors import Finding, InvalidDocument, json_path

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "JsonDocument",
    "depth_exceeds",
    "iter_documents",
    "loads_strict",
    "loads_strict_noting_floats",
]

MAX_DEPTH = 64
#: The default bound on one document or JSON Lines line, in bytes (docs/check.md).
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024

# A lone surrogate can only reach a JSON text as a \\uD800-\\uDFFF escape: raw
# UTF-8 cannot encode one and the decoder below refuses such bytes.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _NonFinite(ValueError):
    pass


def _first_repeated_key(pairs: list[tuple[str, Any]]) -> str:
    """The first key of an object's ``pairs`` that an earlier pair already has
    (called once a dict of them came out shorter than the pairs)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    raise AssertionError("no key repeats")


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey(_first_repeated_key(pairs))
    return obj


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NonFinite(text)
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs_hook,
    parse_constant=_refuse_constant,
    parse_float=_parse_float,
)


def _error(code: str, message: str, hint: str, path: str = "$") -> InvalidDocument:
    return InvalidDocument([Finding(path, code, message, hint)])


def _find_lone_surrogate(value: Any, parts: list[str | int]) -> list[str | int] | None:
    stack: list[tuple[Any, list[str | int]]] = [(value, parts)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return where
        elif isinstance(node, dict):
            for key, item in node.items():
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    return where
                stack.append((item, [*where, key]))
        elif isinstance(node, list):
            stack.extend((item, [*where, i]) for i, item in enumerate(node))
    return None


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a parsed value nests containers deeper than ``limit``: a level at a time,
    each level's containers found with C-level passes."""
    kind = type(value)
    dicts: list[dict[str, Any]] = [value] if kind is dict else []
    lists: list[list[Any]] = [value] if kind is list else []
    depth = 0
    while dicts or lists:
        depth += 1
        if depth > limit:
            return True
        values = list(
            chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists))
        )
        kinds = list(map(type, values))
        dicts = list(compress(values, map(is_, kinds, repeat(dict))))
        lists = list(compress(values, map(is_, kinds, repeat(list))))
    return False


# The fast reader.  orjson reads JSON as strictly as the decoder below, with three
# differences this module must cover: it keeps the last of duplicate keys, reads an
# integer literal beyond 64 bits as a double, and nests up to 1,024 levels.  orjson
# writes the value back (indented: two spaces a level) and the text decides:
# - every ``:`` of a JSON text is a member's or a string's own (JSON escapes no
#   ``:`` other than ``\u003a``, which sends the text to the slow reader), and the
#   written text has one per member left and the same in the strings: a duplicate
#   key shows as a colon fewer;
# - a member of a container 64 levels down is indented by 128 spaces;
# - a double of 2**63 or more is written with an exponent of at least ``e+18``;
# - an integral float is written ``5.0`` (then ``,`` or a line break) below 1e16 and
#   with ``e+`` from there on, where every double is integral; no other float is
#   (text in a string may look alike: then the answer is "may hold", which is safe).
# Anything else, errors included, goes to the decoder below, which names the problem.


_READING_CENSUS_MAX_DEPTH = 1000
_SLOW = object()
_TWO_TO_THE_63 = float(2**63)
_LARGE_DOUBLE = re.compile(rb"[0-9]e\+(?:1[89]|[2-9][0-9]|[0-9]{3})")


def _escaped_colon_in(raw: bytes) -> bool:
    """Whether ``raw`` may write a colon as ``\\u003a``: a one-byte search (memchr)
    first, since most texts hold no backslash at all."""
    return b"\\" in raw and b"\\u003" in raw


def _loads_fast(raw: bytes, max_depth: int) -> tuple[Any, bool] | object:
    """(the value of ``raw``, whether it may hold an integral float), or ``_SLOW``
    when the strict decoder must decide."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _SLOW
    kind = type(value)
    if kind is not dict and kind is not list:
        if kind is float:
            return _SLOW if abs(value) >= _TWO_TO_THE_63 else (value, value.is_integer())
        return value, False
    if speedups is not None and max_depth <= _READING_CENSUS_MAX_DEPTH:
        # The same three facts, read off the value in C instead of off its
        # indented text (tests/unit/test_speedups.py holds the two ways equal).
        census = speedups.reading_census(value, max_depth)
        if census is None:
            return _SLOW
        colons, big_float, integral_float = census
        if raw.count(b":") != colons or big_float:
            return _SLOW
        if colons and _escaped_colon_in(raw):
            return _SLOW
        return value, integral_float
    try:
        written = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # nested past orjson's writing limit
        return _SLOW
    if b"\n" + b" " * (2 * max_depth) in written:
        return _SLOW
    colons = raw.count(b":")
    if colons != written.count(b":") or (colons and _escaped_colon_in(raw)):
        return _SLOW
    if b"e+" in written and _LARGE_DOUBLE.search(written):
        return _SLOW
    return value, b".0," in written or b".0\n" in written or b"e+" in written


def loads_strict(
    data: bytes | str,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse one JSON document, refusing what a contract must not accept.

    Raises :class:`InvalidDocument` with one finding whose code is one of
    ``json_too_large``, ``json_not_utf8``, ``json_syntax``, ``json_duplicate_key``,
    ``json_non_finite_number``, ``json_number_out_of_range``, ``json_lone_surrogate``
    or ``json_too_deep``.
    """
    return loads_strict_noting_floats(data, max_bytes=max_bytes, max_depth=max_depth)[0]


def loads_strict_noting_floats(
    data: bytes | str,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_depth: int = MAX_DEPTH,
) -> tuple[Any, bool]:
    """``loads_strict``, and whether the value may hold an integral float such as
    ``5.0``: False only when the reader saw every float and none is (so a caller may
    skip its own census, as ``check`` does for ``validate``)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise _error(
            "json_too_large",
            f"the document is over the limit of {max_bytes:,} bytes",
            "split it into JSON Lines of smaller documents, or raise the limit with "
            "--max-document-bytes (validate, roundtrip, canonicalize, hash, verify)",
        )
    fast = _loads_fast(raw, max_depth)
    if fast is not _SLOW:
        return fast  # type: ignore[return-value]
    return _loads_slow(raw, max_depth), True


def _loads_slow(raw: bytes, max_depth: int) -> Any:
    """The strict decoder: the reference for ``_loads_fast``, and what names a problem."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(
            "json_not_utf8",
            f"the document is not UTF-8 (byte {exc.start} is {raw[exc.start]:#04x})",
            "JSON exchanged between systems must be UTF-8 (RFC 8259 section 8.1)",
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    nesting = raw.count(b"[") + raw.count(b"{")
    try:
        value, end = _DECODER.raw_decode(text, _skip_ws(text, 0))
    except _DuplicateKey as exc:
        raise _error(
            "json_duplicate_key",
            f"the key {exc.key!r} appears twice in one object",
            "keep one value per key: readers disagree on which duplicate wins",
            _locate(text),
        ) from None
    except _NonFinite as exc:
        raise _error(
            "json_non_finite_number",
            f"{exc.args[0]} is not a finite JSON number",
            "JSON has no NaN or Infinity; write null or a finite number",
            _locate(text),
        ) from None
    except RecursionError:
        raise _error(
            "json_too_deep",
            f"the document nests deeper than {max_depth} levels",
            "flatten the document; no contract here nests that deep",
        ) from None
    except json.JSONDecodeError as exc:
        raise _error(
            "json_syntax",
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            "fix the JSON syntax; a JSON Lines file needs one document per line",
        ) from None
    except ValueError:
        # Python refuses to convert an integer literal of more than 4,300 digits
        # (sys.get_int_max_str_digits); no JSON reader keeps such a number exact,
        # and it is far beyond a double's range, where serde_json stops too.
        raise _error(
            "json_number_out_of_range",
            f"an integer literal has more than {sys.get_int_max_str_digits():,} digits",
            "carry such a value as a string; JSON numbers that large are read by no "
            "implementation the contracts interoperate with",
        ) from None
    end = _skip_ws(text, end)
    if end != len(text):
        raise _error(
            "json_trailing_data",
            f"extra data after the document at character {end}",
            "a file holds one JSON document; for several, use JSON Lines (.jsonl)",
        )
    if nesting > max_depth and depth_exceeds(value, max_depth):
        raise _error(
            "json_too_deep",
            f"the document nests deeper than {max_depth} levels",
            "flatten the document; no contract here nests that deep",
        )
    if _SURROGATE_ESCAPE.search(raw):
        where = _find_lone_surrogate(value, [])
        if where is not None:
            raise _error(
                "json_lone_surrogate",
                "a string holds a lone UTF-16 surrogate escape, which is not Unicode text",
                "escape a character outside the BMP as a surrogate pair, or send it as UTF-8",
                json_path(where),
            )
    return value


class _Flagged(dict[str, Any]):
    """An object of the locating pass that held a duplicate key (``duplicate``)."""

    duplicate: str = ""


class _Bad(float):
    """A NaN, Infinity or overflowing literal, kept by the locating pass to be found."""


def _locating_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = _Flagged(pairs)
    if len(obj) != len(pairs):
        obj.duplicate = _first_repeated_key(pairs)
    return obj


def _locating_float(text: str) -> float:
    value = float(text)
    return _Bad(value) if math.isinf(value) else value


_LOCATING_DECODER = json.JSONDecoder(
    object_pairs_hook=_locating_pairs,
    parse_constant=lambda name: _Bad("nan"),
    parse_float=_locating_float,
)


def _locate(text: str) -> str:
    """The JSON path of the first duplicate key or non-finite number in ``text``,
    found by a second, tolerant pass (run only for a document already refused)."""
    try:
        value, _ = _LOCATING_DECODER.raw_decode(text, _skip_ws(text, 0))
    except (ValueError, RecursionError):
        return "$"
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Bad):
            return json_path(where)
        if isinstance(node, _Flagged):
            if node.duplicate:
                return json_path([*where, node.duplicate])
            stack.extend((item, [*where, key]) for key, item in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((item, [*where, i]) for i, item in reversed(list(enumerate(node))))
    return "$"


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


@dataclass(frozen=True, slots=True)
class JsonDocument:
    """One document read from a file: its value, or why it could not be read."""

    source: str
    value: Any = None
    error: InvalidDocument | None = None


def iter_documents(
    raw: bytes,
    name: str,
    *,
    jsonl: bool | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
) -> Iterator[JsonDocument]:
    """Yield each document of a JSON or JSON Lines text.

    ``jsonl=None`` decides from the text: one document, or else one a line.
    A JSON Lines line that does not parse is reported and the next line is
    still read, so one bad line never hides the others.
    """
    if jsonl is None:
        jsonl = name.endswith((".jsonl", ".ndjson"))
        if not jsonl:
            try:
                value = loads_strict(raw, max_bytes=max_bytes)
            except InvalidDocument as exc:
                if exc.findings[0].code != "json_trailing_data":
                    yield JsonDocument(name, error=exc)
                    return
                jsonl = True
            else:
                yield JsonDocument(name, value=value)
                return
    if not jsonl:
        try:
            yield JsonDocument(name, value=loads_strict(raw, max_bytes=max_bytes))
        except InvalidDocument as exc:
            yield JsonDocument(name, error=exc)
        return
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        source = f"{name}:{number}"
        try:
            yield JsonDocument(source, value=loads_strict(line, max_bytes=max_bytes))
        except InvalidDocument as exc:
            yield JsonDocument(source, error=exc)
