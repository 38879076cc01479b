"""Our HTTP recap adapter with exactly one defect, for ``certify --http``.

A small starlette app in front of :class:`RecapService`: it reads the query
as the real adapter does (``coerce_http_params``, ``query_echo``), then
breaks one thing.  tests/integration/test_certify_http.py proves each defect is caught by
its check, and that each way of breaking the HTTP exchange itself becomes the
right errored outcome.

Run by hand: ``python tests/producers/faulty_http.py DEFECT JOURNAL [PORT]``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.journal import JournalError, SqliteJournal
from session_contracts.recap import (
    RecapService,
    clamp_limit,
    coerce_http_params,
    envelope_bytes,
    project_stored,
    query_echo,
)
from session_contracts.recap.http import error_body
from session_contracts.redaction.policy import default_policy


def _ignores_snake_aliases(params: list[tuple[str, str]]) -> Response | None:
    # Knows only the camelCase spelling: a snake-case field is "unknown".
    for key, _ in params:
        if "_" in key:
            finding = Finding(f"$.{key}", "unknown_field", f"{key} is not a query field")
            return Response(error_body(finding), status_code=400, media_type="application/json")
    return None


def _wrong_projection_hash(envelope: dict[str, Any]) -> None:
    snapshot = envelope.get("snapshot")
    if isinstance(snapshot, dict):
        digest = snapshot["projectionHash"]
        snapshot["projectionHash"] = digest[:-1] + ("0" if digest[-1] != "0" else "1")


def _drops_a_turn(envelope: dict[str, Any]) -> None:
    snapshot = envelope.get("snapshot")
    if isinstance(snapshot, dict) and snapshot["turns"]:
        snapshot["turns"].pop()


def _ignores_tool_call_id_header(journal: Path, query: dict[str, Any]) -> dict[str, Any] | None:
    # Reads the journal's stored events without their tool_call_id header (Harn's recap
    # reads it before the payload's id); None where the service answers unavailable.
    try:
        with SqliteJournal.open(journal) as opened:
            read = opened.read(
                query["sessionId"],
                from_event_id=query["fromEventId"],
                limit=clamp_limit(query["limit"]),
            )
    except JournalError:
        return None
    events = [
        dict(event, headers={k: v for k, v in event["headers"].items() if k != "tool_call_id"})
        for event in read.events
    ]
    snapshot = project_stored(events, query, rows_beyond=read.pending, policy=default_policy())
    return {"state": "available", "snapshot": snapshot}


# Defects of the reading: the events are read wrongly, the envelope built from them.
READING_DEFECTS = {"ignores_tool_call_id_header": _ignores_tool_call_id_header}

# Defects of the answer: the envelope is rewritten.
ENVELOPE_DEFECTS = {
    "wrong_projection_hash": _wrong_projection_hash,
    "drops_a_turn": _drops_a_turn,
}
# Defects of the exchange itself: each must become an errored outcome.
EXCHANGE_DEFECTS = {
    "answers_500": lambda: Response(b"boom", status_code=500),
    "answers_html": lambda: Response(b"<html>recap</html>", media_type="text/html"),
}
DEFECTS = ("ignores_snake_aliases", *READING_DEFECTS, *ENVELOPE_DEFECTS, *EXCHANGE_DEFECTS)


def create_app(journal: str | Path, defect: str) -> Starlette:
    if defect not in DEFECTS:
        raise SystemExit(f"unknown defect {defect!r}; one of {', '.join(DEFECTS)}")
    service = RecapService(journal)

    def recap(request: Request) -> Response:
        if defect in EXCHANGE_DEFECTS:
            return EXCHANGE_DEFECTS[defect]()
        params = request.query_params.multi_items()
        if defect == "ignores_snake_aliases" and (refused := _ignores_snake_aliases(params)):
            return refused
        try:
            raw = coerce_http_params(params)
            raw["sessionId"] = request.path_params["sessionId"]
            query = query_echo(raw)
        except InvalidDocument as exc:
            return Response(error_body(exc.findings[0]), 400, media_type="application/json")
        envelope = orjson.loads(envelope_bytes(service.answer(query).envelope))
        if defect in READING_DEFECTS:
            envelope = READING_DEFECTS[defect](Path(journal), query) or envelope
        if defect in ENVELOPE_DEFECTS:
            ENVELOPE_DEFECTS[defect](envelope)
        return Response(envelope_bytes(envelope), media_type="application/json")

    return Starlette(routes=[Route("/sessions/{sessionId:path}/recap", recap, methods=["GET"])])


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[3]) if len(sys.argv) > 3 else 8766
    uvicorn.run(create_app(sys.argv[2], sys.argv[1]), host="127.0.0.1", port=port)
