"""Input limits: every FILE command reads a bounded amount, refuses more with a
finding that names an option that exists, and never cuts input."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_process import run_cli as cli

from session_contracts.input_files import iter_input_documents
from session_contracts.jsontext.strict import MAX_DOCUMENT_BYTES

COMMANDS = [
    ["validate", "session-recap.query"],
    ["roundtrip", "session-recap.query"],
    ["canonicalize"],
    ["hash"],
    ["verify", "session-recap.query"],
]


def test_the_default_limit_is_16_mib() -> None:
    assert MAX_DOCUMENT_BYTES == 16 * 1024 * 1024


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_document_over_the_limit_is_refused_with_an_option_that_exists(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b'{"sessionId": "' + b"a" * 3000 + b'"}')
    refused = cli(*command, str(path), "--max-document-bytes", "2K")
    assert refused.returncode == 1
    text = (refused.stdout + refused.stderr).decode()
    assert "[json_too_large]" in text
    assert "2,048" in text
    options = set(re.findall(r"--[a-z][a-z-]+", text.split("json_too_large", 1)[1]))
    assert "--max-document-bytes" in options
    # The option the hint names exists, and raising it reads the document.
    accepted = cli(*command, str(path), "--max-document-bytes", "4K")
    assert accepted.returncode == 0, accepted.stderr


def test_stdin_is_read_no_further_than_the_limit() -> None:
    """A writer that never closes stdin: a bounded reader answers anyway."""
    command = [sys.executable, "-m", "session_contracts", "hash", "-", "--max-document-bytes", "1M"]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdin is not None
        assert process.stderr is not None
        stdin = process.stdin

        def feed() -> None:
            with contextlib.suppress(BrokenPipeError, OSError):
                for _ in range(64):
                    stdin.write(b"0" * (1 << 20))
                    stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            status = process.wait(timeout=120)  # a guard, not a speed test: reading it all hangs
        finally:
            process.kill()
        writer.join(timeout=10)
        with contextlib.suppress(OSError):
            stdin.close()
        stderr = process.stderr.read()
    assert status == 1
    assert b"[json_too_large]" in stderr


def test_json_lines_stream_and_an_overlong_line_is_reported_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    lines = [b'{"sessionId": "a"}', b'{"sessionId": "' + b"b" * 5000 + b'"}', b'{"sessionId": "c"}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = cli("validate", "session-recap.query", str(path), "--max-document-bytes", "1K")
    assert result.returncode == 1
    assert f"{path}:2".encode() in result.stdout
    assert b"[json_too_large]" in result.stdout
    assert b"2 of 3 document(s) valid" in result.stderr


def test_json_lines_over_the_limit_on_stdin_are_streamed_not_refused() -> None:
    body = b"".join(b'{"sessionId": "s%d"}\n' % i for i in range(200))
    result = cli("hash", "-", "--max-document-bytes", "1K", stdin=body)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 200
    assert result.stdout.splitlines()[199].endswith(b"<stdin>:200")


def test_the_stream_reader_never_cuts_and_counts_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"[1]\n" + b"[" + b"2," * 40 + b"2]\n\n[3]")
    documents = list(iter_input_documents(str(path), max_bytes=32))
    assert [d.source for d in documents] == [f"{path}:1", f"{path}:2", f"{path}:4"]
    assert documents[0].value == [1]
    assert documents[1].error is not None
    assert documents[1].error.findings[0].code == "json_too_large"
    assert documents[2].value == [3]


def test_a_single_document_just_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    value = {"k": "v" * 100}
    data = json.dumps(value).encode()
    path.write_bytes(data)
    (document,) = iter_input_documents(str(path), max_bytes=len(data))
    assert document.value == value
    (refused,) = iter_input_documents(str(path), max_bytes=len(data) - 1)
    assert refused.error is not None


@pytest.mark.parametrize("value", ["0", "-1", "12Q", "K", ""])
def test_a_bad_limit_is_a_usage_error(value: str) -> None:
    result = cli("hash", "-", "--max-document-bytes", value, stdin=b"{}")
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
