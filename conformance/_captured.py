"""``session-contracts check``: certify documents a producer already wrote.

Each document's type is detected from the schemas themselves (the members a
document type requires), then the document is validated (schema and x-
rules), its hashes are recomputed, and it is scanned for secrets with the
redaction detectors.  Files are read one line at a time, so JSON Lines of any
size go through in bounded memory (one line, at most 32 MiB, at a time).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from session_contracts._errors import Finding, InvalidDocument
from session_contracts._jsonload import MAX_DOCUMENT_BYTES, loads_strict
from session_contracts._redaction import RedactionPolicy, scan_value
from session_contracts._redaction_policy import default_policy
from session_contracts._schemas import SchemaSet
from session_contracts._validator import DocumentValidator, default_validator
from session_contracts._verify import verify_document

__all__ = ["CheckStats", "check_documents", "detect_doctype", "read_documents"]

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
def _signatures(validator: DocumentValidator) -> tuple[tuple[str, frozenset[str]], ...]:
    schema_set = validator.schema_set
    signatures = []
    for name, document_type in schema_set.document_types.items():
        if document_type.contract in ("producer-protocol", "certification-report"):
            continue  # the harness's own documents are not a producer's output
        required = _required(schema_set, {"$ref": document_type.ref}, document_type.schema_id)
        if required:
            signatures.append((name, required))
    # Most specific first: a document matches the type that requires the most of it.
    return tuple(sorted(signatures, key=lambda item: (-len(item[1]), item[0])))


def detect_doctype(document: Any, validator: DocumentValidator | None = None) -> str | None:
    """The document type whose required members the document has, most specific first;
    among equally specific ones, the first it is valid as."""
    checker = validator or default_validator()
    if not isinstance(document, dict):
        return None
    candidates = [name for name, required in _signatures(checker) if required <= document.keys()]
    if not candidates:
        return None
    best = len(dict(_signatures(checker))[candidates[0]])
    tied = [c for c in candidates if len(dict(_signatures(checker))[c]) == best]
    for name in tied:
        if checker.is_valid(name, document):
            return name
    return tied[0]


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
                        with open(Path(folder) / name, "rb") as handle:
                            yield str(Path(folder) / name), handle
        else:
            with open(target, "rb") as handle:
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


def read_documents(paths: Sequence[str]) -> Iterator[tuple[str, Any | InvalidDocument]]:
    """(source, value or the error reading it), one line at a time for JSON Lines."""
    for name, handle in _files(paths):
        if not _is_json_lines(name, handle):
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
            try:
                yield name, loads_strict(data)
            except InvalidDocument as exc:
                yield name, exc
            continue
        for number, line in _lines(handle, MAX_DOCUMENT_BYTES):
            source = f"{name}:{number}"
            if line is None:
                yield (
                    source,
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
                )
            elif line.strip():
                try:
                    yield source, loads_strict(line)
                except InvalidDocument as exc:
                    yield source, exc


@dataclass
class CheckStats:
    documents: Counter[str] = field(default_factory=Counter)
    findings: Counter[tuple[str, str]] = field(default_factory=Counter)  # (code, level)
    unknown_fields: Counter[str] = field(default_factory=Counter)

    @property
    def read(self) -> int:
        return sum(self.documents.values())


def _keys(value: Any) -> list[str]:
    found: list[str] = []
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            found.extend(node)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


def _may_hold_secret(value: Any, policy: RedactionPolicy) -> bool:
    """False only when redaction would change nothing: the literal-gated batch
    redaction (exactly redact_value, far cheaper) finds nothing in the values or keys."""
    from session_contracts.conformance.recap import redact_texts
    from session_contracts.conformance.recap._redaction_gate import redact_values

    if redact_values([value], policy)[0] != value:
        return True
    keys = _keys(value)
    return redact_texts(keys, policy) != keys


def check_documents(
    paths: Sequence[str], *, doctype: str | None = None
) -> Iterator[tuple[str, str | None, list[Finding]]]:
    """(source, detected type, findings) per document, as they are read."""
    validator = default_validator()
    policy = default_policy()
    for source, value in read_documents(paths):
        if isinstance(value, InvalidDocument):
            yield source, None, list(value.findings)
            continue
        name = doctype or detect_doctype(value, validator)
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
        findings = validator.validate(name, value)
        if not findings:
            findings = verify_document(name, value)
        if _may_hold_secret(value, policy):
            findings += scan_value(value, policy)
        yield source, name, findings
