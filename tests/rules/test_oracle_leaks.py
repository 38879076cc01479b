"""Leaks the oracle's own redaction let through: each a detector test.

A secret the reference leaves in its output would make certify pass a producer that leaks
it too, or fail the reference itself. Each test plants
the secret where the leak was measured and asserts it never comes out.
"""

from __future__ import annotations

from typing import Any

from session_contracts.redaction.engine import redact_text
from session_contracts.redaction.policy import extended_policy
from session_contracts.runrecord import provider_call_response

SECRET = "CANARY0MhV9xBpiC4dOLjRGlfCf6y1GOeZ7CGosC"
# Measured: with the leading `A:"` the extended policy's sensitive-key detector misses it;
# without it, the secret is redacted.
LEAKING = f'A:" signing_key: "{SECRET}"'


def test_the_same_secret_without_the_prefix_is_redacted() -> None:
    assert SECRET not in redact_text(f'signing_key: "{SECRET}"', extended_policy()).text


def test_a_sensitive_key_after_a_quoted_label_is_redacted_in_text() -> None:
    assert SECRET not in redact_text(LEAKING, extended_policy()).text


def test_a_sensitive_key_after_a_quoted_label_is_redacted_in_a_provider_response() -> None:
    response: dict[str, Any] = {
        "call_id": "call-1",
        "iteration": 1,
        "span_id": None,
        "text": LEAKING,
        "tool_calls": [],
    }
    output = provider_call_response(response, execution_id=None, policy=extended_policy())
    assert SECRET not in str(output)
