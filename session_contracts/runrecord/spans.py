"""Span trees of run records (seed 003), as pure functions: no file, no database.

A completed span has a stable ``span_id`` and a ``parent_span_id``; joining
the two gives the authoritative tree, and roots set ``parent_span_id`` to
``null``.  :func:`build_tree` does that join and refuses a list that is not a
forest, with the codes of the schema's ``x-spanTree`` rule
(``span_id_duplicate``, ``span_cycle``) and the JSON
path of the offending member, so a producer gets the same verdict here as from
``session-contracts validate``.  The check is written independently of the
validator's keyword so the tests can hold one against the other.

Historical records wrote ``parent_id``; :func:`load_historical` reads them
through the bindings' historical door and gives back current names.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from session_contracts.bindings import decode, encode
from session_contracts.doctypes import RECORD_DOCUMENT_TYPE, SPAN_DOCUMENT_TYPE
from session_contracts.errors import Finding, InvalidDocument, json_path
from session_contracts.jsontext.frozen import freeze_json, thaw_json
from session_contracts.jsontext.records import read_record
from session_contracts.validation.validator import default_validator

__all__ = [
    "EXECUTION_ATTRIBUTE",
    "RECORD_DOCUMENT_TYPE",
    "SPAN_CYCLE",
    "SPAN_DOCUMENT_TYPE",
    "SPAN_ID_DUPLICATE",
    "Span",
    "SpanTree",
    "build_tree",
    "load_historical",
    "span_tree_findings",
]

# The span attribute naming the VM execution that owns a span (seed 003's example).
EXECUTION_ATTRIBUTE: Final = "harn.execution.id"

# The finding codes of the schema's x-spanTree keyword (docs/x-keywords.md).
SPAN_ID_DUPLICATE: Final = "span_id_duplicate"
SPAN_CYCLE: Final = "span_cycle"


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """One completed span (``run-record.span``).

    ``ttft_ms`` is ``None`` when no first response token was observed, and the
    JSON form then omits the member: absence is the only spelling of "not
    observed" (never ``null``, never a placeholder ``0``).  An observed
    ``0`` is a measurement (the first token came within the first
    millisecond) and is written.  ``metadata`` is read-only all the way down.
    ``links``, ``events`` and ``cost_usd`` are Harn's ``RunTraceSpanRecord``
    members: kept as given (read-only), absent (``None``) when not given.
    """

    trace_id: str
    span_id: int
    parent_span_id: int | None
    kind: str
    name: str
    start_ms: int
    duration_ms: int
    ttft_ms: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    links: Sequence[Any] | None = field(default=None, hash=False)
    events: Sequence[Any] | None = field(default=None, hash=False)
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", freeze_json(self.metadata))
        # Most spans have neither: skip the calls on the projection's hot path.
        if self.links is not None:
            object.__setattr__(self, "links", freeze_json(self.links))
        if self.events is not None:
            object.__setattr__(self, "events", freeze_json(self.events))

    def to_json(self) -> dict[str, Any]:
        """The wire form: current names, ``ttft_ms`` only when a first token was observed."""
        value: dict[str, Any] = {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "parent_span_id": self.parent_span_id,
            "kind": self.kind,
            "name": self.name,
            "start_ms": self.start_ms,
            "duration_ms": self.duration_ms,
        }
        if self.ttft_ms is not None:
            value["ttft_ms"] = self.ttft_ms
        value["metadata"] = thaw_json(self.metadata)
        if self.links is not None:
            value["links"] = thaw_json(self.links)
        if self.events is not None:
            value["events"] = thaw_json(self.events)
        if self.cost_usd is not None:
            value["cost_usd"] = self.cost_usd
        return value

    @classmethod
    def from_json(cls, value: Any) -> Span:
        """The span a JSON value describes; :class:`InvalidDocument` when it breaks the contract."""
        findings = default_validator().validate(SPAN_DOCUMENT_TYPE, value)
        if findings:
            raise InvalidDocument(findings)
        return read_record(cls, value)


@dataclass(frozen=True, slots=True)
class SpanTree:
    """A validated span forest: every span reachable from exactly one root.

    Roots are the spans whose ``parent_span_id`` is null and the spans whose
    parent is not in the list (a parent still open when they completed).

    ``roots`` and each ``children`` entry keep the input order of the spans.
    """

    spans: Mapping[int, Span]
    roots: tuple[int, ...]
    children: Mapping[int, tuple[int, ...]]

    def __len__(self) -> int:
        return len(self.spans)

    def parent_of(self, span_id: int) -> int | None:
        return self.spans[span_id].parent_span_id

    def walk(self) -> Iterator[tuple[int, Span]]:
        """Every span as ``(depth, span)``, depth first, parents before children."""
        # Iterative: a 10,000-span chain must not hit Python's recursion limit.
        pending = [(0, root) for root in reversed(self.roots)]
        while pending:
            depth, span_id = pending.pop()
            yield depth, self.spans[span_id]
            pending.extend((depth + 1, child) for child in reversed(self.children[span_id]))


def span_tree_findings(spans: Sequence[Span], at: Sequence[str | int] = ()) -> list[Finding]:
    """Every way ``spans`` fails to be a forest; ``at`` is the JSON path of the list.

    A duplicate id is reported at the later span, which then takes no further
    part in the check (its parent is not followed), as the validator does.
    Each cycle is reported once, at the span where a walk up the parent links
    from the earliest span leading into it first comes back.
    """
    findings: list[Finding] = []
    index_of: dict[int, int] = {}
    for index, span in enumerate(spans):
        if span.span_id in index_of:
            findings.append(
                Finding(
                    json_path([*at, index, "span_id"]),
                    SPAN_ID_DUPLICATE,
                    f"span_id {span.span_id} is used by spans {index_of[span.span_id]} and {index}",
                    "span ids are stable and unique within a record",
                )
            )
            continue
        index_of[span.span_id] = index
    parent_of = {span_id: spans[index].parent_span_id for span_id, index in index_of.items()}
    # A parent that is not in the list is no finding: evidence holds completed
    # spans (seed 003), and a parent may still be open when its child
    # completes; the seed's own example shows span 8 under parent 3 alone.
    # Three colours in one pass: a walk stops at a span finished by an earlier
    # walk, so the whole check is linear in the number of spans.
    finished: set[int] = set()
    for start in parent_of:
        path: list[int] = []
        on_path: set[int] = set()
        node: int | None = start
        while node is not None and node in parent_of and node not in finished:
            if node in on_path:
                cycle = path[path.index(node) :]
                findings.append(
                    Finding(
                        json_path([*at, index_of[node], "parent_span_id"]),
                        SPAN_CYCLE,
                        "spans " + " -> ".join(str(s) for s in [*cycle, node]) + " form a cycle",
                        "parent links must form a tree rooted at spans whose parent_span_id "
                        "is null",
                    )
                )
                break
            path.append(node)
            on_path.add(node)
            node = parent_of[node]
        finished.update(path)
    return findings


def build_tree(spans: Sequence[Span], at: Sequence[str | int] = ()) -> SpanTree:
    """Join ``parent_span_id`` to ``span_id``; :class:`InvalidDocument` if not a forest.

    ``at`` is the JSON path of the span list in the document being built (for
    a run record, ``("evidence", "trace_spans")``), so findings point into it.
    """
    findings = span_tree_findings(spans, at)
    if findings:
        raise InvalidDocument(findings)
    by_id = {span.span_id: span for span in spans}
    children: dict[int, list[int]] = {span.span_id: [] for span in spans}
    roots: list[int] = []
    for span in spans:
        if span.parent_span_id is None or span.parent_span_id not in by_id:
            # A span under a parent that is still open heads its own subtree.
            roots.append(span.span_id)
        else:
            children[span.parent_span_id].append(span.span_id)
    return SpanTree(
        spans=MappingProxyType(by_id),
        roots=tuple(roots),
        children=MappingProxyType({key: tuple(value) for key, value in children.items()}),
    )


def load_historical(record: bytes | str | Any) -> dict[str, Any]:
    """A run record as current names, also when it was written before this contract.

    Spans that wrote ``parent_id`` load (the schema's x-historicalAliases) and
    come back with ``parent_span_id``; a record without
    ``metadata.completion_receipt`` keeps that key absent (it identifies a
    record produced before the projection contract).  Raises
    :class:`InvalidDocument` for anything else the contract refuses.
    """
    value: dict[str, Any] = encode(decode(RECORD_DOCUMENT_TYPE, record, historical=True))
    return value
