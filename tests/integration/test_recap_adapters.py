"""The recap adapters: HTTP (starlette, uvicorn), ACP (JSON-RPC over stdio), the CLI.

All three must write the same envelope bytes for the same query, accept both
spellings of every field, answer bad values with 400 / -32602 / exit 1 (never
a 500 or a traceback), and map unavailable states to the contract's reasons.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from cli_process import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.exceptions import StarletteDeprecationWarning
from uvicorn_thread import serving

from session_contracts.journal import JsonlTape, SessionEvent, import_tape
from session_contracts.recap import (
    ACP_METHOD,
    RecapService,
    create_app,
    envelope_bytes,
)
from session_contracts.recap.acp import MAX_LINE_BYTES, handle_line, run_acp

with warnings.catch_warnings():
    # starlette 1.10 prefers the httpx2 package for its test client and warns
    # once, on import, when it finds only httpx (the pinned dev dependency).
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

from session_contracts.cli import main
from session_contracts.jsontext.strict import loads_strict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recap"
SESSION = "sess-basic"
TIMEOUT_S = 60


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("adapters")
    lines = (FIXTURES / "basic.jsonl").read_bytes().splitlines()
    events = [SessionEvent.from_json(loads_strict(line)) for line in lines]
    # A second session whose id needs escaping in a URL path.
    odd = [
        SessionEvent.from_json({**e.to_json(), "id": e.id + 100, "sessionId": "a/b c?é"})
        for e in events[:3]
    ]
    JsonlTape(folder / "events.jsonl").write([*events, *odd])
    import_tape(folder / "events.jsonl", folder / "events.sqlite")
    return folder / "events.sqlite"


@pytest.fixture
def client(journal: Path) -> Iterator[TestClient]:
    with TestClient(create_app(RecapService(journal)), raise_server_exceptions=False) as test:
        yield test


def expected_bytes(journal: Path, query: dict[str, Any]) -> bytes:
    return envelope_bytes(RecapService(journal).query(query).envelope)


# ------------------------------------------------------------------------------- HTTP


@pytest.mark.sentence("recap.http-adapter")
def test_http_serves_the_envelope(client: TestClient, journal: Path) -> None:
    response = client.get(f"/sessions/{SESSION}/recap", params={"limit": "5"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == expected_bytes(journal, {"sessionId": SESSION, "limit": 5})
    assert json.loads(response.content)["snapshot"]["cursor"]["nextEventId"] == 6


@pytest.mark.sentence("recap.http-adapter", "recap.snake-case-aliases")
@pytest.mark.parametrize(
    "params",
    [
        {"runId": "run-1", "turnId": "turn-2", "fromEventId": "2", "limit": "30"},
        {"run_id": "run-1", "turn_id": "turn-2", "from_event_id": "2", "limit": "30"},
        {"run_id": "run-1", "turnId": "turn-2", "from_event_id": "2", "limit": "30"},
        {"sessionId": SESSION, "runId": "run-1", "turnId": "turn-2", "fromEventId": "2",
         "limit": "30"},
        {"session_id": SESSION, "run_id": "run-1", "turn_id": "turn-2", "fromEventId": "2",
         "limit": "30"},
    ],
)  # fmt: skip
def test_http_accepts_both_spellings(
    client: TestClient, journal: Path, params: dict[str, str]
) -> None:
    response = client.get(f"/sessions/{SESSION}/recap", params=params)
    assert response.status_code == 200, response.text
    query = {"sessionId": SESSION, "runId": "run-1", "turnId": "turn-2", "fromEventId": 2}
    assert response.content == expected_bytes(journal, {**query, "limit": 30})


@pytest.mark.sentence("recap.http-adapter")
def test_http_session_ids_with_reserved_characters(client: TestClient, journal: Path) -> None:
    response = client.get(f"/sessions/{quote('a/b c?é', safe='')}/recap")
    assert response.status_code == 200
    assert response.content == expected_bytes(journal, {"sessionId": "a/b c?é"})


@pytest.mark.sentence("recap.http-adapter")
@pytest.mark.parametrize(
    ("query", "path", "code"),
    [
        ("limit=abc", "$.limit", "wrong_type"),
        ("limit=%2B3", "$.limit", "wrong_type"),
        ("limit=3.0", "$.limit", "wrong_type"),
        ("limit=-1", "$.limit", "wrong_type"),
        ("limit=", "$.limit", "wrong_type"),
        ("from_event_id=03", "$.from_event_id", "wrong_type"),
        ("fromEventId=99999999999999999999", "$.fromEventId", "maximum"),
        ("fromEventId=18446744073709551616", "$.fromEventId", "maximum"),
        ("limit=1&limit=2", "$.limit", "duplicate_parameter"),
        ("runId=a&run_id=b", "$.run_id", "alias_conflict"),
        ("sessionId=other", "$.sessionId", "session_id_mismatch"),
        ("session_id=other", "$.session_id", "session_id_mismatch"),
        (f"sessionId={SESSION}&session_id={SESSION}", "$.session_id", "alias_conflict"),
    ],
)
def test_http_bad_values_are_400_with_a_json_error(
    client: TestClient, query: str, path: str, code: str
) -> None:
    response = client.get(f"/sessions/{SESSION}/recap?{query}")
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert set(error) == {"code", "path", "message", "hint"}
    assert (error["path"], error["code"]) == (path, code)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("/sessions/%FF%FE/recap", "$.sessionId"),
        (f"/sessions/{SESSION}/recap?turnId=%FF", "$"),
        (f"/sessions/{SESSION}/recap?%C3=1", "$"),
    ],
)
def test_http_percent_escapes_that_are_not_utf8_are_400(
    client: TestClient, url: str, path: str
) -> None:
    # Decoded with replacement they would name another session (U+FFFD).
    response = client.get(url)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["path"]) == ("invalid_utf8", path)


def test_http_utf8_session_ids_and_a_trailing_slash(client: TestClient) -> None:
    assert client.get("/sessions/s%C3%A9/recap").status_code == 200
    response = client.get(f"/sessions/{SESSION}/recap/", follow_redirects=False)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_http_takes_what_harns_runtime_takes(client: TestClient, journal: Path) -> None:
    """Unknown parameters are ignored, an empty filter is a filter, ids run to 2^64 - 1."""
    response = client.get(f"/sessions/{SESSION}/recap", params={"colour": "blue", "runId": ""})
    assert response.status_code == 200
    assert response.content == expected_bytes(journal, {"sessionId": SESSION, "runId": ""})
    snapshot = response.json()["snapshot"]
    assert (snapshot["query"]["runId"], snapshot["turns"]) == ("", [])
    big = client.get(f"/sessions/{SESSION}/recap", params={"fromEventId": str(2**64 - 1)})
    assert big.status_code == 200
    assert big.json()["snapshot"]["query"]["fromEventId"] == 2**64 - 1


@pytest.mark.sentence("recap.http-adapter", "recap.journal-unavailable", "recap.session-missing")
def test_http_unavailable_states_are_200_with_the_reason(
    client: TestClient, tmp_path: Path
) -> None:
    response = client.get("/sessions/nobody/recap")
    assert response.status_code == 200
    assert response.content == b'{"reason":"session_missing","state":"unavailable"}'
    with TestClient(create_app(RecapService(tmp_path / "missing.sqlite"))) as other:
        assert other.get(f"/sessions/{SESSION}/recap").json()["reason"] == "journal_unavailable"


@pytest.mark.sentence("recap.http-adapter")
def test_http_other_paths_and_methods_get_json_errors(client: TestClient) -> None:
    for response, status in (
        (client.get("/sessions/x"), 404),
        (client.get("/"), 404),
        (client.post(f"/sessions/{SESSION}/recap"), 405),
    ):
        assert response.status_code == status
        assert response.json()["error"]["code"] in ("not_found", "method_not_allowed")


@pytest.mark.sentence("recap.admission-terminal")
def test_http_closing_the_app_closes_the_service(journal: Path) -> None:
    service = RecapService(journal)
    with TestClient(create_app(service)) as test:
        assert test.get(f"/sessions/{SESSION}/recap").status_code == 200
    assert service.closed
    assert service.query({"sessionId": SESSION}).status == "admission_terminal"


_param_names = st.sampled_from(
    ["limit", "fromEventId", "from_event_id", "runId", "run_id", "turnId", "turn_id",
     "sessionId", "session_id", "x"]
)  # fmt: skip


@pytest.mark.sentence("recap.http-adapter")
@settings(max_examples=60, deadline=None)
@given(
    params=st.lists(st.tuples(_param_names, st.text(max_size=12)), max_size=4),
    session=st.text(min_size=0, max_size=8),
)
def test_http_never_answers_500(journal: Path, params: list[tuple[str, str]], session: str) -> None:
    with TestClient(create_app(RecapService(journal)), raise_server_exceptions=False) as test:
        url = f"/sessions/{quote(session, safe='')}/recap?{urlencode(params)}"
        response = test.get(url)
    assert response.status_code in (200, 400, 404), response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert "error" in body or body["state"] in ("available", "unavailable")


@pytest.mark.sentence("recap.http-adapter")
def test_a_real_uvicorn_server(journal: Path) -> None:
    service = RecapService(journal)
    with serving(create_app(service)) as base, httpx.Client(base_url=base, timeout=20) as http:
        response = http.get(f"/sessions/{SESSION}/recap", params={"turn_id": "turn-1"})
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.content == expected_bytes(
            journal, {"sessionId": SESSION, "turnId": "turn-1"}
        )
        bad = http.get(f"/sessions/{SESSION}/recap", params={"limit": "lots"})
        assert bad.status_code == 400
        assert bad.json()["error"]["path"] == "$.limit"
    assert service.closed, "the lifespan's end closed the service"


# -------------------------------------------------------------------------------- ACP


def _rpc(request_id: Any, params: Any, method: str = ACP_METHOD) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def _acp(journal: Path, lines: list[bytes]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "session_contracts", "acp", "--journal", str(journal)],
        input=b"".join(line + b"\n" for line in lines),
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
    )


@pytest.mark.sentence("recap.acp-adapter", "recap.snake-case-aliases")
def test_acp_over_stdio(journal: Path) -> None:
    query = {"session_id": SESSION, "limit": 4}
    done = _acp(
        journal,
        [
            _rpc(1, query),
            _rpc("two", {"sessionId": SESSION, "limit": "4"}),
            b"{not json",
            _rpc(3, {"sessionId": SESSION}, method="harn.other"),
            json.dumps({"jsonrpc": "2.0", "method": ACP_METHOD, "params": query}).encode(),
            b"",
            json.dumps([json.loads(_rpc(4, {"sessionId": "nobody"})), {"jsonrpc": "1"}]).encode(),
            b"[]",
            _rpc(5, ["positional"]),
        ],
    )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    responses = [json.loads(line) for line in lines]
    assert len(responses) == 7, "the notification and the blank line get no response"
    _first, second, parse, unknown, batch, empty, positional = responses
    assert lines[0] == (
        b'{"jsonrpc":"2.0","id":1,"result":'
        + expected_bytes(journal, {"sessionId": SESSION, "limit": 4})
        + b"}"
    )
    assert second["id"] == "two"
    assert second["error"]["code"] == -32602
    assert second["error"]["data"] == {
        "code": "wrong_type",
        "path": "$.limit",
        "hint": second["error"]["data"]["hint"],
    }
    assert (parse["id"], parse["error"]["code"]) == (None, -32700)
    assert (unknown["id"], unknown["error"]["code"]) == (3, -32601)
    assert [item.get("result", item.get("error")) for item in batch] == [
        {"state": "unavailable", "reason": "session_missing"},
        batch[1]["error"],
    ]
    assert batch[1]["error"]["code"] == -32600
    assert empty["error"]["code"] == -32600
    assert positional["error"]["code"] == -32602


@pytest.mark.sentence("recap.acp-adapter")
@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"[1]", -32600),
        (b'{"jsonrpc": "2.0", "id": {}, "method": "x"}', -32600),
        (b'{"jsonrpc": "2.0", "id": true, "method": "x"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "m", "extra": 1}', -32600),
        (b'{"id": 1, "method": "harn.session_recap.query"}', -32600),
        (b'{"a": 1, "a": 2}', -32700),
        (b'{"x": NaN}', -32700),
        (b'"just a string"', -32600),
        (_rpc(1, {"sessionId": " "}), -32602),
        (_rpc(1, {"sessionId": SESSION, "session_id": SESSION}), -32602),
        (_rpc(1, {}), -32602),
        (_rpc(1, None), -32602),
        (_rpc(1, "text"), -32602),
    ],
)
def test_acp_errors(journal: Path, line: bytes, code: int) -> None:
    response = handle_line(RecapService(journal), line)
    assert response is not None
    message = json.loads(response)
    if line.startswith(b"["):  # a batch is answered with an array
        (message,) = message
    assert message["error"]["code"] == code


@pytest.mark.sentence("recap.acp-adapter")
def test_acp_large_ids_are_echoed_exactly(journal: Path) -> None:
    response = handle_line(RecapService(journal), _rpc(2**70, {"sessionId": "nobody"}))
    assert response is not None
    assert response.startswith(b'{"jsonrpc":"2.0","id":1180591620717411303424,"result":')


@pytest.mark.sentence("recap.acp-adapter")
def test_acp_refuses_an_overlong_line_and_carries_on(journal: Path, tmp_path: Path) -> None:
    stdin = tmp_path / "in"
    stdin.write_bytes(
        b"x" * (MAX_LINE_BYTES * 2 + 10) + b"\n" + _rpc(1, {"sessionId": "x"}) + b"\n"
    )
    stdout = tmp_path / "out"
    with stdin.open("rb") as source, stdout.open("wb") as sink:
        assert run_acp(RecapService(journal), source, sink) == 0
    too_long, answer = (json.loads(line) for line in stdout.read_bytes().splitlines())
    assert too_long["error"]["code"] == -32600
    assert answer["result"]["reason"] == "session_missing"


@pytest.mark.sentence("recap.acp-adapter")
@settings(max_examples=60, deadline=None)
@given(
    params=st.dictionaries(
        st.sampled_from(["sessionId", "session_id", "limit", "fromEventId", "turn_id", "zzz"]),
        st.none() | st.booleans() | st.integers(-5, 2**60) | st.text(max_size=6) | st.floats(),
        max_size=4,
    )
)
def test_acp_answers_every_params_with_a_result_or_invalid_params(
    journal: Path, params: dict[str, Any]
) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 9, "method": ACP_METHOD, "params": params})
    response = handle_line(RecapService(journal), line.encode())
    assert response is not None
    message = json.loads(response)
    assert "result" in message or message["error"]["code"] in (-32602, -32700)


# -------------------------------------------------------------------------------- CLI


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return run_cli(*args, timeout=TIMEOUT_S)


def test_cli_recap_exit_codes(
    journal: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["recap", "--journal", str(journal), "--session", SESSION, "--limit", "3"]) == 0
    assert capsysbinary.readouterr().out == (
        expected_bytes(journal, {"sessionId": SESSION, "limit": 3}) + b"\n"
    )
    assert main(["recap", "--journal", str(journal), "--session", "nobody"]) == 1
    assert capsysbinary.readouterr().out == b'{"reason":"session_missing","state":"unavailable"}\n'
    assert main(["recap", "--journal", str(tmp_path / "none"), "--session", SESSION]) == 1
    assert main(["recap", "--journal", str(journal), "--session", SESSION, "--limit", "+3"]) == 1
    captured = capsysbinary.readouterr()
    assert captured.out.endswith(b'"journal_unavailable","state":"unavailable"}\n')
    assert b"$.limit" in captured.err
    assert main(["recap", "--journal", str(journal)]) == 2, "--session is required"
    bad_policy = tmp_path / "policy.json"
    bad_policy.write_text("{}")
    assert (
        main(["recap", "--journal", str(journal), "--session", "s", "--policy", str(bad_policy)])
        == 2
    )


def _stored_fixture(name: str) -> tuple[list[Any], dict[str, Any], Any]:
    fixtures = Path(__file__).resolve().parents[2] / "conformance" / "fixtures" / "recap"
    case = json.loads((fixtures / f"{name}.case.json").read_text("utf-8"))
    expected = json.loads((fixtures / f"{name}.expected.json").read_text("utf-8"))
    return case["input"]["storedEvents"], case["input"]["query"], expected["output"]


@pytest.mark.parametrize(
    "name",
    ["stored-tool-call-id-header", "stored-pending-id-distance", "stored-raw-message-fallbacks"],
)
def test_cli_recap_of_stored_events_is_the_operations_answer(
    name: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # docs/recap.md section 11: the same read of Harn's store as recap.project's storedEvents.
    events, query, expected = _stored_fixture(name)
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(json.dumps(event) + "\n" for event in events), "utf-8")
    array = tmp_path / "events.json"
    array.write_text(json.dumps(events), "utf-8")
    flags = [f"--session={query['sessionId']}"]
    for name_, flag in (("fromEventId", "--from-event-id"), ("limit", "--limit")):
        if name_ in query:
            flags.append(f"{flag}={query[name_]}")
    for path in (lines, array):
        status = main(["recap", "--stored-events", str(path), *flags])
        assert status == (0 if expected["state"] == "available" else 1)
        assert json.loads(capsysbinary.readouterr().out) == expected


def test_cli_recap_of_stored_events_reports_each_bad_line(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    events, _, _ = _stored_fixture("stored-tool-call-id-header")
    bad = tmp_path / "events.jsonl"
    first, second, *rest = (json.dumps(event) for event in events)
    bad.write_text("\n".join([first, "{not json", first, second, *rest]) + "\n", "utf-8")
    assert main(["recap", "--stored-events", str(bad), "--session", "sess-1"]) == 1
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert f"{bad}:2 $: ".encode() in captured.err
    assert b"[json_syntax]" in captured.err
    assert f"{bad}:3 $.event_id: ".encode() in captured.err
    assert b"[events_not_increasing]" in captured.err
    assert main(["recap", "--stored-events", str(tmp_path / "none"), "--session", "s"]) == 2
    assert main(["recap", "--stored-events", str(bad), "--journal", "j", "--session", "s"]) == 2


# ----------------------------------------------------------------------- same bytes


@pytest.mark.sentence("recap.http-adapter", "recap.acp-adapter", "recap.snake-case-aliases")
def test_http_acp_and_cli_write_the_same_bytes(journal: Path, client: TestClient) -> None:
    camel = {"sessionId": SESSION, "turnId": "turn-1", "fromEventId": 2, "limit": 6}
    snake = {"session_id": SESSION, "turn_id": "turn-1", "from_event_id": 2, "limit": 6}
    http = client.get(
        f"/sessions/{SESSION}/recap", params={"turn_id": "turn-1", "fromEventId": "2", "limit": "6"}
    ).content
    acp = _acp(journal, [_rpc(1, camel), _rpc(2, snake)])
    assert acp.returncode == 0, acp.stderr
    prefix = b'{"jsonrpc":"2.0","id":%d,"result":'
    acp_bodies = [
        line.removeprefix(prefix % number).removesuffix(b"}")
        for number, line in enumerate(acp.stdout.splitlines(), start=1)
    ]
    cli = _cli(
        "recap", "--journal", str(journal), "--session", SESSION, "--turn-id", "turn-1",
        "--from-event-id", "2", "--limit", "6",
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert http == acp_bodies[0] == acp_bodies[1] == cli.stdout.removesuffix(b"\n")
    assert json.loads(http)["snapshot"]["coverage"] == {
        "scanned": 6,  # events 2..7
        "matched": 5,  # event 6, a provider_call_response, is read but yields no fact
        "pending": 12,  # events 8..19 lie beyond the bound
        "unassigned": 0,
        "truncated": True,
    }
