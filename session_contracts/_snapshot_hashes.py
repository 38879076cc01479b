"""The hashes a recap snapshot carries, and how a verifier checks them.

docs/hashing.md section 4 is the specification; this module is its reference
implementation, shared by the reference producer and ``session-contracts verify``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from session_contracts._canonical import content_hash
from session_contracts._errors import Finding, json_path

__all__ = [
    "BINDING_TARGETS",
    "ExtensionBinding",
    "classify_extensions",
    "content_hash_of_sources",
    "projection_hash",
    "record_hash",
    "verify_snapshot",
]

BINDING_TARGETS = ("projectionHash", "contentHash")
# Removed from a snapshot before its projection hash is taken (docs/hashing.md 4.3).
_NOT_PROJECTED = ("projectionHash", "source", "extensions")


def record_hash(event: Mapping[str, Any]) -> str:
    """The hash of a canonical session event, every member as stored."""
    return content_hash(dict(event))


def content_hash_of_sources(sources: Sequence[Mapping[str, Any]]) -> str:
    """contentHash: the hash of ``[{"id", "recordHash"}, ...]`` in event-id order."""
    return content_hash([{"id": s["id"], "recordHash": s["recordHash"]} for s in sources])


def projection_hash(snapshot: Mapping[str, Any]) -> str:
    """projectionHash: the snapshot without projectionHash, source and extensions."""
    return content_hash({k: v for k, v in snapshot.items() if k not in _NOT_PROJECTED})


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


def verify_snapshot(
    snapshot: Mapping[str, Any],
    base: Sequence[str | int] = (),
    journal_record_hashes: Mapping[int, str] | None = None,
) -> list[Finding]:
    """Recompute every hash a snapshot carries; one finding per mismatch.

    ``journal_record_hashes`` (event id -> record hash from the journal), when
    given, also checks each source event's recordHash.
    """
    findings: list[Finding] = []
    sources = snapshot.get("source", {}).get("events", [])
    ids = [s.get("id") for s in sources]
    if any(not isinstance(a, int) or not isinstance(b, int) or a >= b for a, b in _pairs(ids)):
        findings.append(
            Finding(
                json_path([*base, "source", "events"]),
                "source_events_not_increasing",
                "source event ids are not strictly increasing",
                "list each contributing event once, in event-id order",
            )
        )
    expected_content = content_hash_of_sources(sources)
    if snapshot.get("contentHash") != expected_content:
        findings.append(
            Finding(
                json_path([*base, "contentHash"]),
                "content_hash_mismatch",
                f"contentHash is {snapshot.get('contentHash')!r}; the source events hash to "
                f"{expected_content}",
                "compute contentHash over source.events as docs/hashing.md section 4.2 says",
            )
        )
    expected_projection = projection_hash(snapshot)
    if snapshot.get("projectionHash") != expected_projection:
        findings.append(
            Finding(
                json_path([*base, "projectionHash"]),
                "projection_hash_mismatch",
                f"projectionHash is {snapshot.get('projectionHash')!r}; the projection hashes to "
                f"{expected_projection}",
                "hash the snapshot without projectionHash, source and extensions "
                "(docs/hashing.md section 4.3); extensions must not be included",
            )
        )
    if journal_record_hashes is not None:
        for index, source in enumerate(sources):
            event_id = source.get("id")
            expected = journal_record_hashes.get(event_id) if isinstance(event_id, int) else None
            where = json_path([*base, "source", "events", index, "recordHash"])
            if expected is None:
                findings.append(
                    Finding(
                        where,
                        "source_event_missing",
                        f"event {source.get('id')} is not in the journal",
                        "a snapshot may only name events the journal holds",
                    )
                )
            elif source.get("recordHash") != expected:
                findings.append(
                    Finding(
                        where,
                        "record_hash_mismatch",
                        f"recordHash of event {source.get('id')} differs from the journal's "
                        f"{expected}",
                        "hash the whole stored event (docs/hashing.md section 4.1)",
                    )
                )
    for binding in classify_extensions(snapshot):
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


def _pairs(items: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    previous: Any = None
    first = True
    for item in items:
        if not first:
            yield previous, item
        previous, first = item, False
