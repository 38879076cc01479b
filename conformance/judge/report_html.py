"""The HTML page of a ``certify`` or ``golden check`` run: one self-contained file.

Inline CSS, no script and no external asset (a Content-Security-Policy forbids
both), so the page opens offline from a CI artifact.  Everything a producer
controls is data, never markup: every text goes through :func:`html.escape`
(attribute values quoted), and every JSON value is scrubbed of secrets string by
string before it is written, as the other reports are.  The page is built from
the JSON report's body and the run's results; it holds no clock and no random
ids, so the same results give the same bytes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from session_contracts.conformance.judge.certify import CheckResult
from session_contracts.conformance.judge.golden import Difference, FixtureResult, differences
from session_contracts.jsontext.wire import dumps_wire
from session_contracts.redaction.scrub import scrub, scrubbed_value

__all__ = ["DIFFERENCES_SHOWN", "JSON_SHOWN", "certify_html", "golden_html"]

# The differences a failure lists, and the characters of one JSON value the page
# shows (a recap case can hold thousands of events; the saved case keeps them all).
DIFFERENCES_SHOWN = 20
JSON_SHOWN = 100_000

_STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  margin: 0 auto; max-width: 78rem; padding: 1rem 1.5rem 3rem; color: #1b1f24;
  background: #fff; }
h1 { font-size: 1.5rem; margin: 0.5rem 0; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05rem; margin: 0 0 0.5rem; }
h4 { font-size: 0.95rem; margin: 1rem 0 0.3rem; }
code, pre { font: 13px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 4px; padding: 0.6rem;
  margin: 0.3rem 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 40rem;
  overflow: auto; }
table { border-collapse: collapse; margin: 0.3rem 0; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: left;
  vertical-align: top; }
th { background: #f6f8fa; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.value { overflow-wrap: anywhere; max-width: 34rem; }
.verdict { display: inline-block; font-weight: 700; font-size: 1.2rem; padding: 0.2rem 0.7rem;
  border-radius: 4px; color: #fff; }
.verdict.good { background: #1a7f37; }
.verdict.bad { background: #cf222e; }
.status { font-weight: 600; }
.status-passed { color: #1a7f37; }
.status-failed, .status-flaky { color: #cf222e; }
.status-errored { color: #8250df; }
.status-partial, .status-skipped { color: #9a6700; }
.failure { border: 1px solid #d0d7de; border-left: 4px solid #cf222e; border-radius: 4px;
  padding: 0.8rem 1rem; margin: 1rem 0; }
.failure.errored { border-left-color: #8250df; }
.failure.partial, .failure.skipped { border-left-color: #9a6700; }
.message { white-space: pre-wrap; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
details > summary { cursor: pointer; font-weight: 600; margin: 0.6rem 0 0.2rem; }
.muted { color: #57606a; }
"""


def _text(value: object) -> str:
    """A producer's text (or any value) as safe HTML text, scrubbed of secrets."""
    return html.escape(scrub(str(value)), quote=True)


def _json(value: Any) -> str:
    """A JSON value as an escaped, indented ``<pre>`` block, cut at :data:`JSON_SHOWN`."""
    text = dumps_wire(
        scrubbed_value(value), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    ).decode()
    note = ""
    if len(text) > JSON_SHOWN:
        note = f"\n... cut at {JSON_SHOWN:,} of {len(text):,} characters"
        text = text[:JSON_SHOWN]
    return f'<pre class="json">{html.escape(text + note, quote=True)}</pre>'


def _anchor(prefix: str, name: str) -> str:
    return html.escape(f"{prefix}-{name}", quote=True)


def _page(title: str, body: Iterable[str]) -> bytes:
    head = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_text(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
    )
    return (head + "\n".join(body) + "\n</body>\n</html>\n").encode("utf-8")


def _facts(rows: Iterable[tuple[str, str]]) -> str:
    """A definition list; the values are HTML already escaped by the caller."""
    items = "".join(f"<dt>{_text(name)}</dt><dd>{value}</dd>" for name, value in rows)
    return f'<dl class="facts">{items}</dl>'


def _counts(summary: Mapping[str, Any], names: Sequence[str]) -> str:
    """A one-row table of the summary's counts ``names``."""
    head = "".join(f"<th>{_text(name)}</th>" for name in names)
    cells = "".join(f'<td class="number">{_text(summary.get(name, 0))}</td>' for name in names)
    return (
        f'<table class="counts"><thead><tr>{head}</tr></thead>'
        f"<tbody><tr>{cells}</tr></tbody></table>"
    )


def _status(status: str) -> str:
    return f'<span class="status status-{_text(status)}">{_text(status)}</span>'


def _verdict(good: bool, text: str) -> str:
    return f'<p class="verdict {"good" if good else "bad"}" id="verdict">{_text(text)}</p>'


def _differences_table(found: Sequence[Difference], actual: str, expected: str) -> str:
    if not found:
        return '<p class="muted">no difference at any JSON path between the two answers</p>'
    rows = "".join(
        f'<tr><td><code>{_text(d.path)}</code></td><td class="value"><code>{_text(d.actual)}'
        f'</code></td><td class="value"><code>{_text(d.expected)}</code></td></tr>'
        for d in found
    )
    return (
        f'<table class="differences"><thead><tr><th>JSON path</th><th>{_text(actual)}</th>'
        f"<th>{_text(expected)}</th></tr></thead><tbody>{rows}</tbody></table>"
    )


# -- certify ------------------------------------------------------------------------------------


def _who(producer: Mapping[str, Any]) -> str:
    """The producer as the page names it: its command line, its URL, or the reference."""
    http = producer.get("http")
    if isinstance(http, Mapping):
        return f"the HTTP recap adapter at {http.get('url')} (journal {http.get('journal')})"
    command = producer.get("command")
    return str(command) if command else "the built-in reference producer"


def _implementation(producer: Mapping[str, Any]) -> str:
    implementation = producer.get("implementation") or {}
    parts = [implementation.get(key) for key in ("name", "version", "language")]
    return " ".join(str(part) for part in parts if part)


def certify_html(report: Mapping[str, Any], results: Sequence[CheckResult]) -> bytes:
    """The page of a certify run: ``report`` is the JSON report's body
    (:func:`report_body`), ``results`` the run's results, whose failures keep
    the failing case (shrunk when drawn at random) and both answers."""
    summary = report["summary"]
    settings = report["settings"]
    producer = report["producer"]
    certified = bool(summary.get("certified"))
    verdict = "CERTIFIED" if certified else "NOT CERTIFIED"
    by_id = {result.check.id: result for result in results}
    evidence = summary.get("evidence", {})
    body = [
        "<header>",
        "<h1>session-contracts certify</h1>",
        _verdict(certified, verdict),
        _facts(
            [
                ("producer", f'<code id="producer">{_text(_who(producer))}</code>'),
                ("implementation", _text(_implementation(producer))),
                ("contracts", _text(", ".join(map(str, producer.get("contracts", []))))),
                ("gating level", _text(f"--fail-on {settings.get('fail_on')}")),
                (
                    "cases",
                    _text(
                        f"explicit cases and {settings.get('examples')} random case(s) a check, "
                        f"seed {settings.get('seed')}"
                    ),
                ),
            ]
        ),
        "</header>",
        '<section id="summary">',
        "<h2>Summary</h2>",
        _counts(summary, ("passed", "failed", "flaky", "errored", "partial", "skipped", "cases")),
        f'<p id="evidence">{_text(evidence.get("agreed", 0))} of '
        f"{_text(evidence.get('judged', 0))} judged case(s) agreed, "
        f"{_text(evidence.get('skipped', 0))} skipped, {_text(evidence.get('errored', 0))} "
        f"errored; the producer was restarted {_text(summary.get('producer_restarts', 0))} "
        "time(s).</p>",
    ]
    if summary.get("harness_looks_broken"):
        body.append(
            '<p class="status-failed">The producer failed or errored every check that ran: '
            "the harness looks broken (a protocol mistake, a crash at start-up, or a wrong "
            "command is likelier than a wrong implementation).</p>"
        )
    body += ["</section>", '<section id="checks">', "<h2>Checks</h2>"]
    body.append(_checks_table(report, by_id))
    body.append("</section>")
    problems = [c for c in report["checks"] if c["status"] != "passed" and c["applicable"]]
    if problems:
        body += ['<section id="failures">', "<h2>Failures</h2>"]
        body += [_check_failure(check, by_id.get(str(check["id"]))) for check in problems]
        body.append("</section>")
    return _page(f"session-contracts certify: {verdict}", body)


def _checks_table(report: Mapping[str, Any], by_id: Mapping[str, CheckResult]) -> str:
    columns = (
        "check",
        "contract",
        "level",
        "status",
        "agreed/judged",
        "explicit cases",
        "random cases",
        "skipped",
        "errored",
    )
    rows = []
    for check in report["checks"]:
        name = _text(check["id"])
        if check["status"] != "passed" and check["applicable"]:
            name = f'<a href="#{_anchor("check", str(check["id"]))}">{name}</a>'
        evidence = check["evidence"]
        status = _status(str(check["status"]))
        if not check["applicable"]:
            status += ' <span class="muted">(not applicable)</span>'
        if check.get("baseline") not in (None, "ok"):
            status += f' <span class="muted">(baseline: {_text(check["baseline"])})</span>'
        result = by_id.get(str(check["id"]))
        explicit = result.explicit if result is not None else None
        # agreed/judged of the explicit cases, and of the random ones (the rest).
        split = (
            ("", "")
            if explicit is None
            else (
                f"{explicit.agreed}/{explicit.judged}",
                f"{evidence['agreed'] - explicit.agreed}/{evidence['judged'] - explicit.judged}",
            )
        )
        rows.append(
            f'<tr class="check-row" data-status="{_text(check["status"])}"><td><code>{name}'
            f"</code></td><td>{_text(check['contract'])}</td><td>{_text(check['level'])}</td>"
            f'<td>{status}</td><td class="number">{_text(evidence["agreed"])}/'
            f'{_text(evidence["judged"])}</td><td class="number">{_text(split[0])}</td>'
            f'<td class="number">{_text(split[1])}</td>'
            f'<td class="number">{_text(evidence["skipped"])}'
            f'</td><td class="number">{_text(evidence["errored"])}</td></tr>'
        )
    head = "".join(f"<th>{column}</th>" for column in columns)
    return (
        f'<table id="check-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _check_failure(check: Mapping[str, Any], result: CheckResult | None) -> str:
    status = str(check["status"])
    parts = [
        f'<article class="failure {_text(status)}" id="{_anchor("check", str(check["id"]))}">',
        f"<h3><code>{_text(check['id'])}</code> {_status(status)} "
        f'<span class="muted">({_text(check["level"])}, {_text(check["contract"])})</span></h3>',
        f'<p class="muted">{_text(check["title"])}</p>',
        f'<p class="message">{_text(check["message"])}</p>',
    ]
    shrunk = status == "failed" and result is not None and not result.details.get("explicit")
    if result is not None and result.trial is not None:
        if result.details.get("explicit"):
            kind = "an explicit case (sent at every setting, never shrunk: its rule is above)"
        elif status == "failed":
            kind = "a random case, shrunk to the smallest one that still fails"
        elif status == "flaky":
            kind = (
                "the case the producer answered wrongly once (the answers below are that "
                "call's), then rightly when it was sent again"
            )
        else:
            kind = "the case the producer broke on"
        parts.append(f"<p>The case: {_text(kind)}.</p>")
        stderr = result.details.get("stderr_tail")
        if stderr:
            parts += [
                "<h4>The producer's stderr (last lines)</h4>",
                f'<pre class="stderr">{_text(stderr)}</pre>',
            ]
        if result.answer is not None and result.reference_answer is not None:
            found = differences(result.reference_answer, result.answer, DIFFERENCES_SHOWN)
            parts += [
                "<h4>Difference from the reference, at JSON paths</h4>",
                _differences_table(found, "the producer's answer", "the reference's answer"),
            ]
    if check.get("reproduce"):
        parts += [
            "<h4>Reproduce</h4>",
            f'<pre class="reproduce">{_text(check["reproduce"])}</pre>',
        ]
    if result is not None and result.trial is not None:
        parts += [
            f"<details open><summary>{'The smallest case' if shrunk else 'The case'} "
            f"({_text(result.trial.operation)}"
            f"{', saved as ' + _text(result.saved_to) if result.saved_to else ''})</summary>",
            _json(dict(result.trial.input)),
            "</details>",
        ]
        if result.answer is not None:
            parts += [
                "<details><summary>The producer's answer</summary>",
                _json(result.answer),
                "</details>",
            ]
        if result.reference_answer is not None:
            parts += [
                "<details><summary>The reference's answer</summary>",
                _json(result.reference_answer),
                "</details>",
            ]
        if result.later_answer is not None:
            parts += [
                "<details><summary>The producer's later answer to the same case, which "
                "agreed</summary>",
                _json(result.later_answer),
                "</details>",
            ]
    parts.append("</article>")
    return "\n".join(parts)


# -- golden check -------------------------------------------------------------------------------


def golden_html(
    report: Mapping[str, Any],
    results: Sequence[FixtureResult],
    inputs: Mapping[str, Any],
) -> bytes:
    """The page of a golden check run: ``report`` is the JSON report's body,
    ``results`` each fixture's verdict and ``inputs`` each fixture's case input
    by fixture name."""
    summary = report["summary"]
    ok = bool(summary.get("ok"))
    verdict = "PASSED" if ok else "FAILED"
    producer = report["producer"]
    not_declared = summary.get("not_declared") or {}
    body = [
        "<header>",
        "<h1>session-contracts golden check</h1>",
        _verdict(ok, verdict),
        _facts(
            [
                ("producer", f'<code id="producer">{_text(_who(producer))}</code>'),
                ("implementation", _text(_implementation(producer))),
                ("fixtures", f"<code>{_text(report.get('fixtures_dir', ''))}</code>"),
            ]
        ),
        "</header>",
        '<section id="summary">',
        "<h2>Summary</h2>",
        _counts(summary, ("fixtures", "passed", "failed", "errored", "skipped")),
    ]
    if not_declared:
        shown = ", ".join(f"{contract} {count}" for contract, count in not_declared.items())
        body.append(f"<p>Skipped as not declared by the producer: {_text(shown)}.</p>")
    chose_to_skip = int(summary.get("skipped", 0)) - sum(map(int, not_declared.values()))
    if chose_to_skip:
        body.append(
            f'<p class="status-failed">{_text(chose_to_skip)} fixture(s) of operations the '
            "producer declares were answered skipped: no evidence, not ok.</p>"
        )
    body.append("</section>")
    # The failures first: a corpus holds hundreds of fixtures, most of them passed.
    failing = [r for r in results if r.status in ("failed", "errored")]
    if failing:
        body += ['<section id="failures">', "<h2>Failures</h2>"]
        body += [_fixture_failure(result, inputs) for result in failing]
        body.append("</section>")
    body += ['<section id="fixtures">', "<h2>Every fixture</h2>"]
    rows = []
    for result in results:
        name = _text(result.case)
        if result.status in ("failed", "errored"):
            name = f'<a href="#{_anchor("fixture", result.case)}">{name}</a>'
        rows.append(
            f'<tr class="fixture-row" data-status="{_text(result.status)}"><td><code>{name}'
            f"</code></td><td>{_status(result.status)}</td><td><code>{_text(result.code)}"
            "</code></td></tr>"
        )
    body.append(
        '<table id="fixture-table"><thead><tr><th>fixture</th><th>status</th><th>code</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    body.append("</section>")
    return _page(f"session-contracts golden check: {verdict}", body)


def _fixture_failure(result: FixtureResult, inputs: Mapping[str, Any]) -> str:
    parts = [
        f'<article class="failure {_text(result.status)}" id="{_anchor("fixture", result.case)}">',
        f"<h3><code>{_text(result.case)}</code> {_status(result.status)} "
        f'<span class="muted">[{_text(result.code)}]</span></h3>',
        f'<p class="message">{_text(result.message)}</p>',
    ]
    if result.hint:
        parts.append(f'<p class="muted message">hint: {_text(result.hint)}</p>')
    found: Sequence[Difference] = result.differences
    if result.expected is not None and result.actual is not None:
        found = differences(result.expected, result.actual, DIFFERENCES_SHOWN)
    if found or result.expected is not None:
        parts += [
            "<h4>Difference from the expected answer, at JSON paths</h4>",
            _differences_table(found, "the producer's answer", "the expected answer"),
        ]
    if result.case in inputs:
        parts += [
            f"<details open><summary>The fixture's input ({_text(result.file)})</summary>",
            _json(inputs[result.case]),
            "</details>",
        ]
    if result.expected is not None:
        parts += ["<details><summary>The expected answer</summary>", _json(result.expected)]
        parts.append("</details>")
    if result.actual is not None:
        parts += ["<details><summary>The producer's answer</summary>", _json(result.actual)]
        parts.append("</details>")
    parts.append("</article>")
    return "\n".join(parts)
