"""Language-neutral redaction vectors, generated from the reference.

Each vector is an input (a text or a JSON value), a policy name (``default``:
Harn's catalog; ``extended``: our detectors) and the exact output of
:func:`~session_contracts.redaction.engine.redact_text` (``text``) or
:func:`~session_contracts.redaction.engine.redact_value` (``value``), with the kinds
that redacted something (``detectors``: what a failing producer gets wrong).
``docs/vectors/redaction.json`` holds them; ``python -m
session_contracts.redaction.vectors`` writes them and
tests/unit/test_redaction_vectors.py holds the file fresh.  The ``redaction.apply``
operation of the producer protocol takes a vector's input and policy and
answers its output.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from session_contracts.redaction.canaries import known_canaries, known_canary_secrets, lookalikes
from session_contracts.redaction.engine import (
    URL_KIND,
    RedactionPolicy,
    holds_secret,
    redact_text,
    redact_value,
)
from session_contracts.redaction.policy import default_policy, extended_policy

__all__ = [
    "LATER_UNICODE_LETTERS",
    "NO_DETECTOR",
    "POLICY_NAMES",
    "SAMPLE_TOKEN",
    "apply",
    "build_vectors",
    "kinds_of",
    "policy_named",
    "vector_groups",
    "word_ranges_document",
]

POLICY_NAMES = ("default", "extended")
# The group of a vector that nothing redacts (look-alikes, plain text).
NO_DETECTOR = "none"
_SENSITIVE_KEY = "sensitive_key"


def policy_named(name: str) -> RedactionPolicy:
    """The built-in policy called ``name`` (``default`` or ``extended``)."""
    return default_policy() if name == "default" else extended_policy()


def apply(case: Mapping[str, Any]) -> dict[str, Any]:
    """The ``redaction.apply`` output of a case: ``{"text": ...}`` for a text input,
    ``{"value": ...}`` for a JSON value."""
    policy = policy_named(str(case["policy"]))
    if "text" in case:
        return {"text": redact_text(case["text"], policy).text}
    return {"value": redact_value(case["value"], policy)}


def _text_kinds(text: str, policy: RedactionPolicy, key: str | None) -> set[str]:
    if not holds_secret(text, policy, key) and key is None:
        return set()
    if policy.pattern_style:
        return {d.kind for d in redact_text(text, policy).detections}
    from session_contracts.redaction.engine import detections_in

    return {d.kind for d in detections_in(text, policy, key)}


def kinds_of(case: Mapping[str, Any]) -> list[str]:
    """The kinds that redact something in a case's input, sorted (``none`` when nothing)."""
    policy = policy_named(str(case["policy"]))
    kinds: set[str] = set()
    if "text" in case:
        kinds = {d.kind for d in redact_text(case["text"], policy).detections}
    else:
        stack: list[tuple[Any, str | None]] = [(case["value"], None)]
        rule = policy.sensitive_keys
        while stack:
            node, key = stack.pop()
            if isinstance(node, str):
                kinds |= _text_kinds(node, policy, key)
            elif isinstance(node, dict):
                for child_key, item in node.items():
                    if policy.pattern_style and rule is not None and rule.matches(child_key):
                        kinds.add(_SENSITIVE_KEY)
                    else:
                        stack.append((item, child_key))
            elif isinstance(node, list):
                stack.extend((item, None) for item in node)
    return sorted(kinds) or [NO_DETECTOR]


# -- the inputs -------------------------------------------------------------------

# Letters assigned after Unicode 14.0 (CJK Extension H, Kawi, Nag Mundari, Kannada): not
# word characters of \b, whose table is Unicode 14.0's, though a newer engine's \p{L} says so.
LATER_UNICODE_LETTERS = ("\U00031350", "\U00011f00", "\U0001e4d0", "\u0cf3")
# A GitHub token of the default catalog, for vectors that place it beside other characters.
SAMPLE_TOKEN = "ghp_" + "a1B2" * 9

_CONTEXTS = (
    ("", ""),
    ("note: ", "."),
    ('A:" ', '"'),
    ("(", ") and more"),
    ("`", "`"),
    ("first line\n", "\nlast line"),
)

_DEFAULT_TEXTS = (
    # The standalone-URL step.
    "https://user:pw@example.com/x",
    "https://example.com/cb?token=abc&x=1",
    "https://example.com/cb?X-Amz-Signature=abc&access_token=def&a+b=c%20d",
    "https://example.com/cb?state=1&code=2",
    "https://Example.COM",
    "https://Example.COM/a/../b?q=1",
    " https://user:pw@example.com/",
    "https://user:pw@example.com/ trailing words",
    "HTTPS://user:pw@example.com/",
    "http://[",
    "see https://user:pw@example.com/ here",
    "https://example.com/?sig=%zz&Password=1",
    # Lengths are UTF-8 bytes; \b and \s are Unicode's.
    "-----BEGIN RSA PRIVATE KEY-----\nü€😀\n-----END RSA PRIVATE KEY-----",
    "éghp_" + "a1B2" * 9,
    "—ghp_" + "a1B2" * 9,
    SAMPLE_TOKEN + "é",
    SAMPLE_TOKEN + "—",
    *(letter + SAMPLE_TOKEN for letter in LATER_UNICODE_LETTERS[::2]),
    *(SAMPLE_TOKEN + letter for letter in LATER_UNICODE_LETTERS[1::2]),
    "Bearer\u00a0abcdefghijklmnop",
    "Bearer\u0085abcdefghijklmnop",
    "Bearer\ufeffabcdefghijklmnop",
    "Bearer\u3000abcdefghijklmnop",
    "Bearer\u200babcdefghijklmnop",
    "bearer abcdefghijklmnop",
    "BEARER abcdefghijk",
    # Case-insensitive patterns fold U+212A (Kelvin) onto k, U+017F (long s) onto s, nothing else.
    "to\u212aen=abc123",
    "pa\u017f\u017fword=abc123",
    "ap\u0131_key=abc123",
    "AP\u0130_KEY=abc123",
    "ACCESS-TOKEN: abc.def",
    # sensitive_assignment: its value forms.
    'token: "abcdef"',
    'token: "abc"',
    "token: 'abcdef'",
    "password=hunter2",
    "password=hunter",
    "secret=hidden",
    "passwd = hideme",
    "PASSWORD: Tr0ub4dor&3",
    "max_tokens=200",
    "db_password=abc123x",
    'password := "abc.def"',
    "api-key=" + "x" * 300,
    # Patterns read each other's output, in catalog order.
    "-----BEGIN OPENSSH PRIVATE KEY-----\nghp_"
    + "a1B2" * 9
    + "\n-----END OPENSSH PRIVATE KEY-----",
    "token=ghp_" + "a1B2" * 9,
    "Authorization: Bearer sk-" + "a1B2" * 6,
    "sk_live_" + "a" * 16 + " and rk_test_" + "B" * 20,
    "AKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPL",
    "xoxb-not-a-token",
    "xoxp-0123456789",
    "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl",
    "eyJhb.eyJzdWIiOi.c2lnbmF0dXJl",
    "glpat-" + "x" * 19,
    "glpat-" + "x" * 20,
    "npm_" + "a" * 35,
    "npm_" + "a" * 36,
    "npm_" + "a" * 37,
    "AIza" + "b" * 35,
    "AIza" + "b" * 36,
    "hf_" + "a" * 256,
    "",
    "plain text with nothing secret in it",
    "<redacted:jwt:12>",
)

_EXTENDED_TEXTS = (
    # The key: value text rule.
    "signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "signing_key=9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    'signing_key: "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"',
    "signing_key: '9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M'",
    'signing_key := "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"',
    "'signing_key' => '9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M'",
    '"signing_key": "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"',
    "signing_key:: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "signing_key == 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "x.signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "x-signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "9signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "a" * 52 + "_signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "a" * 53 + "_signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    "signing_key: 9fQ2xLk7Vb3Rt8Y,p1Zc6Wn4M",
    "signing_key: 9fQ2xLk7Vb3Rt8Y",
    "signing_key: 9fQ2xLk7Vb3Rt8Yp",
    "signing_key: 0123456789abcdef0123",
    "signing_key: 00000000000000001111",
    "signing_key: rotate-every-ninety-days",
    "signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M!",
    'A:" signing_key: "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"',
    'A:A:signing_key: "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"',
    "note: signing_key: 9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M",
    'Note: signing_key: "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"',
    "password: value: v9x-Q2b",
    'password: value: "v9x-Q2b"',
    "password: a: b: v9x-Q2b and more",
    "password: a:: v9x-Q2b",
    "password: http://v9x-Q2b",
    "password: a == v9x-Q2b",
    "password: a => v9x-Q2b",
    "password: " + "k" * 64 + ": v9x-Q2b",
    "password: " + "k" * 65 + ": v9x-Q2b",
    "Error: ValueError: bad input",
    # Blanks are Unicode White_Space exactly (U+001C is not one, U+0085 is).
    "password=v9x\x1cQ2b",
    "password=v9x\u0085Q2b",
    "password: a:\u00a0v9x-Q2b",
    # JSON inside JSON, at three depths.
    '{\\"api_key\\": \\"v9x-Q2b-77\\"}',
    '{\\\\\\"api_key\\\\\\": \\\\\\"v9x-Q2b-77\\\\\\"}',
    '{\\\\\\\\\\\\\\"api_key\\\\\\\\\\\\\\": \\\\\\\\\\\\\\"v9x-Q2b-77\\\\\\\\\\\\\\"}',
    'Error: signing_key: \\\\\\"9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M\\\\\\"',
    # Placeholders and markers.
    "password=********",
    "password=${DB_PASSWORD}",
    "password=$DB_PASSWORD",
    "password={{ secrets.TOKEN }}",
    "password=%(password)s",
    "password=your_api_key",
    "password=None",
    "password: str",
    "password=<your-token>",
    "password=[REDACTED:password_assignment]",
    "password=[REDACTED:hunter2]",
    "password=",
    "password = ''",
    "--password v9x-Q2b",
    "--password=v9x-Q2b",
    # Overlaps: the first, then the longest, then the detector listed first.
    "token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz",
    "Authorization: token ghp_" + "a1B2" * 9,
    "AWS_SECRET_ACCESS_KEY=" + "Ab1/" * 10,
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "Basic authentication is deprecated",
    "Authorization: Bearer abc",
    "the bearer of this letter",
    "postgres://user:p%40ss@db:5432/app",
    "redis://:pw@host/0",
    "http://[::1]:8080/",
    "sk-abc123",
    "sk-" + "abcdefghij" * 2,
    "pk_live_" + "a" * 20,
    "",
    "plain text with nothing secret in it",
)

_ENTROPIC = "9fQ2xLk7Vb3Rt8Yp1Zc6Wn4M"
_DEFAULT_VALUES: tuple[Any, ...] = (
    {"clientSecret": 5, "note": "ok"},
    {"X-Amz-Security-Token": {"nested": ["a", 1]}},
    {"max_tokens": 4096, "api_key": None},
    {"\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24": "kept"},
    {"signing_key": _ENTROPIC},
    {"secret_santa": "x", "db_password": "y", "API_KEY": "z", "refresh-token": True},
    {"authorization": "Bearer abcdefghijklmnop", "headers": {"Cookie": "a=b"}},
    [{"url": "https://user:pw@example.com/"}, "https://example.com/?token=1"],
    {"a": {"b": {"c": {"d": "token=ghp_" + "a1B2" * 9}}}},
    {"idtoken": 1, "id_token": 2, "bearerToken": 3, "setCookie": 4, "passwd": 5},
    {"x": 1.5, "y": False, "z": None, "w": []},
)
_EXTENDED_VALUES: tuple[Any, ...] = (
    {"signing_key": _ENTROPIC},
    {"signing_key": "rotate-every-ninety-days"},
    {"token": "0123456789abcdef0123"},
    {"token": "aaaaaaaaaaaaaaaaaaaa"},
    {"password": "hunter2"},
    {"password": "s3cr3t-value-9"},
    {"note": '{"password": "s3cr3t-value-9"}'},
    {"token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz " + _ENTROPIC},
    {"Cookie": _ENTROPIC + "x"},
    {"clientSecret": 5, "note": "ok"},
    {"a": [{"b": {"api_key": _ENTROPIC}}]},
    {"token": _ENTROPIC[:15]},
)


def _inputs() -> Iterator[dict[str, Any]]:
    canary_texts = known_canaries()
    for policy_name in POLICY_NAMES:
        for kind in sorted(canary_texts):
            for before, after in _CONTEXTS:
                yield {"policy": policy_name, "text": before + canary_texts[kind] + after}
            canary = canary_texts[kind]
            yield {"policy": policy_name, "value": {"note": canary}}
            yield {"policy": policy_name, "value": {"password": canary}}
            yield {"policy": policy_name, "value": [[{"args": canary}]]}
            yield {"policy": policy_name, "text": json.dumps({"output": canary})}
            yield {"policy": policy_name, "text": json.dumps(json.dumps({"output": canary}))}
        for text in lookalikes(policy_named("extended")).values():
            yield {"policy": policy_name, "text": text}
        for text in lookalikes(policy_named("default")).values():
            yield {"policy": policy_name, "text": text}
        for text in (*_DEFAULT_TEXTS, *_EXTENDED_TEXTS):
            yield {"policy": policy_name, "text": text}
        for value in (*_DEFAULT_VALUES, *_EXTENDED_VALUES):
            yield {"policy": policy_name, "value": value}


def _distinct_inputs() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    seen: set[str] = set()
    for case in _inputs():
        key = json.dumps(case, sort_keys=True)
        if key not in seen:
            seen.add(key)
            cases.append(case)
    return cases


@lru_cache(maxsize=1)
def vector_groups() -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    """The vectors' inputs grouped by policy and detector (``POLICY/KIND``; a vector
    with several kinds is in the group of each), in a fixed order: a check draws from
    each group, so a defect in any one detector is met at any number of examples."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in _distinct_inputs():
        for kind in kinds_of(case):
            groups.setdefault(f"{case['policy']}/{kind}", []).append(case)
    return tuple((name, tuple(cases)) for name, cases in sorted(groups.items()))


def build_vectors() -> list[dict[str, Any]]:
    """Every vector, each input once per policy, in a fixed order."""
    vectors: list[dict[str, Any]] = []
    for case in _distinct_inputs():
        member = "text" if "text" in case else "value"
        vectors.append(
            {
                "id": f"{case['policy']}-{len(vectors):04d}",
                "policy": case["policy"],
                "input": {member: case[member]},
                "output": apply(case),
                "detectors": kinds_of(case),
            }
        )
    return vectors


def vectors_document() -> str:
    """The text of docs/vectors/redaction.json."""
    document = {
        "description": (
            "Redaction vectors: for each, redact input.text (or input.value, a JSON value) "
            "with the named built-in policy (default: Harn's catalog; extended: our "
            "detectors) and compare with output exactly. detectors: the kinds that redact "
            "something in the input ('none': nothing is redacted). docs/redaction.md "
            "specifies the algorithm; python -m session_contracts.redaction.vectors "
            "regenerates this file."
        ),
        "canary_kinds": sorted(known_canary_secrets()),
        "url_kind": URL_KIND,
        "vectors": build_vectors(),
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def word_ranges_document() -> str:
    """The text of docs/vectors/unicode-word-14.json: the word characters of ``\\b``."""
    from session_contracts.redaction.unicode_word import UNICODE_VERSION, WORD_RANGES

    document = {
        "description": (
            "The word characters of \\b in the redaction patterns (docs/redaction.md, the "
            "pattern dialect): Alphabetic, every Mark, Decimal_Number, Connector_Punctuation "
            "and Join_Control of this Unicode version, as inclusive code point ranges. A "
            "character outside them, one assigned in a later version included, is not a word "
            "character. python -m session_contracts.redaction.vectors --word-ranges "
            "regenerates this file."
        ),
        "unicode_version": UNICODE_VERSION,
        "ranges": [[first, last] for first, last in WORD_RANGES],
    }
    return json.dumps(document, indent=None, separators=(",", ":")) + "\n"


def main(argv: list[str]) -> int:
    """Print the redaction vectors, or with ``--word-ranges`` the word-character table."""
    sys.stdout.write(word_ranges_document() if argv == ["--word-ranges"] else vectors_document())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
