"""Redaction policy files: reading, validating and the built-in default.

A policy file is JSON, valid against ``redaction-policy.schema.json``.  This
module is the I/O edge of redaction; the detectors themselves live in
:mod:`session_contracts.redaction.engine`.  The default policy is data too
(``redaction-policy.default.json``, Harn's default catalog) and comes in
through the same door as any other policy file, as does our own optional
catalog (``redaction-policy.extended.json``, :func:`extended_policy`).
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.resources import files
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

from session_contracts.errors import Finding, InvalidDocument, UsageError, json_path
from session_contracts.jsontext.strict import loads_strict
from session_contracts.redaction.engine import (
    DEFAULT_MARKER,
    POLICY_INVALID,
    Detector,
    EntropyThreshold,
    KeyEntropyDetector,
    NamedPattern,
    NameRule,
    RedactionPolicy,
    RegexDetector,
    policy_problems,
)

__all__ = [
    "DEFAULT_POLICY",
    "DEFAULT_POLICY_FILE",
    "EXTENDED_POLICY_FILE",
    "POLICY_SCHEMA_FILE",
    "default_policy",
    "extended_policy",
    "load_policy",
    "parse_policy",
    "policy_from_document",
    "policy_schema",
    "validate_policy_document",
]

POLICY_SCHEMA_FILE = "redaction-policy.schema.json"
DEFAULT_POLICY_FILE = "redaction-policy.default.json"
EXTENDED_POLICY_FILE = "redaction-policy.extended.json"
POLICY_UNREADABLE = "redaction_policy_unreadable"

_HINT = "see docs/redaction.md and schemas/redaction-policy.schema.json"


@lru_cache(maxsize=1)
def policy_schema() -> dict[str, Any]:
    """The JSON Schema every policy file must satisfy."""
    text = files("session_contracts.schemas").joinpath(POLICY_SCHEMA_FILE).read_bytes()
    schema: dict[str, Any] = loads_strict(text)
    return schema


@lru_cache(maxsize=1)
def _validator() -> Any:
    schema = policy_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _error_path(error: Any) -> list[str | int]:
    return list(error.absolute_path)


def validate_policy_document(document: Any) -> list[Finding]:
    """One ``redaction_policy_invalid`` finding per schema violation, in path order."""
    errors = sorted(
        _validator().iter_errors(document),
        key=lambda error: (json_path(_error_path(error)), error.message),
    )
    return [
        Finding(json_path(_error_path(error)), POLICY_INVALID, error.message, _HINT)
        for error in errors
    ]


def _detector(entry: dict[str, Any]) -> Detector:
    common = {
        "id": entry["id"],
        "enabled": entry.get("enabled", True),
        "description": entry.get("description", ""),
    }
    if entry["type"] == "key_entropy":
        return KeyEntropyDetector(
            key_pattern=entry["key_pattern"],
            charsets=tuple(
                EntropyThreshold(item["charset"], float(item["min_entropy"]))
                for item in entry["charsets"]
            ),
            min_length=entry.get("min_length", 16),
            **common,
        )
    return RegexDetector(
        pattern=entry["pattern"],
        group=tuple(group) if isinstance(group := entry.get("group", 0), list) else group,
        ignore_case=entry.get("ignore_case", False),
        **common,
    )


def _name_rule(entry: dict[str, Any]) -> NameRule:
    return NameRule(
        exact=frozenset(entry["exact"]),
        suffixes=tuple(entry["suffixes"]),
        ignore=entry.get("ignore", "_-"),
    )


def _source_text(source: Any) -> str:
    if isinstance(source, dict):
        return "; ".join(f"{key}: {value}" for key, value in source.items())
    return ""


def _pattern_policy(document: dict[str, Any]) -> RedactionPolicy:
    window = document.get("window", {})
    urls = document.get("urls")
    keys = document.get("sensitive_keys")
    return RedactionPolicy(
        patterns=tuple(
            NamedPattern(
                name=entry["name"],
                pattern=entry["pattern"],
                enabled=entry.get("enabled", True),
                source=_source_text(entry.get("source")),
            )
            for entry in document["patterns"]
        ),
        placeholder=document["placeholder"],
        sensitive_keys=_name_rule(keys) if keys is not None else None,
        key_placeholder=keys["placeholder"] if keys is not None else "[redacted]",
        url_params=(
            _name_rule(urls["params"]) if urls is not None and urls.get("enabled", True) else None
        ),
        url_placeholder=urls["placeholder"] if urls is not None else "[redacted]",
        window_bytes=window.get("bytes", 256 * 1024),
        window_overlap_bytes=window.get("overlap_bytes", 8 * 1024),
    )


def policy_from_document(document: Any, *, source: str = "") -> RedactionPolicy:
    """Build a policy from a parsed policy file, or raise :class:`UsageError` saying why not."""
    findings = validate_policy_document(document)
    if not findings and "patterns" in document:
        policy = _pattern_policy(document)
        findings = policy_problems(policy)
    elif not findings:
        policy = RedactionPolicy(
            detectors=tuple(_detector(entry) for entry in document["detectors"]),
            marker=document.get("marker", DEFAULT_MARKER),
            placeholders=tuple(document.get("placeholders", ())),
        )
        findings = policy_problems(policy)
    if findings:
        raise UsageError(finding.at(source) if source else finding for finding in findings)
    return policy


def parse_policy(data: bytes | str, *, source: str = "") -> RedactionPolicy:
    """Read a policy from the text of a policy file."""
    try:
        document = loads_strict(data)
    except InvalidDocument as exc:
        # A broken policy is a broken invocation, not a broken document under test.
        raise UsageError(f.at(source) if source else f for f in exc.findings) from None
    return policy_from_document(document, source=source)


def load_policy(path: str | os.PathLike[str]) -> RedactionPolicy:
    """Read and check a policy file; every problem is a finding with a JSON path."""
    from session_contracts.input_files import read_regular_file
    from session_contracts.jsontext.strict import MAX_DOCUMENT_BYTES

    try:
        # A FIFO or device is refused at once, never waited on.
        data = read_regular_file(os.fspath(path), MAX_DOCUMENT_BYTES + 1)
    except UsageError as exc:
        problem = exc.findings[0]
        raise UsageError(
            [
                Finding(
                    "$",
                    POLICY_UNREADABLE,
                    f"cannot read the redaction policy: {problem.message}",
                    problem.hint or "pass the path of a JSON redaction policy file",
                    source=os.fspath(path),
                )
            ]
        ) from None
    return parse_policy(data, source=os.fspath(path))


@lru_cache(maxsize=1)
def default_policy() -> RedactionPolicy:
    """The built-in policy, Harn's default, read from ``redaction-policy.default.json``."""
    data = files("session_contracts.schemas").joinpath(DEFAULT_POLICY_FILE).read_bytes()
    return parse_policy(data, source=DEFAULT_POLICY_FILE)


@lru_cache(maxsize=1)
def extended_policy() -> RedactionPolicy:
    """Our own detectors, read from ``redaction-policy.extended.json`` (``--policy`` takes it)."""
    data = files("session_contracts.schemas").joinpath(EXTENDED_POLICY_FILE).read_bytes()
    return parse_policy(data, source=EXTENDED_POLICY_FILE)


DEFAULT_POLICY = default_policy()
