"""Explicit cases with each pattern of the default redaction catalog alone.

A canary case that plants its secret under a sensitive member name
(``password``) too passes a producer that lacks the secret's pattern: the
member is redacted by name, and a producer that remembers what it redacted
scrubs the other spellings as well. So for every pattern of the default
policy (``schemas/redaction-policy.default.json``, docs/redaction.md "The
catalog") these cases plant that pattern's canary (checked to match that
pattern and no other) only where no member name redacts it: alone as the
whole text, behind a label, inside prose of 2-, 3- and 4-byte UTF-8 text,
and as a value at every depth of tool arguments under names that are not
sensitive. One case per pattern for ``redaction.canaries``
(``runrecord.provider_call_response``) and one for
``redaction.recap-canaries`` (``recap.project``): a producer without any one
pattern leaks that pattern's secret. A placement the reference itself does
not redact (none today) is left out, so the cases ask only what the rules
require.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from session_contracts.conformance.judge.cases.explicit import ExplicitCase

__all__ = ["alone_canaries", "apply_edge_cases", "provider_alone_cases", "recap_alone_cases"]

# Where a secret stands in a text: whole, behind a label, amid multibyte prose, between
# arrows (characters that are not word characters, so every \b still holds).
_PLACEMENTS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("alone", lambda secret: secret),
    ("behind a label", lambda secret: f"label: {secret}"),
    ("in 2- and 3-byte prose", lambda secret: f"résumé 日本語 {secret} ünïcödé"),
    ("between 3-byte arrows", lambda secret: f"\u2192{secret}\u2190"),
    ("beside a 4-byte emoji", lambda secret: f"\U0001f600 {secret} \U0001f510"),
)


@functools.cache
def alone_canaries() -> dict[str, str]:
    """Per pattern of the default policy, its canary, when no other pattern catches it
    (each pattern is tried alone with every other one disabled)."""
    from session_contracts.redaction.engine import canaries, canary_secrets, redact_text
    from session_contracts.redaction.policy import default_policy

    policy = default_policy()
    texts, secrets = canaries(), canary_secrets()
    alone = {}
    for kind in policy.kinds:
        catching = []
        for other in policy.kinds:
            only = policy
            for name in policy.kinds:
                if name != other:
                    only = only.disable(name)
            if secrets[kind] not in redact_text(texts[kind], only).text:
                catching.append(other)
        if catching == [kind]:
            alone[kind] = texts[kind]
    return alone


def _arguments(canary: str) -> dict[str, Any]:
    # Member names no sensitive-key rule matches, at three depths and in an array.
    return {"query": canary, "options": {"note": canary, "items": [canary, {"deep": canary}]}}


def _leaks(operation: str, case_input: dict[str, Any], kind: str) -> bool:
    from session_contracts.conformance.protocol import Rejected
    from session_contracts.conformance.reference.producer import HANDLERS
    from session_contracts.redaction.engine import canary_secrets

    try:
        output = HANDLERS[operation](json.loads(json.dumps(case_input)))
    except Rejected:
        return True
    return canary_secrets()[kind] in json.dumps(output, ensure_ascii=False).replace("\\n", "\n")


def provider_alone_cases() -> list[ExplicitCase]:
    """``redaction.canaries``: each pattern's canary in the response text at every placement,
    and in native and text-protocol tool arguments under names that are not sensitive."""
    cases = []
    for kind, canary in sorted(alone_canaries().items()):
        texts = [place(canary) for _, place in _PLACEMENTS]
        text_call = {"id": "tc-9", "name": "search", "arguments": _arguments(canary)}
        text = "\n".join(texts) + f"\n<tool_call>{json.dumps(text_call)}</tool_call>"
        response = {
            "call_id": "call-1",
            "iteration": 1,
            "span_id": None,
            "text": text,
            "tool_calls": [{"id": "tc-1", "name": "search", "arguments": _arguments(canary)}],
        }
        case_input = {"response": response, "execution_id": None}
        if _leaks("runrecord.provider_call_response", case_input, kind):
            continue
        where = ", ".join(what for what, _ in _PLACEMENTS)
        cases.append(
            ExplicitCase(
                "runrecord.provider_call_response",
                case_input,
                f"the {kind} pattern alone (docs/redaction.md, the catalog): its secret {where}, "
                "and in tool arguments under names that are not sensitive, is redacted",
            )
        )
    return cases


def _recap_events(canary: str) -> list[dict[str, Any]]:
    from session_contracts.conformance.judge.cases.operations import recap_event

    rows: list[tuple[str, dict[str, Any]]] = [
        ("message", {"role": "user", "visibility": None, "text": place(canary)})
        for _, place in _PLACEMENTS
    ]
    rows += [
        ("loop_checkpoint", {"checkpoint": "iteration_start", "iteration": 1}),
        ("message", {"role": "assistant", "visibility": "public", "text": canary}),
        ("tool_call", {"callId": "c1", "toolName": "search", "input": _arguments(canary)}),
        (
            "tool_result",
            {
                "callId": "c1",
                "toolName": "search",
                "isError": False,
                "output": _arguments(canary),
                "verification": None,
            },
        ),
        ("progress", {"message": canary, "entries": [], "replace": None}),
        ("loop_checkpoint", {"checkpoint": "iteration_end", "iteration": 1}),
    ]
    return [
        recap_event(index + 1, "sess-1", "run-1", "turn-1", None, kind, payload)
        for index, (kind, payload) in enumerate(rows)
    ]


def recap_alone_cases() -> list[ExplicitCase]:
    """``redaction.recap-canaries``: each pattern's canary in prompts at every placement, in
    assistant and progress text, and in tool input and output under names that are not
    sensitive."""
    cases = []
    for kind, canary in sorted(alone_canaries().items()):
        case_input = {"events": _recap_events(canary), "query": {"sessionId": "sess-1"}}
        if _leaks("recap.project", case_input, kind):
            continue
        cases.append(
            ExplicitCase(
                "recap.project",
                case_input,
                f"the {kind} pattern alone (docs/redaction.md, the catalog): its secret in "
                "prompts alone, behind a label and amid multibyte text, in assistant and "
                "progress text and in tool values under names that are not sensitive, is "
                "redacted",
            )
        )
    return cases


# -- redaction.apply: what the vectors alone do not decide ------------------------------------
# Long enough that Harn's reading in 256 KiB windows (docs/redaction.md, part 1 step 4) and
# one pass over the whole text give different answers: the key block lies past the first
# window and holds a token.
_WINDOWED_TEXT_BYTES = 300_000


def _windowed_text() -> str:
    from session_contracts.redaction.vectors import SAMPLE_TOKEN

    block = f"-----BEGIN RSA PRIVATE KEY-----\n{SAMPLE_TOKEN}\n-----END RSA PRIVATE KEY-----"
    return "a " * ((_WINDOWED_TEXT_BYTES - len(block)) // 2) + block


def apply_edge_cases() -> list[ExplicitCase]:
    """``redaction.apply``: tokens beside letters assigned after Unicode 14.0 (word characters
    of a newer engine, not of \\b's table), a text past the first 256 KiB window, and every
    way a case input is malformed, each refused by the stage docs/protocol.md names."""
    from session_contracts.redaction.vectors import (
        LATER_UNICODE_LETTERS,
        POLICY_NAMES,
        SAMPLE_TOKEN,
    )

    cases = [
        ExplicitCase(
            "redaction.apply",
            {"policy": policy, "text": text},
            f"{policy} policy: a token beside U+{ord(letter):04X}, a letter Unicode 14.0 does "
            "not have, is redacted (\\b's word characters are Unicode 14.0's)",
        )
        for policy in POLICY_NAMES
        for letter in LATER_UNICODE_LETTERS
        for text in (letter + SAMPLE_TOKEN, SAMPLE_TOKEN + letter)
    ]
    cases += [
        ExplicitCase(
            "redaction.apply",
            {"policy": policy, "text": _windowed_text()},
            f"{policy} policy: a key block holding a token past the first 256 KiB of the text "
            "(the default policy reads windows, the extended one the whole text)",
        )
        for policy in POLICY_NAMES
    ]
    malformed: tuple[tuple[dict[str, Any], str], ...] = (
        ({"text": "a"}, "a missing policy is invalid_case at $.policy"),
        ({"policy": 5, "text": "a"}, "a policy that is not a string is invalid_case"),
        ({"policy": None, "text": "a"}, "a null policy is invalid_case"),
        ({"policy": "Default", "text": "a"}, "a policy name is matched exactly"),
        ({"policy": "nope", "text": 5, "extra": 1}, "unknown members are judged first, alone"),
        ({"policy": "nope"}, "the policy is judged before the text and value"),
        ({"policy": "default", "text": None}, "a null text is not a string"),
        ({"policy": "default", "text": "a", "value": None}, "a null value beside a text is given"),
        ({"policy": "default", "value": None}, "a null value is a JSON value to redact"),
        ({"policy": "default"}, "neither text nor value"),
    )
    cases += [
        ExplicitCase("redaction.apply", case_input, f"redaction.apply input: {why}")
        for case_input, why in malformed
    ]
    return cases
