"""Session recaps (seed 002): the projection, the query, the service and its HTTP and ACP
adapters; the reference producer answers with the projection.

A recap is a deterministic, read-only projection of a session's canonical
events (``session_contracts.journal``), grouped by prompt turn and
agent-loop iteration: ``schemas/session-recap-v1.schema.json``.  The pieces:

* :func:`query_echo` / :func:`coerce_http_params`: what a query means,
  in either spelling (pure);
* :func:`project`: events in, snapshot out (pure: no I/O, no model);
* :class:`RecapService`: reads the SQLite journal read-only and answers with
  an availability envelope, never a traceback;
* :func:`create_app` / :func:`serve` (HTTP, ``GET /sessions/{sessionId}/recap``)
  and :func:`run_acp` (JSON-RPC 2.0 over stdio, ``harn.session_recap.query``),
  which write the same bytes (:func:`envelope_bytes`) for the same query.

``docs/recap.md`` specifies every member, count and status code.
"""

from typing import TYPE_CHECKING

from session_contracts.recap.acp import ACP_METHOD, run_acp
from session_contracts.recap.projection import (
    SNAPSHOT_DOCUMENT_TYPE,
    EventRecord,
    SourceRecord,
    project,
    project_stored,
    with_extensions,
)
from session_contracts.recap.query import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    QUERY_DOCUMENT_TYPE,
    clamp_limit,
    coerce_http_params,
    coerce_params,
    query_echo,
)
from session_contracts.recap.service import (
    ENVELOPE_DOCUMENT_TYPE,
    UNAVAILABLE_REASONS,
    RecapOutcome,
    RecapService,
    envelope_bytes,
    recap_of_stored_events,
)
from session_contracts.recap.stored_file import recap_of_stored_file
from session_contracts.recap.stored_read import StoredEventOrder, StoredRead
from session_contracts.redaction.gate import redact_texts

if TYPE_CHECKING:
    from session_contracts.recap.http import create_app, serve_http
    from session_contracts.recap.http import serve_http as serve

__all__ = [
    "ACP_METHOD",
    "DEFAULT_LIMIT",
    "ENVELOPE_DOCUMENT_TYPE",
    "MAX_LIMIT",
    "QUERY_DOCUMENT_TYPE",
    "SNAPSHOT_DOCUMENT_TYPE",
    "UNAVAILABLE_REASONS",
    "EventRecord",
    "RecapOutcome",
    "RecapService",
    "SourceRecord",
    "StoredEventOrder",
    "StoredRead",
    "clamp_limit",
    "coerce_http_params",
    "coerce_params",
    "create_app",
    "envelope_bytes",
    "project",
    "project_stored",
    "query_echo",
    "recap_of_stored_events",
    "recap_of_stored_file",
    "redact_texts",
    "run_acp",
    "serve",
    "serve_http",
    "with_extensions",
]


def __getattr__(name: str) -> object:
    # The HTTP adapter needs the [serve] extra (uvicorn, starlette): imported on first use,
    # so that the projection, the service and the ACP adapter work on a default install.
    if name in {"create_app", "serve_http", "serve"}:
        from session_contracts.recap import http

        # ``serve`` is the earlier name of serve_http, kept for callers that use it (the
        # producer side of the protocol has its own ``serve``).
        return getattr(http, "serve_http" if name == "serve" else name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
