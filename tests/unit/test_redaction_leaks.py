"""Planted secrets never survive redaction, whatever stands around them.

The oracle once left ``A:" signing_key: "CANARY..."`` unredacted:
the text rule read ``A`` as a key whose quoted value was `` signing_key: `` and
went on after that value, past the real pair.  The detector test below holds
that fix; the hunt plants every canary of both policies behind labels, quotes
and punctuation, in text and in JSON at every depth (also JSON serialized into
a string), and checks that no canary's secret survives in any string of the
output, as the judge's canary check reads it (conformance/judge/certify.py,
``judge_canaries``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_contracts.redaction.canaries import canaries, canary_secrets
from session_contracts.redaction.engine import RedactionPolicy, redact_text, redact_value
from session_contracts.redaction.policy import default_policy, extended_policy

POLICIES = {"default": default_policy(), "extended": extended_policy()}
_LEAK = 'A:" signing_key: "CANARY0MhV9xBpiC4dOLjRGlfCf6y1GOeZ7CGosC"'


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, member names included, in no particular order."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            pending.extend([*item, *item.values()])
        elif isinstance(item, list):
            pending.extend(item)


@pytest.mark.parametrize(
    "text",
    [
        _LEAK,
        _LEAK[3:],
        "A:' signing_key: 'CANARY0MhV9xBpiC4dOLjRGlfCf6y1GOeZ7CGosC'",
        'note: "label" signing_key: "CANARY0MhV9xBpiC4dOLjRGlfCf6y1GOeZ7CGosC"',
        'x=" signing_key=CANARY0MhV9xBpiC4dOLjRGlfCf6y1GOeZ7CGosC"',
    ],
)
def test_a_quoted_label_before_a_sensitive_key_does_not_hide_its_value(text: str) -> None:
    """The ``A:" signing_key:`` leak, in text and as a provider response's text (a JSON value)."""
    secret = "CANARY0MhV9xBpiC4dOLjRGlfCf6y1GOeZ7CGosC"
    policy = POLICIES["extended"]
    assert secret not in redact_text(text, policy).text
    redacted = redact_value({"text": text, "items": [{"note": text}]}, policy)
    assert not any(secret in s for s in _strings(redacted))


# Text that may stand before a secret: labels, quotes, punctuation, blanks.
# It ends in a non-word character, since Harn's patterns start at a word
# boundary (``xghp_...`` is not a token to them, by design).
_LABELS = st.sampled_from(
    [
        "",
        " ",
        "A:",
        'A:"',
        "A:'",
        'A:" ',
        "note: ",
        'note: "',
        "key=",
        'key="',
        "(",
        "[",
        "{",
        "<",
        ",",
        ";",
        "`",
        '\\"',
        "Error: ",
        "step 3: ",
        "x: y: ",
        "label: value: ",
        "- ",
        "* ",
        "> ",
        "| ",
    ]
)
_TAILS = st.sampled_from(["", " ", '"', "'", ".", ",", ";", ")", "]", "}", " and more", '",'])
# No line breaks or tabs: serialized into JSON they become `\n` and `\t`, and
# the letter before the secret hides it from a pattern that starts at a word
# boundary (Harn's catalog, reproduced exactly, has that blind spot).
_FILLER = st.text(alphabet=st.sampled_from(list("ab :=\"',.;-_()[]{}\\")), max_size=12).map(
    lambda text: text + " "
)


def _planted(policy: RedactionPolicy) -> st.SearchStrategy[tuple[str, str]]:
    kinds = sorted(canaries(policy))
    return st.sampled_from(kinds).flatmap(
        lambda kind: st.tuples(_FILLER, _LABELS, _LABELS, _TAILS).map(
            lambda parts: (
                parts[0] + parts[1] + parts[2] + canaries(policy)[kind] + parts[3],
                canary_secrets(policy)[kind],
            )
        )
    )


def _nested(text: str, depth: int, keys: list[str], wrap: list[int]) -> Any:
    value: Any = text
    for level in range(depth):
        key = keys[level % len(keys)]
        value = [value] if wrap[level % len(wrap)] else {key: value}
    return value


@pytest.mark.parametrize("name", sorted(POLICIES))
# HUNT=3000 runs a longer hunt (3,000 examples each passed when this was written).
@settings(
    max_examples=int(os.environ.get("HUNT", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_hunt_planted_canaries_never_survive(name: str, data: st.DataObject) -> None:
    policy = POLICIES[name]
    text, secret = data.draw(_planted(policy))
    assert secret not in redact_text(text, policy).text, text
    depth = data.draw(st.integers(0, 6))
    keys = data.draw(st.lists(st.sampled_from(["note", "output", "args", "a", "text"]), min_size=1))
    wrap = data.draw(st.lists(st.integers(0, 1), min_size=1))
    value = _nested(text, depth, keys, wrap)
    encodings = data.draw(st.integers(0, 2))
    for _ in range(encodings):
        value = {"output": json.dumps(value)}
    redacted = redact_value(value, policy)
    assert not any(secret in s for s in _strings(redacted)), (text, depth, encodings)
