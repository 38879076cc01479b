"""Scrubbing: what a report, a message or an answer shown to people keeps of a text.

Every report repeats producer text (messages, answers, paths); none may repeat a secret
that Harn's default policy or our extended detectors find.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from session_contracts.redaction.engine import redact_text
from session_contracts.redaction.policy import default_policy, extended_policy

__all__ = ["scrub", "scrubbed_value"]


def scrub(text: str) -> str:
    """The text with every secret that the default policy (Harn's) or our extended
    detectors find replaced: a report never repeats a secret either one knows."""
    # Ours first: its key-value detectors would read a Harn placeholder's ":LEN" as a value.
    return redact_text(redact_text(text, extended_policy()).text, default_policy()).text


def scrubbed_value(value: Any) -> Any:
    """A JSON value with every string (member names too) scrubbed of secrets."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {scrub(str(key)): scrubbed_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed_value(item) for item in value]
    return value
