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
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """The finished command, its output decoded as UTF-8."""
    return subprocess.run(
        [sys.executable, "-m", "session_contracts", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
