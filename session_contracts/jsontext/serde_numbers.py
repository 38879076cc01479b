"""Numbers as Harn's build reads them: serde_json without ``float_roundtrip``.

Harn's crates depend on ``serde_json = "1"`` with no features (every member of
its workspace; features unify, and none turns ``float_roundtrip`` or
``arbitrary_precision`` on), so a number Harn reads goes through serde_json's
default parser. That parser keeps an integer literal that fits in 64 bits as
an integer, and reads every other number as a significand of at most 64 bits
and a decimal exponent, then makes the double with one conversion and one
multiplication or division by a power of ten (``f64_from_parts``). Each of
those steps rounds, so a decimal whose significand needs more than 53 bits,
or whose power of ten is not exact, can land one unit in the last place away
from the correctly rounded double: ``0.9202898550724637`` reads as
``0.9202898550724636``. docs/recap.md section 4 ("Numbers as Harn reads
them") states the rule certify holds a producer to; docs/vectors/
serde-json-default-floats.json holds serde_json's own answers to check this
against.

Written from serde_json's ``src/de.rs`` (``parse_integer``,
``parse_long_integer``, ``parse_decimal``, ``parse_decimal_overflow``,
``parse_exponent``, ``parse_exponent_overflow`` and ``f64_from_parts`` in
their ``not(feature = "float_roundtrip")`` form), the same arithmetic in
Python floats (IEEE-754 binary64, round to nearest even, as Rust's ``f64``).
"""

from __future__ import annotations

from typing import Any

from session_contracts.jsontext.wire import dumps_wire

__all__ = ["NumberOutOfRange", "floats_as_harn_reads", "read_number"]

_U64_MAX = 2**64 - 1
_I32_MAX = 2**31 - 1
_I32_MIN = -(2**31)
# serde_json's table of exactly-rounded powers of ten, 1e0 through 1e308.
_POW10 = tuple(float(f"1e{exponent}") for exponent in range(309))


class NumberOutOfRange(ValueError):
    """serde_json refuses the number (``NumberOutOfRange``): its double would be infinite."""


def _overflows(significand: int, digit: int, limit: int) -> bool:
    # serde_json's `overflow!(a * 10 + b, c)`: would a * 10 + b exceed c?
    return significand >= limit // 10 and (significand > limit // 10 or digit > limit % 10)


class _Reader:
    """One number literal, read left to right as serde_json's parser reads it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def digit(self) -> int | None:
        char = self.peek()
        return ord(char) - 48 if "0" <= char <= "9" else None

    def number(self) -> int | float:
        positive = self.peek() != "-"
        if not positive:
            self.at += 1
        if self.peek() == "0":
            self.at += 1
            return self.after_integer(positive, 0)
        significand = self.digit()
        if significand is None:
            raise ValueError(f"not a JSON number: {self.text!r}")
        self.at += 1
        while (digit := self.digit()) is not None:
            if _overflows(significand, digit, _U64_MAX):
                return self.long_integer(positive, significand)
            self.at += 1
            significand = significand * 10 + digit
        return self.after_integer(positive, significand)

    def after_integer(self, positive: bool, significand: int) -> int | float:
        char = self.peek()
        if char == ".":
            return self.decimal(positive, significand, 0)
        if char in ("e", "E"):
            return self.exponent(positive, significand, 0)
        if positive:
            return significand
        # A negative integer stays one unless it is -0 or below i64's least.
        if significand == 0 or significand > 2**63:
            return -float(significand)
        return -significand

    def long_integer(self, positive: bool, significand: int) -> float:
        # The integer no longer fits: every further digit only moves the exponent.
        exponent = 0
        while self.digit() is not None:
            self.at += 1
            exponent += 1
        char = self.peek()
        if char == ".":
            return self.decimal(positive, significand, exponent)
        if char in ("e", "E"):
            return self.exponent(positive, significand, exponent)
        return _from_parts(positive, significand, exponent)

    def decimal(self, positive: bool, significand: int, exponent_before: int) -> float:
        self.at += 1  # the "."
        if self.digit() is None:
            raise ValueError(f"not a JSON number: {self.text!r}")
        after = 0
        while (digit := self.digit()) is not None:
            if _overflows(significand, digit, _U64_MAX):
                # The significand is full: the remaining fraction digits are dropped.
                while self.digit() is not None:
                    self.at += 1
                break
            self.at += 1
            significand = significand * 10 + digit
            after -= 1
        if self.peek() in ("e", "E"):
            return self.exponent(positive, significand, exponent_before + after)
        return _from_parts(positive, significand, exponent_before + after)

    def exponent(self, positive: bool, significand: int, starting: int) -> float:
        self.at += 1  # the "e"
        positive_exponent = True
        if self.peek() in ("+", "-"):
            positive_exponent = self.peek() == "+"
            self.at += 1
        value = self.digit()
        if value is None:
            raise ValueError(f"not a JSON number: {self.text!r}")
        self.at += 1
        while (digit := self.digit()) is not None:
            self.at += 1
            if _overflows(value, digit, _I32_MAX):
                if significand != 0 and positive_exponent:
                    raise NumberOutOfRange(self.text)
                while self.digit() is not None:
                    self.at += 1
                return 0.0 if positive else -0.0
            value = value * 10 + digit
        final = starting + value if positive_exponent else starting - value
        return _from_parts(positive, significand, max(_I32_MIN, min(_I32_MAX, final)))


def _from_parts(positive: bool, significand: int, exponent: int) -> float:
    """``f64_from_parts``: one rounding to a double, then powers of ten, each rounded."""
    value = float(significand)  # u64 to f64: round to nearest, ties to even
    while True:
        # `exponent.wrapping_abs() as usize`: i32::MIN stays out of the table.
        index = abs(exponent)
        if index < len(_POW10):
            if exponent >= 0:
                value *= _POW10[index]
                if value == float("inf"):
                    raise NumberOutOfRange(f"{significand}e{exponent}")
            else:
                value /= _POW10[index]
            break
        if value == 0.0:
            break
        if exponent >= 0:
            raise NumberOutOfRange(f"{significand}e{exponent}")
        value /= 1e308
        exponent += 308
    return value if positive else -value


def read_number(text: str) -> int | float:
    """The number serde_json's default parser makes of one JSON number literal: an
    ``int`` when it keeps an integer (u64, or i64 for negatives), else a ``float``.

    Raises :class:`NumberOutOfRange` where serde_json does, ``ValueError`` for text
    that is not one JSON number.
    """
    reader = _Reader(text)
    value = reader.number()
    if reader.at != len(text):
        raise ValueError(f"not a JSON number: {text!r}")
    return value


def floats_as_harn_reads(value: Any) -> Any:
    """A JSON value with every float (a number the wire writes with a fraction or an
    exponent) as a serde_json-default reader of its wire text holds it: written as the
    harness writes it (``dumps_wire``) and read back with :func:`read_number`. Integers,
    which such a reader keeps exactly within 64 bits, and everything else unchanged.
    Raises :class:`NumberOutOfRange` for a float such a reader refuses (the largest
    doubles)."""
    if isinstance(value, float):
        return read_number(dumps_wire(value).decode("ascii"))
    if isinstance(value, dict):
        return {key: floats_as_harn_reads(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [floats_as_harn_reads(item) for item in value]
    return value
