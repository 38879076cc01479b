"""The command line as a user starts it: ``python -m session_contracts ARGS`` in a child
process, for the tests that need its real exit status, streams and no shared state."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def run_cli(
    *args: str | bytes, stdin: bytes = b"", cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[bytes]:
    """The finished command, its output as bytes (arguments may be bytes too); its stdin is
    ``stdin``, never the test runner's."""
    return subprocess.run(
        [sys.executable, "-m", "session_contracts", *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )


def run_cli_text(
    *args: str,
    stdin: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
    python_options: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """The finished command, its output decoded as UTF-8; its stdin is ``stdin`` (none
    when None, never the test runner's); ``env`` its whole environment when given;
    ``python_options`` go to the interpreter (``-X importtime``)."""
    feed: dict[str, Any] = {"stdin": subprocess.DEVNULL} if stdin is None else {"input": stdin}
    command = [sys.executable, *python_options, "-m", "session_contracts", *args]
    return subprocess.run(
        command, capture_output=True, text=True, encoding="utf-8", timeout=timeout, check=False,
        cwd=cwd, env=env, **feed,
    )  # fmt: skip


def producer_report(
    command: str,
    producer: str,
    folder: Path,
    *,
    exit_status: int = 0,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON report of ``golden check`` or ``certify`` (``command``) of ``producer`` at
    default settings, written in ``folder``; the command must exit with ``exit_status``."""
    report = folder / "report.json"
    args = [*command.split(), "--producer", producer, "--report-json", str(report)]
    if command == "certify":
        args += ["--failures-dir", str(folder / "failures")]
    done = run_cli_text(*args, env=env, timeout=600)
    assert done.returncode == exit_status, done.stdout[-4000:] + done.stderr[-2000:]
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def run_cli_importing(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], frozenset[str]]:
    """The finished command and every module it imported, as ``python -X importtime``
    reports them on stderr (those lines are taken out of the command's stderr)."""
    result = run_cli_text(*args, cwd=cwd, timeout=timeout, python_options=("-X", "importtime"))
    modules: set[str] = set()
    stderr: list[str] = []
    for line in result.stderr.splitlines(keepends=True):
        if not line.startswith("import time:"):
            stderr.append(line)
        elif not line.rstrip().endswith("imported package"):  # the header line
            modules.add(line.rsplit("|", 1)[1].strip())
    result.stderr = "".join(stderr)
    return result, frozenset(modules)
