"""session-contracts check: certify documents a producer already wrote."""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from cli_process import run_cli_text
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts.conformance.judge.check_cli import check_documents, detect_doctype
from session_contracts.redaction.canaries import (
    canaries,
    canary_secrets,
    known_canary_secrets,
    lookalikes,
)
from session_contracts.redaction.policy import default_policy, extended_policy
from session_contracts.validation.validator import default_validator

# check scans with the default policy (Harn's); the screen is held exact for ours too.
POLICIES = {"default": default_policy(), "extended": extended_policy()}
SECRETS = known_canary_secrets()

EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"
PRODUCER_TYPES = sorted(
    p.stem
    for p in EXAMPLES.glob("*.json")
    if not p.stem.startswith(("producer-protocol.", "certification-report."))
)


def run(
    *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli_text("check", *args, stdin=stdin.decode(), cwd=cwd, timeout=120)


@pytest.mark.parametrize("doctype", PRODUCER_TYPES)
def test_every_document_type_is_detected_from_the_schemas(doctype: str) -> None:
    assert detect_doctype(json.loads((EXAMPLES / f"{doctype}.json").read_text())) == doctype


@pytest.mark.parametrize(
    "query",
    [
        {"session_id": "s1"},
        {"sessionId": "s1", "turn_id": "t1"},
        {"session_id": "s1", "run_id": "r", "from_event_id": 3, "limit": 5},
    ],
)
def test_a_query_in_snake_case_aliases_is_detected_as_the_query(query: dict[str, object]) -> None:
    # Seed 002: both adapters "accept snake-case aliases for query fields".
    assert detect_doctype(query) == "session-recap.query"


def _with_an_integer(doctype: str) -> tuple[str, re.Match[str] | None]:
    text = json.dumps(json.loads((EXAMPLES / f"{doctype}.json").read_text()))
    return text, re.search(r'": (\d+)([,}])', text)


@pytest.mark.parametrize("doctype", [d for d in PRODUCER_TYPES if _with_an_integer(d)[1]])
def test_an_integral_float_is_caught_by_check_as_by_validate(doctype: str, tmp_path: Path) -> None:
    # check spares validate its census (the strict reader's says whether an integral
    # float such as 5.0 is in the document): what validate finds, check finds.
    text, integer = _with_an_integer(doctype)
    assert integer is not None
    text = f"{text[: integer.end(1)]}.0{text[integer.end(1) :]}"
    path = tmp_path / "one.jsonl"
    path.write_text(text + "\n" + text + "\n")
    expected = {f.code for f in default_validator().validate(doctype, json.loads(text))}
    for _, _, findings in check_documents([str(path)], doctype=doctype):
        assert expected <= {f.code for f in findings}


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
    secret = canary_secrets()["aws_access_key"]
    progress["summary"] = "deployed with " + canaries()["aws_access_key"]
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
    from session_contracts.redaction.policy import default_policy
    from session_contracts.redaction.screen import secret_screen, value_holds_secret

    document = json.loads((EXAMPLES / "session-recap.snapshot.json").read_text())
    document["turns"][0]["prompts"][0]["text"] = f"see {canaries()[kind]} here"
    assert value_holds_secret(secret_screen(default_policy()), document)
    document["extensions"] = {canaries()[kind]: 1}
    del document["turns"][0]["prompts"][0]["text"]
    assert value_holds_secret(secret_screen(default_policy()), document)


# -- the secret screen is exact -----------------------------------------------------
#
# check skips the scan of a document only when the screen shows that scan_value
# would report nothing.  These properties hold it to exactly scan_value's findings,
# on documents full of canaries, look-alikes, markers, JSON escapes, near-misses in
# other cases and the characters that fold to ASCII letters under re.IGNORECASE.

_ALL_CANARIES = [*canaries().values(), *canaries(extended_policy()).values()]
_ALL_LOOKALIKES = [*lookalikes().values(), *lookalikes(extended_policy()).values()]
_PIECES = sorted(
    {
        *_ALL_CANARIES,
        *_ALL_LOOKALIKES,
        *(text.upper() for text in _ALL_CANARIES),
        *(text.swapcase() for text in _ALL_LOOKALIKES),
        '{"api_key": "' + SECRETS["sensitive_key_high_entropy"] + '"}',
        json.dumps({"password": SECRETS["password_assignment"]}),
        json.dumps(json.dumps({"token": SECRETS["password_assignment"]})),
        "[REDACTED:jwt]",
        "<redacted:jwt:12>",
        "[redacted]",
        "https://",
        "https://user:pw@example.com/?token=1",
        "http://example.com",
        "[REDACTED:hunter2]",
        "password",
        "PassWord: ",
        "token=",
        " key: value: plain words",
        "signing_key: note: ",
        "\\",
        '\\"',
        "/",
        "\n",
        "\t",
        # Keys that only re.IGNORECASE's folding of non-ASCII characters makes sensitive.
        "to\u212aen=" + SECRETS["password_assignment"],
        "pa\u017f\u017fword: " + SECRETS["password_assignment"],
        "ap\u0130_key=" + SECRETS["password_assignment"],
        "\u0130",  # folds to i
        "\u017f",  # folds to s
        "\u212a",  # folds to k
        "ok",
        "succeeded",
        "é",
    }
)
_TEXTS = st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=5).map("".join)
_KEYS = _TEXTS | st.sampled_from(
    ["text", "output", "token", "password", "signing_key", "apiKey", "note", "Cookie"]
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | _TEXTS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=12,
)


def _writings(value: object) -> list[bytes]:
    """The same document as different producers write it."""
    plain = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return [
        plain,
        json.dumps(value).encode(),  # every non-ASCII character as \\u
        plain.replace(b"/", b"\\/"),  # the optional escape of /
        json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8", "surrogatepass"),
    ]


@pytest.mark.parametrize("policy_name", sorted(POLICIES))
@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_the_screen_flags_exactly_what_scan_value_flags(policy_name: str, value: object) -> None:
    from session_contracts.redaction.engine import scan_value
    from session_contracts.redaction.screen import ScreenMemo, secret_findings

    policy = POLICIES[policy_name]
    expected = scan_value(value, policy)
    memo = ScreenMemo(cap=4, longest=64)  # small, so it fills and starts afresh
    for raw in [None, *_writings(value)]:
        assert secret_findings(value, policy, raw, memo) == expected


@pytest.mark.parametrize("policy_name", sorted(POLICIES))
@settings(max_examples=100, deadline=None)
@given(values=st.lists(_VALUES, min_size=1, max_size=6))
def test_the_screen_is_exact_across_a_stream_sharing_one_memo(
    policy_name: str, values: list[object]
) -> None:
    from session_contracts.redaction.engine import scan_value
    from session_contracts.redaction.screen import ScreenMemo, secret_findings

    policy = POLICIES[policy_name]
    memo = ScreenMemo()
    for value in values:
        raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
        assert secret_findings(value, policy, raw, memo) == scan_value(value, policy)


@pytest.mark.parametrize("policy_name", sorted(POLICIES))
@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_the_line_screens_sets_find_what_searching_each_needle_finds(
    policy_name: str, value: object
) -> None:
    import dataclasses

    from session_contracts.redaction.screen import line_may_hold_secret, secret_screen

    screen = secret_screen(POLICIES[policy_name])
    assert screen.line_sets is not None
    one_by_one = dataclasses.replace(screen, line_sets=None)
    for raw in _writings(value):
        assert line_may_hold_secret(screen, raw) == line_may_hold_secret(one_by_one, raw)


@pytest.mark.parametrize("policy_name", sorted(POLICIES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_line_set_finds_each_needle_in_any_case_as_the_lowered_line_does(
    policy_name: str, data: st.DataObject
) -> None:
    """Lines made of the plan's own needles (each set member is met), their case
    changed at random, with and without a trap character: the one set and its
    verdict memo answer as searching each needle in the line and its lowered form."""
    import dataclasses

    from session_contracts.redaction.screen import line_may_hold_secret, secret_screen

    screen = secret_screen(POLICIES[policy_name])
    one_by_one = dataclasses.replace(screen, line_sets=None)
    needles = sorted({needle for g in screen.line_plan for c in g for _, needle, _ in c})
    picked = data.draw(st.lists(st.sampled_from(needles), min_size=1, max_size=6))
    cases = data.draw(st.lists(st.booleans(), min_size=len(picked), max_size=len(picked)))
    parts = [n.upper() if upper else n for n, upper in zip(picked, cases, strict=True)]
    trap = data.draw(st.sampled_from([b"", *screen.trap_bytes]))
    raw = b'{"a":"' + b" ".join(parts) + trap + b'"}'
    assert line_may_hold_secret(screen, raw) == line_may_hold_secret(one_by_one, raw)


@pytest.mark.parametrize("kind", sorted(canaries()))
def test_the_line_screen_never_passes_a_planted_canary(kind: str) -> None:
    from session_contracts.redaction.policy import default_policy
    from session_contracts.redaction.screen import line_may_hold_secret, secret_screen

    screen = secret_screen(default_policy())
    envelope = json.loads((EXAMPLES / "session-recap.envelope.json").read_text())
    assert not line_may_hold_secret(screen, json.dumps(envelope).encode())
    turn = envelope["snapshot"]["turns"][0]
    for where in ("text", "key"):
        planted = json.loads(json.dumps(envelope))
        if where == "text":
            planted["snapshot"]["turns"][0]["prompts"][0]["text"] = f"see {canaries()[kind]}"
        else:
            planted["snapshot"]["extensions"][canaries()[kind]] = turn["runId"]
        for raw in _writings(planted):
            assert line_may_hold_secret(screen, raw)


def test_policy_literals_cannot_be_made_by_the_redaction_views() -> None:
    """The screen (and the recap's redaction gate) test literals in the text as written;
    the extended policy's detectors also read views of it (escaped quotes collapsed,
    key chains skipped).  Neither can make a literal of that policy that the text
    lacks, so the guard against that (VIEW_UNSAFE) switches none of its gates off."""
    from session_contracts.redaction.engine import RegexDetector
    from session_contracts.redaction.gate import (
        VIEW_UNSAFE,
        detector_gates,
        pattern_clauses,
    )
    from session_contracts.redaction.policy import default_policy

    literals = {
        literal.text
        for detector in extended_policy().detectors
        if isinstance(detector, RegexDetector)
        for clause in pattern_clauses(detector.pattern, 0)
        for literal in clause.literals
    }
    assert literals
    assert not [text for text in literals if VIEW_UNSAFE.search(text)]
    assert all(gate.clauses for gate in detector_gates(extended_policy()))
    # Harn's patterns have no views; every one of them (and the URL step) has a gate.
    assert all(gate.clauses for gate in detector_gates(default_policy()))


def test_a_literal_the_views_could_make_switches_its_gate_off() -> None:
    from session_contracts.redaction.engine import RedactionPolicy, RegexDetector
    from session_contracts.redaction.gate import detector_gates

    # A literal holding a backslash: the escape-run view could make it.
    custom = RegexDetector(id="escaped_pin", pattern=r'pin\\": ?\\"[0-9]{6}')
    (gate,) = detector_gates(RedactionPolicy(detectors=(custom,)))
    assert gate.clauses == ()


@pytest.mark.parametrize("policy_name", sorted(POLICIES))
@pytest.mark.parametrize(
    "key",
    ["to\u212aen", "pa\u017f\u017fword", "ap\u0130_key", "\u017fecret", "\u212aey"],
)
def test_the_screen_sees_keys_that_fold_to_sensitive_ones(policy_name: str, key: str) -> None:
    from session_contracts.redaction.engine import scan_value
    from session_contracts.redaction.screen import ScreenMemo, secret_findings

    policy = POLICIES[policy_name]
    secret = SECRETS["sensitive_key_high_entropy"]
    for value in ({"note": f"{key}={secret}"}, {key: secret}, {"note": {f"{key}={secret}": 1}}):
        expected = scan_value(value, policy)
        for raw in _writings(value):
            assert secret_findings(value, policy, raw, ScreenMemo()) == expected


def test_statistics_are_bounded_whatever_the_input() -> None:
    from session_contracts.conformance.judge.check_cli import (
        OTHER_UNKNOWN_FIELDS,
        UNKNOWN_FIELDS_CAP,
        CheckStats,
    )
    from session_contracts.errors import Finding

    stats = CheckStats()
    for number in range(UNKNOWN_FIELDS_CAP + 500):
        unknown = Finding(f"$.x_{number}", "unknown_field", "not in the schema")
        stats.add("session-recap.envelope", [unknown])
    stats.add(None, [Finding("$", "json_syntax", "bad")])
    assert len(stats.unknown_fields) == UNKNOWN_FIELDS_CAP + 1
    assert stats.unknown_fields[OTHER_UNKNOWN_FIELDS] == 500
    assert sum(stats.unknown_fields.values()) == UNKNOWN_FIELDS_CAP + 500
    summary = stats.summary()
    assert summary["documents"] == UNKNOWN_FIELDS_CAP + 501
    assert summary["documents_with_errors"] == UNKNOWN_FIELDS_CAP + 501
    assert summary["per_type"] == {
        "(unreadable or unknown)": 1,
        "session-recap.envelope": UNKNOWN_FIELDS_CAP + 500,
    }
    assert len(summary["unknown_fields_seen"]) == 20


def test_a_tie_settled_by_validity_is_not_validated_again() -> None:
    from session_contracts.conformance.judge.check_cli import detected_type
    from session_contracts.validation.validator import default_validator

    validator = default_validator()
    for path in sorted(EXAMPLES.glob("*.json")):
        if path.stem not in PRODUCER_TYPES:
            continue
        document = json.loads(path.read_text())
        name, known_valid = detected_type(document, validator)
        assert name == path.stem
        if known_valid:
            assert validator.validate(name, document) == []


def test_junit_has_a_case_per_file_with_its_first_findings(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    span = json.loads((EXAMPLES / "run-record.span.json").read_text())
    good = tmp_path / "good.json"
    good.write_text(json.dumps(span))
    bad = tmp_path / "spans.jsonl"
    bad.write_text("\n".join([json.dumps(span), json.dumps(dict(span, parent_id=1)), "{x", ""]))
    junit = tmp_path / "check.xml"
    result = run(str(good), str(bad), "--junit", str(junit))
    assert result.returncode == 1
    suite = ET.fromstring(junit.read_bytes())
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases[str(good)].find("failure") is None
    failure = cases[str(bad)].find("failure")
    assert failure is not None
    assert failure.get("message") == "2 of 3 document(s) invalid, 2 error(s)"
    assert f"{bad}:2 $.parent_id" in (failure.text or "")
    assert f"{bad}:3 $" in (failure.text or "")


def _lines_by_readline(handle: io.BytesIO, limit: int) -> list[tuple[int, bytes | None]]:
    """What check read a line at a time before it read blocks: the reference."""
    out: list[tuple[int, bytes | None]] = []
    while line := handle.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass  # the rest of the oversized line
            out.append((len(out) + 1, None))
        else:
            out.append((len(out) + 1, line))
    return out


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"x")), max_size=8),
    ending=st.sampled_from([b"", b"\n"]),
    limit=st.integers(0, 10),
    block_bytes=st.integers(1, 16),
)
def test_lines_cut_from_blocks_are_the_lines_readline_reads(
    lines: list[bytes], ending: bytes, limit: int, block_bytes: int
) -> None:
    from session_contracts.conformance.judge.check_cli import _lines

    data = b"\n".join(lines) + ending
    expected = _lines_by_readline(io.BytesIO(data), limit)
    texts: list[bytes] = []
    read = list(_lines(io.BytesIO(data), limit, block_bytes, lambda text: not texts.append(text)))
    assert [(number, line) for number, line, _ in read] == expected
    # A line is marked screened only when it lies whole in a text the screen passed.
    for _, line, screened in read:
        assert not screened or (line is not None and any(line in text for text in texts))


@settings(max_examples=300, deadline=None)
@given(policy=st.sampled_from(sorted(POLICIES)), values=st.lists(_VALUES, min_size=1, max_size=6))
def test_lines_in_a_text_the_line_screen_passes_pass_it(policy: str, values: list[object]) -> None:
    from session_contracts.redaction.screen import line_may_hold_secret, secret_screen

    screen = secret_screen(POLICIES[policy])
    for writing in range(4):
        lines = [_writings(value)[writing].replace(b"\n", b" ") + b"\n" for value in values]
        if not line_may_hold_secret(screen, b"".join(lines)):
            assert not any(line_may_hold_secret(screen, line) for line in lines)


@pytest.mark.parametrize("block_bytes", [700, 4_096, 1 << 16])
def test_check_finds_the_same_secrets_whatever_the_blocks(
    block_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_contracts.conformance.judge import check_cli

    envelope = json.loads((EXAMPLES / "session-recap.envelope.json").read_text())
    lines = []
    for kind, secret in sorted(canaries().items()):
        lines += [json.dumps(envelope)] * 3
        envelope["snapshot"]["extensions"] = {"note": f"a {kind}: {secret}"}
        lines.append(json.dumps(envelope))
        del envelope["snapshot"]["extensions"]
    path = tmp_path / "captured.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(check_cli, "_BLOCK_BYTES", 1)  # no whole line in a block: none screened
    expected = list(check_documents([str(path)]))
    assert sum(
        any(f.code == "redaction_secret_found" for f in found) for *_, found in expected
    ) == len(canaries())
    monkeypatch.setattr(check_cli, "_BLOCK_BYTES", block_bytes)
    assert list(check_documents([str(path)])) == expected


def test_detected_types_are_kept_for_a_bounded_number_of_shapes() -> None:
    from session_contracts.conformance.judge import check_cli

    validator = default_validator()
    span = json.loads((EXAMPLES / "run-record.span.json").read_text())
    for number in range(check_cli._TIED_CAP + 100):
        shape = dict(span, **{f"x_{number}": 1})
        assert check_cli.detected_type(shape, validator) == ("run-record.span", False)
        assert len(check_cli._TIED) <= check_cli._TIED_CAP
    too_wide = {f"k{number}": number for number in range(check_cli._CACHED_KEYS + 1)}
    assert check_cli.detected_type(too_wide, validator) == (None, False)
    assert (validator, frozenset(too_wide)) not in check_cli._TIED
