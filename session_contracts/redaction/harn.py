"""Harn's redaction algorithm: named patterns in catalog order, URLs, sensitive keys.

This is the engine of a *pattern policy* (docs/redaction.md, part 1, states
each step; burin-labs/harn ``crates/harn-vm/src/redact/`` is where Harn
implements it).  It works on plain values (compiled patterns, name rules) so
that :mod:`session_contracts.redaction.engine` can build its results on top.

Positions are Python string indices; lengths in placeholders and the window
arithmetic are UTF-8 bytes, as in Harn.  A lone surrogate (which a Rust string
cannot hold) counts as its three-byte ``surrogatepass`` encoding.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from session_contracts.redaction.rust_regex import (
    WHITE_SPACE,
    fast_text,
    re2_exact_everywhere,
    translate,
)

__all__ = [
    "Claim",
    "CompiledPattern",
    "NameRule",
    "compile_pattern",
    "redact_url_string",
    "scan_patterns",
]


def utf8_length(text: str) -> int:
    if text.isascii():  # a byte a character, and no megabyte copy to count them
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class NameRule:
    """Which names are sensitive: after ASCII lower-casing and dropping ``ignore``
    characters, a name equal to one of ``exact`` or ending with one of ``suffixes``."""

    exact: frozenset[str]
    suffixes: tuple[str, ...]
    ignore: str = "_-"

    def matches(self, name: str) -> bool:
        compact = _compact_name(name, self.ignore)
        return compact in self.exact or compact.endswith(self.suffixes)


@lru_cache(maxsize=4096)
def _compact_name(name: str, ignore: str) -> str:
    """``name`` ASCII-lowercased without the ``ignore`` characters (object keys repeat:
    each is worked out once)."""
    compact = _ascii_lower(name)
    if ignore:
        compact = compact.translate(dict.fromkeys(map(ord, ignore)))
    return compact


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A named pattern, in the two Python spellings of :func:`translate`."""

    name: str
    source: str  # the Rust-regex text

    def regex_for(self, text: str) -> _Regex:
        """The fastest engine that means, on ``text``, what Rust's ``regex`` means."""
        if text.isascii() or re2_exact_everywhere(self.source):
            return _compiled(self.source, "re2")
        return _compiled(self.source, "python-fast" if fast_text(text) else "python")


class _Regex(Protocol):
    def finditer(self, text: str) -> Iterator[_Match]: ...


class _Match(Protocol):
    def start(self) -> int: ...

    def end(self) -> int: ...

    def span(self) -> tuple[int, int]: ...


@lru_cache(maxsize=256)
def _compiled(source: str, target: str) -> _Regex:
    if target == "re2":
        import re2  # type: ignore[import-untyped, unused-ignore]

        options = re2.Options()
        options.max_mem = 64 << 20  # the catalog's counted repetitions need more than 8 MiB
        compiled: _Regex = re2.compile(translate(source, "re2"), options)
        return compiled
    return re.compile(translate(source, target))


def compile_pattern(name: str, source: str) -> CompiledPattern:
    """Check ``source`` against the dialect now (raising DialectError), compile on use."""
    translate(source)
    return CompiledPattern(name, source)


@dataclass(frozen=True, slots=True)
class Claim:
    """``text[start:end]`` of the input was replaced by ``replacement`` (pattern ``name``)."""

    start: int
    end: int
    name: str
    replacement: str


Placeholder = Callable[[str, str], str]  # (name, matched text) -> replacement


# -- patterns ---------------------------------------------------------------------


def scan_patterns(
    text: str,
    patterns: Sequence[CompiledPattern],
    placeholder: Placeholder,
    window_bytes: int,
    overlap_bytes: int,
) -> tuple[str, tuple[Claim, ...]]:
    """The text with every match of every pattern replaced, and what was replaced.

    Up to ``window_bytes`` UTF-8 bytes, the patterns run one after another, each
    over the text the previous ones left (placeholders included); beyond, each
    runs over overlapping windows of the original text and earlier claims win.
    """
    if not text or not patterns:
        return text, ()
    if utf8_length(text) > window_bytes:
        bounds = _window_bounds(text, window_bytes, overlap_bytes)
        return _windowed(text, patterns, placeholder, bounds)
    return _single_pass(text, patterns, placeholder)


@dataclass(slots=True)
class _Span:
    """A placeholder in the current text, and the input range it stands for."""

    start: int
    end: int
    origin_start: int
    origin_end: int
    name: str
    replacement: str


@lru_cache(maxsize=32)
def _ascii_gate(sources: tuple[str, ...]) -> Any:
    """One RE2 alternation of every pattern: on ASCII text it finds a match iff some
    pattern does, so a text it does not match is left as it is without 16 scans."""
    import re2  # type: ignore[import-untyped, unused-ignore]

    options = re2.Options()
    options.max_mem = 256 << 20
    try:
        return re2.compile("|".join(f"(?:{translate(s, 're2')})" for s in sources), options)
    except Exception:  # no gate is always correct, merely slower
        return None


_GATES_BY_IDENTITY: dict[int, tuple[Sequence[CompiledPattern], Any]] = {}


def gate_of(patterns: Sequence[CompiledPattern]) -> Any:
    """``_ascii_gate`` of a pattern list, looked up by the list's identity."""
    hit = _GATES_BY_IDENTITY.get(id(patterns))
    if hit is not None and hit[0] is patterns:
        return hit[1]
    gate = _ascii_gate(tuple(p.source for p in patterns))
    if len(_GATES_BY_IDENTITY) >= 64:
        _GATES_BY_IDENTITY.clear()
    _GATES_BY_IDENTITY[id(patterns)] = (patterns, gate)
    return gate


def gate_finds(gate: Any, text: str) -> bool:
    """``gate.search(text) is not None`` for ASCII ``text``, without the wrapper's
    work for match objects and offsets: one call into RE2 (google-re2, pinned)."""
    compiled = getattr(gate, "_regexp", None)
    if compiled is None:
        return gate.search(text) is not None
    import re2  # type: ignore[import-untyped, unused-ignore]

    spans = compiled.Match(re2._Anchor.UNANCHORED, text.encode("ascii"), 0, len(text))
    return bool(spans[0] != re2._NULL_SPAN)


def _single_pass(
    text: str, patterns: Sequence[CompiledPattern], placeholder: Placeholder
) -> tuple[str, tuple[Claim, ...]]:
    if text.isascii():
        # On ASCII text every pattern runs on RE2 (regex_for), so the union means
        # exactly "some pattern matches the text"; if none does, no replacement
        # happens and no later pattern sees a changed text.
        gate = gate_of(patterns)
        if gate is not None and not gate_finds(gate, text):
            return text, ()
    current = text
    spans: list[_Span] = []  # placeholders in ``current``, in order
    for pattern in patterns:
        matches = [m.span() for m in pattern.regex_for(current).finditer(current)]
        if not matches:
            continue
        pieces: list[str] = []
        kept: list[_Span] = []
        position = 0  # in the current text
        written = 0  # length of the new text so far
        shift = 0  # input position minus current position, past the spans walked
        index = 0
        swallowed = -1  # a span a match ended inside: gone, but still shifts what follows
        for start, end in matches:
            # Spans before this match stay, moved by what the new text gained so far.
            while index < len(spans) and spans[index].end <= start:
                span = spans[index]
                if index != swallowed:
                    kept.append(_moved(span, written - position))
                shift += (span.origin_end - span.origin_start) - (span.end - span.start)
                index += 1
            # A match starting inside a placeholder stands for all of its input.
            inside = index < len(spans) and spans[index].start < start
            origin_start = spans[index].origin_start if inside else start + shift
            # Spans the match reaches into are swallowed by it.
            origin_end = end + shift
            while index < len(spans) and spans[index].start < end:
                span = spans[index]
                if span.end > end:
                    origin_end = span.origin_end
                    swallowed = index
                    break
                shift += (span.origin_end - span.origin_start) - (span.end - span.start)
                origin_end = end + shift
                index += 1
            replacement = placeholder(pattern.name, current[start:end])
            pieces.append(current[position:start])
            written += start - position
            kept.append(
                _Span(
                    written,
                    written + len(replacement),
                    origin_start,
                    origin_end,
                    pattern.name,
                    replacement,
                )
            )
            pieces.append(replacement)
            written += len(replacement)
            position = end
        while index < len(spans):
            if index != swallowed:
                kept.append(_moved(spans[index], written - position))
            index += 1
        pieces.append(current[position:])
        current = "".join(pieces)
        spans = kept
    claims = tuple(Claim(s.origin_start, s.origin_end, s.name, s.replacement) for s in spans)
    return current, claims


def _moved(span: _Span, by: int) -> _Span:
    return _Span(
        span.start + by,
        span.end + by,
        span.origin_start,
        span.origin_end,
        span.name,
        span.replacement,
    )


class _ByteIndex:
    """Character index of a UTF-8 byte offset of one text, for offsets that only grow."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        # ASCII text is its own UTF-8: every offset is a boundary and no copy is made.
        self.data = b"" if self.ascii else text.encode("utf-8", "surrogatepass")
        self.length = len(text) if self.ascii else len(self.data)
        self._byte = 0
        self._char = 0

    def floor(self, offset: int) -> int:
        """The byte offset rounded down to a character boundary."""
        offset = min(offset, self.length)
        if self.ascii:
            return offset
        while 0 < offset < len(self.data) and self.data[offset] & 0xC0 == 0x80:
            offset -= 1
        return offset

    def ceil(self, offset: int) -> int:
        offset = min(offset, self.length)
        if self.ascii:
            return offset
        while offset < len(self.data) and self.data[offset] & 0xC0 == 0x80:
            offset += 1
        return offset

    def char(self, offset: int) -> int:
        if self.ascii:
            return offset
        if offset < self._byte:
            self._byte, self._char = 0, 0
        self._char += len(self.data[self._byte : offset].decode("utf-8", "surrogatepass"))
        self._byte = offset
        return self._char


def _window_bounds(text: str, window_bytes: int, overlap_bytes: int) -> list[tuple[int, int]]:
    """The overlapping windows of ``text``, as character ranges: ``window_bytes`` UTF-8
    bytes each, one after another ``window_bytes - overlap_bytes`` apart, edges moved
    out to character boundaries."""
    step = window_bytes - overlap_bytes
    index = _ByteIndex(text)
    total = index.length
    windows: list[tuple[int, int]] = []
    window_start = 0
    while True:
        first = index.floor(window_start)
        last = index.ceil(min(window_start + window_bytes, total))
        windows.append((first, last))
        if last >= total:
            break
        window_start += step
    starts = _ByteIndex(text)
    ends = _ByteIndex(text)
    return [(starts.char(first), ends.char(last)) for first, last in windows]


def _windowed(
    text: str,
    patterns: Sequence[CompiledPattern],
    placeholder: Placeholder,
    bounds: Sequence[tuple[int, int]],
) -> tuple[str, tuple[Claim, ...]]:
    # Each window is cut once, and an ASCII window in which the union of the
    # patterns finds nothing is dropped: no pattern can match in it (as in
    # _single_pass), so text without secrets costs one RE2 scan, not one a pattern.
    gate = gate_of(patterns)
    windows: list[tuple[int, int, str]] = []
    for first, last in bounds:
        window = text[first:last]
        if gate is None or not window.isascii() or gate_finds(gate, window):
            windows.append((first, last, window))
    # Claims never overlap one another, so sorted by start they are sorted by end
    # too, and one bisection finds the only claims a new match could overlap.
    claims: list[Claim] = []
    claim_starts: list[int] = []
    for pattern in patterns:
        for first, last, window in windows:
            for match in pattern.regex_for(window).finditer(window):
                start, end = first + match.start(), first + match.end()
                # A match touching a cut edge is left to the neighbouring window.
                if (start == first and first != 0) or (end == last and last != len(text)):
                    continue
                # Earlier claims win (and a match seen in two windows is claimed once).
                at = bisect_left(claim_starts, end)
                if at > 0 and claims[at - 1].end > start:
                    continue
                matched = text[start:end]
                claims.insert(
                    at, Claim(start, end, pattern.name, placeholder(pattern.name, matched))
                )
                claim_starts.insert(at, start)
    if not claims:
        return text, ()
    pieces: list[str] = []
    position = 0
    for claim in claims:
        pieces.append(text[position : claim.start])
        pieces.append(claim.replacement)
        position = claim.end
    pieces.append(text[position:])
    return "".join(pieces), tuple(claims)


# -- URLs -------------------------------------------------------------------------

_FORM_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._")


def _form_serialize(text: str) -> str:
    out: list[str] = []
    for byte in text.encode("utf-8", "surrogatepass"):
        if byte in _FORM_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


def _form_decode(piece: str) -> str:
    data = piece.encode("utf-8", "surrogatepass").replace(b"+", b" ")
    decoded = _PERCENT.sub(lambda m: bytes([int(m[1], 16)]), data)
    return decoded.decode("utf-8", "replace")


def _form_pairs(query: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for piece in query.split("&"):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        pairs.append((_form_decode(name), _form_decode(value)))
    return pairs


def redact_url_string(value: str, params: NameRule, placeholder: str) -> tuple[str | None, bool]:
    """Harn's standalone-URL step: ``(new text or None when unchanged, whether a
    credential or a sensitive query parameter was removed)``.

    Only a string starting ``http://`` or ``https://`` whose trimmed form has no
    white space is read.  It is parsed as a WHATWG URL; its user name and
    password are removed, the value of each sensitive query parameter becomes
    ``placeholder``; once anything was removed, the query is re-serialized as
    a form (``application/x-www-form-urlencoded``), and the
    serialized URL replaces the string when it differs from the trimmed one
    (which a parser's normalization alone can make happen).
    """
    if not value.startswith(("http://", "https://")):
        return None, False
    trimmed = value.strip("".join(WHITE_SPACE))
    if any(character in WHITE_SPACE for character in trimmed):
        return None, False
    import ada_url  # type: ignore[import-untyped, unused-ignore]

    try:
        url = ada_url.URL(trimmed)
    except ValueError:
        # Harn re-enters its string redaction here, which recurses without end;
        # we leave the string to the patterns.
        return None, False
    changed = False
    if url.username or url.password:
        url.username = ""
        url.password = ""
        changed = True
    search = url.search
    query = search[1:] if search.startswith("?") else search
    pairs = _form_pairs(query)
    if any(params.matches(name) for name, _ in pairs):
        changed = True
    if changed and pairs:
        # Once anything is removed, the whole query is written again as a form.
        url.search = "&".join(
            f"{_form_serialize(name)}="
            f"{_form_serialize(placeholder if params.matches(name) else item)}"
            for name, item in pairs
        )
    redacted = str(url.href)
    return (None if redacted == trimmed else redacted), changed
