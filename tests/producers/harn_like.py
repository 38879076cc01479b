"""A session-health producer that does exactly what Harn's runtime does about resets.

Harn's reducer (``crates/harn-vm/src/agent_events/session_health/reducer.rs``)
has no reset path, and its ``reset_transcript`` never touches the session's
health: a transcript reset reaches no health code at all. This producer is the
reference with that one difference: it checks a stream as the reference does
(so it rejects what the reference rejects), then reduces it as if every
``transcript_reset`` observation had never been made. Seed 000's "Resetting the
session transcript resets these observations." is the only rule it breaks, and
that rule's check (``health.transcript-reset``) is recommended, so ``certify``
at its default settings certifies it at ``required``.

``python tests/producers/harn_like.py`` serves it; ``python
tests/producers/harn_like.py DEFECT`` serves it with one more defect of
tests/producers/defects.py (a real required defect must still fail).
Handlers: the session-health operations only, claiming the session-health
contract, as Harn's runtime would.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from serving import serve_as

from session_contracts.conformance.reference.producer import HANDLERS

Handler = Callable[[Mapping[str, Any]], Any]

CONTRACTS = ["session-health"]
OPERATIONS = ("document.roundtrip", "health.reduce", "health.a2a_status_update")


def ignoring_resets(reduce: Handler) -> Handler:
    """``reduce`` for a runtime in which a transcript reset never reaches health."""

    def handler(case: Mapping[str, Any]) -> Any:
        HANDLERS["health.reduce"](case)  # rejects what the reference rejects
        observations = [
            observation
            for observation in case["observations"]
            if observation.get("kind") != "transcript_reset"
        ]
        return reduce(dict(case, observations=observations))

    return handler


def handlers(defect: str | None = None) -> dict[str, Handler]:
    """The Harn-like handlers; with ``defect``, that defect of defects.py as well."""
    chosen: dict[str, Handler] = {name: HANDLERS[name] for name in OPERATIONS}
    if defect is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import defects

        entry = defects.DEFECTS[defect]
        if entry.operation not in chosen:
            raise SystemExit(f"{defect} is a defect of {entry.operation}, not of session health")
        chosen[entry.operation] = entry.handler
    chosen["health.reduce"] = ignoring_resets(chosen["health.reduce"])
    return chosen


def main() -> int:
    defect = sys.argv[1] if len(sys.argv) > 1 else None
    name = "harn-like" if defect is None else f"harn-like+{defect}"
    return serve_as(name, handlers(defect), CONTRACTS)


if __name__ == "__main__":
    sys.exit(main())
