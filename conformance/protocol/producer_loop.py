"""The producer side: answer the harness's commands with Python functions.

A third party wraps its own implementation in a few lines::

    from session_contracts.conformance.protocol import serve, Rejected

    def reduce_health(case_input):
        return {"facts": my_runtime.health_facts(case_input["observations"])}

    serve({"health.reduce": reduce_health},
          implementation={"name": "my-runtime", "version": "1.0", "language": "python"},
          contracts=["session-health"])
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO

import orjson

from session_contracts.accel import paused_gc
from session_contracts.jsontext.wire import dumps_wire, loads_wire

__all__ = ["PROTOCOL_VERSION", "Handler", "Rejected", "Skipped", "serve"]

PROTOCOL_VERSION = 1
MAX_COMMAND_BYTES = 256 * 1024 * 1024

Handler = Callable[[Mapping[str, Any]], Any]


class Rejected(Exception):
    """Raise from a handler when the input breaks the contract.

    ``code`` and ``path`` name one finding (a code of the rejection vocabulary
    at a JSON path into the case input, docs/protocol.md); ``findings``, when
    given, lists every finding of the input, each ``{"code", "path",
    "message"?}``, and is answered as the rejection's ``findings`` member.
    """

    def __init__(
        self,
        code: str,
        path: str,
        message: str,
        findings: Sequence[Mapping[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.code, self.path, self.message = code, path, message
        self.findings: tuple[Mapping[str, str], ...] = tuple(findings)

    def to_json(self) -> dict[str, Any]:
        """The rejection as the protocol answers it."""
        answer: dict[str, Any] = {"code": self.code, "path": self.path, "message": self.message}
        if self.findings:
            answer["findings"] = [dict(finding) for finding in self.findings]
        return answer


class Skipped(Exception):
    """Raise from a handler for a case the implementation knowingly does not support."""

    def __init__(self, reason: str, issue_url: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.issue_url = reason, issue_url


def answer_request(
    seq: Any, handler: Handler | None, case_input: Any, operation: Any
) -> dict[str, Any]:
    if handler is None:
        return {
            "seq": seq,
            "outcome": "skipped",
            "reason": f"operation {operation!r} not supported",
        }
    try:
        return {"seq": seq, "outcome": "result", "output": handler(case_input)}
    except Rejected as rejected:
        return {
            "seq": seq,
            "outcome": "rejected",
            "rejection": rejected.to_json(),
        }
    except Skipped as skipped:
        answer: dict[str, Any] = {"seq": seq, "outcome": "skipped", "reason": skipped.reason}
        if skipped.issue_url:
            answer["issue_url"] = skipped.issue_url
        return answer
    except Exception as exc:  # the producer's own failure, reported rather than fatal
        return {
            "seq": seq,
            "outcome": "errored",
            "message": f"{type(exc).__name__}: {exc}",
            "context": {"traceback": traceback.format_exc(limit=20)},
        }


def serve(
    handlers: Mapping[str, Handler],
    *,
    implementation: Mapping[str, str],
    contracts: Sequence[str],
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Speak the producer protocol until ``stop`` or end of input; returns an exit status."""
    reader = stdin or sys.stdin.buffer
    writer = stdout or sys.stdout.buffer

    def send(message: Mapping[str, Any]) -> None:
        try:
            line = dumps_wire(message)
        except TypeError as exc:  # an output that is not JSON: report it as our error
            line = orjson.dumps(
                {
                    "seq": message.get("seq"),
                    "outcome": "errored",
                    "message": f"output is not JSON: {exc}",
                }
            )
        writer.write(line + b"\n")
        writer.flush()

    while True:
        line = reader.readline(MAX_COMMAND_BYTES)
        if not line:
            return 0
        if not line.strip():
            continue
        try:
            # A case of thousands of events parses to hundreds of thousands of containers
            # and no cycle: the collector, held off, does not walk them again and again.
            with paused_gc():
                command = loads_wire(line)
        except ValueError as exc:
            # The harness spoke garbage: nothing sensible to answer, but say why.
            sys.stderr.write(
                f"producer: a command is not JSON ({exc}); the protocol is one JSON "
                'object a line, e.g. {"cmd": "start", "protocol_version": 1}\n'
            )
            sys.stderr.flush()
            return 2
        kind = command.get("cmd") if isinstance(command, dict) else None
        if kind == "start":
            send(
                {
                    "protocol_version": PROTOCOL_VERSION,
                    "implementation": dict(implementation),
                    "contracts": list(contracts),
                    "operations": sorted(handlers),
                }
            )
        elif kind == "run":
            case = command.get("case")
            if not isinstance(case, dict) or not isinstance(case.get("operation"), str):
                what = (
                    "the run command has no case object"
                    if not isinstance(case, dict)
                    else "the case has no string operation"
                )
                send(
                    {
                        "seq": command.get("seq"),
                        "outcome": "errored",
                        "message": f"{what}: "
                        '{"cmd": "run", "seq": N, "case": {"operation": OP, "input": {...}}}',
                    }
                )
                continue
            operation = case["operation"]
            send(
                answer_request(
                    command.get("seq"), handlers.get(operation), case.get("input"), operation
                )
            )
        elif kind == "stop":
            return 0
        else:
            sys.stderr.write(
                f"producer: unknown command {kind!r}; the commands are start, run and stop\n"
            )
            sys.stderr.flush()
            return 2
