"""``certify --http URL --journal PATH``: a running HTTP recap adapter is judged by
the recap checks, our own adapter passes, each faulty one fails the right check,
and a target that cannot be certified is a usage error (exit 2)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest
from producers import faulty_http
from uvicorn_thread import free_socket, serving

from session_contracts import cli
from session_contracts.conformance.judge.certify import CheckResult, Trial
from session_contracts.conformance.judge.certify_http import (
    NOT_IMPOSABLE_OVER_HTTP,
    NOT_OVER_HTTP,
    HttpTarget,
)
from session_contracts.conformance.judge.checks import CHECKS, check_by_id
from session_contracts.conformance.judge.report import BaselineVerdict, github_annotations
from session_contracts.recap import RecapService, create_app
from session_contracts.validation.validator import default_validator

pytestmark = pytest.mark.integration  # certifies HTTP adapters in threads and processes

RECAP_CHECKS = {
    c.id
    for c in CHECKS
    if c.operation in ("recap.project", "*") and c.id not in NOT_IMPOSABLE_OVER_HTTP
}


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    # Not created yet: certify creates it, and the adapter opens it per query.
    return tmp_path / "journal.sqlite"


@pytest.fixture
def our_adapter(journal: Path) -> Iterator[str]:
    with serving(create_app(RecapService(journal))) as url:
        yield url


def certify(capsys: pytest.CaptureFixture[str], *args: str, cwd: Path) -> tuple[int, str, str]:
    failures = str(cwd / "failures")
    status = cli.main(["certify", "--failures-dir", failures, *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_our_adapter_is_certified_over_http(
    our_adapter: str, journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, junit, badge = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "b.json"
    status, out, err = certify(
        capsys,
        "--http",
        our_adapter,
        "--journal",
        str(journal),
        "--examples",
        "3",
        "--annotations",
        "none",
        "--report-json",
        str(report),
        "--junit",
        str(junit),
        "--badge",
        str(badge),
        cwd=tmp_path,
    )
    assert status == 0, out + err
    assert "CERTIFIED" in out
    assert "::" not in out
    body = json.loads(report.read_text())
    assert default_validator().validate("certification-report.report", body) == []
    statuses = {entry["id"]: entry["status"] for entry in body["checks"]}
    assert statuses == {c.id: "passed" if c.id in RECAP_CHECKS else "skipped" for c in CHECKS}, (
        statuses
    )
    skipped = [entry for entry in body["checks"] if entry["status"] == "skipped"]
    assert {entry["message"] for entry in skipped} == {
        NOT_OVER_HTTP,
        *NOT_IMPOSABLE_OVER_HTTP.values(),
    }
    assert body["producer"]["command"] is None
    assert body["producer"]["http"] == {"url": our_adapter, "journal": str(journal)}
    assert body["summary"]["certified"] is True
    assert ElementTree.parse(junit).getroot().find(".//failure") is None
    assert json.loads(badge.read_text())["message"] == "100% of cases agreed"


def test_a_second_run_on_the_same_journal_passes_too(
    our_adapter: str, journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The journal is append-only and shared: cases of a later run must not meet
    # the sessions or ids of an earlier one.
    args = ["--http", our_adapter, "--journal", str(journal), "--examples", "3"]
    args += ["--check", "recap.semantics", "--check", "determinism.same-bytes"]
    for _ in range(2):
        status, out, err = certify(capsys, *args, cwd=tmp_path)
        assert status == 0, out + err


# defect of tests/producers/faulty_http.py -> the check that must catch it
MATRIX = {
    "ignores_snake_aliases": "recap.query-aliases",
    "wrong_projection_hash": "recap.hashes",
    "drops_a_turn": "recap.semantics",
    "ignores_tool_call_id_header": "recap.stored-events",
}


@pytest.mark.parametrize(("defect", "check_id"), sorted(MATRIX.items()))
def test_each_http_defect_is_caught_by_its_check(
    defect: str,
    check_id: str,
    journal: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = tmp_path / "r.json"
    with serving(faulty_http.create_app(journal, defect)) as url:
        status, out, err = certify(
            capsys,
            "--http",
            url,
            "--journal",
            str(journal),
            "--check",
            check_id,
            "--examples",
            "10",
            "--seed",
            "1",
            "--report-json",
            str(report),
            cwd=tmp_path,
        )
        assert status == 1, out + err
        (entry,) = json.loads(report.read_text())["checks"]
        assert (entry["id"], entry["status"]) == (check_id, "failed"), entry
        # The one-line reproduction replays the saved case against the same adapter.
        command = shlex.split(entry["reproduce"])
        assert command[:4] == ["session-contracts", "certify", "--http", url]
        replay, replay_out, _ = certify(capsys, *command[2:], cwd=tmp_path)
    assert replay == 1
    assert f"FAILED: {check_id}" in replay_out


@pytest.mark.parametrize(
    ("defect", "error_code"), [("answers_500", "http_status"), ("answers_html", "invalid_json")]
)
def test_a_broken_exchange_is_errored_not_failed(
    defect: str, error_code: str, journal: Path
) -> None:
    trial = Trial(
        "recap.project",
        {
            "events": [
                {
                    "id": 0,
                    "sessionId": "sess-1",
                    "runId": None,
                    "turnId": "turn-0",
                    "iteration": None,
                    "executionId": None,
                    "topic": "session",
                    "kind": "message",
                    "recordedAtUnixMs": 1_700_000_000_000,
                    "payload": {"role": "user", "visibility": None, "text": "hello"},
                }
            ],
            "query": {"sessionId": "sess-1"},
        },
    )
    with (
        serving(faulty_http.create_app(journal, defect)) as url,
        HttpTarget(url, journal) as target,
    ):
        outcome = target.run(target.prepare(trial))
    assert (outcome.outcome, outcome.error_code) == ("errored", error_code), outcome


def test_prepared_cases_get_their_own_sessions(our_adapter: str, journal: Path) -> None:
    """Every case gets sessions no other case of any run has; the journal numbers events
    per session, so ids and the query's fromEventId stay as the case has them."""
    trial = Trial(
        "recap.project",
        {
            "events": [
                {"id": 2, "sessionId": "sess-1", "kind": "x"},
                {"id": 5, "sessionId": "sess-2", "kind": "x"},
            ],
            "query": {"session_id": "sess-1", "from_event_id": 0, "limit": 3},
            "lookalike": "kept",
        },
    )
    with HttpTarget(our_adapter, journal) as target:
        one, two = target.prepare(trial), target.prepare(trial)
        again = target.prepare(one)  # a replayed case: a fresh suffix, not a second one
    with HttpTarget(our_adapter, journal) as later_run:
        three = later_run.prepare(trial)
    events = one.input["events"]
    assert [e["id"] for e in events] == [2, 5]
    assert one.input["query"]["from_event_id"] == 0
    assert events[0]["sessionId"] != "sess-1"
    assert events[0]["sessionId"].startswith("sess-1~c")
    assert events[1]["sessionId"].startswith("sess-2~c")
    assert one.input["query"]["session_id"] == events[0]["sessionId"]
    assert one.input["query"]["limit"] == 3
    assert one.input["lookalike"] == "kept"
    sessions = {case.input["query"]["session_id"] for case in (one, two, again, three)}
    assert len(sessions) == 4
    assert again.input["events"][0]["sessionId"].count("~c") == 1


def test_an_unreachable_adapter_is_a_usage_error(
    journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sock = free_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()  # bound, never listening: nothing answers there
    status, out, err = certify(capsys, "--http", url, "--journal", str(journal), cwd=tmp_path)
    assert status == 2
    assert "[http_unreachable]" in err
    assert "$.http" in err
    assert "session-contracts serve --journal" in err
    assert "Traceback" not in err + out


def test_an_adapter_on_another_journal_is_a_usage_error(
    our_adapter: str, journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.sqlite"
    quick = ["--check", "recap.limit", "--examples", "1"]
    # The adapter's journal has no journal file yet: journal_unavailable.
    status, _, err = certify(
        capsys, "--http", our_adapter, "--journal", str(other), *quick, cwd=tmp_path
    )
    assert status == 2
    assert "[journal_not_served]" in err
    # Now it holds an earlier run's sessions, probe included, named as in a fresh journal.
    status, out, err = certify(
        capsys, "--http", our_adapter, "--journal", str(journal), *quick, cwd=tmp_path
    )
    assert status == 0, out + err
    fresh = tmp_path / "fresh.sqlite"
    status, _, err = certify(
        capsys, "--http", our_adapter, "--journal", str(fresh), *quick, cwd=tmp_path
    )
    assert status == 2
    assert "[journal_not_served]" in err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--http", "http://127.0.0.1:9"], "journal_required"),
        (
            ["--http", "http://127.0.0.1:9", "--journal", "j", "--producer", "x"],
            "http_with_producer",
        ),
        (["--journal", "j.sqlite"], "journal_without_http"),
        (["--http", "ftp://host", "--journal", "j.sqlite"], "http_url_invalid"),
        (["--http", "http://u:secret@host", "--journal", "j.sqlite"], "http_url_invalid"),
        (
            ["--http", "http://127.0.0.1:9", "--journal", "no/such/dir/j.sqlite"],
            "journal_unavailable",
        ),
    ],
)
def test_options_that_cannot_work_are_usage_errors(
    args: list[str],
    code: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = certify(capsys, *args, cwd=tmp_path)
    assert status == 2, out + err
    assert f"[{code}]" in err
    assert "hint:" in err
    assert "Traceback" not in err


def test_github_annotations_name_each_failed_check(
    journal: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["--check", "recap.query-aliases", "--check", "recap.limit", "--examples", "10"]
    with serving(faulty_http.create_app(journal, "ignores_snake_aliases")) as url:
        target = ["--http", url, "--journal", str(journal), "--seed", "1", *args]
        status, out, _ = certify(capsys, *target, "--annotations", "github", cwd=tmp_path)
        assert status == 1
        lines = [line for line in out.splitlines() if line.startswith("::")]
        assert len(lines) == 1, lines
        assert lines[0].startswith("::error title=recap.query-aliases::failed: ")
        assert "%0Areproduce: session-contracts certify --http" in lines[0]
        # Default: on inside GitHub Actions only.
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        _, out, _ = certify(capsys, *target, cwd=tmp_path)
        assert "::error title=recap.query-aliases::" in out
        monkeypatch.setenv("GITHUB_ACTIONS", "false")
        _, out, _ = certify(capsys, *target, cwd=tmp_path)
        assert "::error" not in out


def test_annotation_levels_and_scrubbing() -> None:
    from session_contracts.redaction.canaries import canary_secrets

    secret = next(iter(canary_secrets().values()))
    required, recommended = check_by_id("recap.hashes"), check_by_id("redaction.lookalikes-survive")
    assert required is not None
    assert recommended is not None
    results = [
        CheckResult(required, "errored", 1, f"timeout: the server said {secret}"),
        CheckResult(recommended, "failed", 1, "a look-alike was redacted"),
        CheckResult(check_by_id("recap.limit") or required, "passed", 3),
    ]
    lines = github_annotations(
        results,
        reproduce={},
        baseline=[BaselineVerdict("recap.limit", "unexpected_pass", "listed but passes")],
    )
    assert [line.split("::")[1] for line in lines] == [
        "error title=recap.hashes",
        "warning title=redaction.lookalikes-survive",
        "error title=recap.limit",
    ]
    assert secret not in "".join(lines)
