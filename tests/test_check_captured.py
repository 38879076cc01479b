"""session-contracts check: certify documents a producer already wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from session_contracts.conformance._captured import check_documents, detect_doctype

from session_contracts._redaction import canaries, canary_secrets

EXAMPLES = Path(__file__).resolve().parents[1] / "schemas" / "examples"
PRODUCER_TYPES = sorted(
    p.stem
    for p in EXAMPLES.glob("*.json")
    if not p.stem.startswith(("producer-protocol.", "certification-report."))
)


def run(
    *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "session_contracts", "check", *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


@pytest.mark.parametrize("doctype", PRODUCER_TYPES)
def test_every_document_type_is_detected_from_the_schemas(doctype: str) -> None:
    assert detect_doctype(json.loads((EXAMPLES / f"{doctype}.json").read_text())) == doctype


def test_json_lines_are_checked_line_by_line(tmp_path: Path) -> None:
    span = json.loads((EXAMPLES / "run-record.span.json").read_text())
    bad = dict(span, parent_id=1)
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join([json.dumps(span), "{not json", json.dumps(bad), ""]))
    results = [
        (source, doctype, [f.code for f in findings])
        for source, doctype, findings in check_documents([str(path)])
    ]
    assert [r[0] for r in results] == [f"{path}:1", f"{path}:2", f"{path}:3"]
    assert results[0][2] == []
    assert results[1][2] == ["json_syntax"]
    assert "unknown_field" in results[2][2]


def test_hashes_are_recomputed(tmp_path: Path) -> None:
    envelope = json.loads((EXAMPLES / "session-recap.envelope.json").read_text())
    envelope["snapshot"]["coverage"]["scanned"] += 1
    path = tmp_path / "envelope.json"
    path.write_text(json.dumps(envelope))
    result = run(str(path))
    assert result.returncode == 1
    assert "$.snapshot.projectionHash" in result.stdout
    assert "projection_hash_mismatch" in result.stdout


def test_secrets_are_found_and_never_repeated(tmp_path: Path) -> None:
    progress = json.loads((EXAMPLES / "session-feedback.progress.json").read_text())
    secret = canary_secrets()["aws_access_key_id"]
    progress["summary"] = "deployed with " + canaries()["aws_access_key_id"]
    path = tmp_path / "progress.json"
    path.write_text(json.dumps(progress))
    result = run(str(path), "--format", "json")
    assert result.returncode == 1
    assert "redaction_secret_found" in result.stdout
    assert "$.summary" in result.stdout
    assert secret not in result.stdout + result.stderr


def test_a_folder_is_walked_and_statistics_are_printed(tmp_path: Path) -> None:
    for name in ("session-health.fact", "run-record.span"):
        (tmp_path / f"{name}.json").write_text((EXAMPLES / f"{name}.json").read_text())
    (tmp_path / "notes.txt").write_text("not a document")
    result = run(str(tmp_path), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])["summary"]
    assert summary["documents"] == 2
    assert summary["per_type"] == {"run-record.span": 1, "session-health.fact": 1}


def test_stdin_json_lines_are_detected() -> None:
    span = (EXAMPLES / "run-record.span.json").read_text().replace("\n", "")
    result = run("-", stdin=f"{span}\n{span}\n".encode())
    assert result.returncode == 0, result.stdout + result.stderr
    assert '"documents": 2' in result.stderr


def test_zero_documents_never_pass(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n")
    result = run(str(tmp_path / "empty.jsonl"))
    assert result.returncode == 1
    assert "zero documents never pass" in result.stderr


def test_an_unknown_document_and_a_missing_path(tmp_path: Path) -> None:
    (tmp_path / "odd.json").write_text('{"hello": "world"}')
    assert "doctype_unknown" in run(str(tmp_path / "odd.json")).stdout
    assert run(str(tmp_path / "nope.json")).returncode == 2


def test_doctype_can_be_forced(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    path.write_text((EXAMPLES / "session-feedback.usage.json").read_text())
    result = run(str(path), "--doctype", "session-feedback.progress")
    assert result.returncode == 1
    assert "$.phase" in result.stdout


@pytest.mark.parametrize("kind", sorted(canaries()))
def test_the_fast_secret_gate_never_hides_a_canary(kind: str) -> None:
    from session_contracts.conformance._captured import _may_hold_secret

    from session_contracts._redaction_policy import default_policy

    document = json.loads((EXAMPLES / "session-recap.snapshot.json").read_text())
    document["turns"][0]["prompts"][0]["text"] = f"see {canaries()[kind]} here"
    assert _may_hold_secret(document, default_policy())
    document["extensions"] = {canaries()[kind]: 1}
    del document["turns"][0]["prompts"][0]["text"]
    assert _may_hold_secret(document, default_policy())
