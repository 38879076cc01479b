"""Harn's default redaction policy (``redaction-policy.default.json``), held apart from
our extended detectors (tests/unit/test_redaction.py).

Every expected output here is computed by hand from Harn's rules
(docs/redaction.md, part 1): the catalog's patterns in order, each match
replaced by ``<redacted:NAME:LEN>`` with LEN in UTF-8 bytes, a later pattern
reading the text the earlier ones left, windows over 256 KiB, the standalone
URL step and sensitive JSON keys.
"""

from __future__ import annotations

import json
import re
import unicodedata
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts import UsageError
from session_contracts.redaction.canaries import canaries, canary_secrets, lookalikes
from session_contracts.redaction.engine import (
    Detection,
    holds_secret,
    redact_text,
    redact_value,
    scan_value,
)
from session_contracts.redaction.policy import (
    DEFAULT_POLICY_FILE,
    default_policy,
    extended_policy,
    load_policy,
    validate_policy_document,
)
from session_contracts.redaction.rust_regex import (
    DialectError,
    fast_text,
    re2_exact_everywhere,
    translate,
)
from session_contracts.redaction.unicode_word import UNICODE_VERSION, WORD_RANGES

POLICY = default_policy()
SCHEMAS = files("session_contracts.schemas")

# Harn's catalog, in order: crates/harn-vm/src/secret_patterns.rs, DEFAULT_SECRET_PATTERN_SPECS.
HARN_NAMES = (
    "jwt",
    "github_token",
    "github_pat_fine",
    "slack_token",
    "aws_access_key",
    "gitlab_token",
    "huggingface_token",
    "cerebras_key",
    "together_key",
    "google_api_key",
    "npm_token",
    "openai_key",
    "stripe_key",
    "private_key_block",
    "bearer_token",
    "sensitive_assignment",
)

AKIA = "AKIA" + "ABCDEFGHIJKLMNOP"  # 20 bytes
GHP = "ghp_" + "a" * 36  # 40 bytes


def out(text: str) -> str:
    return redact_text(text, POLICY).text


# -- the policy file -----------------------------------------------------------------


def test_default_policy_is_harns_catalog_in_order() -> None:
    assert POLICY.pattern_style
    assert POLICY.kinds == HARN_NAMES
    assert POLICY.placeholder == "<redacted:{name}:{len}>"
    assert (POLICY.window_bytes, POLICY.window_overlap_bytes) == (262144, 8192)
    document = json.loads(SCHEMAS.joinpath(DEFAULT_POLICY_FILE).read_text())
    assert validate_policy_document(document) == []
    for index, entry in enumerate(document["patterns"]):
        assert entry["source"]["file"] == "crates/harn-vm/src/secret_patterns.rs"
        assert entry["source"]["item"] == f"DEFAULT_SECRET_PATTERN_SPECS[{index}]"
        assert entry["source"]["precision"] in ("high", "heuristic")
    assert all(re.fullmatch("[0-9a-f]{40}", f["commit"]) for f in document["upstream"]["files"])


def test_default_and_extended_policies_are_held_apart() -> None:
    extended = extended_policy()
    assert not extended.pattern_style
    assert extended.kinds != POLICY.kinds
    assert set(canaries()) == set(HARN_NAMES)
    assert set(canaries(extended)) == set(extended.kinds)
    canary = canaries(extended)["aws_secret_access_key"]
    assert redact_text(canary, extended).text != canary
    assert redact_text(canary, POLICY).text == canary  # a gap of Harn's catalog


@pytest.mark.parametrize("kind", HARN_NAMES)
def test_each_canary_is_caught_by_its_own_pattern(kind: str) -> None:
    result = redact_text(canaries()[kind], POLICY)
    assert [d.kind for d in result.detections] == [kind]
    assert canary_secrets()[kind] not in result.text


@pytest.mark.parametrize("kind", HARN_NAMES)
def test_each_lookalike_survives(kind: str) -> None:
    text = lookalikes()[kind]
    assert out(text) == text
    assert scan_value({"text": text}, POLICY) == []


# -- one true positive and one near miss per pattern, by hand ------------------------

PEM_HEAD, PEM_TAIL = "-----BEGIN EC PRIVATE KEY-----", "-----END EC PRIVATE KEY-----"

VECTORS = [
    # (pattern, an input it redacts, the redacted text, a near miss it leaves alone)
    ("jwt", "t eyJhbGc.eyJzdWI.c2lnbmF0dXJl x", "t <redacted:jwt:28> x", "t eyJhbGc.eyJzdWI x"),
    ("github_token", f"use {GHP}.", "use <redacted:github_token:40>.", "use ghp_" + "a" * 35),
    (
        "github_pat_fine",
        "github_pat_" + "A1_" * 7,
        "<redacted:github_pat_fine:32>",
        "github_pat_" + "a" * 19,
    ),
    ("slack_token", "xoxb-123-abc-def", "<redacted:slack_token:16>", "xoxe-1234567890ab"),
    ("aws_access_key", f"key={AKIA};", "key=<redacted:aws_access_key:20>;", AKIA + "Q"),
    ("gitlab_token", "glpat-" + "x" * 20, "<redacted:gitlab_token:26>", "glpat-" + "x" * 19),
    ("huggingface_token", "hf_" + "b" * 20, "<redacted:huggingface_token:23>", "hf_" + "b" * 19),
    ("cerebras_key", "csk-" + "c" * 20, "<redacted:cerebras_key:24>", "csk-" + "c" * 19),
    ("together_key", "tgp_v1_" + "d" * 20, "<redacted:together_key:27>", "tgp_v2_" + "d" * 20),
    # The near miss: exactly 35, then \b.
    ("google_api_key", "AIza" + "D" * 35, "<redacted:google_api_key:39>", "AIza" + "D" * 36),
    ("npm_token", "npm_" + "e" * 36, "<redacted:npm_token:40>", "npm_" + "e" * 37),
    ("openai_key", "sk-" + "f" * 20, "<redacted:openai_key:23>", "sk-" + "f" * 19),
    ("stripe_key", "rk_test_" + "g" * 16, "<redacted:stripe_key:24>", "pk_live_" + "g" * 16),
    # 30 + 1 + 2 + 1 + 28 bytes
    (
        "private_key_block",
        f"{PEM_HEAD}\nAB\n{PEM_TAIL}",
        "<redacted:private_key_block:62>",
        f"{PEM_HEAD}\nAB\n",
    ),
    (
        "bearer_token",
        "auth: bearer abcdefghijkl",
        "auth: <redacted:bearer_token:19>",
        "auth: Bearer abcdefghijk",
    ),
    (
        "sensitive_assignment",
        'Password = "hunter22"',
        "<redacted:sensitive_assignment:21>",
        "password=hunter",
    ),
    (
        "sensitive_assignment",
        "token=secret",
        "<redacted:sensitive_assignment:12>",
        "max_tokens=200",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [(name, text, expected) for name, text, expected, _ in VECTORS]
    + [(name, miss, miss) for name, _, _, miss in VECTORS],
)
def test_pattern_vector(name: str, text: str, expected: str) -> None:
    result = redact_text(text, POLICY)
    assert result.text == expected
    assert {d.kind for d in result.detections} <= {name}
    assert result.changed == (expected != text)


def test_every_pattern_has_a_true_positive_and_a_near_miss() -> None:
    hits = {name for name, text, expected, _ in VECTORS if expected != text}
    assert hits == set(HARN_NAMES)


# -- lengths in UTF-8 bytes ----------------------------------------------------------


def test_len_counts_utf8_bytes() -> None:
    # "é" is 2 bytes: 30 + 1 + 2 + 1 + 28 = 62 bytes for 61 characters.
    text = f"{PEM_HEAD}\né\n{PEM_TAIL}"
    assert len(text) == 61
    assert out("x " + text) == "x <redacted:private_key_block:62>"
    # U+2003 EM SPACE is White_Space (3 bytes): 6 + 3 + 12 = 21 bytes, 19 characters.
    assert out("Bearer\u2003abcdefghijkl") == "<redacted:bearer_token:21>"
    # U+001C is a space to Python's str.isspace but not to Rust's \s.
    assert out("Bearer\x1cabcdefghijkl") == "Bearer\x1cabcdefghijkl"


def test_detections_locate_the_input_characters() -> None:
    text = f"é {AKIA} ü {GHP}"
    result = redact_text(text, POLICY)
    assert (
        result.detections
        == (
            Detection("github_token", 25, 65, "<redacted:github_token:40>"),
            Detection("aws_access_key", 2, 22, "<redacted:aws_access_key:20>"),
        )[::-1]
    )
    assert text[2:22] == AKIA


# -- Rust's word boundaries and case folding -----------------------------------------


@pytest.mark.parametrize(
    ("before", "redacted"),
    [
        ("é", False),  # a letter: no boundary
        ("\u0301", False),  # a combining mark is a word character to Rust (not to Python's \w)
        ("\u00b2", True),  # SUPERSCRIPT TWO is no word character to Rust (it is to Python's \w)
        ("\u203f", False),  # UNDERTIE, connector punctuation: a word character
        ("\u200d", False),  # ZERO WIDTH JOINER: Join_Control, a word character
        ("-", True),
    ],
)
def test_word_boundary_is_rusts(before: str, redacted: bool) -> None:
    text = before + AKIA
    assert out(text) == (before + "<redacted:aws_access_key:20>" if redacted else text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # U+212A KELVIN SIGN folds to k (3 bytes): 2 + 3 + 2 + 7 = 14.
        ("to\u212aen=abc123", "<redacted:sensitive_assignment:14>"),
        # U+017F LONG S folds to s (2 bytes each): 2 + 2 + 2 + 4 + 3 = 13.
        ("pa\u017f\u017fword=x1", "<redacted:sensitive_assignment:13>"),
        # U+0130 has no simple case folding: it is no "i" to Rust (it is to Python's re).
        ("ap\u0130_key=abc123", "ap\u0130_key=abc123"),
        ("\u0131d_token=abc123", "\u0131d_token=abc123"),
        ("TOKEN: abc.def", "<redacted:sensitive_assignment:14>"),
    ],
)
def test_case_folding_is_rusts(text: str, expected: str) -> None:
    assert out(text) == expected


# -- catalog order and overlap ---------------------------------------------------------


def test_earlier_pattern_wins_and_later_ones_read_its_placeholder() -> None:
    # github_token runs before bearer_token; "<" is outside bearer's character class.
    assert out(f"Bearer {GHP}") == "Bearer <redacted:github_token:40>"
    # Nor does a sensitive assignment read a placeholder as its value.
    assert out(f"token={GHP}") == "token=<redacted:github_token:40>"


def test_a_later_pattern_can_swallow_an_earlier_placeholder() -> None:
    # The key block is matched in the text github_token left: 31 + 1 + 26 + 1 + 29 = 88.
    head, tail = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
    text = f"{head}\n{GHP}\n{tail}"
    result = redact_text(text, POLICY)
    assert result.text == "<redacted:private_key_block:88>"
    assert result.detections == (
        Detection("private_key_block", 0, len(text), "<redacted:private_key_block:88>"),
    )


# -- windows ------------------------------------------------------------------------------

WINDOW = 262144
OVERLAP = 8192


def test_secret_across_a_window_boundary_is_redacted_once() -> None:
    prefix = " " * (WINDOW - 10)  # the key spans bytes 262134..262154: across the first cut
    text = prefix + AKIA + " " * OVERLAP + "end"
    redacted = out(text)
    assert redacted == prefix + "<redacted:aws_access_key:20>" + " " * OVERLAP + "end"


def test_windows_count_bytes_and_cut_at_character_boundaries() -> None:
    prefix = "é" * (WINDOW // 2 - 3)  # 262138 bytes
    text = prefix + " " + AKIA + " " + "ü" * 5000
    assert len(text.encode()) > WINDOW
    assert out(text) == prefix + " <redacted:aws_access_key:20> " + "ü" * 5000


def test_windows_scan_the_original_text_and_earlier_claims_win() -> None:
    # Beyond 256 KiB every pattern reads the original text: the key block overlaps the
    # token github_token claimed first, so it is not redacted (in one pass it would be).
    head, tail = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
    block = f"{head}\n{GHP}\n{tail}"
    padding = " " * WINDOW
    assert out(padding + block) == padding + f"{head}\n<redacted:github_token:40>\n{tail}"


def test_a_window_at_exactly_the_limit_is_one_pass() -> None:
    head, tail = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
    block = f"{head}\n{GHP}\n{tail}"
    padding = " " * (WINDOW - len(block))
    assert out(padding + block) == padding + "<redacted:private_key_block:88>"


# -- the standalone URL step -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "https://user:pw@api.example.com/v1?api_key=abcdef&clientSecret=hidden&page=2",
            "https://api.example.com/v1?api_key=%5Bredacted%5D&clientSecret=%5Bredacted%5D&page=2",
        ),
        ("https://api.example.com/v1?page=2", "https://api.example.com/v1?page=2"),
        # Parsing alone may change it (Harn's url crate serializes the same way).
        ("https://Example.COM", "https://example.com/"),
        # Once anything is removed the query is written again as a form.
        ("https://x.com/?q=a%20b&token=t", "https://x.com/?q=a+b&token=%5Bredacted%5D"),
        ("https://user@x.com/?a&&b=1", "https://x.com/?a=&b=1"),
        # Then the patterns run over the result.
        (
            f"https://x.com/?note={AKIA}&secret=1",
            "https://x.com/?note=<redacted:aws_access_key:20>&secret=%5Bredacted%5D",
        ),
        # Only a whole string that starts with the scheme and holds no white space.
        ("see https://user:pw@x.com", "see https://user:pw@x.com"),
        (" https://user:pw@x.com", " https://user:pw@x.com"),
        ("https://user:pw@x.com/a b", "https://user:pw@x.com/a b"),
        ("https://user:pw@x.com/\n", "https://x.com/"),  # trimmed first
    ],
)
def test_url_step(text: str, expected: str) -> None:
    assert out(text) == expected


def test_url_credentials_are_a_finding() -> None:
    assert holds_secret("https://user:pw@x.com/", POLICY)
    assert not holds_secret("https://Example.COM", POLICY)  # normalized, nothing removed


# -- sensitive keys in JSON values ------------------------------------------------------


def test_sensitive_keys_replace_any_value_and_keys_stay() -> None:
    value: dict[str, Any] = {
        "Authorization": "x",
        "clientSecret": 5,
        "X-Amz-Security-Token": {"a": "b"},
        "max_tokens": 200,
        "tokens": ["t"],
        "secret_santa": "elf",
        "nested": [{"refresh-token": None, "ok": True}],
        "note": GHP,
        GHP: "v",
        "\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24": "fullwidth",
        "API_KEY": 1.5,
        "db_password": False,
    }
    assert redact_value(value, POLICY) == {
        "Authorization": "[redacted]",
        "clientSecret": "[redacted]",
        "X-Amz-Security-Token": "[redacted]",
        "max_tokens": 200,
        "tokens": ["t"],
        "secret_santa": "elf",
        "nested": [{"refresh-token": "[redacted]", "ok": True}],
        "note": "<redacted:github_token:40>",
        GHP: "v",
        "\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24": "fullwidth",
        "API_KEY": "[redacted]",
        "db_password": "[redacted]",
    }


def test_scan_reports_strings_not_sensitive_keys() -> None:
    findings = scan_value({"api_key": "plain", "list": [f"id {AKIA}"]}, POLICY)
    assert [(f.path, f.code) for f in findings] == [("$.list[0]", "redaction_secret_found")]
    assert AKIA not in repr(findings)


# -- policy files and the dialect -------------------------------------------------------


def _policy_file(tmp_path: Path, patterns: list[dict[str, Any]], **extra: Any) -> Path:
    document = {
        "version": 1,
        "placeholder": extra.pop("placeholder", "<redacted:{name}:{len}>"),
        "patterns": patterns,
        **extra,
    }
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document))
    return path


def test_custom_patterns_run_after_the_catalog(tmp_path: Path) -> None:
    document = json.loads(SCHEMAS.joinpath(DEFAULT_POLICY_FILE).read_text())
    document["patterns"].append({"name": "acme_token", "pattern": r"\bACME-[A-Z0-9]{8}\b"})
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document))
    policy = load_policy(path)
    assert redact_text("header ACME-12345678 trailer", policy).text == (
        "header <redacted:acme_token:13> trailer"
    )
    assert policy.kinds[-1] == "acme_token"


def test_a_custom_placeholder(tmp_path: Path) -> None:
    policy = load_policy(
        _policy_file(tmp_path, [{"name": "pin", "pattern": "[0-9]{4,}"}], placeholder="[{name}]")
    )
    assert redact_text("pin 123456", policy).text == "pin [pin]"


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("(?=x)x", "look-ahead"),
        ("a*+", "possessive"),
        ("a?", "empty string"),
        ("[[:alpha:]]", "[ inside a class"),
        ("(?m)^a", "flag group"),
        (r"(a)\1", "backreference"),
        ("(?i)é", "non-ASCII letter"),
        ("[a&&b]", "class operator"),
        ("(ab", "unclosed group"),
        (r"\d+", "the escape \\d"),
        ("(?P<n>a)", "named group"),
        ("(?(1)a|b)", "conditional"),
        ("a(?-i:b)", "flag group"),
    ],
)
def test_patterns_outside_the_dialect_are_refused(tmp_path: Path, pattern: str, words: str) -> None:
    with pytest.raises(UsageError) as caught:
        load_policy(_policy_file(tmp_path, [{"name": "p", "pattern": pattern}]))
    (finding,) = caught.value.findings
    assert finding.path == "$.patterns[0].pattern"
    assert finding.code == "pattern_outside_dialect"
    assert words in finding.message


def test_a_pattern_policy_file_is_checked_by_the_schema(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_policy(_policy_file(tmp_path, [{"name": "p", "pattern": "x", "colour": "red"}]))
    assert caught.value.findings[0].path == "$.patterns[0]"


@pytest.mark.parametrize(
    ("pattern", "members"),
    [
        ("(?i)k", {"k", "K", "\u212a"}),
        ("(?i)s", {"s", "S", "\u017f"}),
        ("(?i)i", {"i", "I"}),
        ("(?i)[a-c]", {"a", "b", "c", "A", "B", "C"}),
        ("(?i)[j-l]", {"j", "k", "l", "J", "K", "L", "\u212a"}),
        ("(?i)[^a-z]", None),  # checked below: the complement of the folded class
        (r"\s", {chr(c) for c in (9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, 0x2028, 0x3000)}),
    ],
)
def test_translation_means_what_rust_means(pattern: str, members: set[str] | None) -> None:
    samples = [chr(c) for c in range(0x3100)] + ["\u212a", "\U0001f600"]
    for target in ("python", "python-fast", "re2"):
        if target == "re2" and not re2_exact_everywhere(pattern):
            continue
        regex = _compile(pattern, target)
        matched = {c for c in samples if regex.fullmatch(c)}
        if members is None:
            assert not matched & {"\u212a", "\u017f"}
            assert "é" in matched
            assert not matched & set("azAZ")
        elif pattern == r"\s":
            assert matched == members | {chr(c) for c in range(0x2000, 0x200B)} | {
                "\u2029",
                "\u202f",
                "\u205f",
            }
        else:
            assert matched == members


def _compile(pattern: str, target: str) -> Any:
    if target == "re2":
        import re2  # type: ignore[import-untyped, unused-ignore]

        return re2.compile(translate(pattern, "re2"))
    return re.compile(translate(pattern, target))


PIECES = [*"aAkKsSxX09_-.=+/ :\n\"'", "ghp_", "Bearer ", "token", "eyJ", "AKIA", "sk-", "a" * 12]
ASCII_TEXT = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=ASCII_TEXT)
def test_re2_and_python_agree_on_ascii_text(text: str) -> None:
    for pattern in POLICY.patterns:
        spans = [m.span() for m in _compile(pattern.pattern, "re2").finditer(text)]
        assert spans == [m.span() for m in _compile(pattern.pattern, "python").finditer(text)]


def test_word_table_matches_unicodedata() -> None:
    """The table is Rust's word characters as unicodedata of its version defines them."""
    if unicodedata.unidata_version != UNICODE_VERSION:
        pytest.skip(f"the table was made from Unicode {UNICODE_VERSION}")
    categories = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Mn", "Mc", "Me", "Nd", "Pc"}
    enclosed = [(0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189)]
    expected = {code for code in range(0x110000) if unicodedata.category(chr(code)) in categories}
    expected |= {0x200C, 0x200D}
    expected |= {code for low, high in enclosed for code in range(low, high + 1)}
    table = {code for low, high in WORD_RANGES for code in range(low, high + 1)}
    assert table == expected


def test_fast_text_is_exact_about_disagreement() -> None:
    assert fast_text("plain ASCII and é ü ß 日本")
    assert not fast_text("e\u0301")  # a mark: Python's \w and Rust's differ
    assert not fast_text("x\u00b2")


def test_dialect_error_says_where() -> None:
    with pytest.raises(DialectError) as caught:
        translate("ab(?=c)")
    assert caught.value.offset == 2


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN PRIVATE KEY-----é" * 37_000,
        "-----BEGIN PRIVATE KEY-----" * 37_000,
        "password: " * 100_000,
        "Bearer é" * 100_000,
        "token= " * 150_000,
    ],
)
def test_harn_policy_settles_on_adversarial_input(text: str) -> None:
    # Its time is bench's to measure (bench_redaction.py), never a test's.
    redacted = redact_text(text, POLICY).text
    assert redact_text(redacted, POLICY).text == redacted


# -- the recap's literal gate and idempotence under the default policy -----------------

_GATE_PIECES = [
    *canaries().values(),
    *lookalikes().values(),
    "https://user:pw@example.com/?token=1",
    "http://Example.com",
    "Bearer ",
    "token=",
    "<redacted:jwt:12>",
    "[redacted]",
    "\u212a",
    "\u017f",
    "\u0130",
    "é",
    " ",
    "\n",
]
_GATE_TEXTS = st.lists(st.sampled_from(_GATE_PIECES) | st.text(max_size=6), max_size=4).map("".join)
_GATE_KEYS = st.sampled_from(["text", "api_key", "clientSecret", "note", "max_tokens"])
_GATE_VALUES = st.recursive(
    st.none() | st.integers(-3, 3) | _GATE_TEXTS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(_GATE_KEYS, children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(_GATE_TEXTS, max_size=6), values=st.lists(_GATE_VALUES, max_size=4))
def test_the_recap_gate_is_exact_under_the_default_policy(
    texts: list[str], values: list[Any]
) -> None:
    from session_contracts.redaction.gate import (
        redact_texts,
        redact_values,
    )

    assert redact_texts(texts, POLICY) == [redact_text(text, POLICY).text for text in texts]
    assert redact_values(values, POLICY) == [redact_value(value, POLICY) for value in values]


@settings(max_examples=200, deadline=None)
@given(text=_GATE_TEXTS)
def test_redacting_the_output_again_changes_nothing(text: str) -> None:
    """Harn's manifest calls its output idempotent: placeholders do not match again."""
    once = out(text)
    assert out(once) == once


_ASCII_TEXTS = st.one_of(
    st.text(st.characters(max_codepoint=127), max_size=40),
    st.sampled_from(HARN_NAMES).map(lambda kind: canaries()[kind]),
    st.sampled_from(HARN_NAMES).map(lambda kind: lookalikes()[kind]),
)


@settings(max_examples=300, deadline=None)
@given(
    prefix=st.text(st.characters(max_codepoint=127), max_size=8),
    text=_ASCII_TEXTS,
)
def test_the_gate_call_answers_what_the_re2_wrapper_answers(prefix: str, text: str) -> None:
    from session_contracts.redaction.engine import patterns_of
    from session_contracts.redaction.harn import gate_finds, gate_of

    gate = gate_of(patterns_of(POLICY))
    assert gate is not None
    sample = prefix + text
    if sample.isascii():
        assert gate_finds(gate, sample) == (gate.search(sample) is not None)
