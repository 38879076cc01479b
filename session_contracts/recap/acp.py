"""The ACP adapter: JSON-RPC 2.0 over stdio, one JSON message per line.

One method, ``harn.session_recap.query``, whose params are the query fields
in either spelling and whose result is the availability envelope (the very
bytes :func:`envelope_bytes` writes, embedded verbatim).  Errors (docs/recap.md,
"ACP"):

=======  =====================  ==================================================
code     message                when
=======  =====================  ==================================================
-32700   Parse error            the line is not strict JSON (``data`` says why)
-32600   Invalid Request        not a JSON-RPC 2.0 request object, an empty batch,
                                or a line longer than :data:`MAX_LINE_BYTES`
-32601   Method not found       any other method
-32602   Invalid params         params that are not a valid recap query;
                                ``data`` is ``{code, path, hint}`` of the first finding
-32603   Internal error         never, unless this adapter has a bug
=======  =====================  ==================================================

Notifications (requests without ``id``) get no response.  Batches (a JSON
array of requests) get an array of responses.  End of input ends the loop.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, BinaryIO

import orjson

from session_contracts.errors import Finding, InvalidDocument
from session_contracts.jsontext.strict import loads_strict
from session_contracts.recap.query import query_echo
from session_contracts.recap.service import RecapService, envelope_bytes

__all__ = ["ACP_METHOD", "MAX_LINE_BYTES", "handle_line", "run_acp"]

ACP_METHOD = "harn.session_recap.query"
# A query is a few hundred bytes; a longer line is refused, not buffered.
MAX_LINE_BYTES = 1 << 20
LOG = logging.getLogger("session_contracts.recap")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
_MESSAGES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
}
_NO_ID = object()  # a request without an id member: a notification


class _IntLiteral(str):
    """An integer literal too long for the strict reader (over 4,300 digits), kept as
    written so a request id of any size is echoed exactly (docs/recap.md)."""


_LONG_INTEGER = re.compile(rb"-?[0-9]{4301,}")


def _loads_keeping_long_integers(line: bytes) -> Any:
    """``line`` parsed strictly, each overlong integer literal read as an ``_IntLiteral``.

    The strict reader refuses such literals; here each is first replaced by a
    short placeholder integer outside any string (the strict reader then checks
    everything else), and the placeholders are swapped back in the value.
    """
    literals: dict[int, _IntLiteral] = {}
    pieces: list[bytes] = []
    position = 0
    for match in _LONG_INTEGER.finditer(line):
        if _inside_string(line, match.start()):
            continue
        # A placeholder no JSON text can hold by accident: beyond the id's own digits.
        placeholder = -(10**18) - len(literals)
        literals[placeholder] = _IntLiteral(match.group().decode())
        pieces += [line[position : match.start()], str(placeholder).encode()]
        position = match.end()
    value = loads_strict(b"".join([*pieces, line[position:]]))
    if isinstance(value, dict) and isinstance(value.get("id"), int) and value["id"] in literals:
        value["id"] = literals[value["id"]]
    return value


def _inside_string(line: bytes, offset: int) -> bool:
    """Whether ``offset`` of a JSON text falls inside a string literal."""
    inside = escaped = False
    for byte in line[:offset]:
        if escaped:
            escaped = False
        elif byte == 0x5C and inside:  # backslash
            escaped = True
        elif byte == 0x22:  # quote
            inside = not inside
    return inside


def _id_bytes(request_id: Any) -> bytes:
    if isinstance(request_id, _IntLiteral):
        return request_id.encode()
    if isinstance(request_id, int):
        return str(request_id).encode()  # any size: echoed, not interpreted
    return orjson.dumps(request_id)


def _result(request_id: Any, result: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + _id_bytes(request_id) + b',"result":' + result + b"}"


def _error(request_id: Any, code: int, finding: Finding | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": _MESSAGES[code]}
    if finding is not None:
        error["message"] = f"{_MESSAGES[code]}: {finding.message}"
        error["data"] = {"code": finding.code, "path": finding.path, "hint": finding.hint}
    return (
        b'{"jsonrpc":"2.0","id":'
        + _id_bytes(request_id)
        + b',"error":'
        + orjson.dumps(error)
        + b"}"
    )


def _invalid(message: str, path: str = "$") -> Finding:
    return Finding(path, "invalid_request", message, "send a JSON-RPC 2.0 request object")


def _handle_request(service: RecapService, message: Any) -> bytes | None:
    """The response to one request object, or ``None`` for a notification."""
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, _invalid("a request is a JSON object"))
    request_id = message.get("id", _NO_ID)
    if request_id is not _NO_ID and (
        isinstance(request_id, bool) or not isinstance(request_id, str | int | None)
    ):
        return _error(None, INVALID_REQUEST, _invalid("id is a string, an integer or null", "$.id"))
    respond_to = None if request_id is _NO_ID else request_id
    if message.get("jsonrpc") != "2.0":
        return _error(respond_to, INVALID_REQUEST, _invalid('jsonrpc must be "2.0"', "$.jsonrpc"))
    method = message.get("method")
    if not isinstance(method, str):
        return _error(respond_to, INVALID_REQUEST, _invalid("method is a string", "$.method"))
    unknown = sorted(set(message) - {"jsonrpc", "id", "method", "params"})
    if unknown:
        return _error(
            respond_to, INVALID_REQUEST, _invalid(f"{unknown[0]!r} is not a request member")
        )
    if request_id is _NO_ID:
        return None  # a notification: never answered, so not worth a projection
    if method != ACP_METHOD:
        return _error(
            request_id,
            METHOD_NOT_FOUND,
            Finding(
                "$.method",
                "method_not_found",
                f"there is no method {method[:80]!r}",
                f"call {ACP_METHOD}",
            ),
        )
    params = message.get("params", {})
    if not isinstance(params, Mapping):
        return _error(
            request_id,
            INVALID_PARAMS,
            Finding(
                "$",
                "wrong_type",
                "params must be an object of query fields",
                'send params such as {"sessionId": "sess-1"}',
            ),
        )
    try:
        query = query_echo(params)
    except InvalidDocument as exc:
        return _error(request_id, INVALID_PARAMS, exc.findings[0])
    return _result(request_id, envelope_bytes(service.answer(query).envelope))


def handle_line(service: RecapService, line: bytes) -> bytes | None:
    """The response line (without newline) to one input line, or ``None`` for none."""
    try:
        message = loads_strict(line)
    except InvalidDocument as exc:
        if exc.findings[0].code != "json_number_out_of_range":
            return _error(None, PARSE_ERROR, exc.findings[0])
        try:
            message = _loads_keeping_long_integers(line)
        except InvalidDocument as again:
            return _error(None, PARSE_ERROR, again.findings[0])
    try:
        if not isinstance(message, list):
            return _handle_request(service, message)
        if not message:
            return _error(None, INVALID_REQUEST, _invalid("a batch holds at least one request"))
        answers = [_handle_request(service, item) for item in message]
        kept = [answer for answer in answers if answer is not None]
        return b"[" + b",".join(kept) + b"]" if kept else None
    except Exception:  # a bug of this adapter: answer within the protocol
        LOG.exception("ACP request failed")
        return _error(None, INTERNAL_ERROR)


def _discard_rest_of_line(stream: BinaryIO) -> None:
    while True:
        chunk = stream.readline(MAX_LINE_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return


def run_acp(service: RecapService, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer JSON-RPC requests from ``stdin`` on ``stdout`` until end of input; returns 0."""
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return 0
        if len(line) > MAX_LINE_BYTES:
            if not line.endswith(b"\n"):
                _discard_rest_of_line(stdin)
            response: bytes | None = _error(
                None,
                INVALID_REQUEST,
                _invalid(f"the line is longer than {MAX_LINE_BYTES:,} bytes"),
            )
        elif not line.strip():
            continue
        else:
            response = handle_line(service, line)
        if response is not None:
            stdout.write(response + b"\n")
            stdout.flush()
