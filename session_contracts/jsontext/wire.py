"""JSON on the wire with every number's value kept: integers of any size, -0.0.

orjson is our fast JSON, but it reads an integer beyond 64 bits as a double
(``900719925474099312345678901234567890`` becomes ``9.007199254740993e+35``)
and refuses to write one. Extensions are kept verbatim (seed 002), and a
producer may put any JSON number there, so the producer protocol and the
commands that print documents read and write through these two functions:
orjson when it is exact, an exact path only when a number needs it.

``1e2`` and ``100.0`` are the same JSON value (the double 100) and come back as
``100.0``; ``-0.0`` keeps its sign; integers keep every digit. docs/hashing.md
("Numbers in extensions") says how such values hash.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps_wire", "loads_wire"]

# An integer literal of 19 digits or more may be beyond 64 bits (-9223372036854775809,
# one below i64's least, has 19); shorter ones never are. Digits inside strings count
# too: that only costs the exact path. Found as 19 zeros in the text with every digit
# made 0 and every other byte a space (bytes.translate and a substring search run at
# C speed; a regular expression tries each position, ten times slower on megabytes).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_DIGITS = b"0" * 19


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_wire(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON text as orjson does, but with integers of any size exact.

    Raises ``ValueError`` (``orjson.JSONDecodeError`` is one) for text that is
    not JSON, NaN and Infinity included, and for integers of more than 4,300
    digits.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    value = orjson.loads(raw)
    if _LONG_DIGITS not in raw.translate(_DIGITS_AS_ZEROS):
        return value
    # orjson accepted the text, so it is valid UTF-8 JSON: re-read it with
    # Python's parser, whose integers are exact.
    return json.loads(raw, parse_constant=_refuse_constant)


def _big_ints_as_fragments(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -(2**63) <= value < 2**64:
            return value
        return orjson.Fragment(str(value).encode("ascii"))
    if isinstance(value, dict):
        return {key: _big_ints_as_fragments(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_big_ints_as_fragments(item) for item in value]
    return value


def dumps_wire(value: Any, option: int = 0) -> bytes:
    """orjson's bytes of ``value``, with integers beyond 64 bits written exactly."""
    try:
        return orjson.dumps(value, option=option)
    except TypeError as exc:
        if "64-bit" not in str(exc):
            raise
    return orjson.dumps(_big_ints_as_fragments(value), option=option)
