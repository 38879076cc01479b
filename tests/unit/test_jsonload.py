"""Strict JSON reading: every way a text can be bad gives one finding with a stable code."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_contracts import InvalidDocument
from session_contracts.jsontext.strict import iter_documents, loads_strict


@pytest.mark.parametrize(
    ("text", "code", "path"),
    [
        (b'{"a": 1, "a": 2}', "json_duplicate_key", "$.a"),
        (b'{"x": [{"b": 1}, {"c": 1, "c": 2}]}', "json_duplicate_key", "$.x[1].c"),
        (b"[NaN]", "json_non_finite_number", "$[0]"),
        (b"[Infinity]", "json_non_finite_number", "$[0]"),
        (b'{"a": {"b": -Infinity}}', "json_non_finite_number", "$.a.b"),
        (b"1e400", "json_non_finite_number", "$"),
        (b'{"n": [1, 1e400]}', "json_non_finite_number", "$.n[1]"),
        (b'{"a": ["\\ud800"]}', "json_lone_surrogate", "$.a[0]"),
        (b'{"\\udfff": 1}', "json_lone_surrogate", "$"),
        (b"[" * 10_000 + b"]" * 10_000, "json_too_deep", "$"),
        (b"[" * 65 + b"]" * 65, "json_too_deep", "$"),
        (b'{"a": 1} {"b": 2}', "json_trailing_data", "$"),
        (b'{"a": }', "json_syntax", "$"),
        (b"", "json_syntax", "$"),
        (b'"\xff"', "json_not_utf8", "$"),
    ],
)
def test_bad_json_is_refused_with_a_stable_code(text: bytes, code: str, path: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        loads_strict(text)
    (finding,) = caught.value.findings
    assert (finding.code, finding.path) == (code, path)
    assert finding.hint


def test_valid_surrogate_pairs_and_bom_are_accepted() -> None:
    assert loads_strict(b'\xef\xbb\xbf{"a": "\\ud83d\\ude02"}') == {"a": "\U0001f602"}


def test_nesting_up_to_the_limit_is_accepted() -> None:
    assert loads_strict(b"[" * 64 + b"]" * 64) is not None


def test_large_integers_stay_exact() -> None:
    assert loads_strict(b"[9007199254740993]") == [9007199254740993]


def test_size_limit_refuses_before_parsing() -> None:
    with pytest.raises(InvalidDocument) as caught:
        loads_strict(b"[" + b"1," * 100 + b"1]", max_bytes=50)
    assert caught.value.findings[0].code == "json_too_large"


def test_json_lines_report_each_bad_line_and_keep_reading() -> None:
    docs = list(iter_documents(b'{"a":1}\n{"a":\n\n[NaN]\n{"b":2}\n', "x.jsonl"))
    assert [d.source for d in docs] == ["x.jsonl:1", "x.jsonl:2", "x.jsonl:4", "x.jsonl:5"]
    assert [d.error.findings[0].code if d.error else None for d in docs] == [
        None,
        "json_syntax",
        "json_non_finite_number",
        None,
    ]


def test_json_lines_are_detected_without_the_extension() -> None:
    docs = list(iter_documents(b'{"a":1}\n{"b":2}\n', "<stdin>"))
    assert [d.value for d in docs] == [{"a": 1}, {"b": 2}]


def test_an_integer_literal_past_pythons_digit_limit_is_a_finding_not_a_crash() -> None:
    with pytest.raises(InvalidDocument) as caught:
        loads_strict(b'{"limit": ' + b"9" * 5000 + b"}")
    assert caught.value.findings[0].code == "json_number_out_of_range"
    # One such line in JSON Lines is reported, and the next lines are still read.
    text = b'{"a": 1}\n[' + b"1" * 4301 + b']\n{"a": 2}\n'
    documents = list(iter_documents(text, "x.jsonl"))
    assert [d.error.findings[0].code if d.error else d.value for d in documents] == [
        {"a": 1},
        "json_number_out_of_range",
        {"a": 2},
    ]
    assert loads_strict(b"1" * 4300) == int("1" * 4300)


def test_the_cli_reports_an_overlong_integer_with_exit_1(tmp_path: Path) -> None:
    import subprocess
    import sys

    document = tmp_path / "big.json"
    document.write_bytes(b'{"session_id": "s", "limit": ' + b"7" * 5000 + b"}")
    for args in (
        ["validate", "session-recap.query"],
        ["roundtrip", "session-recap.query"],
        ["canonicalize"],
        ["hash", "--form", "harn"],
        ["check"],
    ):
        run = subprocess.run(
            [sys.executable, "-m", "session_contracts", *args, str(document)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 1, (args, run.stdout, run.stderr)
        assert "json_number_out_of_range" in run.stdout + run.stderr, args
        assert "Traceback" not in run.stderr
        assert "internal error" not in run.stderr
