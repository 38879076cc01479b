"""User mistakes and messages: clear errors with codes and exit 2,
findings at the member, the ACP adapter echoing ids of any size, a journal
truncated while serving."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from cli_process import run_cli as cli

from session_contracts.conformance.judge.runner import ProducerProcess
from session_contracts.journal import SqliteJournal
from session_contracts.recap import RecapService, query_echo
from session_contracts.recap.acp import handle_line

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def journal(tmp_path: Path) -> tuple[Path, str]:
    sys.path.insert(0, str(ROOT))
    try:
        from bench.bench_journal import make_session
    finally:
        sys.path.remove(str(ROOT))
    events = make_session(600)
    path = tmp_path / "journal.sqlite"
    with SqliteJournal.open(path, create=True) as opened:
        opened.append(events)
    return path, str(events[0].to_json()["sessionId"])


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (["--port", "99999"], "serve_port_invalid"),
        (["--port", "-1"], "serve_port_invalid"),
        (["--host", "bad..host"], "serve_host_invalid"),
        (["--host", "no such host"], "serve_host_invalid"),
    ],
)
def test_serve_refuses_a_bad_port_or_host(tmp_path: Path, options: list[str], code: str) -> None:
    result = cli("serve", "--journal", str(tmp_path / "j.sqlite"), *options)
    assert result.returncode == 2
    assert f"[{code}]".encode() in result.stderr
    assert b"Traceback" not in result.stderr
    assert b"uvicorn" not in result.stderr.lower()


def test_serve_on_a_busy_port_is_a_usage_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = cli("serve", "--journal", str(tmp_path / "j.sqlite"), "--port", str(port))
    assert result.returncode == 2
    assert b"[serve_port_busy]" in result.stderr


def test_recap_refuses_a_session_that_is_not_utf8(journal: tuple[Path, str]) -> None:
    path, _ = journal
    result = cli("recap", "--journal", str(path), "--session", b"s\xff")
    assert result.returncode == 2
    assert b"[argument_not_utf8]" in result.stderr
    assert b"internal error" not in result.stderr


def test_a_journal_truncated_while_serving_is_journal_unavailable(
    journal: tuple[Path, str],
) -> None:
    path, session = journal
    with RecapService(path, None) as service:
        assert service.answer(query_echo({"sessionId": session})).available
        os.truncate(path, os.path.getsize(path) // 2)
        outcome = service.answer(query_echo({"sessionId": session}))
    assert outcome.envelope == {"state": "unavailable", "reason": "journal_unavailable"}


def test_acp_echoes_an_id_of_any_size_and_answers_the_next_request(tmp_path: Path) -> None:
    big = "9" * 5000
    lines = [
        f'{{"jsonrpc":"2.0","id":{big},"method":"harn.session_recap.query",'
        f'"params":{{"sessionId":"s"}}}}',
        f'{{"jsonrpc":"2.0","id":-{big},"method":"nope"}}',
        '{"jsonrpc":"2.0","id":7,"method":"harn.session_recap.query","params":{"sessionId":"s"}}',
    ]
    with RecapService(tmp_path / "none.sqlite", None) as service:
        answers = [handle_line(service, line.encode()) for line in lines]
    assert answers[0] is not None
    assert answers[0].startswith(b'{"jsonrpc":"2.0","id":' + big.encode() + b",")
    assert b'"result"' in answers[0]
    assert answers[1] is not None
    assert answers[1].startswith(b'{"jsonrpc":"2.0","id":-' + big.encode() + b",")
    assert b"-32601" in answers[1]
    assert answers[2] is not None
    assert orjson.loads(answers[2])["id"] == 7


def test_a_long_integer_inside_a_string_stays_text(tmp_path: Path) -> None:
    big = "9" * 5000
    line = (
        f'{{"jsonrpc":"2.0","id":{big},"method":"harn.session_recap.query",'
        f'"params":{{"sessionId":"x{big}"}}}}'
    )
    with RecapService(tmp_path / "none.sqlite", None) as service:
        answer = handle_line(service, line.encode())
    assert answer is not None
    assert b'"result"' in answer


@pytest.mark.parametrize(
    ("body", "path", "code"),
    [
        (b'{"sessionId": "a", "limit": NaN}', "$.limit", "json_non_finite_number"),
        (b'{"sessionId": "a", "sessionId": "b"}', "$.sessionId", "json_duplicate_key"),
        (b'{"sessionId": "a", "limit": 1e999}', "$.limit", "json_non_finite_number"),
    ],
)
def test_reading_findings_point_at_the_member(
    tmp_path: Path, body: bytes, path: str, code: str
) -> None:
    file = tmp_path / "q.json"
    file.write_bytes(body)
    result = cli("validate", "session-recap.query", str(file), "--format", "json")
    finding = orjson.loads(result.stdout.splitlines()[0])
    assert (finding["path"], finding["code"]) == (path, code)


@pytest.mark.parametrize(
    ("saved", "expected"),
    [
        (b'{"check": 1}', b"$.check: cannot replay"),
        (b"[1", b"[json_syntax]"),
        (b'{"check": "schema.output", "operation": "x"}', b"$.input"),
        (b"[]", b"not a JSON object"),
    ],
)
def test_replay_says_what_is_wrong_with_the_file(
    tmp_path: Path, saved: bytes, expected: bytes
) -> None:
    file = tmp_path / "case.json"
    file.write_bytes(saved)
    result = cli("certify", "--replay", str(file))
    assert result.returncode == 2
    assert b"[replay_unreadable]" in result.stderr
    assert expected in result.stderr
    assert b"KeyError" not in result.stderr
    assert b"'check'\n" not in result.stderr


HUGE_ANSWER = textwrap.dedent(
    """
    import json, sys
    for raw in sys.stdin:
        command = json.loads(raw)
        if command["cmd"] == "start":
            print(json.dumps({"protocol_version": 1, "contracts": ["session-health"],
                              "operations": ["health.reduce"],
                              "implementation": {"name": "h", "version": "0",
                                                 "language": "python"}}), flush=True)
        elif command["cmd"] == "run":
            sys.stdout.write('{"seq": %d, "outcome": "result", "output": %s}\\n'
                             % (command["seq"], "9" * 5000))
            sys.stdout.flush()
        else:
            break
    """
)


def test_an_answer_with_a_huge_integer_says_so() -> None:
    with ProducerProcess([sys.executable, "-c", HUGE_ANSWER], timeout=10) as producer:
        producer.start()
        outcome = producer.run(1, {"operation": "health.reduce", "input": {}})
    assert outcome.error_code == "invalid_json"
    assert "4,300 digits" in outcome.message


def test_the_reference_producer_says_why_it_stops_on_a_line_that_is_not_json() -> None:
    result = cli("reference-producer", stdin=b"garbage\n")
    assert result.returncode == 2
    assert b"not JSON" in result.stderr


def test_a_run_without_a_case_is_answered_with_what_is_missing() -> None:
    commands = b'{"cmd": "run", "seq": 3}\n{"cmd": "run", "seq": 4, "case": {}}\n{"cmd": "stop"}\n'
    result = cli("reference-producer", stdin=commands)
    answers = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [a["seq"] for a in answers] == [3, 4]
    assert all(a["outcome"] == "errored" for a in answers)
    assert "no case object" in answers[0]["message"]
    assert "no string operation" in answers[1]["message"]
    assert not any("None" in a["message"] for a in answers)


def test_certify_http_names_no_internal_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uvicorn_thread import serving

    from session_contracts.conformance.judge import certify_http as _certify_http
    from session_contracts.errors import UsageError
    from session_contracts.recap import create_app

    monkeypatch.setattr(_certify_http, "MAX_BODY_BYTES", 8)
    service = RecapService(tmp_path / "none.sqlite", None)
    journal = str(tmp_path / "j.sqlite")
    with (
        serving(create_app(service)) as base,
        _certify_http.HttpTarget(base, journal, timeout=30) as target,
        pytest.raises(UsageError) as caught,
    ):
        target.check_reachable()
    message = caught.value.findings[0].message
    assert "_TooLarge" not in message
    assert "exceeds 8 bytes" in message
