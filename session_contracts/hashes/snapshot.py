"""The hashes a recap snapshot carries, and how a verifier checks them.

docs/hashing.md section 4 is the specification; this module is its reference
implementation, shared by the reference producer and ``session-contracts verify``.
Both snapshot hashes use Harn's canonical JSON (keys in UTF-8 byte order,
compact, numbers and strings as serde_json writes them), not RFC 8785, so that
the same content gives the same hashes as Harn's runtime:

* ``contentHash``: the whole ``source`` object ``{firstEventId, lastEventId, events}``;
* ``projectionHash``: the object ``{schema_version, session_id, query, cursor,
  coverage, content_hash, turns}`` (snake_case keys, camelCase values), as
  Harn's ``recap_projection_hash`` builds it: ``source`` and ``extensions`` are
  outside it.

A source event's ``recordHash`` is our own: the RFC 8785 hash of the stored
event (docs/hashing.md 4.1), since this toolkit has no signed session store.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from session_contracts.errors import Finding, InvalidDocument, json_path
from session_contracts.jsontext.canonical import content_hash
from session_contracts.jsontext.harn_canonical import (
    harn_canonical_bytes,
    harn_sha256,
    harn_sha256_of_parsed,
)

__all__ = [
    "BINDING_TARGETS",
    "ExtensionBinding",
    "classify_extensions",
    "content_hash_of_source",
    "harn_canonical_bytes",
    "harn_sha256",
    "projection_hash",
    "projection_hash_input",
    "record_hash",
    "verify_snapshot",
]


@dataclass(frozen=True, slots=True)
class _CarriedHash:
    """A hash the snapshot carries: its member, the code of a mismatch, what it is the hash
    of, and how to compute it."""

    member: str
    code: str
    hashed: str
    hint: str


# The hashes a snapshot carries, in the order verify_snapshot reports them; an extension
# may bind itself to either (classify_extensions).
_CARRIED_HASHES = (
    _CarriedHash(
        "contentHash",
        "content_hash_mismatch",
        "the source object",
        "hash the whole source object in Harn's canonical JSON (docs/hashing.md 4.2)",
    ),
    _CarriedHash(
        "projectionHash",
        "projection_hash_mismatch",
        "the projection",
        "hash {schema_version, session_id, query, cursor, coverage, content_hash, turns} "
        "in Harn's canonical JSON (docs/hashing.md 4.3); extensions and source are not "
        "included",
    ),
)
BINDING_TARGETS = tuple(carried.member for carried in _CARRIED_HASHES)


def record_hash(event: Mapping[str, Any]) -> str:
    """The record hash of a canonical session event: RFC 8785, every member as stored."""
    return content_hash(dict(event))


def content_hash_of_source(source: Mapping[str, Any]) -> str:
    """contentHash: Harn's canonical hash of the whole ``source`` object."""
    return harn_sha256(dict(source))


def projection_hash_input(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The object projectionHash is taken over, built from a snapshot's members."""
    return {
        "schema_version": snapshot.get("schemaVersion"),
        "session_id": snapshot.get("sessionId"),
        "query": snapshot.get("query"),
        "cursor": snapshot.get("cursor"),
        "coverage": snapshot.get("coverage"),
        "content_hash": snapshot.get("contentHash"),
        "turns": snapshot.get("turns"),
    }


def projection_hash(snapshot: Mapping[str, Any]) -> str:
    """projectionHash: Harn's canonical hash of :func:`projection_hash_input`."""
    return harn_sha256(projection_hash_input(snapshot))


@dataclass(frozen=True, slots=True)
class ExtensionBinding:
    """How one member of ``extensions`` relates to its snapshot."""

    name: str
    state: str  # "bound" | "stale-binding" | "decorative"
    target: str | None


def classify_extensions(snapshot: Mapping[str, Any]) -> list[ExtensionBinding]:
    """Bound, stale-binding or decorative, for each extension (docs/hashing.md 4.4)."""
    extensions = snapshot.get("extensions")
    if not isinstance(extensions, Mapping):
        return []
    out = []
    for name in sorted(extensions, key=lambda key: key.encode("utf-16-be")):
        value = extensions[name]
        if not isinstance(value, Mapping) or "binding" not in value:
            out.append(ExtensionBinding(name, "decorative", None))
            continue
        binding = value["binding"]
        target = binding.get("target") if isinstance(binding, Mapping) else None
        bound = (
            isinstance(binding, Mapping)
            and target in BINDING_TARGETS
            and isinstance(binding.get("hash"), str)
            and binding["hash"] == snapshot.get(target)
        )
        out.append(
            ExtensionBinding(name, "bound" if bound else "stale-binding", target if bound else None)
        )
    return out


def _event_ids(source: Any, parsed: bool) -> list[Any] | None:
    """The ids of the events a source object lists (None for an event that is not an
    object); None when it lists none.  ``parsed``: as ``loads_strict`` read it, so
    every object in it is an exact dict."""
    if not (type(source) is dict or isinstance(source, Mapping)):
        return None
    events = source.get("events")
    if not isinstance(events, list):
        return None
    if parsed or all(map(operator.is_, map(type, events), repeat(dict))):
        try:  # C-level loops: a page lists many events
            return list(map(dict.get, events, repeat("eventId")))
        except TypeError:  # (parsed) an event that is not an object
            pass
    return [event.get("eventId") if isinstance(event, Mapping) else None for event in events]


def _increasing(ids: list[Any]) -> bool:
    """Every id an int and each below the next: ints, all distinct and in order."""
    return all(map(isinstance, ids, repeat(int))) and ids == sorted(set(ids))


def _source_holds(source: Mapping[str, Any], ids: list[Any]) -> bool:
    """Whether the ids are in order (or one at most) and first/last name the ends."""
    first, last = (ids[0], ids[-1]) if ids else (None, None)
    return (
        (len(ids) <= 1 or _increasing(ids))
        and source.get("firstEventId") == first
        and source.get("lastEventId") == last
    )


def _source_findings(source: Any, base: list[str | int], parsed: bool = False) -> list[Finding]:
    """The source object's own consistency: ids increasing, first/last naming the ends."""
    ids = _event_ids(source, parsed)
    if ids is None or _source_holds(source, ids):
        return []  # the usual page: nothing to report
    increasing = _increasing(ids)
    first, last = (ids[0], ids[-1]) if ids else (None, None)
    findings = []
    if len(ids) > 1 and not increasing:
        findings.append(
            Finding(
                json_path([*base, "source", "events"]),
                "source_events_not_increasing",
                "source event ids are not strictly increasing",
                "list each event read once, in event-id order",
            )
        )
    for member, expected in (("firstEventId", first), ("lastEventId", last)):
        if source.get(member) != expected:
            findings.append(
                Finding(
                    json_path([*base, "source", member]),
                    "source_bounds_mismatch",
                    f"source.{member} is {source.get(member)!r}; the events listed give "
                    f"{expected!r}",
                    "name the first and last listed event ids (null when none is listed)",
                )
            )
    return findings


def _holds_as_read(snapshot: Mapping[str, Any], source: Any) -> bool:
    """Whether a snapshot as ``loads_strict`` read it holds on its face: its source's
    ids in order between its bounds, both hashes its own, no extension (so none can be
    stale).  Then ``verify_snapshot`` finds nothing; False sends it to the full path,
    which names what does not hold."""
    if type(source) is not dict or snapshot.get("extensions"):
        return False
    ids = _event_ids(source, parsed=True)
    if ids is None or not _source_holds(source, ids):
        return False
    try:
        return snapshot.get("contentHash") == harn_sha256_of_parsed(source) and snapshot.get(
            "projectionHash"
        ) == harn_sha256_of_parsed(projection_hash_input(snapshot))
    except InvalidDocument:  # a value without a canonical form: the full path says so
        return False


def verify_snapshot(
    snapshot: Mapping[str, Any],
    base: list[str | int] | tuple[str | int, ...] = (),
    journal_record_hashes: Mapping[int, str] | None = None,
    *,
    parsed: bool = False,
) -> list[Finding]:
    """Recompute every hash a snapshot carries; one finding per mismatch.

    ``journal_record_hashes`` (event id -> record hash from the journal), when
    given, also checks each source event's recordHash.  ``parsed``: the snapshot is
    as ``loads_strict`` read it, so the hashes need no type census
    (``harn_sha256_of_parsed``).
    """
    source = snapshot.get("source", {})
    if parsed and journal_record_hashes is None and _holds_as_read(snapshot, source):
        return []  # the usual snapshot: nothing to report, no findings built
    base = list(base)
    findings = _source_findings(source, base, parsed)
    try:
        if parsed:  # content_hash_of_source and projection_hash, without the census
            expected_content: str | None = harn_sha256_of_parsed(
                source if type(source) is dict else dict(source)
            )
            expected_projection: str | None = harn_sha256_of_parsed(projection_hash_input(snapshot))
        else:
            expected_content = content_hash_of_source(source)
            expected_projection = projection_hash(snapshot)
    except InvalidDocument:  # a value without a canonical form (NaN, a lone surrogate)
        expected_content = expected_projection = None
    for carried, expected in zip(
        _CARRIED_HASHES, (expected_content, expected_projection), strict=True
    ):
        if snapshot.get(carried.member) != expected:
            findings.append(
                Finding(
                    json_path([*base, carried.member]),
                    carried.code,
                    f"{carried.member} is {snapshot.get(carried.member)!r}; {carried.hashed} "
                    f"hashes to {expected}",
                    carried.hint,
                )
            )
    if journal_record_hashes is not None and isinstance(source, Mapping):
        for index, event in enumerate(source.get("events", [])):
            event_id = event.get("eventId") if isinstance(event, Mapping) else None
            expected = journal_record_hashes.get(event_id) if isinstance(event_id, int) else None
            where = json_path([*base, "source", "events", index, "recordHash"])
            if expected is None:
                findings.append(
                    Finding(
                        where,
                        "source_event_missing",
                        f"event {event_id} is not in the journal",
                        "a snapshot may only name events the journal holds",
                    )
                )
            elif event.get("recordHash") != expected:
                findings.append(
                    Finding(
                        where,
                        "record_hash_mismatch",
                        f"recordHash of event {event_id} differs from the journal's {expected}",
                        "hash the whole stored event (docs/hashing.md section 4.1)",
                    )
                )
    for binding in classify_extensions(snapshot) if snapshot.get("extensions") else ():
        if binding.state == "stale-binding":
            findings.append(
                Finding(
                    json_path([*base, "extensions", binding.name, "binding"]),
                    "extension_binding_stale",
                    f"extension {binding.name!r} claims a binding that does not hold",
                    "recompute its binding.hash from the current snapshot, or drop the binding "
                    "to make the extension decorative",
                    level="warning",
                )
            )
    return findings
