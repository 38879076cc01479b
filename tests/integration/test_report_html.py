"""The HTML page of ``certify --report-html`` and ``golden check --report-html``.

The pages are built in-process from real runs (``run_check`` and golden's
``judge`` over single-defect producers, as tests/integration/test_defects.py runs them),
parsed to prove what they hold and that producer text stays text, and opened in
headless Chromium (tools/browser/inspect-page.js, playwright-core) to prove what
a person sees.  The browser test skips where Chromium or the Node toolchain is
missing, and fails instead under CI=true (.ci/run installs both).
"""

from __future__ import annotations

import html
import html.parser
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import defects
import faulty
import pytest
import serving
from test_certify import MATRIX

from session_contracts.cli import main
from session_contracts.conformance.judge.certify import (
    CheckResult,
    in_process_runner,
    is_certified,
    run_check,
)
from session_contracts.conformance.judge.checks import check_by_id
from session_contracts.conformance.judge.expected import reference_outcome
from session_contracts.conformance.judge.golden import (
    FixtureResult,
    answer_of,
    default_fixtures_dir,
    differences,
    judge,
    load_corpus,
)
from session_contracts.conformance.judge.report import report_body, total_evidence
from session_contracts.conformance.judge.report_html import certify_html, golden_html
from session_contracts.conformance.protocol import Handler, Skipped
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.redaction.canaries import canary_secrets

pytestmark = pytest.mark.integration  # drives Chromium and certifies in-process

TESTS = Path(__file__).resolve().parents[1]
BROWSER = TESTS.parent / "tools" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Producer-controlled text that would be markup if it were not escaped: it closes
# the <pre> it lands in, opens a script, and carries both quotes and an ampersand.
PLANTED = "</pre><script>window.__planted.push(1)</script><b>\"q\" 'a' & b</b>"
CHECKS = ("recap.semantics", "recap.hashes", "health.no-zero-rate")
SETTINGS = {"examples": 2, "seed": 0, "fail_on": "required", "timeout": 10.0}


def _planting_recap(case_input: Mapping[str, Any]) -> Any:
    """The reference's recap with the planted text as a member name and value of the
    snapshot's extensions: a wrong answer whose difference is producer text."""
    output = HANDLERS["recap.project"](case_input)
    if isinstance(output, dict) and isinstance(output.get("snapshot"), dict):
        output["snapshot"]["extensions"] = {PLANTED: PLANTED}
    return output


def _run(check_id: str, handlers: Mapping[str, Handler], failures: Path) -> CheckResult:
    """One check run in-process at SETTINGS, as ``certify`` runs it."""
    check = check_by_id(check_id)
    assert check is not None
    return run_check(
        check,
        in_process_runner(handlers),
        contracts=tuple(serving.CONTRACTS),
        operations=tuple(sorted(HANDLERS)),
        examples=int(SETTINGS["examples"]),
        seed=int(SETTINGS["seed"]),
        failures_dir=failures,
    )


def _page_of(
    results: Sequence[CheckResult],
    producer: Mapping[str, Any],
    summary: Mapping[str, Any],
    reproduce: Mapping[str, str],
) -> bytes:
    """The page certify writes for these results (no baseline)."""
    settings = {**SETTINGS, "checks": [r.check.id for r in results]}
    parts: dict[str, Any] = {"producer": producer, "summary": summary, "reproduce": reproduce}
    return certify_html(report_body(results, settings=settings, baseline=[], **parts), results)


def _certify_page(
    handlers: Mapping[str, Handler], command: str, failures: Path
) -> tuple[bytes, list[CheckResult]]:
    """A certify run of CHECKS in-process and its page, as ``certify`` builds it."""
    results = [_run(check_id, handlers, failures) for check_id in CHECKS]
    counts = {s: sum(r.status == s for r in results) for s in ("passed", "failed", "errored")}
    summary = {
        **counts,
        "partial": 0,
        "skipped": 0,
        "cases": sum(r.cases for r in results),
        "evidence": total_evidence(results),
        "producer_restarts": 0,
        "certified": is_certified(results, "required"),
        "harness_looks_broken": False,
    }
    producer = {
        "command": command,
        "implementation": {"name": "planted", "version": "1", "language": "python"},
        "contracts": list(serving.CONTRACTS),
        "operations": sorted(HANDLERS),
    }
    reproduce = {
        r.check.id: f"session-contracts certify --producer {command!r} --replay {r.saved_to}"
        for r in results
        if r.saved_to
    }
    return _page_of(results, producer, summary, reproduce), results


@pytest.fixture(scope="module")
def planted_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[CheckResult]]:
    handlers = {**HANDLERS, "recap.project": _planting_recap}
    return _certify_page(handlers, f"python planted.py {PLANTED}", tmp_path_factory.mktemp("f"))


class _Page(html.parser.HTMLParser):
    """The page's start tags, element ids and text, as a browser's parser reads them."""

    def __init__(self, page: bytes) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.texts: list[str] = []
        self.feed(page.decode("utf-8"))
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.ids.update(value or "" for name, value in attrs if name == "id")

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def test_a_failure_keeps_the_smallest_case_and_both_answers(tmp_path: Path) -> None:
    result = _run("recap.semantics", defects.handlers_for("keeps_text_untrimmed"), tmp_path)
    assert result.status == "failed"
    assert result.trial is not None
    assert result.answer is not None
    assert result.reference_answer is not None
    assert result.answer["outcome"] == result.reference_answer["outcome"] == "result"
    assert result.answer != result.reference_answer
    # It failed on an explicit case: no random case ran.
    assert result.explicit == result.evidence
    assert result.details["explicit"]
    # The reference's answer is the one to the case that failed, not to another.
    assert result.reference_answer["output"] == HANDLERS["recap.project"](result.trial.input)


def _health_with_an_unknown_member(case_input: Mapping[str, Any]) -> Any:
    """An unknown member in every fact of a reduction of four facts or more: the first
    (simplest) cases pass, so the failing case is one hypothesis found later and shrank."""
    output = HANDLERS["health.reduce"](case_input)
    if len(output["facts"]) >= 4:
        for fact in output["facts"]:
            fact["not_in_the_contract"] = True
    return output


def test_a_random_failure_keeps_the_answers_to_its_shrunk_case(tmp_path: Path) -> None:
    handlers = {**HANDLERS, "health.reduce": _health_with_an_unknown_member}
    result = _run("schema.output", handlers, tmp_path)
    assert result.status == "failed"
    assert result.trial is not None
    assert "explicit" not in result.details  # a random case, shrunk
    assert result.explicit.judged < result.evidence.judged
    # The answers are those to the saved (shrunk) case, not to a case tried before it.
    trial = result.trial
    again = in_process_runner(handlers)(trial)
    assert result.answer == answer_of(trial.operation, again)
    reference = reference_outcome(trial.operation, dict(trial.input))
    assert result.reference_answer == answer_of(trial.operation, reference)
    found = differences(result.reference_answer, result.answer)
    assert found
    assert all(d.path.endswith(".not_in_the_contract") for d in found)


def test_the_certify_page_holds_the_summary_every_check_and_each_failure(
    planted_page: tuple[bytes, list[CheckResult]],
) -> None:
    page, results = planted_page
    parsed = _Page(page)
    statuses = {r.check.id: r.status for r in results}
    assert statuses["recap.semantics"] == "failed", statuses
    assert "NOT CERTIFIED" in parsed.text
    rows = page.decode().split('<tr class="check-row"')[1:]
    for result in results:
        row = next(_Page(r.encode()).text for r in rows if f">{result.check.id}<" in r)
        explicit, evidence = result.explicit, result.evidence
        # agreed/judged in all, of the explicit cases, and of the random ones.
        assert f"{evidence.agreed}/{evidence.judged}" in row
        assert f"{explicit.agreed}/{explicit.judged}" in row
        assert f"{evidence.agreed - explicit.agreed}/{evidence.judged - explicit.judged}" in row
    hashes = next(r for r in results if r.check.id == "recap.hashes")
    assert 0 < hashes.explicit.judged < hashes.evidence.judged  # both kinds of case ran
    failed = next(r for r in results if r.status == "failed")
    assert "check-recap.semantics" in parsed.ids
    assert "Difference from the reference, at JSON paths" in parsed.text
    assert "$.output.snapshot.extensions" in parsed.text  # the difference's JSON path
    assert "session-contracts certify --producer" in parsed.text
    assert f"--replay {failed.saved_to}" in parsed.text
    # An explicit case is not shrunk: the page does not call it the smallest.
    assert "The case (recap.project" in parsed.text
    assert "The smallest case" not in parsed.text
    assert "The producer's answer" in parsed.text
    assert "The reference's answer" in parsed.text


def test_producer_text_is_shown_as_text_never_as_markup(
    planted_page: tuple[bytes, list[CheckResult]],
) -> None:
    page, _ = planted_page
    parsed = _Page(page)
    assert "script" not in parsed.tags
    assert "b" not in parsed.tags
    assert "</script>" not in page.decode()
    assert "<b>" not in page.decode()
    assert f"python planted.py {PLANTED}" in parsed.text  # the command, verbatim
    assert json.dumps(PLANTED)[1:-1] in parsed.text  # inside the JSON of the answer
    # The only script-like words are the planted ones, escaped.
    assert page.decode().count("&lt;script&gt;") >= 3


@pytest.mark.parametrize("defect", ["leaks_secrets", "leaks_recap_secrets"])
def test_the_page_never_repeats_a_secret_the_producer_leaked(defect: str, tmp_path: Path) -> None:
    operation, handler = faulty.DEFECTS[defect]
    result = _run(MATRIX[defect], {**HANDLERS, operation: handler}, tmp_path)
    assert result.status == "failed"
    assert result.answer is not None  # the leaking answer is on the page, scrubbed
    page = _page_of([result], {"command": "faulty"}, {"certified": False}, {}).decode()
    assert "The producer's answer" in page
    for kind, secret in canary_secrets().items():
        for form in (secret, json.dumps(secret)[1:-1], html.escape(json.dumps(secret)[1:-1])):
            assert form not in page, kind


@pytest.mark.parametrize(
    ("producer", "shown"),
    [
        (
            {"command": None, "http": {"url": f"http://127.0.0.1:1/{PLANTED}", "journal": "j&"}},
            f"the HTTP recap adapter at http://127.0.0.1:1/{PLANTED} (journal j&)",
        ),
        ({"command": None}, "the built-in reference producer"),
    ],
)
def test_the_page_names_the_producer_as_certify_reached_it(
    producer: dict[str, Any], shown: str, planted_page: tuple[bytes, list[CheckResult]]
) -> None:
    results = planted_page[1]
    page = _page_of(results, producer, {"certified": False}, {}).decode()
    assert f'<code id="producer">{html.escape(shown)}</code>' in page


def _crashing_recap(case_input: Mapping[str, Any]) -> Any:
    raise RuntimeError(f"crashed on {PLANTED}")


def test_a_check_the_producer_broke_on_shows_why_and_its_case(tmp_path: Path) -> None:
    result = _run("recap.hashes", {**HANDLERS, "recap.project": _crashing_recap}, tmp_path)
    assert result.status == "errored"
    reproduce = {"recap.hashes": "session-contracts certify --replay saved.json"}
    page = _page_of([result], {"command": "crashing"}, {"certified": False}, reproduce)
    parsed = _Page(page)
    assert "check-recap.hashes" in parsed.ids
    assert f"crashed on {PLANTED}" in parsed.text
    assert "script" not in parsed.tags
    assert "The case: the case the producer broke on." in parsed.text
    # An explicit case is not shrunk: the page does not call it the smallest.
    assert "The case (recap.project" in parsed.text
    assert "The smallest case" not in parsed.text
    assert "session-contracts certify --replay saved.json" in parsed.text


def test_the_same_results_give_the_same_bytes(tmp_path: Path) -> None:
    handlers = defects.handlers_for("keeps_text_untrimmed")
    first, _ = _certify_page(handlers, "python defects.py keeps_text_untrimmed", tmp_path)
    second, _ = _certify_page(handlers, "python defects.py keeps_text_untrimmed", tmp_path)
    assert first == second


def _golden_page(handlers: Mapping[str, Handler], pattern: str) -> tuple[bytes, list[Any]]:
    corpus = load_corpus(default_fixtures_dir())
    runner = in_process_runner(handlers)
    from session_contracts.conformance.judge.certify import Trial

    cases = [c for c in corpus.cases if c.name.startswith(pattern)]
    results = [judge(c, runner(Trial(c.operation, c.input)), root=corpus.root) for c in cases]
    summary = {
        "fixtures": len(cases),
        **{s: sum(r.status == s for r in results) for s in ("passed", "failed", "errored")},
        "skipped": sum(r.status == "skipped" for r in results),
        "not_declared": {},
        "ok": all(r.status == "passed" for r in results),
    }
    report = {
        "producer": {"command": "python defects.py", "implementation": {"name": "defects"}},
        "fixtures_dir": str(corpus.root),
        "summary": summary,
    }
    return golden_html(report, results, {c.name: c.input for c in cases}), results


def test_the_golden_page_holds_each_fixture_and_each_failure_in_full() -> None:
    defect = defects.DEFECTS["keeps_text_untrimmed"]
    page, results = _golden_page(defects.handlers_for("keeps_text_untrimmed"), "recap/text-")
    parsed = _Page(page)
    failed: list[FixtureResult] = [r for r in results if r.status == "failed"]
    assert defect.fixture in {r.case for r in failed}
    assert "FAILED" in parsed.text
    for result in results:
        assert result.case in parsed.text
    for result in failed:
        assert f"fixture-{result.case}" in parsed.ids
        assert result.expected is not None
        assert result.actual is not None
        assert result.differences[0].path in parsed.text
    assert "The fixture's input" in parsed.text
    assert "The expected answer" in parsed.text
    assert "The producer's answer" in parsed.text


def _skipping_recap(case_input: Mapping[str, Any]) -> Any:
    raise Skipped("not today")


def test_the_golden_page_says_when_the_producer_skipped_what_it_declares() -> None:
    page, results = _golden_page({**HANDLERS, "recap.project": _skipping_recap}, "recap/text-")
    assert {r.status for r in results} == {"skipped"}
    text = _Page(page).text
    assert "FAILED" in text
    assert f"{len(results)} fixture(s) of operations the producer declares" in text


def test_certify_and_golden_write_the_page_beside_the_other_reports(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    producer = f"{sys.executable} tests/producers/defects.py keeps_text_untrimmed"
    html_file, json_file = tmp_path / "certify.html", tmp_path / "certify.json"
    certify = ["certify", "--producer", producer, "--check", "recap.semantics"]
    certify += ["--examples", "1", "--failures-dir", str(tmp_path / "failures")]
    assert main([*certify, "--report-html", str(html_file), "--report-json", str(json_file)]) == 1
    # Another run of the same cases: the same bytes (no clock time on the page).
    assert main([*certify, "--report-html", str(tmp_path / "again.html")]) == 1
    assert (tmp_path / "again.html").read_bytes() == html_file.read_bytes()
    parsed = _Page(html_file.read_bytes())
    report = json.loads(json_file.read_text(encoding="utf-8"))
    assert "NOT CERTIFIED" in parsed.text
    assert producer in parsed.text
    assert report["checks"][0]["reproduce"] in parsed.text

    golden_file = tmp_path / "golden.html"
    status = main(
        [
            "golden",
            "check",
            "--producer",
            producer,
            "--case",
            "recap/text-trimmed-*",
            "--report-html",
            str(golden_file),
            "--junit",
            str(tmp_path / "golden.xml"),
        ]
    )
    assert status == 1
    assert "recap/text-trimmed-tool-ids" in _Page(golden_file.read_bytes()).text
    assert (tmp_path / "golden.xml").is_file()


def test_a_folder_as_the_page_path_is_refused_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    producer = f"{sys.executable} -c 'raise SystemExit(3)'"  # never started
    for args in (["certify", "--producer", producer], ["golden", "check", "--producer", producer]):
        assert main([*args, "--report-html", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert f"cannot write --report-html {tmp_path}: it is a folder [io_error]" in err


# -- what a person sees -------------------------------------------------------------------------


def _browser_or_skip() -> None:
    missing = []
    if not Path(CHROMIUM).is_file():
        missing.append(f"Chromium ({CHROMIUM})")
    if shutil.which("node") is None:
        missing.append("node")
    if not (BROWSER / "node_modules" / "playwright-core").is_dir():
        missing.append("playwright-core (npm ci in tools/browser)")
    if not missing:
        return
    message = f"{', '.join(missing)} not installed (see .ci/run for the install steps)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {message}")
    pytest.skip(message)


def _inspect(page: Path, screenshot: Path, selectors: Sequence[str]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(BROWSER / "inspect-page.js"), str(page), str(screenshot), *selectors],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CHROMIUM": CHROMIUM},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def test_a_person_sees_the_verdict_the_failing_check_and_its_difference(
    planted_page: tuple[bytes, list[CheckResult]], tmp_path: Path
) -> None:
    _browser_or_skip()
    page_file, screenshot = tmp_path / "certify.html", tmp_path / "certify.png"
    page_file.write_bytes(planted_page[0])
    selectors = [
        "#verdict",
        "#summary",
        "#producer",
        '[id="check-recap.semantics"]',
        '[id="check-recap.semantics"] .differences',
        ".reproduce",
    ]
    seen = _inspect(page_file, screenshot, selectors)
    assert all(seen["seen"][s]["visible"] for s in selectors), seen["seen"]
    assert seen["seen"]["#verdict"]["text"] == "NOT CERTIFIED"
    assert "failed" in seen["seen"]['[id="check-recap.semantics"]']["text"]
    difference = seen["seen"]['[id="check-recap.semantics"] .differences']["text"]
    assert "$.output.snapshot.extensions" in difference
    assert seen["seen"]["#producer"]["text"] == f"python planted.py {PLANTED}"
    # The planted script is text: none ran, the page has no script, nothing was fetched.
    assert (seen["scripts"], seen["planted"]) == (0, 0)
    assert seen["consoleErrors"] == []
    assert seen["pageErrors"] == []
    assert seen["otherRequests"] == []
    png = screenshot.read_bytes()
    assert len(png) > 1000
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_person_sees_a_failing_fixture_and_its_difference(tmp_path: Path) -> None:
    _browser_or_skip()
    page, results = _golden_page(defects.handlers_for("keeps_text_untrimmed"), "recap/text-")
    first = next(r for r in results if r.status == "failed")
    page_file, screenshot = tmp_path / "golden.html", tmp_path / "golden.png"
    page_file.write_bytes(page)
    article = f'[id="fixture-{first.case}"]'
    selectors = ["#verdict", "#summary", article, f"{article} .differences"]
    seen = _inspect(page_file, screenshot, selectors)
    assert all(seen["seen"][s]["visible"] for s in selectors), seen["seen"]
    assert seen["seen"]["#verdict"]["text"] == "FAILED"
    assert first.differences[0].path in seen["seen"][f"{article} .differences"]["text"]
    assert seen["consoleErrors"] == []
    assert seen["pageErrors"] == []
    assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
