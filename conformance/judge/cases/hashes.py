"""Explicit cases for every hash a session recap carries, on the values where two
canonical forms write different bytes.

A recap snapshot carries three hashes (docs/hashing.md section 4): each source
event's ``recordHash`` (RFC 8785, section 2), ``contentHash`` and
``projectionHash`` (Harn's canonical JSON, section 6).  Producer-controlled
JSON enters them through the journal's event payloads, above all a tool call's
``input`` and a tool result's ``output``: any object, any number.  A producer
that hashes in the wrong form, sorts keys by the wrong unit or formats numbers
its own way agrees on every ASCII key and small integer, which is all random
cases hold.  So the cases are computed from the forms' rules:

* keys: every pair of characters (ASCII, Latin-1, CJK, U+E000..U+FFFF,
  astral) whose order by UTF-8 bytes (= code points: Harn's order) and by
  UTF-16 code units (RFC 8785's) differ, and all of them in one object;
* strings: a character of each class each form escapes or writes as itself;
* numbers: each number on which Harn's notation, RFC 8785's (ECMAScript's)
  and Python's ``repr`` do not all agree, at every notation threshold of both
  forms, and the integral floats each form writes differently.

``contentHash`` hashes only event ids and ``sha256:`` hex digests under ASCII
keys, on which the forms cannot differ: the cases reach it through the record
hashes it lists.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.conformance.judge.cases.operations import recap_event
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER, canonical_bytes
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

__all__ = [
    "KEY_CHARACTERS",
    "NAMED_NUMBERS",
    "hash_cases",
    "number_forms",
    "numbers_where_forms_differ",
    "order_clashes",
]

# One or two characters of each class a sort can treat differently.
KEY_CHARACTERS = (
    "a",
    "Z",
    "~",
    "\u007f",
    "\u00e9",  # Latin-1
    "\u4e2d",  # CJK
    "\ud7ff",  # the last code point below the surrogates
    "\ue000",  # private use, above the surrogates
    "\ufb33",
    "\uffff",
    "\U00010000",  # the first astral code point
    "\U0001f600",
)
# Integers beyond +-(2**53 - 1) have no RFC 8785 form, so no record hash: the journal
# refuses them (canonical_unsafe_integer), and the safe extremes stand for them.
# A character of each class a string escape treats on its own.
_STRING_CHARACTERS = (
    "\u001f",
    '"',
    "\\",
    "/",
    "\u007f",
    "\u00e9",
    "\u2028",
    "\u4e2d",
    "\uffff",
    "\U0001f600",
)


def _utf8_key(text: str) -> bytes:
    return text.encode("utf-8")


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be")


def order_clashes() -> list[tuple[str, str]]:
    """Every pair of :data:`KEY_CHARACTERS` (UTF-8 order first) that UTF-16 orders the
    other way round."""
    return [
        (a, b)
        for a, b in itertools.combinations(sorted(KEY_CHARACTERS, key=_utf8_key), 2)
        if _utf16_key(a) > _utf16_key(b)
    ]


def number_forms(number: float | int) -> dict[str, str]:
    """The text of ``number`` in each form: Harn's, RFC 8785's and Python's repr."""
    return {
        "Harn": harn_canonical_bytes(number).decode(),
        "RFC 8785": canonical_bytes(number).decode(),
        "repr": repr(number),
    }


def _thresholds() -> Iterator[float]:
    # Harn's notation changes at 10^16/10^17 and 10^-5/10^-4 (docs/hashing.md section
    # 6, rule 5), ECMAScript's at 10^21 and 10^-6; each power and its neighbours.
    for exponent in (-8, -7, -6, -5, -4, -1, 0, 15, 16, 17, 20, 21, 22):
        power = 10.0**exponent
        yield from (power, 1.5 * power, -power)


NAMED_NUMBERS: tuple[float | int, ...] = (
    1.0,
    -0.0,
    0.0,
    -7.0,
    2.0**53,
    2.0**53 + 2,
    1e20,
    1e21,
    1e-7,
    5e-324,
    1.7976931348623157e308,
    0.1,
    0.30000000000000004,
    123456789012345680000.0,
    MAX_SAFE_INTEGER,
    -MAX_SAFE_INTEGER,
)


def numbers_where_forms_differ() -> list[float | int]:
    """The named numbers (the extremes and shortest round-trip digits each form must
    get right too) and every threshold number whose forms do not all agree, each once."""
    chosen: list[float | int] = list(NAMED_NUMBERS)
    for number in _thresholds():
        texts = set(number_forms(number).values())
        if len(texts) > 1 and repr(number) not in {repr(n) for n in chosen}:
            chosen.append(number)
    return chosen


# -- the journal ----------------------------------------------------------------------------------
def _exchange(why: str, tool_input: Any, tool_output: Any) -> ExplicitCase:
    """A prompt and one iteration with one tool call and its result: both values are
    in every record hash of the call's events and in projectionHash (the turn's tools)."""
    rows: list[tuple[str, dict[str, Any]]] = [
        ("message", {"role": "user", "visibility": None, "text": "go"}),
        ("loop_checkpoint", {"checkpoint": "iteration_start", "iteration": 1}),
        ("tool_call", {"callId": "c1", "toolName": "calc", "input": tool_input}),
        (
            "tool_result",
            {
                "callId": "c1",
                "toolName": "calc",
                "isError": False,
                "output": tool_output,
                "verification": None,
            },
        ),
        ("loop_checkpoint", {"checkpoint": "iteration_end", "iteration": 1}),
    ]
    events = [
        recap_event(index + 1, "sess-hash", "run-1", "turn-1", None, kind, payload)
        for index, (kind, payload) in enumerate(rows)
    ]
    return ExplicitCase(
        "recap.project", {"events": events, "query": {"sessionId": "sess-hash"}}, why
    )


def _names(text: str) -> str:
    return " ".join(f"U+{ord(c):04X}" for c in text)


_WHERE = (
    "recordHash (RFC 8785, docs/hashing.md 4.1) and projectionHash (Harn's canonical JSON, 4.3)"
)


def _key_cases() -> list[ExplicitCase]:
    cases = []
    for first, second in order_clashes():
        value = {second: [1, {second: 2, first: 3}], first: {"x": first, "y": second}}
        cases.append(
            _exchange(
                f"tool values with keys {_names(first)} and {_names(second)}: UTF-8 bytes "
                f"(code points) put {_names(first)} first, UTF-16 code units put it last; "
                f"{_WHERE} each sort by its own unit (docs/hashing.md sections 2 and 6)",
                value,
                {"out": value},
            )
        )
    every = {character: index for index, character in enumerate(reversed(KEY_CHARACTERS))}
    nested = {**every, "nested": {**every, "list": [every]}}
    cases.append(
        _exchange(
            "tool values with keys of every class (ASCII, Latin-1, CJK, U+E000..U+FFFF, astral) "
            f"in one object, nested: {_WHERE} each sort by its own unit",
            nested,
            nested,
        )
    )
    return cases


def _string_cases() -> list[ExplicitCase]:
    cases = []
    for character in _STRING_CHARACTERS:
        text = f"a{character}b"
        cases.append(
            _exchange(
                f"a tool value and key holding {_names(character)}: both forms write it as "
                "UTF-8 or escape it exactly as their string rules say, never as a \\u escape "
                f"of their own ({_WHERE}; docs/hashing.md section 6, rule 3)",
                {text: text, "list": [text]},
                text,
            )
        )
    return cases


def _number_cases() -> list[ExplicitCase]:
    cases = []
    for number in numbers_where_forms_differ():
        forms = "; ".join(f"{form} {text}" for form, text in number_forms(number).items())
        cases.append(
            _exchange(
                f"a tool value holding the {type(number).__name__} {number!r} ({forms}), alone "
                f"and nested: {_WHERE} each write it in their own notation "
                "(docs/hashing.md sections 2 and 6, rule 5)",
                {"n": number, "list": [number, 1], "nested": {"deep": [number]}},
                number,
            )
        )
    return cases


def hash_cases() -> list[ExplicitCase]:
    """Keys, strings and numbers on which the forms differ, in tool input and output."""
    return [*_key_cases(), *_string_cases(), *_number_cases()]
