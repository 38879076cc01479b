"""The reference producer behind a proxy that answers wrongly now and then, one way per mode.

``python tests/producers/unreliable.py MODE``:

- ``first_time_wrong``: a recap or health input is answered wrongly the first time it is
  seen, rightly after that (a cache warmed by the first call);
- ``every_seventh_wrong``: every seventh recap or health answer is wrong;
- ``big_integers_off_by_one``: every integer beyond 64 bits in an answer is one more (a
  reader that goes through float64 and back);
- ``hostile:KIND``: every answer is one raw hostile line of :data:`HOSTILE_LINES` (or, for
  ``no_newline`` and ``output_after_stop``, a hostile way of ending).

A wrong answer is the reference's with one more member (``"wrong": true``) in its output.
Used by tests/integration/test_verdicts.py: certify must call the first two flaky, the
third failed, and give every hostile answer a verdict and a report.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from serving import CONTRACTS, serve_as

from session_contracts.conformance.reference.producer import HANDLERS

Handler = Callable[[Mapping[str, Any]], Any]

FLAKY_OPERATIONS = ("recap.project", "health.reduce")

# The body of each hostile answer; {seq} is the case's number.
HOSTILE_LINES = {
    "nan": b'{"seq": {seq}, "outcome": "result", "output": {"x": NaN}}',
    "infinity": b'{"seq": {seq}, "outcome": "result", "output": [Infinity, -Infinity]}',
    "lone_surrogate": b'{"seq": {seq}, "outcome": "result", "output": {"s": "\\ud800"}}',
    "duplicate_keys": b'{"seq": {seq}, "outcome": "result", "output": {"a": 1, "a": 2}}',
    "huge_integer": b'{"seq": {seq}, "outcome": "result", "output": {"n": 1' + b"0" * 400 + b"}}",
    "edge_floats": b'{"seq": {seq}, "outcome": "result", "output": '
    b"[1.7976931348623157e308, 5e-324, -0.0, 1e-400, 123456789012345678901234567890.5]}",
    "deep": b'{"seq": {seq}, "outcome": "result", "output": ' + b"[" * 190 + b"]" * 190 + b"}",
    "too_deep": b'{"seq": {seq}, "outcome": "result", "output": '
    + b"[" * 3000
    + b"]" * 3000
    + b"}",
    "huge_string": b'{"seq": {seq}, "outcome": "result", "output": {"s": "'
    + b"\\u00e9x" * 400_000
    + b'"}}',
    "huge_array": b'{"seq": {seq}, "outcome": "result", "output": [' + b"0," * 500_000 + b"0]}",
    "not_json": b"this is not json",
    "wrong_shape": b'{"seq": {seq}, "outcome": "result", "output": "a string, not an object"}',
    "rejection_nonsense": b'{"seq": {seq}, "outcome": "rejected", "rejection": '
    b'{"code": "\\u0000", "path": "$[[[", "message": "", "findings": [{"code": 1e400}]}}',
}
HOSTILE_ENDINGS = ("no_newline", "output_after_stop")


def _key(operation: str, case: Mapping[str, Any]) -> str:
    return hashlib.sha256(repr((operation, case)).encode()).hexdigest()


def _wrong(output: Any) -> Any:
    return dict(output, wrong=True) if isinstance(output, dict) else {"wrong": output}


def _plus_one(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value + 1 if not -(2**63) <= value < 2**64 else value
    if isinstance(value, dict):
        return {key: _plus_one(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plus_one(item) for item in value]
    return value


def handlers(mode: str) -> dict[str, Handler]:
    seen: set[str] = set()
    answered = [0]

    def proxy(operation: str) -> Handler:
        reference = HANDLERS[operation]

        def handler(case: Mapping[str, Any]) -> Any:
            output = reference(case)
            if mode == "big_integers_off_by_one":
                return _plus_one(output)
            if operation not in FLAKY_OPERATIONS:
                return output
            if mode == "first_time_wrong":
                key = _key(operation, case)
                first = key not in seen
                seen.add(key)
                return _wrong(output) if first else output
            answered[0] += 1
            return _wrong(output) if answered[0] % 7 == 0 else output

        return handler

    return {operation: proxy(operation) for operation in HANDLERS}


def serve_hostile(kind: str) -> int:
    """Answer start as the reference would, then every case with the hostile line."""
    import orjson

    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        command = orjson.loads(raw)
        if command["cmd"] == "start":
            started = {
                "protocol_version": 1,
                "implementation": {"name": f"hostile:{kind}", "version": "0", "language": "python"},
                "contracts": CONTRACTS,
                "operations": sorted(HANDLERS),
            }
            out.write(orjson.dumps(started) + b"\n")
        elif command["cmd"] == "stop":
            if kind == "output_after_stop":
                out.write(b'{"seq": 0, "outcome": "result", "output": {}}\ngarbage\n')
            out.flush()
            return 0
        elif kind == "no_newline":
            out.write(b'{"seq": %d, "outcome": "result", "output": {}}' % command["seq"])
            out.flush()
            return 0
        else:
            # Until stop, a hostile ending answers every case with an empty (wrong) output.
            line = HOSTILE_LINES.get(kind, b'{"seq": {seq}, "outcome": "result", "output": {}}')
            out.write(line.replace(b"{seq}", b"%d" % command["seq"]) + b"\n")
        out.flush()
    return 0


def main() -> int:
    mode = sys.argv[1]
    if mode.startswith("hostile:"):
        return serve_hostile(mode.partition(":")[2])
    return serve_as(f"unreliable:{mode}", handlers(mode))


if __name__ == "__main__":
    sys.exit(main())
