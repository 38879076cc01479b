"""Batch redaction with a literal gate: ``redact_text`` for many texts, fast.

A snapshot of 32,768 events carries several megabytes of public text, and
running every detector of the policy over every text (``redact_text``) costs
about half a microsecond a byte: seconds per snapshot.  Almost all of that
text holds no secret, and almost every detector needs some literal to match:
``sk-ant-`` for an Anthropic key, ``://`` for a URL password, ``password`` (in
any case) or a sibling for a password assignment.  So the gate derives, from
each detector's pattern, *clauses*: sets of literal strings such that every
match of the detector puts at least one string of each clause into the text.
A detector whose clause is missing from a text cannot match anywhere in it,
nor in any piece of it (``redact_text`` rereads pieces between markers), so
it is switched off for that text, and a text with no detector left is
returned as it is.  The result is exactly ``redact_text(text, policy).text``
(a property test holds the two to equality): only the work is skipped.

The clauses come from Python's own regular-expression parser and are
conservative: anything the analysis does not understand (a backreference, a
character range, an unbounded repeat of a class) requires nothing, and a
detector without a clause always runs.  Case-insensitive literals are
compared lowercased; four non-ASCII characters match ASCII letters under
``re.IGNORECASE`` (U+0130, U+0131, U+017F and U+212A, :data:`CASE_TRAPS`),
and a text holding one of them runs every case-insensitive detector.

A pattern policy (Harn's algorithm, the default) runs its patterns one after
another over the text the earlier ones left, so a pattern is never switched
off alone: a text is redacted with the whole policy as soon as one pattern's
clauses hold in it (or it may be a URL the URL step reads), and returned as it
is otherwise, which is exact because then no pattern matches the text and the
first replacement never happens.

Two stages keep the gate itself cheap.  First all texts are checked at once,
on the distinct whitespace-separated tokens of all of them (a literal without
whitespace lies inside one token): detectors whose clauses fail there are off
for every text.  Then each text is checked for the detectors still on.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, product
from typing import Any, Protocol, TypeVar

import re2  # type: ignore[import-untyped, unused-ignore]

from session_contracts.redaction.engine import (
    ASSIGNMENT,
    URL_KIND,
    KeyEntropyDetector,
    RedactionPolicy,
    RegexDetector,
    redact_text,
    redact_value,
)
from session_contracts.redaction.rust_regex import translate

__all__ = [
    "CASE_TRAPS",
    "Clause",
    "DetectorGate",
    "LiteralLike",
    "TextScreen",
    "detector_gates",
    "needle_finder",
    "redact_texts",
    "redact_values",
    "text_screen",
]

# re._parser is CPython's regular-expression parser (sre_parse before 3.11,
# which now warns on import).  Only this module reads its output.
_parser: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")

# The non-ASCII characters that match an ASCII letter under re.IGNORECASE
# (tests/rules/test_recap.py checks the list against re itself, code point by code
# point).  Of every other character, the lowercase form holds no ASCII letter.
CASE_TRAPS = frozenset("\u0130\u0131\u017f\u212a")
_CASE_TRAP_PATTERN = re.compile("[" + "".join(sorted(CASE_TRAPS)) + "]")

# Finite literal sets larger than this are not expanded further: a clause of
# a few dozen strings still costs only a few substring searches.
_MAX_STRINGS = 32
# The best clauses kept per detector; each is one more reason to switch it off.
_MAX_CLAUSES = 3


@dataclass(frozen=True, slots=True)
class _Literal:
    """A literal string; ``folded`` literals are lowercase and compared case-insensitively."""

    text: str
    folded: bool

    def __add__(self, other: _Literal) -> _Literal:
        folded = self.folded or other.folded
        joined = self.text + other.text
        return _Literal(joined.lower() if folded else joined, folded)


@dataclass(frozen=True, slots=True)
class Clause:
    """Literals of which every match of a detector puts at least one into the text."""

    literals: frozenset[_Literal]

    @property
    def spaced(self) -> bool:
        """Whether a literal holds whitespace (then no single token can hold it)."""
        return any(_has_space(literal.text) for literal in self.literals)

    @property
    def strength(self) -> tuple[int, int, int]:
        """Sort key, best first: no whitespace, long shortest literal, few literals."""
        shortest = min(len(literal.text) for literal in self.literals)
        return (int(self.spaced), -shortest, len(self.literals))


@dataclass(frozen=True, slots=True)
class DetectorGate:
    """A detector id and the clauses a text must satisfy for it to match there."""

    kind: str
    clauses: tuple[Clause, ...]


def _has_space(text: str) -> bool:
    return any(character.isspace() for character in text)


# ------------------------------------------------------------------------ analysis


@dataclass(frozen=True, slots=True)
class _Info:
    """What a regex node needs: the finite set of strings it matches (or None), and clauses."""

    exact: frozenset[_Literal] | None
    clauses: tuple[Clause, ...]


_EMPTY = frozenset({_Literal("", False)})
_NOTHING_KNOWN = _Info(None, ())
_ZERO_WIDTH = _Info(_EMPTY, ())


def _literal(code: int, flags: int) -> frozenset[_Literal] | None:
    character = chr(code)
    if flags & re.IGNORECASE and character.lower() != character.upper():
        if not character.isascii():
            return None  # case folding beyond ASCII: not modelled
        return frozenset({_Literal(character.lower(), True)})
    return frozenset({_Literal(character, False)})


def _concat(left: frozenset[_Literal], right: frozenset[_Literal]) -> frozenset[_Literal] | None:
    if len(left) * len(right) > _MAX_STRINGS:
        return None
    return frozenset(a + b for a, b in product(left, right))


def _clause_of(strings: frozenset[_Literal] | None) -> tuple[Clause, ...]:
    if not strings or any(not literal.text for literal in strings):
        return ()  # the node may match the empty string: it requires nothing
    return (Clause(_simplified(strings)),)


def _simplified(strings: frozenset[_Literal]) -> frozenset[_Literal]:
    """Drop a literal that contains another of the clause: the shorter one suffices."""
    kept = {
        literal
        for literal in strings
        if not any(
            other != literal and other.folded == literal.folded and other.text in literal.text
            for other in strings
        )
    }
    return frozenset(kept)


def _best(clauses: Iterable[Clause]) -> Clause | None:
    ordered = sorted(clauses, key=lambda clause: clause.strength)
    return ordered[0] if ordered else None


def _sequence(items: Iterable[tuple[Any, Any]], flags: int) -> _Info:
    """A concatenation: literal runs become longer literals, every part's clauses hold."""
    clauses: list[Clause] = []
    run: frozenset[_Literal] = _EMPTY
    broken = False
    for op, av in items:
        info = _node(op, av, flags)
        clauses.extend(info.clauses)
        if info.exact is None:
            clauses.extend(_clause_of(run))
            run, broken = _EMPTY, True
            continue
        joined = _concat(run, info.exact)
        if joined is None:
            clauses.extend(_clause_of(run))
            joined = info.exact
            broken = True
        run = joined
    clauses.extend(_clause_of(run))
    return _Info(None if broken else run, tuple(clauses))


def _alternatives(branches: Sequence[_Info]) -> _Info:
    """A disjunction needs one literal of a clause built from a clause of every branch."""
    exact: frozenset[_Literal] | None = frozenset()
    for branch in branches:
        if exact is None or branch.exact is None or len(exact) + len(branch.exact) > _MAX_STRINGS:
            exact = None
        else:
            exact = exact | branch.exact
    picked: list[Clause] = []
    for branch in branches:
        best = _best([*branch.clauses, *_clause_of(branch.exact)])
        if best is None:
            return _Info(exact, ())
        picked.append(best)
    union = frozenset(literal for clause in picked for literal in clause.literals)
    return _Info(exact, (Clause(_simplified(union)),))


def _node(op: Any, av: Any, flags: int) -> _Info:
    if op is _c.LITERAL:
        return _Info(_literal(av, flags), ())
    if op is _c.IN:
        return _Info(_class_members(av, flags), ())
    if op in (_c.AT, _c.ASSERT_NOT):
        return _ZERO_WIDTH
    if op is _c.ASSERT:
        # A lookaround's text is in the subject even though the match does not consume it.
        inner = _sequence(av[1].data, flags)
        return _Info(_EMPTY, inner.clauses + _clause_of(inner.exact))
    if op is _c.SUBPATTERN:
        _group, add_flags, del_flags, pattern = av
        return _sequence(pattern.data, (flags | add_flags) & ~del_flags)
    if op is _c.ATOMIC_GROUP:
        return _sequence(av.data, flags)
    if op is _c.BRANCH:
        return _alternatives([_sequence(branch.data, flags) for branch in av[1]])
    if op is _c.GROUPREF_EXISTS:
        _group, yes, no = av
        return _alternatives(
            [_sequence(yes.data, flags), _sequence(no.data, flags) if no else _ZERO_WIDTH]
        )
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        low, high, item = av
        inner = _sequence(item.data, flags)
        needs = inner.clauses + _clause_of(inner.exact) if low >= 1 else ()
        return _Info(_repeated(inner.exact, low, high), needs)
    return _NOTHING_KNOWN  # ANY, NOT_LITERAL, GROUPREF, CATEGORY...: nothing is known


def _class_members(items: Any, flags: int) -> frozenset[_Literal] | None:
    members: set[_Literal] = set()
    for op, av in items:
        if op is not _c.LITERAL:
            return None  # a range, a category or a negation: too many strings
        literal = _literal(av, flags)
        if literal is None:
            return None
        members |= literal
    return frozenset(members) if 0 < len(members) <= 8 else None


def _repeated(exact: frozenset[_Literal] | None, low: int, high: int) -> frozenset[_Literal] | None:
    if exact is None or high > 4:
        return None
    out: set[_Literal] = set()
    for count in range(low, high + 1):
        strings: frozenset[_Literal] | None = _EMPTY
        for _ in range(count):
            strings = _concat(strings, exact) if strings is not None else None
        if strings is None:
            return None
        out |= strings
        if len(out) > _MAX_STRINGS:
            return None
    return frozenset(out)


def pattern_clauses(pattern: str, flags: int) -> tuple[Clause, ...]:
    try:
        parsed = _parser.parse(pattern, flags)
    except (re.error, RecursionError):
        return ()
    info = _sequence(parsed.data, parsed.state.flags)
    return info.clauses + _clause_of(info.exact)


def strongest_clauses(clauses: Iterable[Clause]) -> tuple[Clause, ...]:
    unique = sorted(
        set(clauses),
        key=lambda clause: (
            clause.strength,
            sorted((literal.text, literal.folded) for literal in clause.literals),
        ),
    )
    return tuple(unique[:_MAX_CLAUSES])


# Redaction also reads views of a text (session_contracts/redaction/engine.py): escape
# runs before a quote cut to one backslash, key-chain links left out.  A view only
# removes characters, so a literal the view holds is in the text too, unless it
# holds a backslash or a separator followed by a blank, or starts with blanks
# followed by more: the removal can make those.  A detector with such a literal
# is never switched off.
VIEW_UNSAFE = re.compile(r"\\|[:=>][ \t]|^[ \t]+[^ \t]")


# The URL step reads only a string that starts with one of these.
_URL_CLAUSE = Clause(frozenset({_Literal("http://", False), _Literal("https://", False)}))


# A word boundary assertion, not preceded by an escaping backslash.
_WORD_BOUNDARY = re.compile(r"(?<!\\)((?:\\\\)*)\\b")


def _harn_pattern_clauses(source: str) -> tuple[Clause, ...]:
    """The clauses of a Rust-syntax pattern.

    Dropping its ``\\b`` assertions only widens what it matches, so every literal the
    widened pattern needs, the pattern needs too; and without them the literals on
    both sides of a boundary join up (``gh[pousr]_`` gives ``ghp_``... rather than
    ``gh`` and ``_``, which any English text with an underscore holds).  Python's own
    spelling of the pattern is the fallback.
    """
    try:
        widened = strongest_clauses(pattern_clauses(_WORD_BOUNDARY.sub(r"\1", source), 0))
    except (re.error, ValueError, OverflowError):
        widened = ()
    if widened:
        return widened
    return strongest_clauses(pattern_clauses(translate(source, "python-fast"), 0))


def _pattern_gates(policy: RedactionPolicy) -> tuple[DetectorGate, ...]:
    gates = [
        DetectorGate(pattern.name, _harn_pattern_clauses(pattern.pattern))
        for pattern in policy.patterns
        if pattern.enabled
    ]
    if policy.url_params is not None:
        gates.append(DetectorGate(URL_KIND, (_URL_CLAUSE,)))
    return tuple(gates)


@lru_cache(maxsize=32)
def detector_gates(policy: RedactionPolicy) -> tuple[DetectorGate, ...]:
    """The clauses of each enabled detector of ``policy``, strongest first (for a
    pattern policy: of each enabled pattern, and of the URL step)."""
    if policy.pattern_style:
        return _pattern_gates(policy)
    gates = []
    for detector in policy.detectors:
        if not detector.enabled:
            continue
        if isinstance(detector, RegexDetector):
            flags = re.IGNORECASE if detector.ignore_case else 0
            clauses = pattern_clauses(detector.pattern, flags)
        elif isinstance(detector, KeyEntropyDetector):
            # In text a key-entropy detector reads `key: value` assignments and
            # then matches its key pattern inside the key: both must be present.
            clauses = pattern_clauses(detector.key_pattern, re.IGNORECASE) + pattern_clauses(
                ASSIGNMENT.pattern, ASSIGNMENT.flags
            )
        else:  # pragma: no cover - a detector type this gate does not know always runs
            clauses = ()
        if any(VIEW_UNSAFE.search(literal.text) for c in clauses for literal in c.literals):
            clauses = ()  # the views could make such a literal: the detector always runs
        gates.append(DetectorGate(detector.id, strongest_clauses(clauses)))
    return tuple(gates)


# ---------------------------------------------------------------------- evaluation


class _Haystack:
    """One text (or the tokens of many), with memoized literal lookups."""

    __slots__ = ("_folded", "_seen", "text", "traps")

    def __init__(self, text: str) -> None:
        self.text = text
        self.traps = not text.isascii() and _CASE_TRAP_PATTERN.search(text) is not None
        self._folded: str | None = None
        self._seen: dict[_Literal, bool] = {}

    def holds(self, literal: _Literal) -> bool:
        found = self._seen.get(literal)
        if found is None:
            if not literal.folded:
                found = literal.text in self.text
            elif self.traps:
                found = True  # a character that folds to ASCII: assume the literal is there
            else:
                if self._folded is None:
                    self._folded = self.text.lower()
                found = literal.text in self._folded
            self._seen[literal] = found
        return found

    def may_match(self, gate: DetectorGate, *, tokens_only: bool = False) -> bool:
        """Whether every clause of ``gate`` has a literal here.

        ``tokens_only``: this haystack holds whitespace-separated tokens, so a
        clause with a literal containing whitespace cannot be decided and is
        taken as satisfied.
        """
        return all(
            any(self.holds(literal) for literal in clause.literals)
            for clause in gate.clauses
            if not (tokens_only and clause.spaced)
        )


def _token_haystack(texts: Sequence[str]) -> _Haystack:
    """The distinct whitespace-separated tokens of ``texts``, one per line."""
    tokens = set(chain.from_iterable(map(str.split, texts)))
    return _Haystack("\n".join(tokens))


@lru_cache(maxsize=256)
def _narrowed(policy: RedactionPolicy, active: frozenset[str]) -> RedactionPolicy:
    """``policy`` with every detector outside ``active`` turned off (markers stay known)."""
    off = [d.id for d in policy.detectors if d.enabled and d.id not in active]
    return policy.disable(*off) if off else policy


_Check = tuple[str, tuple[tuple[_Literal, ...], ...]]


class LiteralLike(Protocol):
    """A literal to look for: ``folded`` ones are compared in lowercase."""

    @property
    def text(self) -> str: ...

    @property
    def folded(self) -> bool: ...


K = TypeVar("K")


def holding(text: str, checks: Iterable[tuple[K, Sequence[Sequence[LiteralLike]]]]) -> Iterator[K]:
    """The keys of ``checks`` whose every clause has a literal in ``text``, lazily.

    This runs once per public text (and per captured string in ``check``), so it
    is written for speed: the lowercase copy and the case-trap test are made
    only if a folded literal needs them, once for all the checks.
    """
    lowered: str | None = None
    traps: bool | None = None
    for key, clauses in checks:
        for literals in clauses:
            for literal in literals:
                if not literal.folded:
                    if literal.text in text:
                        break
                    continue
                if traps is None:
                    traps = not text.isascii() and _CASE_TRAP_PATTERN.search(text) is not None
                if traps:
                    break  # a character that folds to ASCII: assume the literal is there
                if lowered is None:
                    lowered = text.lower()
                if literal.text in lowered:
                    break
            else:
                break  # no literal of this clause: the detector cannot match here
        else:
            yield key


def _active_in(text: str, checks: Sequence[_Check]) -> frozenset[str]:
    """The detectors of ``checks`` whose every clause has a literal in ``text``."""
    return frozenset(holding(text, checks))


def _checks(gates: Sequence[DetectorGate], texts: Sequence[str]) -> list[_Check]:
    """The gates that may match somewhere in ``texts``, clauses with fewest literals first."""
    tokens = _token_haystack(texts)
    return [
        (gate.kind, tuple(tuple(c.literals) for c in sorted(gate.clauses, key=_literal_count)))
        for gate in gates
        if tokens.may_match(gate, tokens_only=True)
    ]


def redact_texts(texts: Sequence[str], policy: RedactionPolicy) -> list[str]:
    """``[redact_text(text, policy).text for text in texts]``, skipping idle detectors."""
    # Each distinct text once: a plan repeats its steps in every plan event.
    distinct = list(dict.fromkeys(texts))
    checks = _checks(detector_gates(policy), distinct) if distinct else []
    if not checks:
        return list(texts)
    redacted: dict[str, str] = {}
    for text in distinct:
        active = _active_in(text, checks) if text else frozenset()
        if active:
            # A pattern policy's patterns read each other's output: all of them run.
            narrowed = policy if policy.pattern_style else _narrowed(policy, active)
            redacted[text] = redact_text(text, narrowed).text
    if not redacted:
        return list(texts)
    return [redacted.get(text, text) for text in texts]


class TextScreen:
    """Whether redaction may change a text, one text at a time (a projection's).

    ``may_change(text)`` is False only when no detector of the policy (no pattern,
    nor the URL step, for a pattern policy) has every clause in the text: the gate
    :func:`redact_texts` applies, so the text is then its own redaction.  An ASCII
    text is searched for every literal at once (:func:`needle_finder`, one RE2 set:
    folded literals compared with the text's ASCII letters lowered, as
    ``text.lower()`` does on ASCII), and the verdict, which depends only on the
    literals found, is remembered per such set (at most ``_MAX_VERDICTS``, then it
    starts afresh).  Other texts (they may hold a character that folds to an ASCII
    letter), and literals too many for one set, use :func:`holding`.
    """

    __slots__ = ("_checks", "_find", "_keys", "_plan", "_policy", "_verdicts")

    def __init__(self, policy: RedactionPolicy) -> None:
        self._policy = policy
        gates = detector_gates(policy)
        self._checks: list[_Check] = [
            (gate.kind, tuple(tuple(clause.literals) for clause in gate.clauses)) for gate in gates
        ]
        self._verdicts: dict[tuple[int, ...], bool] = {}
        self._keys: dict[Any, bool] = {}
        self._plan: tuple[tuple[frozenset[int], ...], ...] = ()
        self._find: Any = None
        members: dict[tuple[bytes, bool], int] = {}
        plan = []
        for gate in gates:
            clauses = []
            for clause in gate.clauses:
                if any(not literal.text for literal in clause.literals):
                    continue  # an empty literal is in every text: the clause always holds
                numbers = set()
                for literal in clause.literals:
                    raw = literal.text.encode("utf-8", "surrogatepass")
                    if literal.folded and any(65 <= byte <= 90 for byte in raw):
                        continue  # uppercase ASCII is never in a lowered text
                    numbers.add(members.setdefault((raw, literal.folded), len(members)))
                clauses.append(frozenset(numbers))
            plan.append(tuple(clauses))
        self._plan = tuple(plan)
        self._find = needle_finder(list(members))

    def may_change(self, text: str) -> bool:
        if self._find is None or not text.isascii():
            return next(holding(text, self._checks), None) is not None
        found: tuple[int, ...] = self._find(text.encode("ascii"))
        verdict = self._verdicts.get(found)
        if verdict is None:
            present = frozenset(found)
            verdict = any(
                all(not clause.isdisjoint(present) for clause in gate) for gate in self._plan
            )
            if len(self._verdicts) >= _MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[found] = verdict
        return verdict

    def value_may_change(self, value: Any) -> bool:
        """Whether ``redact_value`` may change a JSON value: under a pattern policy,
        False only when no key is sensitive and no string may change (each string
        is redacted as a text, each sensitive key's value replaced); always True
        under a detector policy, whose key-entropy detectors also read the keys."""
        if not self._policy.pattern_style:
            return True
        keys = self._keys
        pending = [value]
        while pending:
            node = pending.pop()
            kind = type(node)
            if kind is str:
                if self.may_change(node):
                    return True
            elif kind is dict:
                for key in node:
                    sensitive = keys.get(key)
                    if sensitive is None:
                        sensitive = self._sensitive(key)
                    if sensitive:
                        return True
                pending.extend(node.values())
            elif kind is list:
                pending.extend(node)
            elif isinstance(node, str | dict | list):
                return True  # a subclass: let redact_value judge it
        return False

    def _sensitive(self, key: Any) -> bool:
        """Whether the policy's key rule names ``key`` (remembered: keys repeat)."""
        rule = self._policy.sensitive_keys
        sensitive = rule is not None and (not isinstance(key, str) or rule.matches(key))
        if len(self._keys) >= _MAX_VERDICTS:
            self._keys.clear()
        self._keys[key] = sensitive
        return sensitive


# Distinct sets of literals found whose verdicts a screen remembers (texts of one
# session find a handful).
_MAX_VERDICTS = 4_096


# An RE2 set fails (and answers "nothing found") only when its DFA outgrows its
# memory.  The DFA of a set of literals has at most one state per byte of the
# literals, plus one: far below this memory for at most this many bytes.
NEEDLE_SET_MAX_BYTES = 20_000
_NEEDLE_SET_MEMORY = 64 << 20
_ASCII_LOWERCASE = frozenset(range(ord("a"), ord("z") + 1))


def _byte_pattern(byte: int, folded: bool) -> str:
    """One byte of a needle as RE2 (Latin-1: a byte is a character).  A folded needle
    is searched in the ASCII-lowered line: its lowercase ASCII letters match either
    case, exactly as ``needle in line.lower()`` would."""
    if folded and byte in _ASCII_LOWERCASE:
        return f"[\\x{byte:02x}\\x{byte - 32:02x}]"
    return f"\\x{byte:02x}"


def needle_finder(
    needles: Sequence[tuple[bytes, bool]],
) -> Callable[[bytes], tuple[int, ...]] | None:
    """Every needle searched for at once, in one RE2 set: for a line of bytes, the
    indices of the needles it holds, ascending.  A needle ``(text, folded)`` with
    ``folded`` is compared with the line's ASCII letters lowered (so it never holds an
    uppercase ASCII letter).  None when the needles are too many bytes for one set."""
    if sum(len(text) for text, _ in needles) > NEEDLE_SET_MAX_BYTES:
        return None
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.max_mem = _NEEDLE_SET_MEMORY
    options.log_errors = False
    literals = re2.Set.SearchSet(options)
    for text, folded in needles:
        literals.Add("".join(_byte_pattern(byte, folded) for byte in text).encode("ascii"))
    literals.Compile()

    def find(line: bytes) -> tuple[int, ...]:
        return tuple(sorted(literals.Match(line) or ()))

    return find


@lru_cache(maxsize=32)
def text_screen(policy: RedactionPolicy) -> TextScreen:
    """The :class:`TextScreen` of ``policy`` (built once: the gates parse every pattern)."""
    return TextScreen(policy)


def _literal_count(clause: Clause) -> int:
    return len(clause.literals)


@lru_cache(maxsize=32)
def _key_detectors(policy: RedactionPolicy) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each enabled key-entropy detector's id and compiled key pattern (as the core compiles it)."""
    return tuple(
        (detector.id, re.compile(detector.key_pattern, re.IGNORECASE))
        for detector in policy.detectors
        if detector.enabled and isinstance(detector, KeyEntropyDetector)
    )


def redact_values(values: Sequence[Any], policy: RedactionPolicy) -> list[Any]:
    """``[redact_value(value, policy) for value in values]``, skipping detectors that cannot match.

    ``redact_value`` judges each string by its text and by the object key it
    sits under; the gate decides the text part as :func:`redact_texts` does,
    and keeps a key-entropy detector on for every string under a key its key
    pattern names.  A string with no detector left is kept as it is.
    """
    if policy.pattern_style:
        return _redact_pattern_values(values, policy)
    leaves: list[tuple[str, str | None]] = []
    _collect(values, None, leaves)
    checks = _checks(detector_gates(policy), [text for text, _ in leaves]) if leaves else []
    key_detectors = _key_detectors(policy)
    by_key: dict[str, frozenset[str]] = {}  # arguments repeat their keys: match each once
    redacted: list[str] = []
    changed = False
    for text, key in leaves:
        active = _active_in(text, checks) if checks and text else frozenset()
        if key is not None and key_detectors:
            named = by_key.get(key)
            if named is None:
                named = by_key[key] = frozenset(
                    kind for kind, pattern in key_detectors if pattern.search(key)
                )
            active |= named
        if not active:
            redacted.append(text)
            continue
        narrowed = _narrowed(policy, frozenset(active))
        result = (
            redact_value({key: text}, narrowed)[key]
            if key is not None
            else redact_value([text], narrowed)[0]
        )
        changed = changed or result != text
        redacted.append(result)
    if not changed:
        return list(values)  # nothing to replace: the values as they are (equal to copies)
    strings = iter(redacted)
    return [_rebuild(value, strings) for value in values]


def _redact_pattern_values(values: Sequence[Any], policy: RedactionPolicy) -> list[Any]:
    """``redact_values`` under a pattern policy: a value goes through ``redact_value``
    when it has a sensitive key or a string one of the policy's gates lets through."""
    leaves: list[tuple[str, str | None]] = []
    _collect(values, None, leaves)
    checks = _checks(detector_gates(policy), [text for text, _ in leaves]) if leaves else []
    rule = policy.sensitive_keys

    def may_change(node: Any) -> bool:
        if isinstance(node, str):
            return bool(checks) and bool(node) and bool(_active_in(node, checks))
        if isinstance(node, dict):
            return any(
                (rule is not None and isinstance(key, str) and rule.matches(key))
                or may_change(item)
                for key, item in node.items()
            )
        if isinstance(node, list):
            return any(may_change(item) for item in node)
        return False

    return [redact_value(value, policy) if may_change(value) else value for value in values]


def _collect(node: Any, key: str | None, leaves: list[tuple[str, str | None]]) -> None:
    """Every string of a JSON value, in walk order, with the key it sits under.

    Walks exactly what ``redact_value`` walks: ``dict`` and ``list``.
    """
    if isinstance(node, str):
        leaves.append((node, key))
    elif isinstance(node, dict):
        for child_key, item in node.items():
            _collect(item, child_key if isinstance(child_key, str) else None, leaves)
    elif isinstance(node, list):
        for item in node:
            _collect(item, None, leaves)


def _rebuild(node: Any, strings: Iterator[str]) -> Any:
    """A copy of ``node`` with its strings taken, in walk order, from ``strings``."""
    if isinstance(node, str):
        return next(strings)
    if isinstance(node, dict):
        return {key: _rebuild(item, strings) for key, item in node.items()}
    if isinstance(node, list):
        return [_rebuild(item, strings) for item in node]
    return node
