"""The rejection vocabulary: every code a producer may answer in a rejection.

A producer that refuses a case input answers a rejection whose ``code`` is one
of :data:`REJECTION_CODES` and whose ``path`` is a JSON path into the input
(docs/protocol.md, "Rejections").  Codes are grouped into classes: two codes of
one class name the same kind of fault (``max_length`` and ``max_utf8_bytes`` are
both a length limit), and the judge accepts any code of the class the reference
found at that path.  This module is the one source of the vocabulary: the
protocol schema's ``$defs/RejectionCode`` enum and ``x-rejectionClasses`` map and
the table in docs/protocol.md are held equal to it by tests/unit/test_rejections.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = [
    "CLASSES",
    "REJECTION_CODES",
    "Agreement",
    "RejectionFinding",
    "agreement",
    "answered_findings",
    "rejection_class",
]

# class -> what it means; the order is the order of the docs table.
CLASSES: Mapping[str, str] = MappingProxyType(
    {
        "unknown_field": "a member the closed contract does not define",
        "required": "a required member is missing (or none of a set of members is present)",
        "type": "a value of the wrong JSON type, or a number written as a fraction or exponent "
        "where an integer literal is required",
        "variant": "an object that matches none (or more than one) of the shapes allowed here",
        "limit": "a byte, character, item or member count over (or under) its limit",
        "range": "a number outside its range, JavaScript's safe-integer range included",
        "format": "a string that does not match its pattern or format",
        "enum": "a value that is not one of the allowed values (an enum or a constant)",
        "cross_field": "a rule between members: equal values, a ratio, an order between "
        "numbers, one of two spellings of a list, a member that needs another",
        "alias_conflict": "both spellings of one field (camelCase and snake_case) are given",
        "identity": "ids that must be unique, increasing or connected are not: duplicate or "
        "non-increasing event ids, span ids, span parents and cycles",
        "json_text": "the JSON text itself: too large, not UTF-8, a syntax error, a duplicate "
        "key, NaN or Infinity, a number out of range, a lone surrogate, too deep",
        "case_input": "a member of the protocol's case input (not of a contract document) is "
        "malformed",
    }
)

_BY_CLASS: Mapping[str, tuple[str, ...]] = {
    "unknown_field": ("unknown_field",),
    "required": ("required", "require_any_of"),
    "type": ("wrong_type", "integer_literal_required"),
    "variant": ("no_matching_variant", "ambiguous_variant"),
    "limit": (
        "max_utf8_bytes",
        "max_length",
        "min_length",
        "max_items",
        "min_items",
        "max_properties",
        "min_properties",
    ),
    "range": (
        "minimum",
        "maximum",
        "exclusive_minimum",
        "exclusive_maximum",
        "multiple_of",
        "unsafe_integer",
        "canonical_unsafe_integer",
    ),
    "format": ("pattern", "format"),
    "enum": ("not_allowed_value",),
    "cross_field": (
        "same_value",
        "not_greater_than",
        "ratio_mismatch",
        "ratio_missing",
        "ratio_must_be_null",
        "ratio_must_be_absent",
        "ratio_undefined",
        "prefer_reference",
        "not",
        "contains",
        "execution_id_relabelled",
        "span_execution_mismatch",
        "stale_inconsistent",
        "stale_reasons_inconsistent",
    ),
    "alias_conflict": ("alias_conflict",),
    "identity": (
        "events_not_increasing",
        "span_id_duplicate",
        "span_cycle",
        "unique_items",
    ),
    "json_text": (
        "json_too_large",
        "json_not_utf8",
        "json_syntax",
        "json_duplicate_key",
        "json_non_finite_number",
        "json_number_out_of_range",
        "json_lone_surrogate",
        "json_too_deep",
        "json_trailing_data",
        "canonical_lone_surrogate",
        "canonical_non_finite",
        "canonical_number_out_of_range",
        "canonical_too_deep",
        "canonical_unsupported_type",
    ),
    "case_input": ("invalid_case", "invalid_step", "invalid_run", "invalid_request"),
}

REJECTION_CODES: Mapping[str, str] = MappingProxyType(
    {code: name for name, codes in _BY_CLASS.items() for code in codes}
)


def rejection_class(code: object) -> str | None:
    """The class of a rejection code, or None when the code is outside the vocabulary."""
    return REJECTION_CODES.get(code) if isinstance(code, str) else None


@dataclass(frozen=True, slots=True)
class RejectionFinding:
    """One finding of a rejection: a code of the vocabulary at a JSON path into the input."""

    code: str
    path: str

    def render(self) -> str:
        return f"{self.code} at {self.path}"

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path}


def answered_findings(rejection: Mapping[str, Any] | None) -> tuple[RejectionFinding, ...]:
    """Every finding a rejection answer names: its ``code``/``path`` and each entry of its
    optional ``findings`` list, in order, each once.  Members that are not strings are
    kept as their JSON text so that the judge can name them."""
    if not rejection:
        return ()
    entries: list[Any] = [rejection] if "code" in rejection or "path" in rejection else []
    listed = rejection.get("findings")
    if isinstance(listed, list):
        entries.extend(listed)
    out: list[RejectionFinding] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        code, path = entry.get("code"), entry.get("path")
        finding = RejectionFinding(
            code if isinstance(code, str) else repr(code),
            path if isinstance(path, str) else repr(path),
        )
        if finding not in out:
            out.append(finding)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Agreement:
    """The verdict on a producer's rejection: ``agreed``, or ``code`` (why not:
    ``rejection_code_unknown``, ``rejection_path_differs``, ``rejection_class_differs``,
    ``rejection_empty``), a message naming what the reference found and what the
    producer answered, and a hint."""

    agreed: bool
    code: str = ""
    message: str = ""
    hint: str = ""


def _show(findings: Iterable[RejectionFinding], limit: int = 6) -> str:
    shown = [f.render() for f in findings]
    more = f" (and {len(shown) - limit} more)" if len(shown) > limit else ""
    return ", ".join(shown[:limit]) + more


def agreement(
    reference: Sequence[RejectionFinding], answered: Sequence[RejectionFinding]
) -> Agreement:
    """Judge a producer's rejection against the reference's findings of the same input.

    Each finding the producer answers (at least one) must name the path of one of
    the reference's findings with a code of that finding's class; the producer
    need not report every finding the reference does.
    """
    found = _show(reference)
    if not answered:
        return Agreement(
            False,
            "rejection_empty",
            f"the rejection names no finding; the reference found {found}",
            "answer a rejection with a code and a path (docs/protocol.md, Rejections)",
        )
    by_path: dict[str, set[str]] = {}
    for finding in reference:
        by_path.setdefault(finding.path, set()).add(REJECTION_CODES.get(finding.code, ""))
    for finding in answered:
        kind = rejection_class(finding.code)
        if kind is None:
            return Agreement(
                False,
                "rejection_code_unknown",
                f"answered {finding.render()}: {finding.code!r} is not a rejection code; "
                f"the reference found {found}",
                "answer a code of the rejection vocabulary (docs/protocol.md, Rejection codes; "
                "$defs/RejectionCode in schemas/producer-protocol.schema.json)",
            )
        classes = by_path.get(finding.path)
        if classes is None:
            return Agreement(
                False,
                "rejection_path_differs",
                f"answered {finding.render()}, a path where the reference found nothing; "
                f"the reference found {found}",
                "name the member at fault in bracket notation (docs/protocol.md, JSON paths), "
                "not the object around it or $",
            )
        if kind not in classes:
            wanted = " or ".join(sorted(c for c in classes if c))
            return Agreement(
                False,
                "rejection_class_differs",
                f"answered {finding.render()}, of class {kind}; the reference found {found} "
                f"(class {wanted} at {finding.path})",
                "answer a code of the class the reference found there "
                "(docs/protocol.md, Rejection codes)",
            )
    return Agreement(True)
