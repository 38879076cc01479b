"""Recap queries: from what an adapter received to the query a snapshot echoes (pure).

Every adapter (HTTP, ACP, the command line) hands its query to
:func:`query_echo`, so the three accept and refuse exactly the same things.
The schema (``session-recap.query``, with its ``x-inputAliases``) decides what
a query is.  As in Harn's runtime, the snapshot echoes the query as received
(absent members null, ``limit`` not clamped) while the read itself uses
:func:`clamp_limit` of it; members the query type does not name are ignored.
For HTTP, :func:`coerce_params` turns a query string's text into numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from session_contracts.doctypes import QUERY_DOCUMENT_TYPE
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.validation.validator import apply_input_aliases, default_validator

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "QUERY_DOCUMENT_TYPE",
    "QUERY_FIELDS",
    "clamp_limit",
    "coerce_http_params",
    "coerce_params",
    "query_echo",
]

QUERY_FIELDS = ("sessionId", "runId", "turnId", "fromEventId", "limit")
DEFAULT_LIMIT = 4_096
MAX_LIMIT = 32_768

# Parameters that carry unsigned integers, in both spellings.
_INTEGER_PARAMETERS = frozenset({"fromEventId", "from_event_id", "limit"})
# Decimal digits only: no sign, no space, no fraction, no leading zero but "0".
# re.ASCII keeps other scripts' digits (such as U+0663) out of \d; [0-9] is explicit anyway.
_UNSIGNED = re.compile(r"0|[1-9][0-9]*", re.ASCII)
# 18,446,744,073,709,551,615 (2^64 - 1, Harn's u64) has 20 digits; a longer
# literal is over the schema's maximum, and refusing it before int() keeps huge
# inputs cheap.
_MAX_DIGITS = 20


def clamp_limit(requested: int | None) -> int:
    """The effective bound: 4,096 when absent, otherwise clamped into 1..32,768."""
    if requested is None:
        return DEFAULT_LIMIT
    return max(1, min(MAX_LIMIT, requested))


def _spelling(path: str, spelled: Mapping[str, str]) -> str:
    """``$.runId...`` as ``$.run_id...`` when the caller wrote run_id."""
    for canonical, given in spelled.items():
        head = f"$.{canonical}"
        if path == head or path.startswith((f"{head}.", f"{head}[")):
            return f"$.{given}{path[len(head) :]}"
    return path


def query_echo(raw: Any) -> dict[str, Any]:
    """The query a snapshot echoes, from a recap query in either spelling.

    ``raw`` is the query object as received (camelCase, snake-case aliases or
    a mix, one spelling per field).  Returns the five members in canonical
    spelling, absent ones ``None``, ``limit`` as given (the read uses
    :func:`clamp_limit` of it); other members are dropped.  Raises
    :class:`InvalidDocument` with every finding, each at the JSON path of the
    member as the caller spelled it (``$.limit``, ``$.run_id``...).
    """
    if not isinstance(raw, Mapping):
        raise InvalidDocument(
            [
                Finding(
                    "$",
                    "wrong_type",
                    "a recap query is a JSON object",
                    'send an object such as {"sessionId": "sess-1"}',
                )
            ]
        )
    document = dict(raw)
    validator = default_validator()
    document_type = validator.schema_set.document_type(QUERY_DOCUMENT_TYPE)
    renamed, findings = apply_input_aliases(document_type, document)
    findings = [*findings, *validator.validate(QUERY_DOCUMENT_TYPE, renamed)]
    # JSON Schema counts 4.0 as an integer; Harn's runtime (serde into u64) does
    # not, and neither do we: an unsigned integer is written as one.
    findings.extend(
        Finding(
            f"$.{name}",
            "integer_literal_required",
            f"{name} is written as a fraction or exponent ({renamed[name]!r})",
            f"write it as {int(renamed[name])}"
            if renamed[name] == renamed[name] and abs(renamed[name]) != float("inf")
            else "write an unsigned integer",
        )
        for name in ("fromEventId", "limit")
        if isinstance(renamed.get(name), float)
    )
    if findings:
        aliases = document_type.input_aliases
        spelled = {
            aliases[key]: key for key in document if key in aliases and aliases[key] not in document
        }
        raise InvalidDocument(
            sorted(
                {Finding(_spelling(f.path, spelled), f.code, f.message, f.hint) for f in findings}
            )
        )
    return {
        "sessionId": renamed["sessionId"],
        "runId": renamed.get("runId"),
        "turnId": renamed.get("turnId"),
        "fromEventId": renamed.get("fromEventId"),
        "limit": renamed.get("limit"),
    }


def _unsigned(name: str, text: str) -> int:
    if not _UNSIGNED.fullmatch(text):
        raise InvalidDocument(
            [
                Finding(
                    f"$.{name}",
                    "wrong_type",
                    f"{name} must be an unsigned integer in decimal digits, not {text[:40]!r}",
                    'write digits only: no sign, space, fraction or leading zero ("0", "25")',
                )
            ]
        )
    if len(text) > _MAX_DIGITS:
        raise InvalidDocument(
            [
                Finding(
                    f"$.{name}",
                    "maximum",
                    f"{name} has {len(text)} digits; the largest value is 18446744073709551615",
                    "give a smaller number",
                )
            ]
        )
    return int(text)


def coerce_params(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """A query object from text parameters (an HTTP query string, command-line flags).

    ``fromEventId``/``from_event_id`` and ``limit`` become integers, strictly;
    other values stay text for the schema to judge.  A parameter given twice
    is refused: which one would win is a guess.  Raises :class:`InvalidDocument`.
    """
    out: dict[str, Any] = {}
    findings: list[Finding] = []
    for name, text in pairs:
        if name in out:
            findings.append(
                Finding(
                    f"$.{name}",
                    "duplicate_parameter",
                    f"the parameter {name} is given more than once",
                    "give each parameter once",
                )
            )
            continue
        if name in _INTEGER_PARAMETERS:
            try:
                out[name] = _unsigned(name, text)
            except InvalidDocument as exc:
                findings.extend(exc.findings)
                out[name] = None
            continue
        out[name] = text
    if findings:
        raise InvalidDocument(sorted(set(findings)))
    return out


def coerce_http_params(pairs: Iterable[tuple[str, str]] | Mapping[str, str]) -> dict[str, Any]:
    """:func:`coerce_params` for an HTTP query string (pairs, or a mapping of single values)."""
    return coerce_params(pairs.items() if isinstance(pairs, Mapping) else pairs)
