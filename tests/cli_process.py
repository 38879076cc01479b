"""The command line as a user starts it: ``python -m session_contracts ARGS`` in a child
process, for the tests that need its real exit status, streams and no shared state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
    cwd: Path | None = None,
    timeout: float = 300,
    python_options: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """The finished command, its output decoded as UTF-8; ``python_options`` go to the
    interpreter (``-X importtime``)."""
    return subprocess.run(
        [sys.executable, *python_options, "-m", "session_contracts", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
        cwd=cwd,
    )


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
