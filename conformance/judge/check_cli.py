"""``session-contracts check``: certify documents a producer already wrote.

Each document's type is detected from the schemas themselves (the members a
document type requires), then the document is validated (schema and x-
rules), its hashes are recomputed, and it is scanned for secrets with the
redaction detectors, behind an exact screen that skips the scan only where it
would find nothing.  JSON Lines are read in 64 KiB blocks and checked one line at
a time, so they go through in bounded memory whatever their size: one line (at most
32 MiB) and one block at a time, plus capped caches and counters (docs/check.md
states and measures the bound).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.hashes.verify import verify_document
from session_contracts.input_files import open_regular_file
from session_contracts.jsontext.strict import (
    MAX_DOCUMENT_BYTES,
    loads_strict,
    loads_strict_noting_floats,
)
from session_contracts.redaction.policy import default_policy
from session_contracts.redaction.screen import (
    ScreenMemo,
    line_may_hold_secret,
    screened_secret_findings,
    secret_screen,
)
from session_contracts.validation.schema_set import SchemaSet
from session_contracts.validation.validator import DocumentValidator, default_validator

__all__ = [
    "CheckStats",
    "check_documents",
    "detect_doctype",
    "read_documents",
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
# characters each (a full table starts afresh), so a stream of ever-new shapes cannot
# grow it.  A shape seen before costs one lookup, its bound is checked once.
_TIED: dict[tuple[DocumentValidator, frozenset[str]], tuple[str, ...]] = {}
_TIED_CAP = 1_024
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
    tied = _TIED.get((validator, keys))
    if tied is None:
        tied = _tied(validator, keys)
        if len(keys) <= _CACHED_KEYS and sum(map(len, keys)) <= _CACHED_KEY_CHARACTERS:
            if len(_TIED) >= _TIED_CAP:
                _TIED.clear()
            _TIED[validator, keys] = tied
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


# Lines are cut from blocks read at once: ``bytes.find`` finds a newline with memchr,
# where ``readline`` looks at each byte (about 2 us of a 3.6 kB recap envelope's 40).
_BLOCK_BYTES = 1 << 16


def _lines(
    handle: BinaryIO,
    limit: int,
    block_bytes: int = _BLOCK_BYTES,
    clean: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[int, bytes | None, bool]]:
    """(line number, line with its newline, whether ``clean`` holds of the whole lines of
    the block it was cut from) one at a time; None for a line of more than ``limit``
    bytes before its newline (skipped, never held whole); False for a line read across
    blocks, or without ``clean``."""
    # read1: what is there, up to a block (a pipe's lines are checked as they come).
    read = getattr(handle, "read1", handle.read)
    number = 0
    # The start of a line a block cuts, in one buffer: a long line's pieces, each kept
    # apart, would stay in the heap once freed (about one more line at the peak).
    head = bytearray()
    oversized = False
    line: bytes | None
    while block := read(block_bytes):
        start = 0
        first = block.find(b"\n") + 1 if head or oversized else 0  # the first whole line
        last = block.rfind(b"\n") + 1  # and the end of the last
        whole_clean = clean is not None and 0 <= first < last and clean(block[first:last])
        while (end := block.find(b"\n", start)) >= 0:
            number += 1
            if oversized or len(head) + end - start > limit:
                line, screened = None, False
            elif head:
                head += memoryview(block)[start : end + 1]
                line, screened = bytes(head), False
            else:
                line, screened = block[start : end + 1], whole_clean
            head, oversized = bytearray(), False  # (freed before the line is checked)
            start = end + 1
            yield number, line, screened
        if start < len(block) and not oversized:
            if len(head) + len(block) - start > limit:
                oversized, head = True, bytearray()
            else:
                head += memoryview(block)[start:]
    if head or oversized:  # a last line without a newline
        yield number + 1, None if oversized else bytes(head), False


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
    paths: Sequence[str], clean: Callable[[bytes], bool] | None = None
) -> Iterator[tuple[str, bytes, Any | InvalidDocument, bool, bool]]:
    """(source, the bytes read, value or the error reading it, whether the value may
    hold an integral float, whether ``clean`` held of a text holding those bytes), one
    line at a time for JSON Lines; the bytes let the secret screen look at the text
    before the value, the float fact spares ``validate`` its own census."""
    for name, handle in _files(paths):
        if not _is_json_lines(name, handle):
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
            try:
                yield name, data, *loads_strict_noting_floats(data), False
            except InvalidDocument as exc:
                yield name, data, exc, False, False
            continue
        for number, line, screened in _lines(handle, MAX_DOCUMENT_BYTES, _BLOCK_BYTES, clean):
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
                    False,
                )
            elif not line.isspace():  # (no copy of the line, unlike strip)
                try:
                    yield source, line, *loads_strict_noting_floats(line), screened
                except InvalidDocument as exc:
                    yield source, line, exc, False, False


def read_documents(paths: Sequence[str]) -> Iterator[tuple[str, Any | InvalidDocument]]:
    """(source, value or the error reading it), one line at a time for JSON Lines."""
    for source, _, value, _, _ in _documents(paths):
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


def check_documents(
    paths: Sequence[str], *, doctype: str | None = None
) -> Iterator[tuple[str, str | None, list[Finding]]]:
    """(source, detected type, findings) per document, as they are read."""
    validator = default_validator()
    screen = secret_screen(default_policy())
    memo = ScreenMemo()

    def clean(lines: bytes) -> bool:
        # What the line screen finds in a line it finds in any text holding the line,
        # and finding more never turns "may hold" back: lines in a text it passes pass.
        return not line_may_hold_secret(screen, lines)

    for source, raw, value, may_hold_integral_float, screened in _documents(paths, clean):
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
        if not screened:  # (screened: the line screen passed the lines around this one)
            findings += screened_secret_findings(value, screen, raw, memo)
        yield source, name, findings
