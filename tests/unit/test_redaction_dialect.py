"""The portable pattern dialect: both built-in policies are inside it, every construct
the engines do not share is refused with a finding that names it, and what the
dialect allows means the same to the reference's engine as the docs say."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from session_contracts import UsageError
from session_contracts.redaction.dialect import OUTSIDE_DIALECT, dialect_findings, dialect_problem
from session_contracts.redaction.policy import load_policy
from session_contracts.redaction.rust_regex import translate


def _policy(name: str) -> Any:
    text = files("session_contracts.schemas").joinpath(f"redaction-policy.{name}.json").read_text()
    return json.loads(text)


def _patterns(name: str) -> list[str]:
    document = _policy(name)
    if name == "default":
        return [p["pattern"] for p in document["patterns"]]
    detectors = document["detectors"]
    found = [d["pattern"] for d in detectors if "pattern" in d]
    found += ["(?i)" + d["key_pattern"] for d in detectors if "key_pattern" in d]
    return found + list(document["placeholders"])


@pytest.mark.parametrize("name", ["default", "extended"])
def test_both_built_in_policies_are_in_the_dialect(name: str) -> None:
    for pattern in _patterns(name):
        assert dialect_problem(pattern) is None, pattern


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        ("(?=x)x", "look-ahead"),
        ("(?!x)y", "negative look-ahead"),
        ("(?<=x)y", "look-behind"),
        ("(?<!x)y", "negative look-behind"),
        (r"(a)\1", "backreference"),
        ("a*+", "possessive"),
        ("a++", "possessive"),
        ("(?>ab)", "atomic group"),
        ("(?(1)a|b)", "conditional"),
        ("(?P<n>a)", "named group"),
        ("(?<n>a)", "named group"),
        ("a(?i)b", "flag group"),
        ("(?i:a)", "flag group"),
        ("(?-i)a", "flag group"),
        ("(?m)^a", "flag group"),
        ("(?x)a", "flag group"),
        (r"\d", r"the escape \d"),
        (r"\w", r"the escape \w"),
        (r"\W", r"the escape \W"),
        (r"\S", r"the escape \S"),
        (r"a\B", r"the escape \B"),
        (r"\Aa", r"the escape \A"),
        (r"a\z", r"the escape \z"),
        (r"\p{L}", r"the escape \p"),
        (r"\x{41}", r"the escape \x"),
        (r"\u0041", r"the escape \u"),
        (r"[\b]", r"the escape \b"),
        ("a{,3}", "counted repetition"),
        ("a{1001}", "out of range"),
        ("a{3,2}", "out of range"),
        ("{", "counted repetition"),
        ("a}", "unescaped }"),
        ("a]", "unescaped ]"),
        (".", ". without the s flag"),
        ("(?i)é", "non-ASCII letter"),
        (r"(?i)\xe9", "non-ASCII letter"),
        ("(?i)[A-z]", "letters and other characters"),
        ("[[:alpha:]]", "[ inside a class"),
        ("[a&&b]", "class operator"),
        ("[a--b]", "class operator"),
        ("[a~~b]", "class operator"),
        ("[a-b-c]", "literal - in the middle"),
        ("[]a]", "empty class"),
        ("[z-a]", "end comes before its start"),
        ("[a", "unclosed class"),
        ("(a", "unclosed group"),
        ("a)", "unmatched )"),
        ("a|", "empty alternative"),
        ("|a", "empty alternative"),
        ("a?", "empty string"),
        ("(?:a|b*)", "empty string"),
        (r"\b", "empty string"),
        (r"\b+a", "quantifier on an assertion"),
        ("^*a", "quantifier on an assertion"),
        ("*a", "nothing to repeat"),
        ("a\\", "trailing"),
        ("\ud800", "lone surrogate"),
    ],
)
def test_constructs_outside_the_dialect_are_named(pattern: str, construct: str) -> None:
    (finding,) = dialect_findings(pattern, "$.patterns[0].pattern")
    assert finding.code == OUTSIDE_DIALECT
    assert finding.path == "$.patterns[0].pattern"
    assert construct in finding.message, finding.message
    assert "docs/redaction.md" in finding.hint


@pytest.mark.parametrize(
    "pattern",
    [
        "a",
        "(?s).",
        "(?is)a.b",
        r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",
        r"[\-a]|[a-]|[-a]",
        r"\.\*\+\?\(\)\|\[\]\{\}\^\$\/\\",
        r"\n\t\r\f\v\x41",
        r"(?i)[^a-z]",
        r"^a$",
        "a{2}?b{2,}c{2,3}?",
        "(a)(?:b)",
        "é+",
        r"[\s\-]+x",
    ],
)
def test_what_the_dialect_allows(pattern: str) -> None:
    assert dialect_problem(pattern) is None


def test_a_policy_file_with_a_pattern_outside_is_refused_at_its_path(tmp_path: Path) -> None:
    document = _policy("extended")
    document["detectors"][2]["pattern"] = "(?<![a-z])sk-ant-[a-z]{20,}"
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError) as caught:
        load_policy(path)
    (finding,) = caught.value.findings
    assert (finding.code, finding.path) == (OUTSIDE_DIALECT, "$.detectors[2].pattern")
    assert "look-behind" in finding.message


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        # Case folding: ASCII letters, plus K (U+212A) for k and long s (U+017F) for s; not i.
        ("(?i)k", "\u212a", True),
        ("(?i)s", "\u017f", True),
        ("(?i)i", "\u0131", False),
        ("(?i)i", "\u0130", False),
        ("(?i)[^a-z]", "\u212a", False),
        ("(?i)[a-z]", "\u0131", False),
        # \s is White_Space exactly.
        (r"\s", "\u0085", True),
        (r"\s", "\ufeff", False),
        (r"\s", "\x1c", False),
        (r"\s", "\x0b", True),
        # \b is Unicode's word boundary.
        (r"\bx", "\u00e9x", False),
        (r"\bx", "\u2014x", True),
        # $ is the end of the text only.
        ("a$", "a\n", False),
        # Counts are code points.
        ("^.{2}$", "\U0001f600\u00e9", False),
        ("(?s)^.{2}$", "\U0001f600\u00e9", True),
    ],
)
def test_the_reference_engine_reads_the_dialect_as_documented(
    pattern: str, text: str, matches: bool
) -> None:
    if pattern.startswith("^."):
        assert dialect_problem(pattern) is not None  # . needs s
        return
    assert dialect_problem(pattern) is None
    assert (re.search(translate(pattern), text) is not None) is matches


def test_the_look_behind_shortcut_changes_no_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference reads a leading (?:^|[^X]) as a look-behind for speed; the
    portable reading (the boundary character consumed) gives the same redactions on
    every vector text, because pieces between detections are read again."""
    import session_contracts.redaction.engine as redaction
    from session_contracts.redaction.policy import extended_policy

    vectors = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "redaction.json"
    texts = [
        v["input"]["text"]
        for v in json.loads(vectors.read_text(encoding="utf-8"))["vectors"]
        if "text" in v["input"]
    ]
    texts += ["AIza" + "b" * 35 + " AIza" + "c" * 35, "x=" + "AKIA" + "A" * 16 + ",AKIA" + "B" * 16]
    policy = extended_policy()
    fast = [redaction.redact_text(text, policy).text for text in texts]
    monkeypatch.setattr(redaction, "_python_regex", re.compile)
    redaction._compile.cache_clear()
    try:
        portable = [redaction.redact_text(text, policy).text for text in texts]
    finally:
        redaction._compile.cache_clear()
    assert fast == portable
