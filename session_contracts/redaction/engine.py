"""Secret redaction and scanning: the pure core.

Public text (prompts, assistant text, tool output, summaries) goes through a
:class:`RedactionPolicy` before it reaches a snapshot.  The same detectors
redact (:func:`redact_text`, :func:`redact_value`) and scan
(:func:`scan_value`), so a conformance run can check a producer's output with
the very rules the producer should have applied.

Two guarantees shape the code:

* Nothing this module returns holds a secret it found.  A :class:`Detection`
  records a kind and a position, a finding a kind and a JSON path whose keys
  are themselves redacted (gitleaks once printed the secret it meant to hide:
  gitleaks#1243).
* Redaction is idempotent.  Markers already in a text are never scanned, and
  :func:`redact_text` repeats its pass over the text left between markers
  until nothing new turns up, so redacting its output changes nothing.

A policy has one of two styles.  A *pattern policy* (the default,
``redaction-policy.default.json``) is Harn's: named patterns in the Rust-regex
dialect applied in catalog order, each match replaced by a placeholder such as
``<redacted:NAME:LEN>``, plus Harn's standalone-URL step and its sensitive JSON
keys (:mod:`session_contracts.redaction.harn`).  A *detector policy*
(``redaction-policy.extended.json``) is ours: detectors, key-entropy rules,
views, and ``[REDACTED:kind]`` markers.  Every pattern of either style is in
the portable dialect (:mod:`session_contracts.redaction.dialect`), read with
the dialect's meaning (:mod:`session_contracts.redaction.rust_regex`); docs/redaction.md
specifies both algorithms step by step.

Reading a policy file is I/O and lives in :mod:`session_contracts.redaction.policy`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Final

from session_contracts.errors import Finding, UsageError, json_path
from session_contracts.redaction.dialect import OUTSIDE_DIALECT, dialect_findings
from session_contracts.redaction.harn import (
    CompiledPattern,
    NameRule,
    compile_pattern,
    redact_url_string,
    scan_patterns,
    utf8_length,
)
from session_contracts.redaction.rust_regex import WHITE_SPACE, DialectError, translate

__all__ = [
    "CHARSETS",
    "DEFAULT_MARKER",
    "POLICY_INVALID",
    "SECRET_FOUND",
    "SENSITIVE_KEY_KIND",
    "URL_KIND",
    "Detection",
    "Detector",
    "EntropyThreshold",
    "KeyEntropyDetector",
    "NameRule",
    "NamedPattern",
    "RedactionPolicy",
    "RedactionResult",
    "RegexDetector",
    "holds_secret",
    "policy_problems",
    "redact_text",
    "redact_value",
    "scan_text",
    "scan_value",
    "shannon_entropy",
]

DEFAULT_MARKER = "[REDACTED:<kind>]"
KIND_PLACEHOLDER = "<kind>"
# A pattern policy's placeholder template names the pattern and the UTF-8 byte
# length of what it replaced.
NAME_FIELD = "{name}"
LEN_FIELD = "{len}"
# The kinds a pattern policy reports besides its pattern names.
SENSITIVE_KEY_KIND = "sensitive_key"
URL_KIND = "url_credentials"
SECRET_FOUND = "redaction_secret_found"
POLICY_INVALID = "redaction_policy_invalid"

_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
CHARSETS: Mapping[str, frozenset[str] | None] = MappingProxyType(
    {
        "hex": frozenset("0123456789abcdefABCDEF"),
        "base64": _BASE64_ALPHABET,
        "printable": frozenset(chr(code) for code in range(0x21, 0x7F)),
        "any": None,  # every character
    }
)
_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")

# In text, a key-entropy detector looks at `key: value`, `key=value`,
# `"key": "value"` (also with JSON-escaped quotes) and `key := value`.  Keys are
# checked against the detector's key pattern afterwards, so one compiled
# expression serves every detector.  The key is bounded and must start a word,
# which keeps the scan linear.
# Unicode White_Space, spelled out (Python's \s also holds U+001C..U+001F).
_SPACE = "".join(f"\\u{ord(c):04x}" for c in sorted(WHITE_SPACE))
ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,63})"
    r"\\?[\"']?[ \t]*(?::=|=>|:(?!:)|=(?!=))[ \t]*"
    r"(?:\\?(?P<q>[\"']))?"
    r"(?P<value>(?(q)(?:[^\"'\\\r\n]|\\(?![\"']))+|[^" + _SPACE + r"\"'\\,;&<>(){}\[\]`]+))"
)

# An unquoted value this long at most, holding a separator, may hold the next pair.
_CHAIN_VALUE_MAX = 128

# -- policy ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegexDetector:
    """Redacts every match of ``pattern`` (or only its ``group``: a group number, or
    several, of which the first that took part in the match)."""

    id: str
    pattern: str
    group: int | tuple[int, ...] = 0
    ignore_case: bool = False
    enabled: bool = True
    description: str = ""


@dataclass(frozen=True, slots=True)
class EntropyThreshold:
    """A value of ``charset`` characters is a secret from ``min_entropy`` bits a character."""

    charset: str
    min_entropy: float


@dataclass(frozen=True, slots=True)
class KeyEntropyDetector:
    """Redacts a random-looking value under a key whose name matches ``key_pattern``."""

    id: str
    key_pattern: str
    charsets: tuple[EntropyThreshold, ...]
    min_length: int = 16
    enabled: bool = True
    description: str = ""


Detector = RegexDetector | KeyEntropyDetector


@dataclass(frozen=True, slots=True)
class NamedPattern:
    """A pattern policy's pattern: its name (in placeholders and findings) and its
    Rust-regex text; ``source`` says where it comes from."""

    name: str
    pattern: str
    enabled: bool = True
    source: str = ""

    @property
    def id(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class RedactionPolicy:
    """What to redact and how to mark it: a detector policy (``detectors``) or,
    when ``placeholder`` is set, a pattern policy (``patterns`` and the rest)."""

    detectors: tuple[Detector, ...] = ()
    marker: str = DEFAULT_MARKER
    placeholders: tuple[str, ...] = ()
    # -- pattern policies (Harn's style)
    patterns: tuple[NamedPattern, ...] = ()
    placeholder: str = ""
    sensitive_keys: NameRule | None = None
    key_placeholder: str = "[redacted]"
    url_params: NameRule | None = None  # None: no URL step
    url_placeholder: str = "[redacted]"
    window_bytes: int = 256 * 1024
    window_overlap_bytes: int = 8 * 1024
    # Policies key the caches of compiled patterns and screens, looked up once per
    # string redacted: the hash of the whole policy (every detector) is kept.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash(tuple(getattr(self, item.name) for item in fields(self) if item.compare))
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def pattern_style(self) -> bool:
        """Whether this is a pattern policy (Harn's algorithm)."""
        return bool(self.placeholder)

    @property
    def kinds(self) -> tuple[str, ...]:
        if self.pattern_style:
            return tuple(pattern.name for pattern in self.patterns)
        return tuple(detector.id for detector in self.detectors)

    def marker_for(self, kind: str, matched: str = "") -> str:
        """What replaces ``matched`` when ``kind`` finds it."""
        if not self.pattern_style:
            return self.marker.replace(KIND_PLACEHOLDER, kind)
        if kind == SENSITIVE_KEY_KIND:
            return self.key_placeholder
        return self.placeholder.replace(NAME_FIELD, kind).replace(
            LEN_FIELD, str(utf8_length(matched))
        )

    @property
    def whole_value_markers(self) -> frozenset[str]:
        """The markers that replace a whole string value on account of its key."""
        if self.pattern_style:
            return frozenset({self.key_placeholder})
        return frozenset(self.marker_for(kind) for kind in self.kinds)

    def disable(self, *kinds: str) -> RedactionPolicy:
        """The same policy with the detectors of ``kinds`` turned off."""
        unknown = sorted(set(kinds) - set(self.kinds))
        if unknown:
            raise UsageError(
                [
                    Finding(
                        "$.detectors",
                        POLICY_INVALID,
                        f"the policy has no detector {', '.join(unknown)}",
                        f"known detectors: {', '.join(self.kinds)}",
                    )
                ]
            )
        if self.pattern_style:
            return replace(
                self,
                patterns=tuple(
                    replace(pattern, enabled=False) if pattern.name in kinds else pattern
                    for pattern in self.patterns
                ),
            )
        return replace(
            self,
            detectors=tuple(
                replace(detector, enabled=False) if detector.id in kinds else detector
                for detector in self.detectors
            ),
        )


def _effective(pattern: str, ignore_case: bool) -> str:
    """The pattern as the engine reads it: ``ignore_case`` is a leading ``(?i)``."""
    return f"(?i){pattern}" if ignore_case and not pattern.startswith("(?i") else pattern


def _regex_problem(pattern: str, ignore_case: bool, where: str) -> Finding | None:
    """A pattern outside the portable dialect (docs/redaction.md), as a finding."""
    findings = dialect_findings(_effective(pattern, ignore_case), where)
    if findings:
        return findings[0]
    try:
        translate(_effective(pattern, ignore_case))
    except DialectError as exc:  # pragma: no cover - the dialect is a subset
        return Finding(where, OUTSIDE_DIALECT, f"the pattern is outside the dialect: {exc}")
    return None


def _group_count(pattern: str) -> int:
    return re.compile(translate(pattern)).groups


def _pattern_policy_problems(policy: RedactionPolicy) -> list[Finding]:
    problems: list[Finding] = []
    template = policy.placeholder
    if template.count(NAME_FIELD) > 1 or template.count(LEN_FIELD) > 1:
        problems.append(
            Finding(
                "$.placeholder",
                POLICY_INVALID,
                f"the placeholder may hold {NAME_FIELD} and {LEN_FIELD} once each",
                "for example <redacted:{name}:{len}>",
            )
        )
    if not 0 < policy.window_overlap_bytes < policy.window_bytes:
        problems.append(
            Finding(
                "$.window.overlap_bytes",
                POLICY_INVALID,
                "the window overlap must be positive and smaller than the window",
                "Harn scans 262144-byte windows that overlap by 8192 bytes",
            )
        )
    problems += _name_problems([pattern.name for pattern in policy.patterns], "patterns")
    for index, pattern in enumerate(policy.patterns):
        where: list[str | int] = ["patterns", index]
        outside = dialect_findings(pattern.pattern, json_path([*where, "pattern"]))
        if outside:
            problems += outside
            continue
        try:
            compile_pattern(pattern.name, pattern.pattern)
        except DialectError as exc:
            problems.append(
                Finding(
                    json_path([*where, "pattern"]),
                    POLICY_INVALID,
                    f"the pattern is outside the Rust-regex dialect: {exc}",
                    "see docs/redaction.md, section 'The pattern dialect'",
                )
            )
    return problems


# Per section of names: the member that holds a name, what a name is called, and what
# shows it besides findings.
_NAMED_SECTIONS: Final = {
    "patterns": ("name", "pattern name", "placeholders"),
    "detectors": ("id", "detector id", "markers"),
}


def _name_problems(names: Sequence[str], section: str) -> list[Finding]:
    """Each name well formed (``_KIND``) and used once: placeholders, markers and
    findings name a pattern or detector by it."""
    member, noun, shown_in = _NAMED_SECTIONS[section]
    problems: list[Finding] = []
    seen: set[str] = set()
    for index, name in enumerate(names):
        where = json_path([section, index, member])
        if not _KIND.fullmatch(name):
            problems.append(
                Finding(
                    where,
                    POLICY_INVALID,
                    f"{name!r} is not a {noun}",
                    f"a {member} is lower case letters, digits and underscores, starting with "
                    "a letter",
                )
            )
        if name in seen:
            problems.append(
                Finding(
                    where,
                    POLICY_INVALID,
                    f"the {noun} {name!r} is used twice",
                    f"each needs its own {member}: {shown_in} and findings name it",
                )
            )
        seen.add(name)
    return problems


def policy_problems(policy: RedactionPolicy) -> list[Finding]:
    """What makes ``policy`` unusable, each located by the path in its policy file."""
    if policy.pattern_style:
        return _pattern_policy_problems(policy)
    problems: list[Finding] = []
    if policy.marker.count(KIND_PLACEHOLDER) != 1:
        problems.append(
            Finding(
                "$.marker",
                POLICY_INVALID,
                f"the marker must hold {KIND_PLACEHOLDER} exactly once",
                f"for example {DEFAULT_MARKER}",
            )
        )
    for index, placeholder in enumerate(policy.placeholders):
        problem = _regex_problem(placeholder, False, json_path(["placeholders", index]))
        if problem:
            problems.append(problem)
    problems += _name_problems([detector.id for detector in policy.detectors], "detectors")
    for index, detector in enumerate(policy.detectors):
        where: list[str | int] = ["detectors", index]
        if isinstance(detector, RegexDetector):
            problem = _regex_problem(
                detector.pattern, detector.ignore_case, json_path([*where, "pattern"])
            )
            if problem:
                problems.append(problem)
                continue
            groups = _group_count(_effective(detector.pattern, detector.ignore_case))
            wanted = detector.group if isinstance(detector.group, tuple) else (detector.group,)
            if not wanted or any(not 0 <= group <= groups for group in wanted):
                problems.append(
                    Finding(
                        json_path([*where, "group"]),
                        POLICY_INVALID,
                        f"the pattern has no group {detector.group!r}",
                        "give a group number the pattern defines (or a list of them), or 0 for "
                        "the whole match",
                    )
                )
        else:
            problem = _regex_problem(detector.key_pattern, True, json_path([*where, "key_pattern"]))
            if problem:
                problems.append(problem)
            if detector.min_length < 1:
                problems.append(
                    Finding(
                        json_path([*where, "min_length"]),
                        POLICY_INVALID,
                        "min_length must be at least 1",
                    )
                )
            if not detector.charsets:
                problems.append(
                    Finding(
                        json_path([*where, "charsets"]),
                        POLICY_INVALID,
                        "a key-entropy detector needs at least one character set",
                    )
                )
            for number, threshold in enumerate(detector.charsets):
                if threshold.charset not in CHARSETS:
                    problems.append(
                        Finding(
                            json_path([*where, "charsets", number, "charset"]),
                            POLICY_INVALID,
                            f"unknown character set {threshold.charset!r}",
                            f"use one of {', '.join(CHARSETS)}",
                        )
                    )
    return problems


# -- compiled form --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _CompiledRegex:
    kind: str
    regex: re.Pattern[str]
    groups: tuple[int, ...]

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        """The span of the first of the detector's groups that took part in ``match``."""
        for group in self.groups:
            start, end = match.span(group)
            if start >= 0:
                return start, end
        return 0, 0


@dataclass(frozen=True, slots=True)
class _CompiledKey:
    kind: str
    key: re.Pattern[str]
    min_length: int
    charsets: tuple[tuple[frozenset[str] | None, float], ...]

    def is_secret(self, value: str) -> bool:
        if len(value) < self.min_length:
            return False
        characters = set(value)
        for alphabet, min_entropy in self.charsets:
            if alphabet is None or characters <= alphabet:
                return shannon_entropy(value) >= min_entropy
        return False


@dataclass(frozen=True, slots=True)
class _Compiled:
    policy: RedactionPolicy
    detectors: tuple[_CompiledRegex | _CompiledKey, ...]
    placeholders: tuple[re.Pattern[str], ...]
    marker: re.Pattern[str]

    def is_placeholder(self, value: str) -> bool:
        return any(p.fullmatch(value) for p in self.placeholders)


# A pattern's leading left boundary, (?:^|[^X]) as translated.  Python's engine
# cannot skip ahead to a literal past an alternation, and reads every position
# of the text ten times slower; a look-behind (?<![X]) lets it.  The two differ
# only when a match's boundary character is the last one the previous match of
# the same pattern consumed, and the pieces between detections are scanned
# again (see _detect_text), where the consumed character is the piece's first.
_LEADING_BOUNDARY = re.compile(r"\(\?:\\A\|\[\^((?:\\.|[^\]\\])*)\]\)")


def _python_regex(translated: str) -> re.Pattern[str]:
    boundary = _LEADING_BOUNDARY.match(translated)
    if boundary is not None:
        translated = f"(?<![{boundary[1]}]){translated[boundary.end() :]}"
    return re.compile(translated)


@lru_cache(maxsize=32)
def _compile(policy: RedactionPolicy) -> _Compiled:
    problems = policy_problems(policy)
    if problems:
        raise UsageError(problems)
    detectors: list[_CompiledRegex | _CompiledKey] = []
    for detector in policy.detectors:
        if not detector.enabled:
            continue
        if isinstance(detector, RegexDetector):
            detectors.append(
                _CompiledRegex(
                    detector.id,
                    _python_regex(translate(_effective(detector.pattern, detector.ignore_case))),
                    detector.group if isinstance(detector.group, tuple) else (detector.group,),
                )
            )
        else:
            detectors.append(
                _CompiledKey(
                    detector.id,
                    re.compile(translate(_effective(detector.key_pattern, True))),
                    detector.min_length,
                    tuple((CHARSETS[t.charset], t.min_entropy) for t in detector.charsets),
                )
            )
    # Markers of every kind the policy knows, enabled or not, are left alone.
    # Only known kinds count: "[REDACTED:hunter2]" is not a marker.
    prefix, _, suffix = policy.marker.partition(KIND_PLACEHOLDER)
    kinds = "|".join(re.escape(kind) for kind in sorted(policy.kinds, key=len, reverse=True))
    marker = re.compile(f"{re.escape(prefix)}(?:{kinds or '(?!)'}){re.escape(suffix)}")
    return _Compiled(
        policy,
        tuple(detectors),
        tuple(re.compile(translate(p)) for p in policy.placeholders),
        marker,
    )


# -- results --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Detection:
    """A secret found at ``text[start:end]``: what kind and where, never the secret."""

    kind: str
    start: int
    end: int
    # What took its place in the redacted text ("" when the caller did not redact).
    replacement: str = ""


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text and what was found in the input text."""

    text: str
    detections: tuple[Detection, ...]

    @property
    def changed(self) -> bool:
        return bool(self.detections)


# -- detection ------------------------------------------------------------------


def shannon_entropy(value: str) -> float:
    """Bits of information per character, from the string's own character counts."""
    if not value:
        return 0.0
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in Counter(value).values())


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    order: int
    kind: str


def _assignments(segment: str) -> Iterator[re.Match[str]]:
    """Every ``key: value`` pair, overlapping ones included: in ``Note: signing_key:
    "v"`` the first pair's value is the second pair's key, and a scan that went on
    after the first pair's end would never see the second."""
    position = 0
    while (match := ASSIGNMENT.search(segment, position)) is not None:
        yield match
        # Go back to the value's first character when it is quoted (a quoted
        # value may hold the next pair: `A:" signing_key: "v"`, whose first
        # pair's value is ` signing_key: `) or is unquoted, holds a separator
        # and is at most 128 characters long (`A:A:signing_key: "v"`).  The scan
        # stays linear: a quoted value ends at the next quote, so quoted values
        # never nest, and a long unquoted value like "a:a:a:..." is not gone
        # back into, so a character is read again by at most 64 pairs.
        value = match["value"]
        chained = match["q"] is not None or (
            len(value) <= _CHAIN_VALUE_MAX and ("=" in value or ":" in value)
        )
        position = match.start("value") if chained else match.end()


def _hits_in(segment: str, compiled: _Compiled, key: str | None) -> Iterator[_Hit]:
    for order, detector in enumerate(compiled.detectors):
        if isinstance(detector, _CompiledRegex):
            for match in detector.regex.finditer(segment):
                start, end = detector.span(match)
                if start < end:
                    yield _Hit(start, end, order, detector.kind)
            continue
        for match in _assignments(segment):
            if detector.key.search(match["key"]) and detector.is_secret(match["value"]):
                start, end = match.span("value")
                yield _Hit(start, end, order, detector.kind)
        # In a JSON document the object key is the context: the string (or
        # what is left of it between markers) is the value.
        if key is not None and detector.key.search(key) and detector.is_secret(segment):
            yield _Hit(0, len(segment), order, detector.kind)


def _detect_segment(segment: str, compiled: _Compiled, key: str | None) -> list[Detection]:
    """Overlapping hits become one detection: a secret is never left half-covered.

    The detection is named after the hit that starts first, then the longest,
    then the detector listed first, so a specific kind wins over a generic one.
    """
    hits = sorted(
        (
            hit
            for hit in _hits_in(segment, compiled, key)
            if not compiled.is_placeholder(segment[hit.start : hit.end])
        ),
        key=lambda hit: (hit.start, -hit.end, hit.order),
    )
    merged: list[Detection] = []
    for hit in hits:
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Detection(last.kind, last.start, max(last.end, hit.end))
        else:
            merged.append(Detection(hit.kind, hit.start, hit.end))
    return merged


def _gaps(blocked: Sequence[tuple[int, int]], length: int) -> Iterator[tuple[int, int]]:
    """The stretches of ``range(length)`` outside the sorted, disjoint ``blocked`` spans."""
    position = 0
    for start, end in blocked:
        if start > position:
            yield position, start
        position = max(position, end)
    if position < length:
        yield position, length


# -- views ----------------------------------------------------------------------
#
# Detector patterns read a key, a separator and a value.  Two ways of writing
# such a pair hide it from them, so the detectors also read a *view* of the
# text with some characters left out, and what they find there is mapped back:
#
# * JSON text inside JSON text: each level of encoding doubles the backslashes
#   before a quote (`\"key\": \"v\"` once, `\\\"key\\\": ...` twice).  Patterns
#   allow one optional backslash before a quote, so the view keeps only the last
#   backslash of each run before a quote, whatever the depth of encoding.
# * A key chain, `password: value: "v"`: the pattern takes the second key for
#   the value, and the real value after it survives.  A key-like token that
#   directly follows a separator and a blank, and is itself followed by a
#   separator, is left out of the view (`password: "v"`).
#
# A view only removes characters.  What it brings together is a backslash and
# a quote, or a separator and blanks and a value; so a literal without a
# backslash, without a separator followed by a blank, and not starting with
# blanks followed by more, is in the view only if it is in the text.  No literal of
# the default policy has one (tests/cli/test_check_captured.py checks this), which
# keeps the literal gates of the recap's redaction and of `check` exact.
_ESCAPED_QUOTE_RUN = re.compile(r"\\{2,}(?=[\"'])")
_KEY_CHAIN_LINK = re.compile(
    # The separator and blanks before a link are matched, the link only looked at,
    # so that the next search starts at the link and finds the one after it.
    r"[:=][ \t]+"
    r"(?=(?P<link>[A-Za-z_][A-Za-z0-9_.-]{0,63}[ \t]*(?::(?![:/])|=(?![=>]))[ \t]*)[^"
    + _SPACE
    + "])"
)


def _views(text: str) -> list[tuple[str, list[int]]]:
    """The views of ``text``, each with where its characters are in ``text``: the
    text without escape runs (the *escape view*), then the text without escape
    runs and chain links (the *chain view*); a view that leaves nothing out, or
    the same as the one before it, is not read.

    Both are needed: in ``Error: signing_key: \\\"v\\\"`` (JSON inside JSON inside
    JSON) only the escape view brings the key and its quoted value together, and
    the chain view has left out the key itself.
    """
    escapes: list[tuple[int, int]] = []
    links: list[tuple[int, int]] = []
    if "\\\\" in text:
        escapes = [(m.start(), m.end() - 1) for m in _ESCAPED_QUOTE_RUN.finditer(text)]
    if ":" in text or "=" in text:
        links = [m.span("link") for m in _KEY_CHAIN_LINK.finditer(text)]
    views: list[tuple[str, list[int]]] = []
    for left_out in (escapes, sorted(escapes + links) if links else []):
        if not left_out:
            continue
        pieces: list[str] = []
        origin: list[int] = []
        for start, end in _gaps(left_out, len(text)):
            pieces.append(text[start:end])
            origin.extend(range(start, end))
        views.append(("".join(pieces), origin))
    return views


def _detect(text: str, compiled: _Compiled, key: str | None = None) -> list[Detection]:
    """Detections in ``text`` and in its views (see above), skipping markers.

    A detection in a view covers, in ``text``, everything from its first to its
    last character; overlapping detections become one, named as in
    :func:`_detect_segment`.
    """
    found = _detect_text(text, compiled, key)
    mapped = [
        Detection(d.kind, origin[d.start], origin[d.end - 1] + 1)
        for seen, origin in _views(text)
        for d in _detect_text(seen, compiled, key)
    ]
    if not mapped:
        return found
    order = {kind: index for index, kind in enumerate(compiled.policy.kinds)}
    merged: list[Detection] = []
    for detection in sorted([*found, *mapped], key=lambda d: (d.start, -d.end, order[d.kind])):
        if merged and detection.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Detection(last.kind, last.start, max(last.end, detection.end))
        else:
            merged.append(detection)
    return merged


def _detect_text(text: str, compiled: _Compiled, key: str | None) -> list[Detection]:
    """Detections in ``text`` itself, skipping the markers already in it."""
    found: list[Detection] = []
    markers = [match.span() for match in compiled.marker.finditer(text)]
    pending = list(_gaps(markers, len(text)))
    # A detection cuts a piece of text in two, and each part read on its own
    # can reveal what its neighbour hid (a look-behind that failed on the
    # secret's last character now sees the start of a string).  Redacting the
    # output would then change it again; so the parts are read again until a
    # pass finds nothing.  Parts only shrink, so this ends; in practice the
    # second pass reads a few short parts and finds nothing.
    # Repetitive text cuts into many equal parts; read each distinct part once.
    memo: dict[str, list[Detection]] = {}
    while pending:
        next_pending: list[tuple[int, int]] = []
        for start, end in pending:
            segment = text[start:end]
            if segment not in memo:
                memo[segment] = _detect_segment(segment, compiled, key)
            position = start
            for detection in memo[segment]:
                found.append(
                    Detection(detection.kind, start + detection.start, start + detection.end)
                )
                if start + detection.start > position:
                    next_pending.append((position, start + detection.start))
                position = start + detection.end
            if start < position < end:
                next_pending.append((position, end))
        pending = next_pending
    return sorted(found, key=lambda detection: (detection.start, detection.end))


def _apply(text: str, detections: Sequence[Detection], policy: RedactionPolicy) -> str:
    pieces: list[str] = []
    position = 0
    markers: dict[str, str] = {}
    for detection in detections:
        pieces.append(text[position : detection.start])
        marker = markers.get(detection.kind)
        if marker is None:
            marker = markers[detection.kind] = policy.marker_for(detection.kind)
        pieces.append(marker)
        position = detection.end
    pieces.append(text[position:])
    return "".join(pieces)


# -- pattern policies -------------------------------------------------------------


@lru_cache(maxsize=32)
def _compile_patterns(policy: RedactionPolicy) -> tuple[CompiledPattern, ...]:
    problems = policy_problems(policy)
    if problems:
        raise UsageError(problems)
    return tuple(compile_pattern(p.name, p.pattern) for p in policy.patterns if p.enabled)


# Policies by identity: hashing a whole frozen policy on every string was a third
# of a recap's time.  The entry keeps the policy alive, so its id is not reused.
_PATTERNS_BY_IDENTITY: dict[int, tuple[RedactionPolicy, tuple[CompiledPattern, ...]]] = {}


def patterns_of(policy: RedactionPolicy) -> tuple[CompiledPattern, ...]:
    hit = _PATTERNS_BY_IDENTITY.get(id(policy))
    if hit is not None and hit[0] is policy:
        return hit[1]
    patterns = _compile_patterns(policy)
    if len(_PATTERNS_BY_IDENTITY) >= 64:
        _PATTERNS_BY_IDENTITY.clear()
    _PATTERNS_BY_IDENTITY[id(policy)] = (policy, patterns)
    return patterns


def _harn_string(text: str, policy: RedactionPolicy) -> tuple[str, tuple[Detection, ...]]:
    """Harn's ``redact_string``: the standalone-URL step, then the patterns.

    A URL whose credentials or sensitive query parameters were removed is one
    detection of kind ``url_credentials`` over the whole string; otherwise each
    placeholder is one detection, over the input characters it stands for (of
    the URL's serialization, when that alone changed the string).
    """
    patterns = patterns_of(policy)
    target = text
    url_detections: tuple[Detection, ...] = ()
    if policy.url_params is not None:
        url_text, removed = redact_url_string(text, policy.url_params, policy.url_placeholder)
        if url_text is not None:
            target = url_text
            if removed:
                url_detections = (Detection(URL_KIND, 0, len(text), url_text),)
    out, claims = scan_patterns(
        target, patterns, policy.marker_for, policy.window_bytes, policy.window_overlap_bytes
    )
    if url_detections:
        return out, url_detections
    return out, tuple(Detection(c.name, c.start, c.end, c.replacement) for c in claims)


def _harn_value(node: Any, policy: RedactionPolicy) -> Any:
    """Harn's ``redact_json``: a sensitive key's value (of any type) becomes the key
    placeholder; every other string goes through :func:`_harn_string`."""
    if isinstance(node, str):
        return _harn_string(node, policy)[0]
    if isinstance(node, dict):
        rule = policy.sensitive_keys
        return {
            key: policy.key_placeholder
            if rule is not None and isinstance(key, str) and rule.matches(key)
            else _harn_value(item, policy)
            for key, item in node.items()
        }
    if isinstance(node, list):
        return [_harn_value(item, policy) for item in node]
    return node


def detections_in(text: str, policy: RedactionPolicy, key: str | None = None) -> list[Detection]:
    """What ``policy`` finds in ``text`` under the object key ``key``."""
    if policy.pattern_style:
        # Harn's scan (find_unredacted_secret) reads strings only, never keys.
        return list(_harn_string(text, policy)[1])
    return list(_with_markers(_detect(text, _compile(policy), key), policy))


def _scrubbed(text: str, policy: RedactionPolicy) -> str:
    return redact_text(text, policy).text


def redact_text(text: str, policy: RedactionPolicy) -> RedactionResult:
    """Replace every secret ``policy`` finds in ``text`` with its marker or placeholder."""
    if policy.pattern_style:
        out, detections = _harn_string(text, policy)
        return RedactionResult(out, detections)
    compiled = _compile(policy)
    found = _detect(text, compiled)
    return RedactionResult(_apply(text, found, policy), _with_markers(found, policy))


def _with_markers(found: Sequence[Detection], policy: RedactionPolicy) -> tuple[Detection, ...]:
    markers = {kind: policy.marker_for(kind) for kind in {d.kind for d in found}}
    return tuple(Detection(d.kind, d.start, d.end, markers[d.kind]) for d in found)


def redact_value(value: Any, policy: RedactionPolicy) -> Any:
    """A copy of a JSON value with every string redacted; object keys are kept as they are.

    Pattern policy (Harn's): the value under a sensitive key (``api_key``,
    ``clientSecret``, anything ending in ``token``, ...) becomes the key
    placeholder whatever its type.  Detector policy: a string under a key naming
    a secret is replaced whole by a marker when it is random enough for one of
    the policy's key-entropy detectors.
    """
    if policy.pattern_style:
        _compile_patterns(policy)
        return _harn_value(value, policy)
    compiled = _compile(policy)
    return _redact_node(value, None, compiled)


def _redact_node(node: Any, key: str | None, compiled: _Compiled) -> Any:
    if isinstance(node, str):
        return _apply(node, _detect(node, compiled, key), compiled.policy)
    if isinstance(node, dict):
        return {
            k: _redact_node(item, k if isinstance(k, str) else None, compiled)
            for k, item in node.items()
        }
    if isinstance(node, list):
        return [_redact_node(item, None, compiled) for item in node]
    return node


_SCAN_HINT = (
    "redact public text through the active redaction policy before it reaches the "
    "snapshot; raw logs, private prompts and credentials do not belong here"
)


def _finding(path: str, detection: Detection, where: str) -> Finding:
    return Finding(
        path,
        SECRET_FOUND,
        f"{where} holds a secret of kind {detection.kind} "
        f"(characters {detection.start} to {detection.end})",
        _SCAN_HINT,
    )


def scan_text(text: str, policy: RedactionPolicy, path: str = "$") -> list[Finding]:
    """One finding per secret in ``text``, located at ``path``; never quoting the secret."""
    return [_finding(path, d, "the string") for d in detections_in(text, policy)]


def holds_secret(text: str, policy: RedactionPolicy, key: str | None = None) -> bool:
    """Whether :func:`scan_value` reports ``text`` when it meets it as a string under the
    object key ``key`` (None: an object key, an array item or the whole value)."""
    return bool(detections_in(text, policy, key))


def scan_value(value: Any, policy: RedactionPolicy) -> list[Finding]:
    """One finding per secret in a JSON value, located by JSON path.

    Object keys are scanned too.  A path is built from keys that are redacted
    first, so a secret used as a key is reported without being repeated.  Under
    a pattern policy a string holds a secret when a pattern (or the URL step)
    would redact something in it; a sensitive key's value is not a finding by
    itself, as in Harn's own share gate.
    """
    findings: list[Finding] = []
    stack: list[tuple[Any, str | None, list[str | int]]] = [(value, None, [])]
    while stack:
        node, key, parts = stack.pop()
        path = json_path(parts)
        if isinstance(node, str):
            findings.extend(
                _finding(path, d, "the string") for d in detections_in(node, policy, key)
            )
        elif isinstance(node, dict):
            children: list[tuple[Any, str | None, list[str | int]]] = []
            for child_key, item in node.items():
                if not isinstance(child_key, str):
                    children.append((item, None, [*parts, str(child_key)]))
                    continue
                scrubbed = detections_in(child_key, policy)
                findings.extend(_finding(path, d, "an object key") for d in scrubbed)
                safe_key = _scrubbed(child_key, policy) if scrubbed else child_key
                children.append((item, child_key, [*parts, safe_key]))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(
                (item, None, [*parts, index]) for index, item in reversed(list(enumerate(node)))
            )
    return findings
