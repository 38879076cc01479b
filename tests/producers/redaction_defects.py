"""The reference producer with one redaction detector missing, chosen by argv[1].

``POLICY/KIND`` (``default/jwt``, ``extended/url_password``, ...) turns that
detector off in ``redaction.apply`` under that policy; ``default/url_credentials``
drops Harn's standalone-URL step and ``default/sensitive_key`` its sensitive JSON
keys.  Everything else is the reference.  tests/integration/test_redaction_apply.py proves
the ``redaction.apply`` check catches each one at default settings.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from serving import serve_as

from session_contracts.conformance.protocol import Handler
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.redaction import vectors
from session_contracts.redaction.engine import RedactionPolicy
from session_contracts.redaction.vectors import POLICY_NAMES, policy_named

__all__ = ["defective_handler", "main"]


def _without(policy: RedactionPolicy, kind: str) -> RedactionPolicy:
    if kind == "url_credentials":
        return replace(policy, url_params=None)
    if kind == "sensitive_key":
        return replace(policy, sensitive_keys=None)
    return policy.disable(kind)


def defective_handler(defect: str) -> Handler:
    """``redaction.apply`` with the detector ``defect`` (``POLICY/KIND``) turned off."""
    broken_policy, _, kind = defect.partition("/")
    if broken_policy not in POLICY_NAMES or not kind:
        raise SystemExit(f"unknown defect {defect!r}: POLICY/KIND, POLICY one of {POLICY_NAMES}")
    broken = _without(policy_named(broken_policy), kind)

    def with_the_defect(name: str) -> RedactionPolicy:
        return broken if name == broken_policy else policy_named(name)

    def handler(case: Mapping[str, Any]) -> Any:
        # The reference's handler, input checks included, over the broken policy.
        vectors.policy_named = with_the_defect
        try:
            return HANDLERS["redaction.apply"](case)
        finally:
            vectors.policy_named = policy_named

    return handler


def main() -> int:
    handlers = {**HANDLERS, "redaction.apply": defective_handler(sys.argv[1])}
    return serve_as("redaction defect", handlers)


if __name__ == "__main__":
    sys.exit(main())
