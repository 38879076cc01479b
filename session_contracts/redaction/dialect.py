"""The portable pattern dialect of a redaction policy: a checker.

A redaction policy's patterns must mean the same in Python ``re``, ECMAScript
(with the ``u`` flag), Go's RE2 (``regexp``) and Rust's ``regex`` crate, so
that a producer in any of those languages redacts byte for byte as the
reference does.  docs/redaction.md, section "The pattern dialect", specifies
the subset; this module parses a pattern with a small parser of exactly that
subset and reports the first construct outside it as a :class:`Finding`
(code ``pattern_outside_dialect``) at the pattern's JSON path, naming the
construct and how to write it instead.  It is pure: no engine is consulted.

The grammar (``i`` and ``s`` are the only flags, and only as a prefix)::

    pattern     = [ "(?i)" | "(?s)" | "(?is)" | "(?si)" ] alternation
    alternation = branch { "|" branch }          (no empty branch)
    branch      = piece { piece }
    piece       = atom [ quantifier ]
    quantifier  = ( "*" | "+" | "?" | "{n}" | "{n,}" | "{n,m}" ) [ "?" ]   (n <= m <= 1000)
    atom        = literal | "\\" escape | class | "(" alternation ")"
                | "(?:" alternation ")" | "." (under s only) | "^" | "$" | "\\b" (never quantified)
    escape      = one of \\ . + * ? ( ) | [ ] { } ^ $ /  |  n t r f v  |  xHH  |  s
    class       = "[" [ "^" ] item { item } "]"
    item        = char [ "-" char ] | "\\s"      (a literal "-" first, last or escaped;
                                                 "[" escaped; no "&&", "--", "~~")
"""

from __future__ import annotations

from dataclasses import dataclass

from session_contracts.errors import Finding

__all__ = ["MAX_REPEAT", "OUTSIDE_DIALECT", "DialectProblem", "dialect_findings"]

OUTSIDE_DIALECT = "pattern_outside_dialect"
MAX_REPEAT = 1000

# Escaped, these mean themselves in all four engines (``-`` only inside a class).
_PUNCTUATION = frozenset("\\.+*?()|[]{}^$/")
_CONTROL = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11}
_HINTS = {
    "d": "write [0-9]",
    "D": "write [^0-9]",
    "w": "write an explicit ASCII class such as [A-Za-z0-9_]",
    "W": "write an explicit ASCII class such as [^A-Za-z0-9_]",
    "S": "write a negated class of the characters you mean",
    "B": "\\B differs between engines; write the characters you mean",
    "A": "write ^ (the start of the text)",
    "z": "write $ (the end of the text)",
    "Z": "write $ (the end of the text)",
    "p": "Unicode property classes are not shared; write an explicit class",
    "P": "Unicode property classes are not shared; write an explicit class",
    "u": "write the character itself",
    "x": "write \\xHH (two hex digits) or the character itself",
}


@dataclass(frozen=True, slots=True)
class DialectProblem:
    """The first construct outside the dialect: what it is, where, and what to write."""

    construct: str
    offset: int
    hint: str


class _Outside(Exception):
    def __init__(self, construct: str, offset: int, hint: str) -> None:
        super().__init__(construct)
        self.problem = DialectProblem(construct, offset, hint)


def _cased(character: str) -> bool:
    return character.lower() != character or character.upper() != character


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.ignore_case = False
        self.dot_all = False

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.text[index] if index < len(self.text) else ""

    def outside(self, construct: str, hint: str, offset: int | None = None) -> _Outside:
        return _Outside(construct, self.at if offset is None else offset, hint)

    def pattern(self) -> None:
        for prefix in ("(?is)", "(?si)", "(?i)", "(?s)"):
            if self.text.startswith(prefix):
                self.ignore_case = "i" in prefix
                self.dot_all = "s" in prefix
                self.at = len(prefix)
                break
        nullable = self.alternation()
        if self.at < len(self.text):
            raise self.outside("an unmatched )", "remove it or escape it as \\)")
        if nullable:
            raise self.outside(
                "a pattern that can match the empty string",
                "every match must cover at least one character",
                0,
            )

    def alternation(self) -> bool:
        nullable = self.branch()
        while self.peek() == "|":
            self.at += 1
            nullable = self.branch() or nullable
        return nullable

    def branch(self) -> bool:
        if self.peek() in ("", "|", ")"):
            raise self.outside("an empty alternative", "remove the extra |, or write (?:x)?")
        nullable = True
        while self.peek() not in ("", "|", ")"):
            atom_nullable, assertion = self.atom()
            nullable = self.quantified(atom_nullable, assertion) and nullable
        return nullable

    def quantified(self, nullable: bool, assertion: bool) -> bool:
        start = self.at
        character = self.peek()
        if character in ("*", "?"):
            self.at += 1
            low = 0
        elif character == "+":
            self.at += 1
            low = 1
        elif character == "{":
            low = self.counted()
        else:
            return nullable
        if assertion:
            raise self.outside("a quantifier on an assertion", "remove the quantifier", start)
        if self.peek() == "?":
            self.at += 1
        if self.peek() in ("*", "+", "?", "{"):
            raise self.outside(
                "a possessive or repeated quantifier",
                "possessive quantifiers (a*+) exist in Python and Java only; write one quantifier",
            )
        return nullable or low == 0

    def counted(self) -> int:
        start = self.at
        end = self.text.find("}", start)
        body = self.text[start + 1 : end] if end > 0 else ""
        low_text, _, high_text = body.partition(",")
        if (
            not low_text.isdigit()
            or not low_text.isascii()
            or (high_text and not (high_text.isdigit() and high_text.isascii()))
        ):
            raise self.outside(
                "a { that is not a counted repetition {n}, {n,} or {n,m}",
                "escape a literal brace as \\{ (ECMAScript refuses a lone one)",
            )
        low = int(low_text)
        high = int(high_text) if high_text else None
        if low > MAX_REPEAT or (high is not None and (high > MAX_REPEAT or high < low)):
            raise self.outside(
                "a counted repetition out of range",
                f"n <= m <= {MAX_REPEAT} (Go's limit)",
            )
        self.at = end + 1
        return low

    def atom(self) -> tuple[bool, bool]:
        """Parse one atom: (whether it can match empty, whether it is an assertion)."""
        character = self.peek()
        if character == "(":
            return self.group(), False
        if character == "[":
            self.char_class()
            return False, False
        if character == ".":
            if not self.dot_all:
                raise self.outside(
                    ". without the s flag",
                    "ECMAScript's . also refuses \\r, U+2028 and U+2029: write (?s) at the "
                    "start or a negated class such as [^\\n]",
                )
            self.at += 1
            return False, False
        if character in ("^", "$"):
            self.at += 1
            return True, True
        if character == "\\":
            return self.escape()
        if character in ("*", "+", "?"):
            raise self.outside("a quantifier with nothing to repeat", "escape it as \\" + character)
        if character == "{":
            self.counted()
            raise self.outside("a quantifier with nothing to repeat", "escape it as \\{")
        if character in ("]", "}"):
            raise self.outside(
                f"an unescaped {character}",
                f"escape it as \\{character} (ECMAScript with u refuses a lone one)",
            )
        self.literal(character)
        self.at += 1
        return False, False

    def literal(self, character: str, offset: int | None = None) -> None:
        if 0xD800 <= ord(character) <= 0xDFFF:
            raise self.outside("a lone surrogate", "a pattern is Unicode scalar values", offset)
        if self.ignore_case and not character.isascii() and _cased(character):
            raise self.outside(
                f"the non-ASCII letter {character!r} under the i flag",
                "case folding of non-ASCII letters differs between engines: list both cases "
                "in a class and drop i, or keep i for ASCII letters only",
                offset,
            )

    def group(self) -> bool:
        start = self.at
        if self.text.startswith("(?:", start):
            self.at += 3
        elif self.peek(1) == "?":
            raise self.group_outside(start)
        else:
            self.at += 1
        nullable = self.alternation()
        if self.peek() != ")":
            raise self.outside("an unclosed group", "close it with )", start)
        self.at += 1
        return nullable

    def group_outside(self, start: int) -> _Outside:
        rest = self.text[start:]
        for prefix, construct, hint in (
            ("(?=", "a look-ahead", "Go and Rust have no look-around"),
            ("(?!", "a negative look-ahead", "Go and Rust have no look-around"),
            ("(?<=", "a look-behind", "Go and Rust have no look-around"),
            ("(?<!", "a negative look-behind", "Go and Rust have no look-around"),
            ("(?P<", "a named group", "no one syntax is shared: use a numbered group ( )"),
            ("(?<", "a named group", "no one syntax is shared: use a numbered group ( )"),
            ("(?(", "a conditional", "only Python has conditionals: write the branches with |"),
            ("(?>", "an atomic group", "Go, Rust and ECMAScript have none"),
            ("(?#", "a comment", "remove it"),
        ):
            if rest.startswith(prefix):
                return self.outside(construct, hint, start)
        return self.outside(
            "a flag group other than a leading (?i), (?s) or (?is)",
            "scoped flags such as (?-i:...) are not shared: give the whole pattern one set of "
            "flags at its start, and spell letters out as classes ([Kk]) where case matters",
            start,
        )

    def escape(self) -> tuple[bool, bool]:
        letter = self.peek(1)
        if letter == "b":
            self.at += 2
            return True, True
        if letter == "s":
            self.at += 2
            return False, False
        self.escaped_code(in_class=False)
        return False, False

    def escaped_code(self, *, in_class: bool) -> None:
        start = self.at
        letter = self.peek(1)
        if letter == "":
            raise self.outside("a trailing \\", "escape a backslash as \\\\", start)
        if letter in _PUNCTUATION or (in_class and letter == "-"):
            self.at += 2
            return
        if letter in _CONTROL:
            self.at += 2
            return
        if letter == "x":
            digits = self.text[start + 2 : start + 4]
            if len(digits) == 2 and all(c in "0123456789abcdefABCDEF" for c in digits):
                self.at += 4
                self.literal(chr(int(digits, 16)), start)
                return
        if letter.isdigit():
            raise self.outside(
                f"the backreference or octal escape \\{letter}",
                "Go and Rust have no backreferences",
                start,
            )
        hint = _HINTS.get(letter, "escape only ASCII punctuation, or write the character itself")
        if in_class and letter == "b":
            hint = "\\b means backspace in a class to some engines only: write \\x08"
        raise self.outside(f"the escape \\{letter}", hint, start)

    def char_class(self) -> None:
        start = self.at
        self.at += 1
        if self.peek() == "^":
            self.at += 1
        first = True
        while True:
            character = self.peek()
            if character == "":
                raise self.outside("an unclosed class", "close it with ]", start)
            if character == "]":
                if first:
                    raise self.outside(
                        "an empty class or a leading ]", "escape a literal ] as \\]", self.at
                    )
                self.at += 1
                break
            if character == "[":
                raise self.outside(
                    "a [ inside a class",
                    "escape it as \\[ (nested classes and [:name:] are Rust's and Python's own)",
                )
            if character in "&~-" and self.peek(1) == character:
                raise self.outside(
                    f"the class operator {character * 2}",
                    "class set operations are Rust's own; escape the characters",
                )
            if character == "-" and not first and self.peek(1) not in ("]", ""):
                raise self.outside(
                    "a literal - in the middle of a class",
                    "escape it as \\- or put it first or last",
                )
            first = False
            if character == "\\" and self.peek(1) == "s":
                self.at += 2
                continue
            low = self.class_char()
            if self.peek() == "-" and self.peek(1) == "-":
                raise self.outside(
                    "the class operator --",
                    "class set operations are Rust's own; escape the characters",
                )
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                range_at = self.at
                self.at += 1
                if self.peek() == "\\" and self.peek(1) == "s":
                    raise self.outside("a range ending in \\s", "end a range in a character")
                high = self.class_char()
                if ord(high) < ord(low):
                    raise self.outside(
                        "a range whose end comes before its start", "swap its ends", range_at
                    )
                if self.ignore_case and self._mixed_range(low, high):
                    raise self.outside(
                        "a range under i that holds letters and other characters",
                        "split it so that each range is all letters of one case or no letters",
                        range_at,
                    )

    @staticmethod
    def _mixed_range(low: str, high: str) -> bool:
        """Whether ``low-high`` holds both ASCII letters and other characters."""
        letters = sum(
            1 for code in range(ord(low), min(ord(high), 0x7F) + 1) if chr(code).isalpha()
        )
        return 0 < letters < ord(high) - ord(low) + 1

    def class_char(self) -> str:
        if self.peek() == "\\":
            start = self.at
            letter = self.peek(1)
            self.escaped_code(in_class=True)
            if letter in _CONTROL:
                return chr(_CONTROL[letter])
            if letter == "x":
                return chr(int(self.text[start + 2 : start + 4], 16))
            return letter
        character = self.peek()
        self.literal(character)
        self.at += 1
        return character


def dialect_problem(pattern: str) -> DialectProblem | None:
    """The first construct of ``pattern`` outside the dialect, or None."""
    try:
        _Parser(pattern).pattern()
    except _Outside as outside:
        return outside.problem
    return None


def dialect_findings(pattern: str, path: str) -> list[Finding]:
    """A ``pattern_outside_dialect`` finding at ``path`` when ``pattern`` leaves the
    dialect (the first offending construct), else none."""
    problem = dialect_problem(pattern)
    if problem is None:
        return []
    return [
        Finding(
            path,
            OUTSIDE_DIALECT,
            f"the pattern is outside the portable dialect: {problem.construct} "
            f"(at character {problem.offset})",
            f"{problem.hint}; docs/redaction.md, 'The pattern dialect', lists what all four "
            "engines share",
        )
    ]
