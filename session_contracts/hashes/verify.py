"""Which hashes each document type carries, and where (for ``verify``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from session_contracts.errors import Finding
from session_contracts.hashes.snapshot import verify_snapshot

__all__ = ["HASH_BEARING", "verify_document"]

# Document type -> where its snapshot sits inside it.
HASH_BEARING: Mapping[str, tuple[str, ...]] = {
    "session-recap.snapshot": (),
    "session-recap.envelope": ("snapshot",),
}


def verify_document(
    doctype: str,
    document: Any,
    journal_record_hashes: Mapping[int, str] | None = None,
    *,
    parsed: bool = False,
) -> list[Finding]:
    """Every hash mismatch of a schema-valid document; [] when it carries none.

    ``parsed``: the document is as ``loads_strict`` read it (``verify_snapshot``).
    """
    base = HASH_BEARING.get(doctype)
    if base is None or not (type(document) is dict or isinstance(document, Mapping)):
        return []
    snapshot: Any = document
    for part in base:
        is_mapping = type(snapshot) is dict or isinstance(snapshot, Mapping)  # (ABC check last)
        snapshot = snapshot.get(part) if is_mapping else None
    if not (type(snapshot) is dict or isinstance(snapshot, Mapping)):
        return []  # an unavailable envelope carries no hash
    return verify_snapshot(snapshot, base, journal_record_hashes, parsed=parsed)
