"""The Rust-regex dialect of a pattern policy, read into Python's ``re``.

Harn's secret catalog is written for Rust's ``regex`` crate.  Its matches are
leftmost-first, exactly as a backtracking engine prefers them, so Python's
``re`` finds the same spans once every construct *means* the same.  Three do
not by default, and this module spells them out:

* ``\\b`` and ``\\w``: Rust's word characters are Unicode's (Alphabetic, marks,
  decimal digits, connector punctuation, join controls); Python's are
  ``str.isalnum()`` and ``_``.  They become explicit classes
  (:mod:`session_contracts.redaction.unicode_word`).
* ``\\s``: Rust's is the White_Space property; Python's adds U+001C..U+001F.
* ``(?i)``: Rust folds case with Unicode simple case folding (``k`` also
  matches U+212A KELVIN SIGN, ``s`` also U+017F LONG S); Python's IGNORECASE
  also lets ``i`` match U+0130 and U+0131.  Case-insensitive letters become
  ``(?i:c)`` (exactly Rust's set for every ASCII letter but ``i``) and ``[iI]``;
  a non-ASCII letter under ``(?i)`` is outside the dialect.

``$`` is the end of the text in Rust (``\\Z`` in Python, whose ``$`` also
matches before a final newline).  Everything else the dialect allows is
written the same in both.  What it allows: literals, escaped punctuation,
``\\n \\t \\r \\f \\v \\xHH \\x{H...}``, ``.``, classes with ranges and the
escapes ``\\d \\s \\w`` (no nested classes or set operations), ``\\d \\D \\s \\S
\\w \\W \\b \\B \\A \\z ^ $`` outside classes, groups ``( )``, ``(?: )``, flags
``i`` and ``s`` (``(?i)``, ``(?-i)``, ``(?is: )``), the quantifiers ``* + ?
{n} {n,} {n,m}`` each greedy or lazy, and alternation.  A pattern that can
match the empty string is refused: Rust and Python iterate empty matches
differently, and a redaction pattern has no use for one.

:func:`translate` returns the Python pattern or raises :class:`DialectError`
saying what is outside the dialect, and where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from session_contracts.redaction.unicode_word import WORD_RANGES

__all__ = [
    "WHITE_SPACE",
    "DialectError",
    "fast_text",
    "re2_exact_everywhere",
    "translate",
    "word_class",
]

# Unicode's White_Space property: Rust's \s, char::is_whitespace and str::trim.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_MAX_REPEAT = 1000


class DialectError(ValueError):
    """A pattern outside the dialect: ``offset`` is where in the pattern."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at character {offset})")
        self.offset = offset


def _ranges_text(ranges: list[tuple[int, int]], re2: bool = False) -> str:
    out: list[str] = []
    for low, high in ranges:
        first, last = _class_char(low, re2), _class_char(high, re2)
        out.append(first if low == high else f"{first}-{last}")
    return "".join(out)


def _class_char(code: int, re2: bool = False) -> str:
    """A character spelled so that neither engine reads anything else into it."""
    character = chr(code)
    if character.isalnum() and character.isascii():
        return character
    if re2:
        return f"\\x{{{code:x}}}"
    if not character.isascii() and character.isprintable():
        # As itself: no non-ASCII character is special to Python's re, and a class of
        # plain characters compiles in two thirds of the time of one of \u escapes (the
        # word class, eight times in a pattern with two \b, in every process).
        return character
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


@lru_cache(maxsize=1)
def word_class() -> str:
    """The body of a character class holding exactly Rust's Unicode word characters."""
    return _ranges_text(list(WORD_RANGES))


def _space_ranges() -> list[tuple[int, int]]:
    return _merge([(ord(c), ord(c)) for c in WHITE_SPACE])


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


# Rust's simple case folding of ASCII letters: each letter's other case, and the
# two non-ASCII characters that fold onto an ASCII letter.
_FOLD_EXTRA = {"k": 0x212A, "s": 0x17F}


def _folded(ranges: list[tuple[int, int]], where: int) -> list[tuple[int, int]]:
    out = list(ranges)
    for low, high in ranges:
        if high - low > 0x400:
            raise DialectError("a case-insensitive range wider than 1024 characters", where)
        for code in range(low, high + 1):
            character = chr(code)
            if character.isascii():
                if character.isalpha():
                    for other in {character.lower(), character.upper()}:
                        out.append((ord(other), ord(other)))
                    extra = _FOLD_EXTRA.get(character.lower())
                    if extra is not None:
                        out.append((extra, extra))
            elif character.lower() != character or character.upper() != character:
                raise DialectError("a non-ASCII letter under case-insensitive matching", where)
    return _merge(out)


@dataclass
class _Flags:
    ignore_case: bool = False
    dot_all: bool = False


@dataclass(frozen=True)
class _Node:
    text: str  # the Python spelling
    nullable: bool  # whether it can match the empty string
    assertion: bool = False  # whether it is zero-width (\\b, ^, ...)


_META = set("\\.+*?()|[]{}^$")


class _Parser:
    def __init__(self, pattern: str, target: str) -> None:
        self.pattern = pattern
        self.position = 0
        # "python": every construct spelled out; "python-fast": Python's own \\b and
        # \\w (right where fast_text holds); "re2": RE2 syntax (right on ASCII text).
        self.exact_words = target == "python"
        self.re2 = target == "re2"
        self.end = "\\z" if self.re2 else "\\Z"
        # Whether a construct RE2 reads as ASCII only (\\b \\w \\d) occurs.
        self.ascii_classes = False

    # -- helpers
    def peek(self, ahead: int = 0) -> str:
        index = self.position + ahead
        return self.pattern[index] if index < len(self.pattern) else ""

    def fail(self, message: str, offset: int | None = None) -> DialectError:
        return DialectError(message, self.position if offset is None else offset)

    # -- grammar
    def alternation(self, flags: _Flags) -> _Node:
        branches = [self.concatenation(flags)]
        while self.peek() == "|":
            self.position += 1
            branches.append(self.concatenation(flags))
        if len(branches) == 1:
            return branches[0]
        return _Node("|".join(b.text for b in branches), any(b.nullable for b in branches))

    def concatenation(self, flags: _Flags) -> _Node:
        parts: list[_Node] = []
        while self.peek() not in ("", "|", ")"):
            if self.pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), self.position):
                raise self.fail("look-around (Rust's regex has none)")
            if self.peek() == "(" and self.peek(1) == "?" and self._flag_group_ahead():
                self._inline_flags(flags)
                continue
            atom = self.atom(flags)
            parts.append(self.quantified(atom))
        return _Node("".join(p.text for p in parts), all(p.nullable for p in parts))

    def _flag_group_ahead(self) -> bool:
        """Whether ``(?flags)`` (no colon) starts here."""
        index = self.position + 2
        while index < len(self.pattern) and self.pattern[index] not in ":)":
            index += 1
        return index < len(self.pattern) and self.pattern[index] == ")"

    def _parse_flags(self, flags: _Flags, stop: str) -> None:
        value = True
        while self.peek() != stop:
            character = self.peek()
            if character == "-":
                value = False
            elif character == "i":
                flags.ignore_case = value
            elif character == "s":
                flags.dot_all = value
            elif character == "":
                raise self.fail("an unclosed flag group")
            else:
                raise self.fail(f"the flag {character!r} (only i and s are in the dialect)")
            self.position += 1
        self.position += 1

    def _inline_flags(self, flags: _Flags) -> None:
        self.position += 2
        self._parse_flags(flags, ")")

    def quantified(self, atom: _Node) -> _Node:
        character = self.peek()
        start = self.position
        if character in ("*", "+", "?"):
            self.position += 1
            low = 0 if character != "+" else 1
            suffix = character
        elif character == "{":
            low, suffix = self._counted()
        else:
            return atom
        if self.peek() == "?":
            self.position += 1
            suffix += "?"
        if self.peek() in ("*", "+", "?", "{"):
            raise self.fail("a quantifier after a quantifier (possessive forms are not Rust)")
        if atom.assertion:
            raise self.fail("a quantifier on an assertion", start)
        return _Node(f"(?:{atom.text}){suffix}", atom.nullable or low == 0)

    def _counted(self) -> tuple[int, str]:
        match = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.pattern, self.position)
        if match is None:
            raise self.fail("a `{` that is not a counted repetition (escape it as \\{)")
        self.position = match.end()
        low = int(match[1])
        high = int(match[3]) if match[3] else None
        if low > _MAX_REPEAT or (high is not None and (high > _MAX_REPEAT or high < low)):
            raise self.fail("a counted repetition out of range (at most 1000, low <= high)")
        if match[2] is None:
            return low, f"{{{low}}}"
        return low, f"{{{low},{'' if high is None else high}}}"

    def atom(self, flags: _Flags) -> _Node:
        character = self.peek()
        if character == "(":
            return self.group(flags)
        if character == "[":
            return _Node(self.char_class(flags), False)
        if character == ".":
            self.position += 1
            return _Node("(?s:.)" if flags.dot_all else "[^\\n]", False)
        if character == "^":
            self.position += 1
            return _Node("\\A", True, assertion=True)
        if character == "$":
            self.position += 1
            return _Node(self.end, True, assertion=True)
        if character == "\\":
            return self.escape(flags)
        if character in ("*", "+", "?", "{"):
            raise self.fail("a quantifier without something to repeat")
        if character in ("]", "}"):
            # Rust reads a lone ] or } as a literal; spelled escaped, it is the same.
            pass
        self.position += 1
        return _Node(self.literal(ord(character), flags), False)

    def literal(self, code: int, flags: _Flags) -> str:
        character = chr(code)
        if flags.ignore_case and (character.lower() != character or character.upper() != character):
            if not character.isascii():
                raise self.fail("a non-ASCII letter under case-insensitive matching")
            # Spelled as a class: exactly Rust's folding (i has no non-ASCII
            # partner there, k and s have one each), and faster in Python's
            # engine than a scoped (?i:c).
            lower = character.lower()
            extra = _FOLD_EXTRA.get(lower)
            body = lower.upper() + lower + (_class_char(extra, self.re2) if extra else "")
            return f"[{body}]"
        return _class_char(code, self.re2)

    def group(self, flags: _Flags) -> _Node:
        start = self.position
        self.position += 1
        inner_flags = _Flags(flags.ignore_case, flags.dot_all)
        capturing = self.peek() != "?"
        if self.peek() == "?":
            self.position += 1
            if self.peek() == "P" or self.peek() == "<":
                # A named group: the name does not matter to a match.
                end = self.pattern.find(">", self.position)
                if end < 0:
                    raise self.fail("an unclosed group name")
                self.position = end + 1
            else:
                self._parse_flags(inner_flags, ":")
        node = self.alternation(inner_flags)
        if self.peek() != ")":
            raise self.fail("an unclosed group", start)
        self.position += 1
        # A plain group stays a capturing group, so that group numbers (a detector's
        # ``group``) mean the same in the translation; every other group the
        # translation writes is non-capturing.
        return _Node(f"({node.text})" if capturing else f"(?:{node.text})", node.nullable)

    def escape(self, flags: _Flags) -> _Node:
        start = self.position
        self.position += 1
        character = self.peek()
        self.position += 1
        if character in "bBdDwW":
            self.ascii_classes = True
        if not self.exact_words and character in "bB":
            return _Node(f"\\{character}", True, assertion=True)
        word = word_class()
        if character == "b":
            return _Node(
                f"(?:(?<=[{word}])(?![{word}])|(?<![{word}])(?=[{word}]))", True, assertion=True
            )
        if character == "B":
            return _Node(
                f"(?:(?<=[{word}])(?=[{word}])|(?<![{word}])(?![{word}]))", True, assertion=True
            )
        if character == "A":
            return _Node("\\A", True, assertion=True)
        if character == "z":
            return _Node(self.end, True, assertion=True)
        if character in "dswDSW":
            if not self.exact_words and character in "wW":
                return _Node(f"\\{character}", False)
            return _Node(_perl_class(character, self.re2), False)
        self.position = start
        return _Node(self.literal(self.escaped_code(in_class=False), flags), False)

    def escaped_code(self, *, in_class: bool) -> int:
        """The code point of a literal escape at the current ``\\``."""
        start = self.position
        self.position += 1
        character = self.peek()
        self.position += 1
        simple = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11}
        if character in simple:
            return simple[character]
        if character == "x":
            if self.peek() == "{":
                end = self.pattern.find("}", self.position)
                digits = self.pattern[self.position + 1 : end] if end > 0 else ""
                if not re.fullmatch(r"[0-9A-Fa-f]{1,6}", digits):
                    raise self.fail("a malformed \\x{...} escape", start)
                self.position = end + 1
            else:
                digits = self.pattern[self.position : self.position + 2]
                if not re.fullmatch(r"[0-9A-Fa-f]{2}", digits):
                    raise self.fail("a malformed \\xHH escape", start)
                self.position += 2
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise self.fail("an escape that is not a Unicode scalar value", start)
            return code
        if character and character.isascii() and not character.isalnum() and character != " ":
            return ord(character)
        what = "the end of the pattern" if not character else f"\\{character}"
        raise self.fail(f"{what} is not an escape of the dialect", start)

    def char_class(self, flags: _Flags) -> str:
        start = self.position
        self.position += 1
        negated = self.peek() == "^"
        if negated:
            self.position += 1
        ranges: list[tuple[int, int]] = []
        perl: list[tuple[int, int]] = []  # \s and \w: closed under case already
        extra: list[str] = []  # \d: Python's own class, which is Rust's (Nd)
        first = True
        while True:
            character = self.peek()
            if character == "":
                raise self.fail("an unclosed character class", start)
            if character == "]" and not first:
                self.position += 1
                break
            first = False
            if character == "[":
                raise self.fail("a nested class or [:name:] (escape a literal [ as \\[)")
            if character in "&~-" and self.peek(1) == character:
                raise self.fail("a class set operation (&&, --, ~~)")
            if character == "\\" and self.peek(1) in tuple("dswDSW"):
                letter = self.peek(1)
                self.ascii_classes = self.ascii_classes or letter in "dw"
                self.position += 2
                if letter == "d":
                    extra.append("\\d")
                elif letter == "s":
                    perl.extend(_space_ranges())  # spelled out: RE2's \\s lacks \\v
                elif letter == "w" and not self.exact_words:
                    extra.append("\\w")
                elif letter == "w":
                    perl.extend(WORD_RANGES)
                else:
                    raise self.fail("a negated class escape inside a class", self.position - 2)
                continue
            low = self.class_char()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.position += 1
                if self.peek() == "\\" and self.peek(1) in tuple("dswDSW"):
                    raise self.fail("a range ending in a class escape")
                high = self.class_char()
                if high < low:
                    raise self.fail("a range whose end comes before its start")
                ranges.append((low, high))
            else:
                ranges.append((low, low))
        merged = _merge(ranges)
        if flags.ignore_case:
            merged = _folded(merged, start)
        merged = _merge(merged + perl)
        body = _ranges_text(merged, self.re2) + "".join(extra)
        if not body:
            raise self.fail("an empty class", start)
        return f"[{'^' if negated else ''}{body}]"

    def class_char(self) -> int:
        if self.peek() == "\\":
            return self.escaped_code(in_class=True)
        character = self.peek()
        self.position += 1
        return ord(character)


def _perl_class(letter: str, re2: bool) -> str:
    if letter in "dD":
        return f"\\{letter}"
    body = _ranges_text(_space_ranges(), re2) if letter in "sS" else word_class()
    return f"[{'^' if letter.isupper() else ''}{body}]"


@lru_cache(maxsize=256)
def translate(pattern: str, target: str = "python") -> str:
    """The Python ``re`` pattern meaning what ``pattern`` means to Rust's ``regex``.

    ``target="python-fast"`` keeps Python's own ``\\b`` and ``\\w``, which are far
    faster and mean the same on a text :func:`fast_text` accepts.  ``target="re2"``
    writes RE2 syntax, whose ``\\b \\w \\d`` are ASCII's: the same as Rust's on an
    ASCII text, and RE2, like Rust, runs in linear time.
    """
    if target not in ("python", "python-fast", "re2"):
        raise ValueError(f"unknown target {target!r}")
    parser = _Parser(pattern, target)
    node = parser.alternation(_Flags())
    if parser.position != len(pattern):
        raise parser.fail("an unmatched )")
    if node.nullable:
        raise DialectError("the pattern can match the empty string", 0)
    return node.text


@lru_cache(maxsize=256)
def re2_exact_everywhere(pattern: str) -> bool:
    """Whether the RE2 spelling of ``pattern`` means what Rust means on every text,
    not only on ASCII text: it uses none of ``\\b \\B \\d \\D \\w \\W``."""
    parser = _Parser(pattern, "re2")
    parser.alternation(_Flags())
    return not parser.ascii_classes


@lru_cache(maxsize=1)
def _slow_character() -> re.Pattern[str]:
    """A character on which Python's and Rust's word characters may disagree: every
    character of the Basic Multilingual Plane where they do, and every one beyond."""
    rust = bytearray(0x10000)
    for low, high in WORD_RANGES:
        if low < 0x10000:
            rust[low : min(high, 0xFFFF) + 1] = b"\x01" * (min(high, 0xFFFF) + 1 - low)
    python = bytes(chr(code).isalnum() or code == 0x5F for code in range(0x10000))
    agree: list[tuple[int, int]] = []
    for code in range(0x10000):
        if rust[code] == python[code] and not 0xD800 <= code <= 0xDFFF:
            if agree and agree[-1][1] == code - 1:
                agree[-1] = (agree[-1][0], code)
            else:
                agree.append((code, code))
    return re.compile(f"[^{_ranges_text(agree)}]")


def fast_text(text: str) -> bool:
    """Whether Python's ``\\b`` and ``\\w`` agree with Rust's on every character of ``text``."""
    return text.isascii() or _slow_character().search(text) is None
