"""The HTTP adapter: ``GET /sessions/{sessionId}/recap`` (starlette, served by uvicorn).

Status codes (docs/recap.md, "HTTP"):

* 200 with the availability envelope, available or unavailable: an
  unavailable recap (``session_missing`` included) is a result of the recap
  contract, not a failed request, and its reason is in the body;
* 400 with ``{"error": {"code", "path", "message", "hint"}}`` for a query
  that breaks the contract: a bad value, an unknown or repeated parameter,
  both spellings of one field, a ``sessionId`` parameter that disagrees with
  the path;
* 404 / 405 (same error body) for another path or method;
* 503 (same error body, code ``overloaded``, with ``Retry-After``) when the
  projections running at once are at their bound (``max_concurrent``): the
  server answers at once instead of queueing work it cannot do in time, so
  memory stays bounded by the projections in flight.

Admission has two lanes: a query whose effective ``limit`` is over the
default 4,096 events is large, and at most ``max_concurrent`` of those run at
once; at most ``4 * max_concurrent`` queries run in all, so large ones never
take every slot from small ones. A query whose client has gone before its
projection starts is dropped.

Bodies are compact JSON, ``content-type: application/json``; a 200 body is
exactly :func:`envelope_bytes` of the envelope.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

import anyio.to_thread
import h11
import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

from session_contracts.errors import Finding, InvalidDocument, UsageError
from session_contracts.recap.query import (
    DEFAULT_LIMIT,
    clamp_limit,
    coerce_http_params,
    query_echo,
)
from session_contracts.recap.service import RecapService, envelope_bytes
from session_contracts.redaction.engine import RedactionPolicy

__all__ = [
    "RECAP_ROUTE",
    "bind",
    "create_app",
    "default_max_concurrent",
    "error_body",
    "serve_http",
]

# The path convertor lets a session id hold any character, "/" included.
RECAP_ROUTE = "/sessions/{sessionId:path}/recap"
_JSON = "application/json"
# A recap describes a journal that may grow: never serve one from a cache.
_HEADERS = {"cache-control": "no-store"}
_SESSION_KEYS = ("sessionId", "session_id")
_RETRY_AFTER_SECONDS = 1


def error_body(finding: Finding) -> bytes:
    """``{"error": {"code", "path", "message", "hint"}}`` for one finding."""
    return orjson.dumps(
        {
            "error": {
                "code": finding.code,
                "path": finding.path,
                "message": finding.message,
                "hint": finding.hint,
            }
        }
    )


def _error(status: int, finding: Finding) -> Response:
    return Response(error_body(finding), status_code=status, media_type=_JSON, headers=_HEADERS)


def _http_query(session_id: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The query object of a request: its parameters, with the path's session id."""
    document = coerce_http_params(pairs)
    given = [key for key in _SESSION_KEYS if key in document]
    for key in given:
        if document[key] != session_id:
            raise InvalidDocument(
                [
                    Finding(
                        f"$.{key}",
                        "session_id_mismatch",
                        f"the {key} parameter names another session than the path",
                        "the session is the path's {sessionId}; drop the parameter",
                    )
                ]
            )
    if len(given) < 2:  # both spellings at once is left to the alias rule to refuse
        for key in given:
            del document[key]
        document["sessionId"] = session_id
    return document


def _refuse_invalid_utf8(request: Request) -> None:
    """Percent-escapes must decode to UTF-8: starlette would read ``%FF`` as U+FFFD and
    answer for another session than the one asked for."""
    raw_path = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    try:
        unquote_to_bytes(raw_path).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidDocument([_invalid_utf8("$.sessionId")]) from None
    query = request.scope.get("query_string", b"")
    try:
        parse_qsl(query.decode("latin-1"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise InvalidDocument([_invalid_utf8("$")]) from None


def _answer_bytes(service: RecapService, query: Mapping[str, Any]) -> bytes:
    return envelope_bytes(service.answer(query).envelope)


def _invalid_utf8(where: str) -> Finding:
    return Finding(
        where,
        "invalid_utf8",
        "a percent-escape in the request does not decode to UTF-8",
        "percent-encode the UTF-8 bytes of each character (RFC 3986)",
    )


def default_max_concurrent() -> int:
    """The default bound on large projections at once: one per core."""
    return max(1, os.cpu_count() or 1)


class _Admission:
    """Slots for projections: ``large`` of them for queries over the default limit,
    ``4 * large`` in all; never waits."""

    def __init__(self, large: int) -> None:
        self.large, self.total = large, 4 * large
        self._lock = threading.Lock()
        self._running = self._running_large = 0

    def enter(self, is_large: bool) -> bool:
        with self._lock:
            if self._running >= self.total or (is_large and self._running_large >= self.large):
                return False
            self._running += 1
            self._running_large += is_large
            return True

    def leave(self, is_large: bool) -> None:
        with self._lock:
            self._running -= 1
            self._running_large -= is_large


def _overloaded(bound: int) -> Response:
    finding = Finding(
        "$",
        "overloaded",
        f"the server is running as many recap projections as it allows ({bound}); "
        "the query was not started",
        "retry after the number of seconds in Retry-After, or start the server with a "
        "higher --max-concurrent",
    )
    return Response(
        error_body(finding),
        status_code=503,
        media_type=_JSON,
        headers={**_HEADERS, "retry-after": str(_RETRY_AFTER_SECONDS)},
    )


def create_app(service: RecapService, *, max_concurrent: int | None = None) -> Starlette:
    """The ASGI app serving ``service``; closing the app's lifespan closes the service.

    ``max_concurrent`` bounds the large projections running at once (default:
    the number of cores); more are answered 503 with ``Retry-After``.
    """
    admission = _Admission(max_concurrent or default_max_concurrent())

    async def recap(request: Request) -> Response:
        try:
            _refuse_invalid_utf8(request)
            query = query_echo(
                _http_query(request.path_params["sessionId"], request.query_params.multi_items())
            )
        except InvalidDocument as exc:
            return _error(400, exc.findings[0])
        is_large = clamp_limit(query["limit"]) > DEFAULT_LIMIT
        if not admission.enter(is_large):
            return _overloaded(admission.large if is_large else admission.total)
        try:
            if await request.is_disconnected():
                return Response(status_code=499)  # nobody to answer: no work for them
            # Off the event loop: the projection is CPU work in a worker thread.
            body = await anyio.to_thread.run_sync(_answer_bytes, service, query)
        finally:
            admission.leave(is_large)
        return Response(body, media_type=_JSON, headers=_HEADERS)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
        hint = f"the recap lives at GET {RECAP_ROUTE.replace(':path', '')}"
        message = exc.detail if isinstance(exc, HTTPException) else "internal error"
        return _error(status, Finding("$", code, str(message), hint))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await anyio.to_thread.run_sync(service.close)

    route = Route(RECAP_ROUTE, recap, methods=["GET"])
    # The path convertor's ".*" stops at a line feed, which a session id may hold too.
    route.path_regex = re.compile(route.path_regex.pattern, re.DOTALL)
    app = Starlette(
        routes=[route],
        exception_handlers={HTTPException: http_error, Exception: http_error},
        lifespan=lifespan,
    )
    # No 307 to a path without the trailing slash: /sessions/x/recap/ is not a route (404).
    app.router.redirect_slashes = False
    return app


class JsonErrorH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, answering a request it cannot parse with the JSON
    error body (code ``invalid_http``) instead of a text/plain line."""

    def send_400_response(self, msg: str) -> None:
        body = error_body(
            Finding(
                "$",
                "invalid_http",
                f"the request is not valid HTTP/1.1: {msg}",
                f"send GET {RECAP_ROUTE.replace(':path', '')} as HTTP/1.1",
            )
        )
        headers = [
            (b"content-type", _JSON.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        event = h11.Response(status_code=400, headers=headers, reason=b"Bad Request")
        try:
            for part in (event, h11.Data(data=body), h11.EndOfMessage()):
                data = self.conn.send(part)
                if data:
                    self.transport.write(data)
        except h11.LocalProtocolError:
            # h11 cannot write a response in this state: fall back to uvicorn's own.
            super().send_400_response(msg)
            return
        self.transport.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port``, or a usage error that says why not.

    Bound here, before uvicorn starts, so a busy port or an unknown host is a
    clear error (exit 2) rather than a server log line and exit 3.
    """
    hint = "pick a free port with --port (0 lets the system choose one)"
    if not 0 <= port <= 65535:
        raise UsageError(
            [Finding("$.port", "serve_port_invalid", f"--port {port} is not 0 to 65535", hint)]
        )
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise UsageError(
            [
                Finding(
                    "$.host",
                    "serve_host_invalid",
                    f"--host {host!r} is not an address of this machine: {exc}",
                    "pass an IP address or a name of this machine, e.g. --host 127.0.0.1",
                )
            ]
        ) from None
    family, kind, protocol, _, address = infos[0]
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(2048)
    except OSError as exc:
        listener.close()
        busy = exc.errno == errno.EADDRINUSE
        raise UsageError(
            [
                Finding(
                    "$.port" if busy else "$.host",
                    "serve_port_busy" if busy else "serve_bind_failed",
                    f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                    hint if busy else "pass an address of this machine with --host",
                )
            ]
        ) from None
    return listener


def serve_http(
    journal: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    policy: RedactionPolicy | None = None,
    max_concurrent: int | None = None,
) -> None:
    """Serve recaps of ``journal`` over HTTP until interrupted (uvicorn)."""
    listener = bind(host, port)
    try:
        service = RecapService(journal, policy)
        app = create_app(service, max_concurrent=max_concurrent)
        config = uvicorn.Config(
            app, host=host, port=port, log_level="info", ws="none", http=JsonErrorH11Protocol
        )
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()
