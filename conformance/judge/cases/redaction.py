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

__all__ = [
    "alone_canaries",
    "apply_edge_cases",
    "provider_alone_cases",
    "provider_rule_cases",
    "recap_alone_cases",
    "recap_rule_cases",
    "redaction_rule_texts",
]

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
    from session_contracts.redaction.canaries import canaries, canary_secrets
    from session_contracts.redaction.engine import redact_text
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
    from session_contracts.redaction.canaries import canary_secrets

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


# -- Harn's redaction rules, through the operations that redact -------------------------------
# redaction.apply states each rule alone, but a producer need not declare it (every operation
# is optional): recap.project and runrecord.provider_call_response must show the same rules
# through their own answers, judged whole against the reference's (recap.semantics,
# runrecord.response-semantics). docs/redaction.md, part 1, states each rule.

# Word characters of Unicode 14.0 that are not ASCII (a Latin and a Cyrillic letter, a CJK
# ideograph, a combining mark, an Arabic-Indic digit): no \b between one of them and a token,
# so the token is kept; an ASCII \b sees a boundary there and redacts it.
_WORD_CHARACTERS_OF_UNICODE_14 = ("\u00e9", "\u0436", "\u65e5", "\u0301", "\u0663")


def _beside(letters: tuple[str, ...]) -> list[str]:
    """The sample token with each letter before it, after it, and on both sides."""
    from session_contracts.redaction.vectors import SAMPLE_TOKEN

    return [
        text
        for letter in letters
        for text in (letter + SAMPLE_TOKEN, SAMPLE_TOKEN + letter, letter + SAMPLE_TOKEN + letter)
    ]


def _multibyte_matches() -> list[str]:
    """Matches that hold 2-, 3- and 4-byte characters, so a placeholder's length in UTF-8 bytes
    differs from its length in characters (and in UTF-16 units), and Harn's case-folding
    specials under (?i): K and S match U+212A KELVIN SIGN and U+017F LONG S, i never matches
    U+0130 or U+0131; a class under (?i) is folded too."""
    from session_contracts.redaction.vectors import SAMPLE_TOKEN

    return [
        "-----BEGIN PRIVATE KEY-----\ncl\u00e9 \u65e5\u672c \U0001f600\n-----END PRIVATE KEY-----",
        f"-----BEGIN RSA PRIVATE KEY-----\n\u00e9{SAMPLE_TOKEN}\n-----END RSA PRIVATE KEY-----",
        "Bearer\u00a0abcdefghijklmnop",  # \s is Unicode White_Space: 2 bytes
        "Bearer\u0085abcdefghijklmnop",  # White_Space that ECMAScript's \s lacks
        "Bearer\u3000abcdefghijklmnop",  # 3 bytes
        "Bearer\ufeffabcdefghijklmnop",  # not White_Space (ECMAScript's \s has it): kept
        "password\u2003=\u3000abc123",
        "to\u212aen=abc123",  # KELVIN SIGN in the keyword
        "pa\u017f\u017fword=abc123",  # LONG S in the keyword
        "\u017fecret: hidden",
        "token=abc1\u212a\u017fxyz",  # folded into the value's class
        "Bearer abcdefghijkl\u212a\u017f",
        "BEARER abcdefghijklmnop",
        "\u0131d_token=abc123",  # U+0131 is not i: kept
        "\u0130D_TOKEN=abc123",  # U+0130 is not I: kept
    ]


# Longer than Harn's window (262,144 bytes, docs/redaction.md part 1 step 4), so the patterns
# read windows of 262,144 bytes every 253,952 and every pattern reads the original text.
_WINDOW, _STEP, _LONG_TEXT_BYTES = 262_144, 262_144 - 8_192, 300_000


def _long_text() -> str:
    """One text past the first window: a key block holding a token in the first window only
    and one in the second window only (windows redact the token and keep the block's lines;
    one pass redacts the whole block), and a bearer token from before the second window's
    start to past the first window's end, longer than the overlap: no window holds it whole,
    so Harn keeps it, where one pass redacts it."""
    from session_contracts.redaction.vectors import SAMPLE_TOKEN

    block = f"-----BEGIN RSA PRIVATE KEY-----\n{SAMPLE_TOKEN}\n-----END RSA PRIVATE KEY-----"
    placed = (
        (1_000, block),
        (_STEP - 100, "Bearer " + "c" * 9_000),
        (_WINDOW + 20_000, block),
    )
    pieces, position = [], 0
    for offset, text in placed:
        pieces += ["a " * ((offset - position) // 2), " " * ((offset - position) % 2), text]
        position = offset + len(text)
    pieces.append(" " * (_LONG_TEXT_BYTES - position))
    return "".join(pieces)


def redaction_rule_texts() -> dict[str, list[str]]:
    """The texts of each rule, by what they decide."""
    from session_contracts.redaction.vectors import LATER_UNICODE_LETTERS

    return {
        "word characters of Unicode 14.0 that are not ASCII beside a token (kept: \\b is "
        "Unicode's)": _beside(_WORD_CHARACTERS_OF_UNICODE_14),
        "letters assigned after Unicode 14.0 beside a token (redacted: \\b's table is "
        "Unicode 14.0's)": _beside(LATER_UNICODE_LETTERS),
        "matches holding multibyte characters (each placeholder's length in UTF-8 bytes) "
        "and the case-folding specials under (?i)": _multibyte_matches(),
    }


def _recap_prompts(texts: list[str]) -> list[dict[str, Any]]:
    from session_contracts.conformance.judge.cases.operations import recap_event

    rows: list[tuple[str, dict[str, Any]]] = [
        ("message", {"role": "user", "visibility": None, "text": text}) for text in texts
    ]
    rows.append(("tool_call", {"callId": "c1", "toolName": "search", "input": {"notes": texts}}))
    return [
        recap_event(index + 1, "sess-1", "run-1", "turn-1", None, kind, payload)
        for index, (kind, payload) in enumerate(rows)
    ]


def recap_rule_cases() -> list[ExplicitCase]:
    """``recap.semantics``: each rule's texts as prompts and in a tool call's input, and one
    prompt past Harn's first 256 KiB window."""
    cases = [
        ExplicitCase(
            "recap.project",
            {"events": _recap_prompts(texts), "query": {"sessionId": "sess-1"}},
            f"recap redaction (docs/redaction.md part 1): {what}",
        )
        for what, texts in redaction_rule_texts().items()
    ]
    cases.append(
        ExplicitCase(
            "recap.project",
            {"events": _recap_prompts([_long_text()])[:1], "query": {"sessionId": "sess-1"}},
            "recap redaction of a text over 256 KiB: Harn's windows (docs/redaction.md part 1 "
            "step 4), secrets inside one window, in the overlap and across windows",
        )
    )
    return cases


def provider_rule_cases() -> list[ExplicitCase]:
    """``runrecord.response-semantics``: each rule's texts in the response text and as a native
    tool call's arguments, and a response text past Harn's first 256 KiB window."""
    cases = []
    for what, texts in [*redaction_rule_texts().items(), ("a text over 256 KiB", [_long_text()])]:
        response = {
            "call_id": "call-1",
            "iteration": 1,
            "span_id": None,
            "text": "\n".join(texts),
            "tool_calls": (
                [{"id": "tc-1", "name": "search", "arguments": {"notes": texts}}]
                if len(texts) > 1
                else []
            ),
        }
        cases.append(
            ExplicitCase(
                "runrecord.provider_call_response",
                {"response": response, "execution_id": None},
                f"provider_call_response redaction (docs/redaction.md part 1): {what}",
            )
        )
    return cases


# -- sensitive names and the two text views, through the provider response --------------------
# Near misses of the key rule: a suffix not at the end, a plural, a space (not dropped), full-
# width letters (not lower-cased), a name that only reads like one.
_KEPT_NAMES = (
    "max_tokens",
    "secret_santa",
    "signing_key",
    "password_hint",
    "apikeys",
    "api key",
    "\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24",
)


def sensitive_key_names() -> list[str]:
    """Every name the default policy's key rule makes sensitive, each exact name as written
    and each suffix after a prefix in snake, upper kebab and camel case, and spelled apart
    (docs/redaction.md, "Sensitive names")."""
    from session_contracts.redaction.policy import default_policy

    rule = default_policy().sensitive_keys
    if rule is None:
        return []
    names = sorted(rule.exact)
    for suffix in rule.suffixes:
        half = len(suffix) // 2
        head, tail = suffix[:half], suffix[half:]
        names += [
            f"openai_{suffix}",
            f"OPENAI-{suffix.upper()}",
            f"openai{head.capitalize()}{tail.capitalize()}",
            f"{head}_{tail}",
        ]
    return names


def _loop_state(lines: list[str]) -> str:
    return "\n".join(["## LOOP_STATE", *lines, "## END_LOOP_STATE"])


def _keyed_response(why: str, text: str, arguments: dict[str, Any]) -> ExplicitCase:
    call = {"id": "tc-1", "name": "configure", "arguments": arguments}
    response = {
        "call_id": "call-1",
        "iteration": 1,
        "span_id": None,
        "text": f"{text}\n<tool_call>{json.dumps(dict(call, id='tc-2'))}</tool_call>",
        "tool_calls": [call],
    }
    return ExplicitCase(
        "runrecord.provider_call_response",
        {"response": response, "execution_id": None},
        f"provider_call_response redaction (docs/runrecord.md 3.5): {why}",
    )


def provider_key_cases() -> list[ExplicitCase]:
    """``runrecord.response-semantics``: every sensitive key name of the default policy and its
    near misses, values of every JSON type under sensitive names, a short and a long value
    under a sensitive name in text, and the two text views' fail-closed replacements, each in
    native and text-protocol tool arguments and in LOOP_STATE."""
    from session_contracts.redaction.vectors import SAMPLE_TOKEN

    names = sensitive_key_names()
    spelled = [name for name in names if " " not in name]
    begin, end = "-----BEGIN PRIVATE KEY-----", "x-----END PRIVATE KEY-----"
    return [
        _keyed_response(
            "each sensitive key name and spelling (replaced whole) and near misses (kept)",
            _loop_state([f"{name}: abc" for name in spelled]),
            dict.fromkeys([*names, *_KEPT_NAMES], "abc"),
        ),
        _keyed_response(
            "a number, a boolean, null, an array and an object under sensitive names are "
            "replaced whole, as a string is",
            _loop_state(["password: 12345678", "api_key: true", "client_secret: nil"]),
            {
                "password": 12345678901,
                "api_key": True,
                "client_secret": None,
                "db_password": ["a", "b"],
                "x_auth_token": {"value": "hunter2-hunter2"},
            },
        ),
        _keyed_response(
            "a value under a sensitive name, shorter than eight characters (kept in the text) "
            "and longer (scrubbed from the text)",
            "the key is abc and the other one is abcdefgh12",
            {"api_key": "abc", "refresh_token": "abcdefgh12"},
        ),
        _keyed_response(
            "a detection wholly inside a key (the JSON view keeps the value, the LOOP_STATE line "
            "view replaces it, numbers and booleans becoming the placeholder string), and one "
            "reaching from the key across the syntax into the value (replaced whole)",
            _loop_state(
                [
                    f"{SAMPLE_TOKEN}: h\u00e9llo w\u00f6rld",
                    f"{SAMPLE_TOKEN}ab: 1",
                    f"{SAMPLE_TOKEN}abcd: true",
                    f"{begin}: {end}",
                ]
            ),
            {SAMPLE_TOKEN: "hello", begin: end},
        ),
    ]
