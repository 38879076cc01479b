"""The reference producer with one defect in a runtime-condition operation, chosen by argv[1].

tests/integration/test_conditions.py proves certify and golden catch each one.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from serving import by_name, serve_as

from session_contracts.conformance.reference.producer import HANDLERS


def a2a_moves_the_task(case: Mapping[str, Any]) -> Any:
    # Emitting health "moves" the task to working, as a status update often does.
    update = HANDLERS["health.a2a_status_update"](case)
    update["status"] = {"state": "working"}
    return update


def a2a_final_update(case: Mapping[str, Any]) -> Any:
    update = HANDLERS["health.a2a_status_update"](case)
    update["final"] = True
    return update


def recap_ignores_conditions(case: Mapping[str, Any]) -> Any:
    # A producer that always reads a healthy journal.
    healthy = {
        key: value
        for key, value in case.items()
        if key not in ("journal", "admission", "damagedEventIds")
    }
    return HANDLERS["recap.project"](healthy)


def recap_damage_is_journal_unavailable(case: Mapping[str, Any]) -> Any:
    envelope = HANDLERS["recap.project"](case)
    if envelope.get("reason") == "projection_failed":
        return {"state": "unavailable", "reason": "journal_unavailable"}
    return envelope


def recap_any_damage_fails(case: Mapping[str, Any]) -> Any:
    # Fails the projection for a damaged row the read never meets.
    if case.get("damagedEventIds"):
        return {"state": "unavailable", "reason": "projection_failed"}
    return HANDLERS["recap.project"](case)


DEFECTS = by_name(
    ("health.a2a_status_update", a2a_moves_the_task),
    ("health.a2a_status_update", a2a_final_update),
    ("recap.project", recap_ignores_conditions),
    ("recap.project", recap_damage_is_journal_unavailable),
    ("recap.project", recap_any_damage_fails),
)


def main() -> int:
    operation, handler = DEFECTS[sys.argv[1]]
    return serve_as(f"conditions:{sys.argv[1]}", {**HANDLERS, operation: handler})


if __name__ == "__main__":
    sys.exit(main())
