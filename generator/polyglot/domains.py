"""Integer members whose schema leaves them unbounded below but whose contract is unsigned.

The session-recap snapshot schema is Harn's published one (accepting exactly what Harn's
accepts), and Harn's schema types the echoed query, the cursor and the source ids as a bare
``nullableInteger``: no ``minimum``. Harn's own types for them are ``u64``/``uint64``
(``SessionRecapQuery``, ``SessionRecapCursor``, ``SessionRecapSource`` in harn-vm; the
published Go binding ``spec/protocol-artifacts/go/harnprotocol/harnprotocol.go``), and seed
002 says "fromEventId | unsigned integer", "limit | unsigned integer". Each entry ties
such a member to the member whose value it carries, whose schema does bound it at
``minimum: 0``; the model takes that member's sign. The model refuses an entry that no
longer fits the schemas (``polyglot_domain_stale``): a member that is gone, is not an
integer, already has a lower bound of its own, or a source member that is not unsigned.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SAME_DOMAIN", "MemberPointer", "SameDomain"]


@dataclass(frozen=True, slots=True)
class MemberPointer:
    """One member of a ``$defs`` object: schema file, definition, member name."""

    file: str
    definition: str
    member: str

    def __str__(self) -> str:
        return f"{self.file}#/$defs/{self.definition}/properties/{self.member}"


@dataclass(frozen=True, slots=True)
class SameDomain:
    member: MemberPointer  # the member the schema leaves unbounded below
    carries: MemberPointer  # the bounded member whose value it holds
    why: str  # the seed sentence or Harn source that says so


_RECAP = "session-recap-v1.schema.json"


def _recap(definition: str, member: str) -> MemberPointer:
    return MemberPointer(_RECAP, definition, member)


SAME_DOMAIN: tuple[SameDomain, ...] = (
    SameDomain(
        _recap("QueryEcho", "fromEventId"),
        _recap("RecapQuery", "fromEventId"),
        'the query as received; seed 002: "fromEventId | unsigned integer"; '
        "Harn: SessionRecapQuery.from_event_id is Option<u64>",
    ),
    SameDomain(
        _recap("QueryEcho", "limit"),
        _recap("RecapQuery", "limit"),
        'the query as received (not clamped); seed 002: "limit | unsigned integer"; '
        "Harn: SessionRecapQuery.limit is Option<usize>, uint64 in its Go binding",
    ),
    SameDomain(
        _recap("RecapCursor", "lastEventId"),
        _recap("SourceEvent", "eventId"),
        "the id of the last event read; Harn: SessionRecapCursor.last_event_id is Option<u64>",
    ),
    SameDomain(
        _recap("RecapCursor", "nextEventId"),
        _recap("RecapQuery", "fromEventId"),
        "passed back as fromEventId to continue; Harn: SessionRecapCursor.next_event_id is "
        "Option<u64>",
    ),
    SameDomain(
        _recap("RecapSource", "firstEventId"),
        _recap("SourceEvent", "eventId"),
        "the id of the first event read; Harn: SessionRecapSource.first_event_id is Option<u64>",
    ),
    SameDomain(
        _recap("RecapSource", "lastEventId"),
        _recap("SourceEvent", "eventId"),
        "the id of the last event read; Harn: SessionRecapSource.last_event_id is Option<u64>",
    ),
)
