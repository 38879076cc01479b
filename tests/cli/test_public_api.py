"""The public Python API: everything a user calls, from one import."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import session_contracts as sc

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "schemas" / "examples"
FAULTY = REPO / "tests" / "producers" / "faulty.py"


def test_every_exported_name_resolves_and_none_is_private() -> None:
    for name in sc.__all__:
        assert not name.startswith("_")
        assert getattr(sc, name) is not None
    assert sorted(sc.__all__) == sorted(set(sc.__all__))
    with pytest.raises(AttributeError):
        _ = sc.not_a_public_name  # type: ignore[attr-defined]


def test_the_readme_documents_every_exported_function() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python API") : readme.index("## Development")]
    undocumented = [
        name
        for name in sc.__all__
        if name[0].islower() and name != "json_path" and not re.search(rf"\b{name}\b", section)
    ]
    assert undocumented == []


def test_validate_decode_encode_and_hash_every_example() -> None:
    for path in sorted(EXAMPLES.glob("*.json")):
        doctype = path.stem
        value = json.loads(path.read_bytes())
        assert sc.validate(doctype, value) == [], doctype
        assert sc.encode(sc.decode(doctype, path.read_bytes())) == value, doctype
        assert sc.content_hash(value).startswith("sha256:")
        assert sc.verify(doctype, value) == [], doctype
    assert set(sc.document_types()) >= {p.stem for p in EXAMPLES.glob("*.json")}


def test_findings_are_data() -> None:
    findings = sc.validate("session-feedback.usage", {"source": "x"})
    assert findings
    assert all(isinstance(f, sc.Finding) for f in findings)
    assert {f.code for f in findings} >= {"required"}
    with pytest.raises(sc.InvalidDocument) as caught:
        sc.decode("session-feedback.usage", b'{"source": "x"}')
    assert caught.value.findings


def test_both_canonical_forms() -> None:
    value = {"b": 1e16, "a": [1, "é"]}
    assert sc.canonical_bytes(value) == '{"a":[1,"é"],"b":10000000000000000}'.encode()
    assert sc.harn_canonical_bytes(value) == '{"a":[1,"é"],"b":1e+16}'.encode()
    assert sc.harn_content_hash(value) != sc.content_hash(value)


def test_redaction_with_the_default_and_another_policy() -> None:
    assert sc.redact("password=hunter2") != "password=hunter2"
    assert "hunter2" not in sc.redact("password=hunter2")
    assert sc.redact("nothing secret here") == "nothing secret here"
    redacted = sc.redact_value({"args": {"password": "hunter2"}}, sc.default_policy())
    assert "hunter2" not in json.dumps(redacted)
    assert isinstance(sc.extended_policy(), sc.RedactionPolicy)


def test_certify_the_reference_as_a_library(tmp_path: Path) -> None:
    result = sc.certify(
        checks=["roundtrip.identity", "recap.limit"], examples=3, failures_dir=tmp_path
    )
    assert isinstance(result, sc.Certification)
    assert result.certified
    assert [r.check.id for r in result.results] == ["roundtrip.identity", "recap.limit"]
    assert all(r.evidence.agreed == r.evidence.judged > 0 for r in result.results)
    assert result.failed == ()


def test_certify_refuses_a_producer_that_skips_everything(tmp_path: Path) -> None:
    result = sc.certify(
        [sys.executable, str(FAULTY), "skips_every_case"],
        checks=["roundtrip.identity"],
        examples=3,
        failures_dir=tmp_path,
    )
    assert not result.certified
    assert [r.status for r in result.failed] == ["skipped"]


@pytest.mark.parametrize("producer", ["", "   ", []])
def test_an_empty_producer_is_a_usage_error(producer: str | list[str]) -> None:
    with pytest.raises(sc.UsageError) as caught:
        sc.certify(producer)
    assert caught.value.findings[0].code == "producer_empty"


def test_an_unknown_check_is_a_usage_error() -> None:
    with pytest.raises(sc.UsageError) as caught:
        sc.certify(checks=["no.such-check"])
    assert caught.value.findings[0].code == "unknown_check"
