"""The recap of a file of Harn stored events: ``session-contracts recap --stored-events``.

The file holds Harn ``StoredEvent`` values as serde writes them: JSON Lines, one
event a line in store order, or, for a name ending in ``.json``, one JSON array of
events (or a single event). Every event is checked (docs/recap.md section 11) and
the first findings are reported at ``FILE:LINE`` (``$[INDEX]`` paths in an array);
only the events the query reads are kept in memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal import MAX_FINDINGS
from session_contracts.recap.service import (
    RecapOutcome,
    recap_of_stored_events,
)
from session_contracts.recap.stored_read import StoredEventOrder
from session_contracts.redaction.engine import RedactionPolicy

__all__ = ["recap_of_stored_file"]


def _events(path: str, found: list[Finding]) -> Iterator[tuple[str, str, Any]]:
    """(source, path prefix, event) of each event of the file; unreadable lines go to
    ``found``."""
    from session_contracts.input_files import iter_input_documents

    array = path.endswith(".json")
    for document in iter_input_documents(path, jsonl=not array):
        if document.error is not None:
            found.extend(
                Finding(f.path, f.code, f.message, f.hint, source=document.source)
                for f in document.error.findings
            )
        elif array and isinstance(document.value, list):
            for index, event in enumerate(document.value):
                yield document.source, f"$[{index}]", event
        else:
            yield document.source, "$", document.value
        if len(found) >= MAX_FINDINGS:
            return


def _checked(path: str, found: list[Finding]) -> Iterator[Mapping[str, Any]]:
    order = StoredEventOrder()
    for source, prefix, event in _events(path, found):
        problems = order.findings(event)
        found.extend(
            Finding(prefix + f.path[1:], f.code, f.message, f.hint, source=source) for f in problems
        )
        if len(found) >= MAX_FINDINGS:
            return
        if not problems:
            yield event


def recap_of_stored_file(
    path: str, query: Mapping[str, Any], *, policy: RedactionPolicy | None = None
) -> RecapOutcome:
    """The recap of the stored events in ``path`` for ``query`` (checked first: an
    invalid query is :class:`InvalidDocument` before the file is opened). A file with
    an invalid event is :class:`InvalidDocument` with its first findings."""
    from session_contracts.recap.query import query_echo

    query_echo(query)
    found: list[Finding] = []
    outcome = recap_of_stored_events(_checked(path, found), query, policy=policy)
    if found:
        raise InvalidDocument(found[:MAX_FINDINGS])
    return outcome
