"""Every check can fail: each faulty producer (one defect) is caught by its check,
and the reference producer passes everything."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from cli_process import run_cli_text

from session_contracts.conformance.judge.certify import certify
from session_contracts.conformance.judge.checks import CHECKS, check_by_id
from session_contracts.conformance.judge.runner import ProducerProcess
from session_contracts.validation.validator import default_validator

pytestmark = pytest.mark.integration  # certifies producer processes

FAULTY = Path(__file__).resolve().parents[1] / "producers" / "faulty.py"
REFERENCE = [sys.executable, "-m", "session_contracts", "reference-producer"]


def faulty(defect: str) -> list[str]:
    return [sys.executable, str(FAULTY), defect]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli_text(*args, cwd=cwd, timeout=600)


# defect -> the check that must catch it
MATRIX = {
    "accepts_unknown_fields": "closed.unknown-field-rejected",
    "drops_extensions": "extensions.verbatim",
    "drops_nulls_in_extensions": "extensions.verbatim",
    "zero_rate": "health.no-zero-rate",
    "counts_streaming_candidates": "health.semantics",
    "sums_usage": "feedback.usage-never-summed",
    "accepts_future_usage": "feedback.semantics",
    "nondeterministic": "determinism.same-bytes",
    "invalid_output": "schema.output",
    "inlines_identical_parse": "runrecord.reference-when-identical",
    "leaks_secrets": "redaction.canaries",
    "nil_stays_a_string": "runrecord.response-semantics",
    "writes_parent_id": "schema.output",
    "relabels_session_id": "runrecord.semantics",
    "counts_repeated_terminal_twice": "health.semantics",
    "dedupes_calls_across_iterations": "health.semantics",
    "accepts_decreasing_counter": "feedback.semantics",
    "hashes_with_extensions": "recap.hashes",
    "noncanonical_hashing": "recap.hashes",
    "rfc8785_hashing": "recap.hashes",
    "wrong_limit_clamp": "recap.limit",
    "wrong_default_limit": "recap.limit",
    "ignores_snake_aliases": "recap.query-aliases",
    "leaks_recap_secrets": "redaction.recap-canaries",
    "redacts_lookalikes": "redaction.lookalikes-survive",
    "rejection_wrong_path": "closed.unknown-field-rejected",
    "rejection_wrong_class": "closed.unknown-field-rejected",
}


@pytest.mark.parametrize(("defect", "check_id"), sorted(MATRIX.items()))
def test_each_defect_is_caught_by_its_check(defect: str, check_id: str, tmp_path: Path) -> None:
    check = check_by_id(check_id)
    assert check is not None
    with ProducerProcess(faulty(defect), timeout=20) as producer:
        producer.start()
        (result,) = certify(producer, checks=[check], examples=40, seed=1, failures_dir=tmp_path)
    assert result.status == "failed", (defect, result)
    assert result.saved_to is not None
    assert Path(result.saved_to).is_file()


@pytest.mark.parametrize(
    ("defect", "reason"),
    [
        ("bogus_rejections", 'rejection.code: "bogus" is not one of'),
        ("rejection_wrong_path", "[rejection_path_differs]"),
        ("rejection_wrong_class", "[rejection_class_differs]"),
    ],
)
def test_rejections_are_judged_by_their_reason(defect: str, reason: str, tmp_path: Path) -> None:
    # Default examples and seed: the right verdict for the wrong reason is not certified.
    result = cli(
        "certify",
        "--producer",
        shlex.join(faulty(defect)),
        "--check",
        "closed.unknown-field-rejected",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "NOT CERTIFIED" in result.stdout
    assert reason in result.stdout


def test_the_reference_producer_passes_every_check(tmp_path: Path) -> None:
    with ProducerProcess(REFERENCE, timeout=30) as producer:
        producer.start()
        results = certify(producer, checks=CHECKS, examples=10, seed=3, failures_dir=tmp_path)
    assert {r.check.id: r.status for r in results} == {c.id: "passed" for c in CHECKS}


def test_certify_cli_reports_and_reproduces(tmp_path: Path) -> None:
    producer = shlex.join(faulty("drops_extensions"))
    result = cli(
        "certify",
        "--producer",
        producer,
        "--check",
        "extensions.verbatim",
        "--examples",
        "20",
        "--report-json",
        "r.json",
        "--junit",
        "j.xml",
        "--badge",
        "b.json",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert default_validator().validate("certification-report.report", report) == []
    (entry,) = report["checks"]
    assert (entry["id"], entry["status"]) == ("extensions.verbatim", "failed")
    assert report["summary"]["certified"] is False
    suite = ElementTree.parse(tmp_path / "j.xml").getroot()
    assert suite.find(".//failure") is not None
    assert json.loads((tmp_path / "b.json").read_text())["message"] == "0% of cases agreed"
    # The one-line reproduction replays exactly the saved case.
    command = entry["reproduce"]
    assert command.startswith("session-contracts certify --producer")
    replay = cli(*shlex.split(command)[1:], cwd=tmp_path)
    assert replay.returncode == 1
    assert "FAILED: extensions.verbatim" in replay.stdout


def test_the_same_seed_gives_the_same_cases(tmp_path: Path) -> None:
    runs = []
    for index in range(2):
        folder = tmp_path / str(index)
        folder.mkdir()
        cli(
            "certify",
            "--producer",
            shlex.join(faulty("accepts_unknown_fields")),
            "--check",
            "closed.unknown-field-rejected",
            "--examples",
            "5",
            "--seed",
            "42",
            "--report-json",
            "r.json",
            cwd=folder,
        )
        (saved,) = (folder / ".session-contracts" / "failures").iterdir()
        runs.append(saved.read_text())
    assert runs[0] == runs[1]


def test_zero_cases_never_certify(tmp_path: Path) -> None:
    result = cli(
        "certify",
        "--producer",
        shlex.join(faulty("skips_everything")),
        "--examples",
        "3",
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "without evidence never certifies" in result.stdout


@pytest.mark.parametrize(
    ("skipper", "status"),
    [("skips_every_case", "skipped"), ("skips_every_second_case", "partial")],
)
def test_a_producer_that_skips_cases_it_declares_is_not_certified(
    skipper: str, status: str, tmp_path: Path
) -> None:
    # At default settings: no --examples, no --check.
    report = tmp_path / "report.json"
    junit = tmp_path / "junit.xml"
    badge_file = tmp_path / "badge.json"
    result = cli(
        "certify",
        "--producer",
        shlex.join(faulty(skipper)),
        "--report-json",
        str(report),
        "--junit",
        str(junit),
        "--badge",
        str(badge_file),
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout
    assert "NOT CERTIFIED" in result.stdout
    body = json.loads(report.read_text())
    assert default_validator().validate("certification-report.report", body) == []
    assert body["summary"]["certified"] is False
    assert body["summary"]["passed"] == 0
    # A check that asks twice a case (determinism, aliases) sees only skips from the
    # half-skipper: it is skipped, never passed.
    assert body["summary"][status] >= len(body["checks"]) - 3
    for check in body["checks"]:
        assert check["applicable"] is True
        assert check["status"] in ("partial", "skipped")
        assert check["evidence"]["skipped"] > 0
        assert (check["evidence"]["agreed"] > 0) == (check["status"] == "partial")
    tree = ElementTree.parse(junit)
    assert sum(int(s.get("failures", 0)) for s in tree.iter("testsuite")) == len(body["checks"])
    share = json.loads(badge_file.read_text())["message"]
    if status == "skipped":
        assert share == "0% of cases agreed"
    else:
        assert share != "100% of cases agreed"


def test_evidence_counts_of_a_certified_run(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ["certify", "--check", "health.semantics", "--examples", "5", "--report-json"]
    result = cli(*args, str(report), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    [check] = json.loads(report.read_text())["checks"]
    assert check["status"] == "passed"
    # The explicit cases come first, then the 5 random ones: all of them are evidence.
    cases = 5 + len(check_by_id("health.semantics").explicit_cases())
    assert check["evidence"] == {"judged": cases, "agreed": cases, "skipped": 0, "errored": 0}


def test_baseline_of_expected_failures(tmp_path: Path) -> None:
    producer = shlex.join(faulty("drops_extensions"))
    args = [
        "certify",
        "--producer",
        producer,
        "--check",
        "extensions.verbatim",
        "--check",
        "health.semantics",
        "--examples",
        "10",
        "--baseline",
        "expected.txt",
    ]
    assert cli(*args, "--update-baseline", cwd=tmp_path).returncode == 0
    assert "extensions.verbatim" in (tmp_path / "expected.txt").read_text()
    assert cli(*args, cwd=tmp_path).returncode == 0, "a listed failure is expected"
    # A listed check that passes makes the list stale: the run fails.
    (tmp_path / "expected.txt").write_text("extensions.verbatim\nhealth.semantics\n")
    stale = cli(*args, cwd=tmp_path)
    assert stale.returncode == 1
    assert "listed as an expected failure but passes" in stale.stdout
    # A different failure message fails the run too.
    (tmp_path / "expected.txt").write_text("extensions.verbatim  # something else entirely\n")
    assert cli(*args, cwd=tmp_path).returncode == 1


def test_a_broken_harness_is_reported_first(tmp_path: Path) -> None:
    crash = [sys.executable, str(FAULTY.parent / "misbehaving.py"), "crash"]
    result = cli(
        "certify",
        "--producer",
        shlex.join(crash),
        "--check",
        "health.semantics",
        "--examples",
        "3",
        "--timeout",
        "3",
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "the harness looks broken" in result.stdout
    assert "producer_crashed" in result.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert cli("certify", "--check", "no.such.check", cwd=tmp_path).returncode == 2
    assert cli("certify", "--producer", "/no/such/binary", cwd=tmp_path).returncode == 2
    assert cli("certify", "--update-baseline", cwd=tmp_path).returncode == 2


def test_an_unparsable_producer_command_is_a_usage_error(tmp_path: Path) -> None:
    for args in (("certify",), ("golden", "check")):
        run = cli(*args, "--producer", "'unclosed", cwd=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "producer_command_invalid" in run.stdout + run.stderr
        assert "internal error" not in run.stderr


@pytest.mark.parametrize("command", ["", "   ", "\t"])
def test_an_empty_producer_is_a_usage_error_not_the_reference(command: str, tmp_path: Path) -> None:
    # An unset CI variable (--producer "$PRODUCER") must never certify our own reference.
    for args in (("certify",), ("golden", "check")):
        run = cli(*args, "--producer", command, cwd=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "producer_empty" in run.stdout + run.stderr
        assert "passed" not in run.stdout


def test_the_reference_is_named_on_the_first_line_when_no_producer_is_given(
    tmp_path: Path,
) -> None:
    run = cli("certify", "--check", "schema.output", "--examples", "2", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "built-in reference" in run.stdout.splitlines()[0]
    run = cli("golden", "check", "--case", "documents/*", cwd=tmp_path)
    assert "built-in reference producer" in run.stdout.splitlines()[0]


def test_producer_text_is_shown_verbatim_never_read_as_markup(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    run = cli(
        "certify", "--producer", shlex.join(faulty("markup_in_answers")),
        "--check", "health.semantics", "--examples", "3", "--report-json", str(report),
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert "MarkupError" not in run.stderr
    assert "[/x][bold]y[/bold]" in run.stdout  # in the first line and the failure detail
    assert report.exists()
    listing = cli("checks", cwd=tmp_path)
    assert "[extensions]" in listing.stdout


def test_check_ids_are_never_cut_and_ci_logs_get_a_line_per_check(tmp_path: Path) -> None:
    check = "closed.unknown-field-rejected"
    run = cli("certify", "--check", check, "--examples", "2", cwd=tmp_path)
    assert run.returncode == 0, run.stdout
    lines = run.stdout.splitlines()
    assert any(line.startswith("closed.unknown-field-rejected: passed") for line in lines)
    table = [line for line in lines if "closed." in line and "│" in line]
    assert table
    assert all("closed.unknown-field-rejected" in line for line in table)
