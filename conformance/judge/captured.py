"""``session-contracts check``: certify documents a producer already wrote.

Each document's type is detected from the schemas themselves (the members a
document type requires), then the document is validated (schema and x-
rules), its hashes are recomputed, and it is scanned for secrets with the
redaction detectors, behind an exact screen that skips the scan only where it
would find nothing.  Files are read one line at a time, so JSON Lines of any
size go through in bounded memory: one line (at most 32 MiB) at a time, plus
capped caches and counters (docs/check.md states and measures the bound).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, BinaryIO

import re2  # type: ignore[import-untyped, unused-ignore]

from session_contracts.accel import linescan
from session_contracts.conformance.reference.recap.redaction_gate import holding
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.hashes.verify import verify_document
from session_contracts.input_files import open_regular_file
from session_contracts.json.strict import (
    MAX_DOCUMENT_BYTES,
    loads_strict,
    loads_strict_noting_floats,
)
from session_contracts.redaction.engine import (
    KeyEntropyDetector,
    RedactionPolicy,
    holds_secret,
    scan_value,
)
from session_contracts.redaction.policy import default_policy
from session_contracts.validation.schema_set import SchemaSet
from session_contracts.validation.validator import DocumentValidator, default_validator

__all__ = [
    "CheckStats",
    "ScreenMemo",
    "SecretScreen",
    "check_documents",
    "detect_doctype",
    "line_may_hold_secret",
    "read_documents",
    "secret_findings",
    "secret_screen",
    "value_holds_secret",
]

SUFFIXES = (".json", ".jsonl", ".ndjson")


def _required(schema_set: SchemaSet, node: Any, base: str, depth: int = 0) -> frozenset[str]:
    """The members every instance of a definition must have (through $ref and oneOf)."""
    from urllib.parse import urljoin

    if not isinstance(node, Mapping) or depth > 16:
        return frozenset()
    if "$ref" in node:
        target = urljoin(base, node["$ref"])
        schema_id, _, fragment = target.partition("#")
        resolved: Any = schema_set.schemas[schema_id]
        for part in fragment.lstrip("/").split("/") if fragment else []:
            resolved = resolved[part]
        return _required(schema_set, resolved, schema_id, depth + 1) | frozenset(
            node.get("required", ())
        )
    required = frozenset(node.get("required", ()))
    branches = [_required(schema_set, b, base, depth + 1) for b in node.get("oneOf", ())]
    if branches:
        required |= frozenset.intersection(*branches)
    return required


@cache
def _signatures(
    validator: DocumentValidator,
) -> tuple[tuple[str, frozenset[str], Mapping[str, str]], ...]:
    """(document type, its required members, its input aliases) of every producer
    document type, most specific first."""
    schema_set = validator.schema_set
    signatures = []
    for name, document_type in schema_set.document_types.items():
        if document_type.contract in ("producer-protocol", "certification-report"):
            continue  # the harness's own documents are not a producer's output
        required = _required(schema_set, {"$ref": document_type.ref}, document_type.schema_id)
        if required:
            signatures.append((name, required, dict(document_type.input_aliases or {})))
    # Most specific first: a document matches the type that requires the most of it.
    return tuple(sorted(signatures, key=lambda item: (-len(item[1]), item[0])))


def _tied(validator: DocumentValidator, keys: frozenset[str]) -> tuple[str, ...]:
    """The most specific document types whose required members are all in ``keys``
    (a member may be written in an input alias: a snake_case recap query)."""
    candidates = [
        (name, required)
        for name, required, aliases in _signatures(validator)
        if required <= (frozenset(aliases.get(key, key) for key in keys) if aliases else keys)
    ]
    if not candidates:
        return ()
    best = len(candidates[0][1])
    return tuple(name for name, required in candidates if len(required) == best)


# Captured streams repeat a handful of top-level shapes; the candidates depend on
# the key set alone.  Bounded: at most 1,024 key sets of at most 64 keys and 2,048
# characters each, so a stream of ever-new shapes cannot grow it.
_tied_cached = lru_cache(maxsize=1024)(_tied)
_CACHED_KEYS = 64
_CACHED_KEY_CHARACTERS = 2_048


def detected_type(document: Any, validator: DocumentValidator) -> tuple[str | None, bool]:
    """(document type or None, whether the document is already known valid as it).

    A tie between equally specific types is settled by validity; the winner's
    validation then need not run again.
    """
    if not isinstance(document, dict):
        return None, False
    keys = frozenset(document)
    cacheable = len(keys) <= _CACHED_KEYS and sum(map(len, keys)) <= _CACHED_KEY_CHARACTERS
    tied = (_tied_cached if cacheable else _tied)(validator, keys)
    if len(tied) <= 1:
        return (tied[0] if tied else None), False
    for name in tied:
        if validator.is_valid(name, document):
            return name, True
    return tied[0], False


def detect_doctype(document: Any, validator: DocumentValidator | None = None) -> str | None:
    """The document type whose required members the document has, most specific first;
    among equally specific ones, the first it is valid as."""
    return detected_type(document, validator or default_validator())[0]


def _files(paths: Sequence[str]) -> Iterator[tuple[str, BinaryIO]]:
    import sys

    for path in paths:
        if path == "-":
            yield "<stdin>", sys.stdin.buffer
            continue
        target = Path(path)
        if target.is_dir():
            for folder, _, names in sorted(os.walk(target)):
                for name in sorted(names):
                    if name.endswith(SUFFIXES):
                        with open_regular_file(str(Path(folder) / name)) as handle:
                            yield str(Path(folder) / name), handle
        else:
            with open_regular_file(path) as handle:
                yield path, handle


def _lines(handle: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) one at a time; None for a line over ``limit`` (skipped)."""
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while True:  # drop the rest of the oversized line, a chunk at a time
                rest = handle.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        yield number, line


def _is_json_lines(name: str, handle: BinaryIO) -> bool:
    if name.endswith((".jsonl", ".ndjson")):
        return True
    if name.endswith(".json"):
        return False
    # stdin or another name: JSON Lines when the first line is a whole document
    # and more follows it.
    peek = getattr(handle, "peek", None)
    head = peek(1 << 16) if peek is not None else b""
    end = head.find(b"\n")
    if end < 0 or not head[end + 1 :].strip():
        return False
    try:
        loads_strict(head[:end])
    except InvalidDocument:
        return False
    return True


def _documents(
    paths: Sequence[str],
) -> Iterator[tuple[str, bytes, Any | InvalidDocument, bool]]:
    """(source, the bytes read, value or the error reading it, whether the value may
    hold an integral float), one line at a time for JSON Lines; the bytes let the
    secret screen look at the text before the value, the float fact spares
    ``validate`` its own census."""
    for name, handle in _files(paths):
        if not _is_json_lines(name, handle):
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
            try:
                yield name, data, *loads_strict_noting_floats(data)
            except InvalidDocument as exc:
                yield name, data, exc, False
            continue
        for number, line in _lines(handle, MAX_DOCUMENT_BYTES):
            source = f"{name}:{number}"
            if line is None:
                yield (
                    source,
                    b"",
                    InvalidDocument(
                        [
                            Finding(
                                "$",
                                "json_too_large",
                                f"the line exceeds {MAX_DOCUMENT_BYTES:,} bytes",
                                "split it into several documents",
                            )
                        ]
                    ),
                    False,
                )
            elif line.strip():
                try:
                    yield source, line, *loads_strict_noting_floats(line)
                except InvalidDocument as exc:
                    yield source, line, exc, False


def read_documents(paths: Sequence[str]) -> Iterator[tuple[str, Any | InvalidDocument]]:
    """(source, value or the error reading it), one line at a time for JSON Lines."""
    for source, _, value, _ in _documents(paths):
        yield source, value


# -- statistics -------------------------------------------------------------------

# Distinct unknown member names are counted up to this many; the rest are tallied
# together, so a stream of ever-new names cannot grow the counter (the summary
# prints the 20 most common anyway).
UNKNOWN_FIELDS_CAP = 1024
OTHER_UNKNOWN_FIELDS = "(other names)"
UNREADABLE = "(unreadable or unknown)"


@dataclass
class CheckStats:
    """What a check run saw.  Every counter is bounded whatever the input's size:
    documents by the number of document types (plus one for unreadable or unknown
    ones), findings by the number of (code, level) pairs, unknown member names by
    :data:`UNKNOWN_FIELDS_CAP`."""

    documents: Counter[str] = field(default_factory=Counter)
    findings: Counter[tuple[str, str]] = field(default_factory=Counter)  # (code, level)
    unknown_fields: Counter[str] = field(default_factory=Counter)
    with_errors: int = 0

    @property
    def read(self) -> int:
        return sum(self.documents.values())

    def add(self, doctype: str | None, findings: Sequence[Finding]) -> None:
        """Count one document and its findings."""
        self.documents[doctype or UNREADABLE] += 1
        for finding in findings:
            self.findings[(finding.code, finding.level)] += 1
            if finding.code == "unknown_field":
                name = finding.path.rsplit(".", 1)[-1]
                if name in self.unknown_fields or len(self.unknown_fields) < UNKNOWN_FIELDS_CAP:
                    self.unknown_fields[name] += 1
                else:
                    self.unknown_fields[OTHER_UNKNOWN_FIELDS] += 1
        self.with_errors += any(f.level == "error" for f in findings)

    def summary(self) -> dict[str, Any]:
        """The summary ``session-contracts check`` prints (JSON-ready)."""
        return {
            "documents": self.read,
            "documents_with_errors": self.with_errors,
            "per_type": dict(sorted(self.documents.items())),
            "findings": {
                f"{code} ({level})": n for (code, level), n in sorted(self.findings.items())
            },
            "unknown_fields_seen": dict(self.unknown_fields.most_common(20)),
        }


# -- the secret screen --------------------------------------------------------------
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
    # The indices of the members a line holds, ascending (a NeedleSet's found,
    # or an RE2 set's where the C module is not built).
    find: Callable[[bytes], tuple[int, ...]]
    meanings: tuple[int, ...]  # per member: a needle number, _ESCAPE or _TRAP
    folded_numbers: tuple[int, ...]
    # The verdict for each set of members found: a captured stream's lines find
    # a handful of such sets.  Bounded: cleared when it holds _MAX_VERDICTS.
    verdicts: dict[tuple[int, ...], bool] = field(default_factory=dict)


# An RE2 set fails (and answers "nothing found") only when its DFA outgrows its
# memory.  The DFA of a set of literals has at most one state per byte of the
# literals, plus one: far below this memory for at most this many bytes.
_LINE_SET_MAX_NEEDLE_BYTES = 20_000
_LINE_SET_MEMORY = 64 << 20
_MAX_VERDICTS = 4_096
_ASCII_LOWER = frozenset(range(ord("a"), ord("z") + 1))
_ASCII_UPPER = frozenset(range(ord("A"), ord("Z") + 1))


def _byte_pattern(byte: int, folded: bool) -> str:
    """One byte of a needle as RE2 (Latin-1: a byte is a character).  A folded needle
    is searched in the ASCII-lowered line: its lowercase ASCII letters match either
    case, exactly as ``needle in line.lower()`` would."""
    if folded and byte in _ASCII_LOWER:
        return f"[\\x{byte:02x}\\x{byte - 32:02x}]"
    return f"\\x{byte:02x}"


def _line_sets(
    plan: tuple[tuple[tuple[tuple[int, bytes, bool], ...], ...], ...],
    trap_bytes: tuple[bytes, ...],
) -> _LineSets | None:
    needles: dict[int, tuple[bytes, bool]] = {}
    for gate in plan:
        for clause in gate:
            for number, needle, is_folded in clause:
                needles[number] = (needle, is_folded)
    if sum(len(needle) for needle, _ in needles.values()) > _LINE_SET_MAX_NEEDLE_BYTES:
        return None
    members = [(b"\\u", False, _ESCAPE), (b"\\/", False, _ESCAPE)]
    members += [(trap, False, _TRAP) for trap in trap_bytes]
    members += [(needle, folded, number) for number, (needle, folded) in needles.items()]
    # A folded needle with an uppercase ASCII letter is never in a lowered line.
    kept = [m for m in members if not (m[1] and any(byte in _ASCII_UPPER for byte in m[0]))]
    meanings = tuple(meaning for _, _, meaning in kept)
    folded_numbers = tuple(number for number, (_, folded) in needles.items() if folded)
    if linescan is not None:
        found = linescan.NeedleSet([(text, folded) for text, folded, _ in kept]).found
        return _LineSets(found, meanings, folded_numbers)
    return _LineSets(_re2_finder(kept), meanings, folded_numbers)


def _re2_finder(members: list[tuple[bytes, bool, int]]) -> Callable[[bytes], tuple[int, ...]]:
    """NeedleSet.found as an RE2 set (Latin-1: a byte is a character)."""
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.max_mem = _LINE_SET_MEMORY
    options.log_errors = False
    literals = re2.Set.SearchSet(options)
    for text, folded, _ in members:
        literals.Add("".join(_byte_pattern(byte, folded) for byte in text).encode("ascii"))
    literals.Compile()

    def find(line: bytes) -> tuple[int, ...]:
        return tuple(sorted(literals.Match(line) or ()))

    return find


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
    from session_contracts.conformance.reference.recap.redaction_gate import VIEW_UNSAFE

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
    from session_contracts.conformance.reference.recap.redaction_gate import (
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


def check_documents(
    paths: Sequence[str], *, doctype: str | None = None
) -> Iterator[tuple[str, str | None, list[Finding]]]:
    """(source, detected type, findings) per document, as they are read."""
    validator = default_validator()
    screen = secret_screen(default_policy())
    memo = ScreenMemo()
    for source, raw, value, may_hold_integral_float in _documents(paths):
        if isinstance(value, InvalidDocument):
            yield source, None, list(value.findings)
            continue
        name, known_valid = (doctype, False) if doctype else detected_type(value, validator)
        if name is None:
            yield (
                source,
                None,
                [
                    Finding(
                        "$",
                        "doctype_unknown",
                        "the document matches no document type",
                        "pass --doctype, or check it is one of `session-contracts doctypes`",
                    )
                ],
            )
            continue
        # A document detected by its validity (a tie between types) is known valid.
        findings = (
            [] if known_valid else validator._validate_fast(name, value, may_hold_integral_float)
        )
        if not findings:
            findings = verify_document(name, value, parsed=True)
        findings += screened_secret_findings(value, screen, raw, memo)
        yield source, name, findings
