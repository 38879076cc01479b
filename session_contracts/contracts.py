"""The contracts a producer may claim, in one table: the document types a producer of
each round-trips and the operations that exercise it. The reference claims them all,
certify draws its cases from it and golden decides from it which fixtures a producer is
sent."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CONTRACTS",
    "CONTRACT_DOCTYPES",
    "Contract",
    "contracts_of_doctype",
    "contracts_of_operation",
]


@dataclass(frozen=True, slots=True)
class Contract:
    name: str
    doctype_prefixes: tuple[str, ...]  # its document types: CONTRACT.KIND
    operations: tuple[str, ...]  # the protocol operations that exercise its rules


# The journal's events (session-event.*) are an input of the recap and of run records,
# not a document a producer of either is asked to round-trip.
CONTRACTS: tuple[Contract, ...] = (
    Contract("session-health", ("session-health.",), ("health.reduce",)),
    Contract("session-feedback", ("session-feedback.",), ("feedback.run",)),
    Contract("session-recap", ("session-recap.",), ("recap.project",)),
    Contract(
        "run-record", ("run-record.",), ("runrecord.project", "runrecord.provider_call_response")
    ),
)
CONTRACT_DOCTYPES: dict[str, tuple[str, ...]] = {c.name: c.doctype_prefixes for c in CONTRACTS}


def contracts_of_operation(operation: str) -> tuple[str, ...]:
    """The contracts whose rules ``operation`` exercises (none for a shared operation)."""
    return tuple(c.name for c in CONTRACTS if operation in c.operations)


def contracts_of_doctype(doctype: str) -> tuple[str, ...]:
    """The contracts a document type belongs to; a type of none is its own contract name
    (its prefix), which no producer claims."""
    owners = tuple(c.name for c in CONTRACTS if doctype.startswith(c.doctype_prefixes))
    return owners or (doctype.partition(".")[0],)
