"""Strict JSON reading: every way a text can be bad gives one finding with a stable code."""

from __future__ import annotations

import pytest

from session_contracts import InvalidDocument
from session_contracts._jsonload import iter_documents, loads_strict


@pytest.mark.parametrize(
    ("text", "code", "path"),
    [
        (b'{"a": 1, "a": 2}', "json_duplicate_key", "$"),
        (b"[NaN]", "json_non_finite_number", "$"),
        (b"[Infinity]", "json_non_finite_number", "$"),
        (b"[-Infinity]", "json_non_finite_number", "$"),
        (b"1e400", "json_non_finite_number", "$"),
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
