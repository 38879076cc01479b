"""The ``golden check`` / ``golden update`` machinery catches every kind of
drift: a stale answer, a missing or orphaned expected file, a hand edit, a
malformed case, a broken producer (tests/rules/test_golden_corpus.py holds the
shipped corpus to it)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_cli_text

from session_contracts.conformance.judge.golden import (
    CASE_SUFFIX,
    answer_of,
    differences,
)
from session_contracts.conformance.judge.runner import CaseOutcome

pytestmark = pytest.mark.integration  # golden-checks producer processes

PRODUCERS = Path(__file__).resolve().parents[1] / "producers"

# ----------------------------------------------------------------------------- the machinery

HEALTH_INPUT = {
    "session_id": "s",
    "observations": [
        {"kind": "iteration_started", "iteration": 1},
        {"kind": "iteration_finished", "wall_time_ms": 900, "prose_characters": None},
    ],
}


def _case(root: Path, name: str, operation: str, case_input: Any, **extra: Any) -> Path:
    area, stem = name.split("/")
    folder = root / area
    folder.mkdir(parents=True, exist_ok=True)
    body = {
        "description": f"the case {stem}",
        "covers": [],
        "tags": [],
        "operation": operation,
        "input": case_input,
        **extra,
    }
    path = folder / f"{stem}{CASE_SUFFIX}"
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    _case(root, "health/one-iteration", "health.reduce", HEALTH_INPUT)
    _case(
        root,
        "documents/span-without-trace",
        "document.roundtrip",
        {"doctype": "run-record.span", "document": {"span_id": 1}},
    )
    return root


def golden(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli_text("golden", *args, cwd=cwd, timeout=300)


def test_update_writes_expected_files_and_check_passes(corpus: Path) -> None:
    first = golden("update", "--fixtures", str(corpus))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "added health/one-iteration.expected.json" in first.stdout
    assert "2 added, 0 changed, 0 deleted, 0 unchanged" in first.stdout
    expected = json.loads((corpus / "health" / "one-iteration.expected.json").read_text())
    assert expected["outcome"] == "result"
    assert expected["sha256"].startswith("sha256:")
    rejected = json.loads((corpus / "documents" / "span-without-trace.expected.json").read_text())
    assert rejected["outcome"] == "rejected"
    # Every finding of the input, sorted by path: each missing member of the span.
    assert {"code": "required", "path": "$.document.trace_id"} in rejected["findings"]
    assert {f["code"] for f in rejected["findings"]} == {"required"}
    assert rejected["findings"] == sorted(rejected["findings"], key=lambda f: f["path"])

    check = golden("check", "--fixtures", str(corpus))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "2 passed, 0 failed, 0 errored, 0 skipped" in check.stdout

    again = golden("update", "--fixtures", str(corpus))
    assert "0 added, 0 changed, 0 deleted, 2 unchanged" in again.stdout
    assert not [p for p in corpus.rglob(".*") if p.is_file()], "a temporary file was left behind"


def test_a_stale_expected_file_fails_with_the_differences(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    changed = dict(HEALTH_INPUT, session_id="other")
    _case(corpus, "health/one-iteration", "health.reduce", changed)

    check = golden("check", "--fixtures", str(corpus))
    assert check.returncode == 1
    assert "FAILED health/one-iteration [answer_differs]" in check.stdout
    assert '$.output.facts[0].session_id: got "other", expected "s"' in check.stdout

    update = golden("update", "--fixtures", str(corpus))
    assert "changed health/one-iteration.expected.json" in update.stdout
    assert '$.output.facts[0].session_id: got "other", expected "s"' in update.stdout
    assert golden("check", "--fixtures", str(corpus)).returncode == 0


def test_a_missing_expected_file_fails(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    (corpus / "health" / "one-iteration.expected.json").unlink()
    check = golden("check", "--fixtures", str(corpus))
    assert check.returncode == 1
    assert "[expected_missing]" in check.stdout


def test_an_expected_file_no_case_uses_fails_and_update_deletes_it(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    orphan = corpus / "health" / "gone.expected.json"
    shutil.copy(corpus / "health" / "one-iteration.expected.json", orphan)
    check = golden("check", "--fixtures", str(corpus))
    assert check.returncode == 1
    assert "FAILED health/gone.expected.json [expected_orphan]" in check.stdout
    update = golden("update", "--fixtures", str(corpus))
    assert "deleted health/gone.expected.json" in update.stdout
    assert not orphan.exists()
    assert golden("check", "--fixtures", str(corpus)).returncode == 0


def test_an_expected_file_edited_by_hand_fails(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    path = corpus / "health" / "one-iteration.expected.json"
    edited = json.loads(path.read_text())
    edited["output"]["facts"][0]["iteration"] = 2
    path.write_text(json.dumps(edited))
    check = golden("check", "--fixtures", str(corpus))
    assert check.returncode == 1
    assert "[expected_edited]" in check.stdout


@pytest.mark.parametrize(
    ("body", "code", "path"),
    [
        ("{", "json_syntax", "$"),
        (
            '{"description": "x", "covers": [], "tags": [], "operation": "x.y", "input": {}}',
            "fixture_invalid",
            "$.operation",
        ),
        (
            '{"description": "x", "covers": [], "tags": [], "input": {}}',
            "fixture_invalid",
            "$.operation",
        ),
        (
            '{"description": "x", "covers": [1], "tags": [], "operation": "health.reduce", '
            '"input": {}}',
            "fixture_invalid",
            "$.covers",
        ),
        (
            '{"description": "x", "covers": [], "tags": [], "operation": "health.reduce", '
            '"input": {}, "expect": 1}',
            "fixture_invalid",
            "$.expect",
        ),
        (
            '{"description": "x", "covers": [], "tags": [], "operation": ["health.reduce"], '
            '"input": {}}',
            "fixture_invalid",
            "$.operation",
        ),
    ],
)
def test_a_malformed_case_is_reported_and_update_writes_nothing(
    corpus: Path, body: str, code: str, path: str
) -> None:
    (corpus / "health" / f"broken{CASE_SUFFIX}").write_text(body, encoding="utf-8")
    check = golden("check", "--fixtures", str(corpus), "--format", "json")
    assert check.returncode == 1
    rows = [json.loads(line) for line in check.stdout.splitlines()]
    broken = next(r for r in rows if r.get("case") == "health/broken.case.json")
    assert broken["code"] == code
    assert broken["message"].startswith(path)
    update = golden("update", "--fixtures", str(corpus))
    assert update.returncode == 1
    assert not list(corpus.rglob("*.expected.json"))


def test_a_producer_process_is_judged_like_the_reference(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    reference = shlex.join([sys.executable, "-m", "session_contracts", "reference-producer"])
    ok = golden("check", "--fixtures", str(corpus), "--producer", reference)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    faulty = shlex.join([sys.executable, str(PRODUCERS / "faulty.py"), "zero_rate"])
    bad = golden("check", "--fixtures", str(corpus), "--producer", faulty)
    assert bad.returncode == 1
    assert "FAILED health/one-iteration [answer_differs]" in bad.stdout
    assert "rolling.nonzero_command_exit_rate: got" in bad.stdout


@pytest.mark.parametrize(
    ("defect", "code"),
    [
        ("bogus_rejections", "[invalid_response]"),
        ("rejection_wrong_path", "[rejection_path_differs]"),
        ("rejection_wrong_class", "[rejection_class_differs]"),
    ],
)
def test_rejections_are_judged_by_their_reason(defect: str, code: str, corpus: Path) -> None:
    # Only the verdict right is not enough: the path and the class of the code count.
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    faulty = shlex.join([sys.executable, str(PRODUCERS / "faulty.py"), defect])
    bad = golden("check", "--fixtures", str(corpus), "--producer", faulty)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"documents/span-without-trace {code}" in bad.stdout
    if defect != "bogus_rejections":
        assert "the reference found required at $.document.duration_ms" in bad.stdout


def test_a_crashing_producer_errors_and_missing_operations_skip(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    crash = shlex.join([sys.executable, str(PRODUCERS / "misbehaving.py"), "crash"])
    report = corpus.parent / "report.json"
    junit = corpus.parent / "golden.xml"
    result = golden(
        "check",
        "--fixtures",
        str(corpus),
        "--producer",
        crash,
        "--report-json",
        str(report),
        "--junit",
        str(junit),
    )
    assert result.returncode == 1
    body = json.loads(report.read_text())
    statuses = {r["case"]: r["status"] for r in body["results"]}
    # misbehaving.py offers health.reduce only.
    assert statuses == {
        "health/one-iteration": "errored",
        "documents/span-without-trace": "skipped",
    }
    badge = corpus.parent / "badge.json"
    golden("check", "--fixtures", str(corpus), "--producer", crash, "--badge", str(badge))
    assert json.loads(badge.read_text()) == {
        "schemaVersion": 1,
        "label": "golden fixtures",
        "message": "0/1 passing",
        "color": "red",
    }
    suites = ET.fromstring(junit.read_bytes())
    assert suites.find(".//testcase/error") is not None
    assert suites.find(".//testcase/skipped") is not None
    assert "no fixture passed" in result.stderr


def test_fixtures_of_undeclared_contracts_are_counted_not_listed(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    health_only = shlex.join([sys.executable, str(PRODUCERS / "faulty.py"), "health_only"])
    report = corpus.parent / "report.json"
    result = golden(
        "check", "--fixtures", str(corpus), "--producer", health_only, "--report-json", str(report)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SKIPPED" not in result.stdout
    assert "skipped as not declared by the producer: run-record 1" in result.stdout
    body = json.loads(report.read_text())
    assert body["summary"]["not_declared"] == {"run-record": 1}
    [skipped] = [r for r in body["results"] if r["status"] == "skipped"]
    assert skipped["code"] == "not_declared"


def test_a_producer_skipping_declared_fixtures_is_not_ok(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    skipper = shlex.join([sys.executable, str(PRODUCERS / "faulty.py"), "skips_every_case"])
    result = golden("check", "--fixtures", str(corpus), "--producer", skipper)
    assert result.returncode == 1
    assert "answered skipped: no evidence" in result.stdout


def test_a_hung_producer_costs_three_timeouts_not_one_per_fixture(tmp_path: Path) -> None:
    root = tmp_path / "fixtures"
    for number in range(8):
        _case(root, f"health/hang-{number}", "health.reduce", HEALTH_INPUT)
    assert golden("update", "--fixtures", str(root)).returncode == 0
    hang = shlex.join([sys.executable, str(PRODUCERS / "misbehaving.py"), "hang"])
    report = tmp_path / "report.json"
    args = ["--fixtures", str(root), "--producer", hang, "--timeout", "0.5"]
    result = golden("check", *args, "--report-json", str(report))
    assert result.returncode == 1
    codes = [r["code"] for r in json.loads(report.read_text())["results"]]
    assert codes == ["timeout"] * 3 + ["not_sent_after_timeouts"] * 5


def test_github_annotations_point_at_the_case_file(corpus: Path) -> None:
    check = golden("check", "--fixtures", str(corpus), "--annotations", "github")
    assert check.returncode == 1
    lines = [line for line in check.stdout.splitlines() if line.startswith("::error ")]
    assert len(lines) == 2
    assert any(f"file={corpus}/health/one-iteration.case.json" in line for line in lines)


def test_case_filter_and_usage_errors(corpus: Path) -> None:
    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    only = golden("check", "--fixtures", str(corpus), "--case", "health/*")
    assert only.returncode == 0
    assert "1 fixture(s): 1 passed" in only.stdout
    nothing = golden("check", "--fixtures", str(corpus), "--case", "nope/*")
    assert nothing.returncode == 2
    assert "no_fixture_selected" in nothing.stderr
    missing = golden("check", "--fixtures", str(corpus / "absent"))
    assert missing.returncode == 2
    assert "fixtures_not_found" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_differences_name_json_paths_in_document_order() -> None:
    found = differences(
        {"a": [1, 2, 3], "b": {"c": "x"}, "gone": 1},
        {"a": [1, 5], "b": {"c": "y"}, "new": True},
    )
    assert [d.render() for d in found] == [
        "$.a[1]: got 5, expected 2",
        "$.a[2]: got (absent), expected 3",
        '$.b.c: got "y", expected "x"',
        "$.gone: got (absent), expected 1",
        "$.new: got true, expected (absent)",
    ]


def test_feedback_answers_compare_checkpoint_ids_by_first_appearance() -> None:
    ours = {"responses": [{"checkpoint_id": "a1", "message": "x"}, {"checkpoint_id": "a1"}]}
    theirs = {"responses": [{"checkpoint_id": "zz", "message": "y"}, {"checkpoint_id": "zz"}]}
    answer = answer_of("feedback.run", CaseOutcome(0, "result", output=ours))
    assert answer == answer_of("feedback.run", CaseOutcome(0, "result", output=theirs))


def test_secret_placeholders_expand_to_the_built_in_fake_secrets(tmp_path: Path) -> None:
    from session_contracts.conformance.judge.golden import load_corpus
    from session_contracts.redaction.canaries import canary_secrets

    root = tmp_path / "fixtures"
    text = {"doctype": "x", "document": {"note": "key {{secret:github_token}} here"}}
    _case(root, "documents/planted", "document.roundtrip", text)
    _case(root, "documents/unknown-kind", "document.roundtrip", {"a": ["{{secret:nope}}"]})
    corpus = load_corpus(root)
    (case,) = corpus.cases
    assert case.input["document"]["note"] == f"key {canary_secrets()['github_token']} here"
    (problem,) = corpus.problems
    assert (problem.code, problem.path) == ("fixture_invalid", "$.input.a[0]")
    assert "no built-in secret 'nope'" in problem.message


def test_a_case_input_the_reference_cannot_take_errors_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference refuses every malformed case input (tests/unit/test_case_inputs.py),
    # so a bug of its own is planted: the subprocesses import this sitecustomize.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "from session_contracts.conformance.reference import producer\n"
        "def broken(case):\n"
        "    raise KeyError('steps')\n"
        "producer.HANDLERS['feedback.run'] = broken\n"
    )
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))
    )
    root = tmp_path / "fixtures"
    _case(root, "feedback/no-steps", "feedback.run", {})
    check = golden("check", "--fixtures", str(root))
    assert check.returncode == 1
    assert "ERRORED feedback/no-steps [producer_error]: KeyError: 'steps'" in check.stdout
    update = golden("update", "--fixtures", str(root))
    assert update.returncode == 2
    assert "reference_failed" in update.stderr
    assert "Traceback" not in check.stderr + update.stderr
    assert not list(root.rglob("*.expected.json"))


def test_an_expected_rejection_without_findings_is_outdated(corpus: Path) -> None:
    # An expected file written before rejections were judged by their reason
    # (no findings) cannot judge one: it fails and says to update, never passes.
    from session_contracts.conformance.judge.expected import reference_outcome
    from session_contracts.conformance.judge.golden import judge, load_corpus
    from session_contracts.jsontext.canonical import content_hash

    assert golden("update", "--fixtures", str(corpus)).returncode == 0
    (case,) = [c for c in load_corpus(corpus).cases if c.name == "documents/span-without-trace"]
    old = {"case": case.name, "operation": case.operation, "outcome": "rejected"}
    old["sha256"] = content_hash({"outcome": "rejected"})
    case.expected_path.write_text(json.dumps(old))
    result = judge(case, reference_outcome(case.operation, case.input), root=corpus)
    assert (result.status, result.code) == ("failed", "expected_outdated")
