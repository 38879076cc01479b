"""Primitive strategies whose cases are a function of the seed alone.

Hypothesis's generator now and then answers a draw with a constant harvested
from the source of every "local" module loaded in the process, when the
constant fits the draw: integers of magnitude 100 or more, non-blank strings of
1 to 20 characters, non-zero floats, bytes. Which modules are loaded depends on
the caller (the checks already run, how session-contracts is installed, a test
or the bench importing its own), so ``st.integers(0, 5000)``, ``st.text()`` or
``st.floats()`` gave the same seed other cases in another process.

Every draw made here is a boolean or an integer between -99 and 99 (a
``sampled_from`` or ``one_of`` of at most 100 choices among them), which no
harvested constant fits: wider integers are written in base-100 digits,
strings are drawn longer than any harvested string and then cut, floats from
their bits. Certify's strategies (:mod:`operations`, :mod:`from_schema`) draw
through these and through small ``st.integers``/``st.sampled_from`` only;
tests/unit/test_case_generation.py checks that the same seed gives the same
cases whatever was imported before.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER

__all__ = [
    "SMALL",
    "characters",
    "date_times",
    "floats",
    "integers",
    "json_values",
    "naturals",
    "one_in",
    "pick",
    "sampled",
    "strings_of",
    "text",
]

T = TypeVar("T")

# An integer draw strictly between -SMALL and SMALL is never answered with a harvested constant.
SMALL = 100
_DIGIT = st.integers(0, SMALL - 1)


def _base_100_digits(limit: int) -> int:
    digits = 1
    while SMALL**digits <= limit:
        digits += 1
    return digits


@st.composite
def _natural(draw: st.DrawFn, limit: int) -> int:
    # One draw in ten is an edge of the range; the others pick a magnitude
    # (a number of base-100 digits), then its digits: small values are as likely
    # as large ones, as with hypothesis's own integers. Shrinks towards 0.
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from((0, 1, limit - 1, limit)))
    most = _base_100_digits(limit)
    digits = draw(st.integers(1, most))
    # The leading digit of a full-length value stays within the limit's.
    value = draw(st.integers(0, limit // SMALL ** (most - 1))) if digits == most else draw(_DIGIT)
    for _ in range(digits - 1):
        value = value * SMALL + draw(_DIGIT)
    return min(value, limit)


# The builders below are cached: a strategy is immutable, and one a composite builds at
# every draw would be validated anew by Hypothesis each time. The same strategy draws
# the same cases.
@functools.cache
def naturals(limit: int) -> st.SearchStrategy[int]:
    """An integer from 0 to ``limit``."""
    if limit < SMALL:
        return st.integers(0, max(limit, 0))
    return _natural(limit)


@functools.cache
def integers(min_value: int, max_value: int) -> st.SearchStrategy[int]:
    """An integer in [``min_value``, ``max_value``], shrinking towards 0 or the bound nearest it."""
    if min_value > -SMALL and max_value < SMALL:
        return st.integers(min_value, max_value)
    if min_value >= 0:
        return naturals(max_value - min_value).map(lambda n: min_value + n)
    if max_value <= 0:
        return naturals(max_value - min_value).map(lambda n: max_value - n)
    return st.booleans().flatmap(
        lambda negative: naturals(-min_value).map(lambda n: -n) if negative else naturals(max_value)
    )


@st.composite
def _index(draw: st.DrawFn, count: int) -> int:
    if count <= SMALL:
        return draw(st.integers(0, count - 1))
    high = draw(_index((count + SMALL - 1) // SMALL))
    return high * SMALL + draw(st.integers(0, min(SMALL, count - high * SMALL) - 1))


def pick(values: Sequence[T]) -> st.SearchStrategy[T]:
    """One of ``values`` (as ``st.sampled_from``, for any number of them)."""
    values = tuple(values)
    if len(values) <= SMALL:
        return st.sampled_from(values)
    return _index(len(values)).map(values.__getitem__)


def sampled(values: Sequence[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from(values)``, built once for the same values: a composite strategy
    that builds its choices at every draw would have Hypothesis validate a new strategy
    each time (a tenth of certify's drawing). The same strategy draws the same cases."""
    values = tuple(values)
    # By repr: True, 1 and 1.0 are equal keys of a dict, but not the same choices.
    key = repr(values)
    built = _SAMPLED.get(key)
    if built is None:
        built = st.sampled_from(values)
        if len(_SAMPLED) < _SAMPLED_KEPT:
            _SAMPLED[key] = built
    return built


_SAMPLED: dict[str, st.SearchStrategy[Any]] = {}
# The choices written in the strategies' code are a few hundred; choices drawn from a case
# (its earlier requests, its facts) are sampled with st.sampled_from, never kept here.
_SAMPLED_KEPT = 4096


# A string draw at least this long is never answered with a harvested constant (those are
# 20 characters at most): strings are drawn this long, then cut to the length drawn apart.
_UNHARVESTED_LENGTH = 21


def _cut(drawn: tuple[int, str]) -> str:
    length, string = drawn
    return string[:length]


@functools.cache
def text(min_size: int = 0, max_size: int = 20, exclude: str = "") -> st.SearchStrategy[str]:
    """A string of ``min_size`` to ``max_size`` characters: any code point but a
    surrogate and those in ``exclude`` (as ``st.text()``)."""
    floor = max(_UNHARVESTED_LENGTH, max_size)
    alphabet = st.characters(codec="utf-8", exclude_characters=exclude or None)
    return st.tuples(
        integers(min_size, max_size), st.text(alphabet, min_size=floor, max_size=floor + 20)
    ).map(_cut)


@functools.cache
def characters(exclude: str = "") -> st.SearchStrategy[str]:
    """One character: any code point but a surrogate and those in ``exclude``."""
    return text(1, 1, exclude)


def strings_of(
    alphabet: st.SearchStrategy[str], min_size: int, max_size: int
) -> st.SearchStrategy[str]:
    """A string of characters drawn one by one from ``alphabet`` (a :func:`pick` of some)."""
    return st.lists(alphabet, min_size=min_size, max_size=max_size).map("".join)


_EDGE_FLOATS = (
    0.0,
    0.5,
    1.0,
    -1.0,
    0.1,
    1.5,
    1e-7,
    1e21,
    2.0**53,
    2.0**53 + 2,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -1.7976931348623157e308,
)


@st.composite
def _float(draw: st.DrawFn) -> float:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(_EDGE_FLOATS))
    if kind < 6:  # a short decimal: 12.5, -0.003
        digits: int = draw(integers(-(10**6), 10**6))
        return digits / 10.0 ** draw(st.integers(0, 6))
    bits = draw(naturals(2**64 - 1))
    value: float = struct.unpack("<d", bits.to_bytes(8, "little"))[0]
    return value if math.isfinite(value) else float(bits >> 11)


@functools.cache
def floats(
    min_value: float | None = None,
    max_value: float | None = None,
    *,
    exclude_min: bool = False,
) -> st.SearchStrategy[float]:
    """A finite double within the bounds (a value outside is moved to the nearest bound)."""
    low = -math.inf if min_value is None else float(min_value)
    if exclude_min:
        low = math.nextafter(low, math.inf)
    high = math.inf if max_value is None else float(max_value)

    def bounded(value: float) -> float:
        return min(max(value, low), high)

    return _float().map(bounded)


@st.composite
def _date_time(draw: st.DrawFn) -> str:
    year = 1970 + draw(st.integers(0, 99)) + 100 * draw(st.integers(0, 1))
    month, day = draw(st.integers(1, 12)), draw(st.integers(1, 28))
    hour, minute = draw(st.integers(0, 23)), draw(st.integers(0, 59))
    second = draw(st.integers(0, 59))
    stamp = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if draw(st.booleans()):
        stamp += "." + "".join(str(draw(st.integers(0, 9))) for _ in range(draw(st.integers(1, 9))))
    zone = draw(st.integers(0, 3))
    if zone == 0:
        return stamp + "Z"
    offset_hours, offset_minutes = draw(st.integers(0, 14)), draw(st.sampled_from((0, 30, 45)))
    return stamp + f"{'+' if zone == 1 else '-'}{offset_hours:02d}:{offset_minutes:02d}"


def date_times() -> st.SearchStrategy[str]:
    """An RFC 3339 date-time (``format: date-time``), with or without fractions and offsets."""
    return _date_time()


@functools.cache
def one_in(count: int) -> st.SearchStrategy[bool]:
    """True once in ``count`` draws (``count`` below 100)."""
    return st.integers(0, count - 1).map(lambda drawn: drawn == 0)


@functools.cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value (integers within JavaScript's safe range, finite floats)."""
    safe = integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    leaves = st.none() | st.booleans() | safe | floats() | text()
    return st.recursive(leaves, _json_containers, max_leaves=max_leaves)


def _json_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # A function, not a lambda: hypothesis reads a lambda's source to see that it recurses.
    return st.lists(children, max_size=3) | st.dictionaries(text(max_size=12), children, max_size=3)
