"""The secret screen: whether a JSON line, or a decoded value, may hold a secret, cheaply.

``check`` scans every captured document for secrets; the screen skips the documents in
which the policy's detectors cannot find anything, from the same literal clauses that
gate the recap's batch redaction (:mod:`session_contracts.redaction.gate`). Its findings
are always exactly ``scan_value``'s: it only skips work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from session_contracts.errors import Finding
from session_contracts.redaction.engine import (
    KeyEntropyDetector,
    RedactionPolicy,
    holds_secret,
    scan_value,
)
from session_contracts.redaction.gate import holding, needle_finder

__all__ = [
    "ScreenMemo",
    "SecretScreen",
    "line_may_hold_secret",
    "screened_secret_findings",
    "secret_findings",
    "secret_screen",
    "value_holds_secret",
]


# How the screen decides:
#
# Scanning every string of every document with every detector (scan_value) costs
# far more than validating it.  Almost no captured document holds a secret, and
# almost every detector needs some literal in the text to match (the recap's
# redaction gate derives these clauses from each pattern).  So the screen asks,
# cheapest first:
#
# 1. the bytes of the line: a JSON text without \u or \/ escapes writes each
#    character of a string one way only, so a literal in any string (or key) of
#    the document is in the line, escaped as JSON escapes it.  A line holding no
#    clause of any detector, and no clause of a key pattern, yields no finding;
# 2. each string and key (each distinct one once): a string without a clause of
#    any detector, and not under a key a key-entropy detector names, yields none;
#    one that has is scanned (``holds_secret``, the very code scan_value runs);
# 3. only a document with a string that holds a secret is given to scan_value,
#    which makes the findings.  So the findings are always exactly scan_value's:
#    the screen only skips documents for which it would return nothing.


@dataclass(frozen=True, slots=True)
class _Needle:
    """A literal: as in a decoded string (lowercase when ``folded``) and as a JSON
    text writes it (without \\u or \\/ escapes)."""

    text: str
    raw: bytes
    folded: bool


# All clauses must hold; a clause holds when one of its needles is present.
_Gate = tuple[tuple[_Needle, ...], ...]

# Clause literals are shortened to a cover of substrings at least this long: a
# weaker test (still implied by the clause) with fewer searches.
_MIN_COVER = 3


@dataclass(frozen=True, slots=True)
class SecretScreen:
    """What a text must hold for a policy's detectors to find anything in it."""

    policy: RedactionPolicy
    gates: tuple[_Gate, ...]  # one per enabled detector, for matches in text
    key_gates: tuple[_Gate, ...]  # one per enabled key-entropy detector, for its key pattern
    key_patterns: tuple[re.Pattern[str], ...]
    # The UTF-8 bytes of the non-ASCII characters that match an ASCII letter
    # under re.IGNORECASE (CASE_TRAPS), for the line test.
    trap_bytes: tuple[bytes, ...]
    # gates and key_gates for the line test: each needle as (number, raw, folded),
    # numbered so that a needle shared by several detectors is searched once.
    line_plan: tuple[tuple[tuple[tuple[int, bytes, bool], ...], ...], ...]
    needle_count: int
    # Every needle of line_plan, every trap and both escapes as members of one RE2
    # set: one pass over the line finds all of them.  None when the needles are too
    # many for that (a policy file's).
    line_sets: _LineSets | None = field(default=None, compare=False)


# What a member of the line set stands for, besides a needle number (>= 0).
_ESCAPE = -1  # \u or \/: a character may be written another way
_TRAP = -2  # a character that folds to an ASCII letter


@dataclass(frozen=True, slots=True, eq=False)
class _LineSets:
    # The indices of the members a line holds, ascending (gate.needle_finder).
    find: Callable[[bytes], tuple[int, ...]]
    meanings: tuple[int, ...]  # per member: a needle number, _ESCAPE or _TRAP
    folded_numbers: tuple[int, ...]
    # The verdict for each set of members found: a captured stream's lines find
    # a handful of such sets.  Bounded: cleared when it holds _MAX_VERDICTS.
    verdicts: dict[tuple[int, ...], bool] = field(default_factory=dict)


_MAX_VERDICTS = 4_096
_ASCII_UPPER = frozenset(range(ord("A"), ord("Z") + 1))


def _line_sets(
    plan: tuple[tuple[tuple[tuple[int, bytes, bool], ...], ...], ...],
    trap_bytes: tuple[bytes, ...],
) -> _LineSets | None:
    needles: dict[int, tuple[bytes, bool]] = {}
    for gate in plan:
        for clause in gate:
            for number, needle, is_folded in clause:
                needles[number] = (needle, is_folded)
    members = [(b"\\u", False, _ESCAPE), (b"\\/", False, _ESCAPE)]
    members += [(trap, False, _TRAP) for trap in trap_bytes]
    members += [(needle, folded, number) for number, (needle, folded) in needles.items()]
    # A folded needle with an uppercase ASCII letter is never in a lowered line.
    kept = [m for m in members if not (m[1] and any(byte in _ASCII_UPPER for byte in m[0]))]
    meanings = tuple(meaning for _, _, meaning in kept)
    folded_numbers = tuple(number for number, (_, folded) in needles.items() if folded)
    find = needle_finder([(text, folded) for text, folded, _ in kept])
    return None if find is None else _LineSets(find, meanings, folded_numbers)


def _escaped(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")


def _cover(texts: set[str]) -> set[str]:
    """Substrings (at least ``_MIN_COVER`` long) such that each text holds one: greedy,
    the substring in most uncovered texts first, then the longest."""
    if len(texts) <= 2:
        return texts
    left = set(texts)
    chosen: set[str] = set()
    while left:
        candidates = {
            text[i : i + n]
            for text in left
            for n in range(min(_MIN_COVER, len(text)), len(text) + 1)
            for i in range(len(text) - n + 1)
        }
        best = max(
            candidates,
            key=lambda piece: (sum(piece in text for text in left), len(piece), piece),
        )
        chosen.add(best)
        left = {text for text in left if best not in text}
    return chosen


def _clause_order(clause: tuple[_Needle, ...]) -> tuple[bool, int]:
    # A single character is in nearly every text: such a clause rarely rules a
    # detector out, so the others are tried first, fewest needles first.
    return (min(len(needle.text) for needle in clause) <= 1, len(clause))


def _gate(clauses: Sequence[Any]) -> _Gate | None:
    """The needles of ``clauses``, in trial order; None when a literal is view-unsafe."""
    from session_contracts.redaction.gate import VIEW_UNSAFE

    out: list[tuple[_Needle, ...]] = []
    for clause in clauses:
        if any(VIEW_UNSAFE.search(literal.text) for literal in clause.literals):
            return None
        needles: list[_Needle] = []
        for folded in (False, True):
            texts = {literal.text for literal in clause.literals if literal.folded is folded}
            needles.extend(_Needle(text, _escaped(text), folded) for text in sorted(_cover(texts)))
        out.append(tuple(needles))
    return tuple(sorted(out, key=_clause_order))


@lru_cache(maxsize=8)
def secret_screen(policy: RedactionPolicy) -> SecretScreen:
    """The screen of ``policy`` (a detector the analysis cannot bound always runs)."""
    from session_contracts.redaction.gate import (
        CASE_TRAPS,
        detector_gates,
        pattern_clauses,
        strongest_clauses,
    )

    gates = tuple(_gate(gate.clauses) or () for gate in detector_gates(policy))
    key_detectors = [d for d in policy.detectors if d.enabled and isinstance(d, KeyEntropyDetector)]
    key_gates = tuple(
        _gate(strongest_clauses(pattern_clauses(d.key_pattern, re.IGNORECASE))) or ()
        for d in key_detectors
    )
    key_patterns = tuple(re.compile(d.key_pattern, re.IGNORECASE) for d in key_detectors)
    traps = tuple(sorted(CASE_TRAPS))
    numbers: dict[tuple[bytes, bool], int] = {}
    plan = tuple(
        tuple(
            tuple(
                (numbers.setdefault((n.raw, n.folded), len(numbers)), n.raw, n.folded)
                for n in clause
            )
            for clause in gate
        )
        for gate in (*gates, *key_gates)
    )
    return SecretScreen(
        policy,
        gates,
        key_gates,
        key_patterns,
        tuple(t.encode() for t in traps),
        plan,
        len(numbers),
        _line_sets(plan, tuple(t.encode() for t in traps)),
    )


def line_may_hold_secret(screen: SecretScreen, raw: bytes) -> bool:
    """False only when no string or key of the JSON text ``raw`` can yield a finding."""
    sets = screen.line_sets
    if sets is None:
        return _line_may_hold_secret_needle_by_needle(screen, raw)
    found = sets.find(raw)
    verdict = sets.verdicts.get(found)
    if verdict is None:
        verdict = _line_verdict(screen, sets, found)
        if len(sets.verdicts) >= _MAX_VERDICTS:
            sets.verdicts.clear()
        sets.verdicts[found] = verdict
    return verdict


def _line_verdict(screen: SecretScreen, sets: _LineSets, found: tuple[int, ...]) -> bool:
    """Whether a line in which the members ``found`` of the line set (and no others)
    are present may hold a secret."""
    meanings = [sets.meanings[member] for member in found]
    if _ESCAPE in meanings:
        return True  # a character may be written another way: decide string by string
    seen = [False] * screen.needle_count
    for meaning in meanings:
        if meaning >= 0:
            seen[meaning] = True
    if _TRAP in meanings:  # a character that folds to an ASCII letter: every folded
        for number in sets.folded_numbers:  # literal is in reach
            seen[number] = True
    return _plan_holds(screen, lambda number, _needle, _folded: seen[number])


def _plan_holds(screen: SecretScreen, present: Callable[[int, bytes, bool], bool]) -> bool:
    """Whether every clause of some gate of the line plan has a needle ``present``."""
    for gate in screen.line_plan:
        for clause in gate:
            if not any(present(*needle) for needle in clause):
                break  # no needle of this clause: the detector cannot match
        else:
            return True  # every clause of this detector holds: look closer
    return False


def _line_may_hold_secret_needle_by_needle(screen: SecretScreen, raw: bytes) -> bool:
    """line_may_hold_secret with a search per needle (a policy too large for one set)."""
    if b"\\u" in raw or b"\\/" in raw:
        return True  # a character may be written another way: decide string by string
    # A character that folds to an ASCII letter puts every folded literal in reach.
    traps = not raw.isascii() and any(trap in raw for trap in screen.trap_bytes)
    lowered = raw.lower()  # ASCII only: no other character lowers to an ASCII one
    seen: dict[int, bool] = {}  # each needle searched once

    def present(number: int, needle: bytes, folded: bool) -> bool:
        found = seen.get(number)
        if found is None:
            found = seen[number] = (traps or needle in lowered) if folded else needle in raw
        return found

    return _plan_holds(screen, present)


def _text_may_match(screen: SecretScreen, text: str) -> bool:
    """False only when no detector can match in ``text`` (read as text, with no key)."""
    return next(holding(text, ((True, gate) for gate in screen.gates)), False)


@dataclass
class ScreenMemo:
    """Verdicts on strings already screened (captured documents repeat many), bounded:
    at most ``cap`` strings of at most ``longest`` characters, then it starts afresh."""

    cap: int = 8_192
    longest: int = 512
    texts: dict[str, bool] = field(default_factory=dict)
    keys: dict[str, bool] = field(default_factory=dict)

    def remember(self, table: dict[str, bool], text: str, verdict: bool) -> bool:
        if len(text) <= self.longest:
            if len(table) >= self.cap:
                table.clear()
            table[text] = verdict
        return verdict


def _named(screen: SecretScreen, key: str, memo: ScreenMemo) -> bool:
    """Whether a key-entropy detector's key pattern names ``key``."""
    found = memo.keys.get(key)
    if found is None:
        found = memo.remember(
            memo.keys, key, any(pattern.search(key) for pattern in screen.key_patterns)
        )
    return found


def _string_holds_secret(
    screen: SecretScreen, text: str, key: str | None, memo: ScreenMemo
) -> bool:
    """Exactly: whether scan_value reports ``text`` under ``key`` (None: a key, an array
    item or the root)."""
    if key is not None and screen.key_patterns and _named(screen, key, memo):
        return holds_secret(text, screen.policy, key)  # the key's own rule: always read
    found = memo.texts.get(text)
    if found is None:
        found = memo.remember(
            memo.texts,
            text,
            _text_may_match(screen, text) and holds_secret(text, screen.policy),
        )
    return found


def value_holds_secret(screen: SecretScreen, value: Any, memo: ScreenMemo | None = None) -> bool:
    """Exactly: whether ``scan_value(value, screen.policy)`` reports anything."""
    memo = memo if memo is not None else ScreenMemo()
    pending: list[tuple[Any, str | None]] = [(value, None)]
    while pending:
        node, key = pending.pop()
        if isinstance(node, str):
            if _string_holds_secret(screen, node, key, memo):
                return True
        elif isinstance(node, dict):
            for child_key, item in node.items():
                if isinstance(child_key, str):
                    if _string_holds_secret(screen, child_key, None, memo):
                        return True
                    pending.append((item, child_key))
                else:
                    pending.append((item, None))
        elif isinstance(node, list):
            pending.extend((item, None) for item in node)
    return False


def secret_findings(
    value: Any,
    policy: RedactionPolicy,
    raw: bytes | None = None,
    memo: ScreenMemo | None = None,
) -> list[Finding]:
    """``scan_value(value, policy)``, skipped when the screen shows it finds nothing.

    ``raw``, when given, is the JSON text ``value`` was parsed from.
    """
    return screened_secret_findings(value, secret_screen(policy), raw, memo)


def screened_secret_findings(
    value: Any, screen: SecretScreen, raw: bytes | None = None, memo: ScreenMemo | None = None
) -> list[Finding]:
    """``secret_findings`` with the screen already built (a stream builds it once:
    looking it up hashes the whole policy)."""
    if raw is not None and not line_may_hold_secret(screen, raw):
        return []
    if not value_holds_secret(screen, value, memo):
        return []
    return scan_value(value, screen.policy)
