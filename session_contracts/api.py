"""The public Python API: what a user calls, without reaching into private modules.

Everything here is a thin, typed door onto the modules that implement it:
validation (``validation.validator``), bindings (``bindings``), the two canonical forms
(``json.canonical``, ``json.harn_canonical``), hash verification (``hashes.verify``),
redaction (``redaction.engine``, ``redaction.policy``) and certification (the
judge, ``conformance/judge``), so the CLI and a library user see the same
behaviour. The judge is imported only when :func:`certify` runs: importing
``session_contracts`` stays cheap.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_contracts.errors import Finding, UsageError
from session_contracts.hashes.verify import verify_document
from session_contracts.jsontext.canonical import canonical_bytes, content_hash
from session_contracts.jsontext.harn_canonical import harn_canonical_bytes, harn_sha256
from session_contracts.redaction.engine import RedactionPolicy, redact_text, redact_value
from session_contracts.redaction.policy import default_policy, extended_policy, load_policy
from session_contracts.validation.validator import default_validator

if TYPE_CHECKING:
    from session_contracts.conformance.judge.certify import CheckResult

__all__ = [
    "Certification",
    "RedactionPolicy",
    "canonical_bytes",
    "certify",
    "content_hash",
    "default_policy",
    "document_types",
    "extended_policy",
    "harn_canonical_bytes",
    "harn_content_hash",
    "load_policy",
    "redact",
    "redact_value",
    "validate",
    "verify",
]


def document_types() -> list[str]:
    """Every document type, as ``CONTRACT.KIND`` (``session-recap.snapshot``)."""
    return sorted(default_validator().schema_set.document_types)


def validate(doctype: str, document: Any) -> list[Finding]:
    """Every finding of ``document`` (a parsed JSON value) against ``doctype``; [] when valid.

    The same verdicts as ``session-contracts validate``: the schema and every
    x- rule, each finding with a stable code, a JSON path and a hint. Parse
    text with :func:`session_contracts.bindings.decode` (strict reading) or
    ``json.loads`` first.
    """
    return default_validator().validate(doctype, document)


def verify(
    doctype: str, document: Any, journal_record_hashes: Mapping[int, str] | None = None
) -> list[Finding]:
    """Every hash of a schema-valid ``document`` that does not match its content; []
    when all match or it carries none (``session-contracts verify``)."""
    return verify_document(doctype, document, journal_record_hashes)


def harn_content_hash(value: Any) -> str:
    """``sha256:`` + hex of Harn's canonical JSON of ``value`` (docs/hashing.md section 6):
    the form of the recap's ``contentHash`` and ``projectionHash``."""
    return harn_sha256(value)


def redact(text: str, policy: RedactionPolicy | None = None) -> str:
    """``text`` with every secret the policy detects replaced by its marker
    (default: Harn's catalog, ``schemas/redaction-policy.default.json``)."""
    return redact_text(text, policy or default_policy()).text


@dataclass(frozen=True, slots=True)
class Certification:
    """The outcome of :func:`certify`: one result per check, and the verdict.

    ``certified`` holds exactly when every applicable check of a gating level
    passed on evidence (cases judged and agreed) and at least one case was
    judged and agreed at all, the rule ``session-contracts certify`` applies
    without a baseline.
    """

    producer: str
    contracts: tuple[str, ...]
    operations: tuple[str, ...]
    results: tuple[CheckResult, ...]
    certified: bool

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        """The results that keep the producer from being certified."""
        return tuple(r for r in self.results if not r.certifies)


def _reference_command() -> list[str]:
    return [sys.executable, "-m", "session_contracts", "reference-producer"]


def certify(
    producer: str | Sequence[str] | None = None,
    *,
    checks: Sequence[str] | None = None,
    examples: int | None = None,
    seed: int = 0,
    timeout: float | None = None,
    fail_on: str = "required",
    failures_dir: str | Path = ".session-contracts/failures",
) -> Certification:
    """Certify a producer (a command line, as a string or an argument list) against
    the reference, as ``session-contracts certify`` does.

    ``producer=None`` certifies the built-in reference producer; an empty or
    blank command is a :class:`UsageError` (never a silent fallback).
    ``checks`` selects check ids (default: all); ``fail_on`` is ``"required"``
    or ``"recommended"``; ``timeout`` gives every case that many seconds (default:
    each case's budget follows the reference's time for it, docs/checks.md). Raises
    :class:`UsageError` for an unknown check id and :class:`session_contracts.ToolError`
    when the producer cannot be started.
    """
    from session_contracts.conformance.judge import certify as judge
    from session_contracts.conformance.judge.budget import BUDGET_FLOOR_SECONDS, TimeBudget
    from session_contracts.conformance.judge.checks import CHECKS
    from session_contracts.conformance.judge.runner import (
        ProducerProcess,
        require_producer_command,
    )

    if fail_on not in ("required", "recommended"):
        raise UsageError([Finding("$.fail_on", "usage_invalid", f"unknown level {fail_on!r}", "")])
    if producer is None:
        command: str | list[str] = _reference_command()
        label = "the built-in reference producer"
    elif isinstance(producer, str):
        require_producer_command(producer)
        command = producer
        label = producer
    else:
        command = list(producer)
        if not command or not any(part.strip() for part in command):
            require_producer_command("")
        label = " ".join(command)
    by_id = {check.id: check for check in CHECKS}
    unknown = [check_id for check_id in checks or () if check_id not in by_id]
    if unknown:
        raise UsageError(
            [
                Finding(
                    "$.checks",
                    "unknown_check",
                    f"unknown check id(s): {', '.join(unknown)}",
                    "list them with `session-contracts checks`",
                )
            ]
        )
    selected = [by_id[check_id] for check_id in checks] if checks else list(CHECKS)
    options: dict[str, Any] = {"seed": seed, "failures_dir": Path(failures_dir)}
    if examples is not None:
        options["examples"] = examples
    process = ProducerProcess(command, timeout=timeout or BUDGET_FLOOR_SECONDS)
    try:
        info = process.start()
        results = judge.certify(process, checks=selected, budget=TimeBudget(timeout), **options)
    finally:
        process.stop()
    return Certification(
        producer=label,
        contracts=tuple(info.contracts),
        operations=tuple(info.operations),
        results=tuple(results),
        certified=judge.is_certified(results, fail_on),
    )
