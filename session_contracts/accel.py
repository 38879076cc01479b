"""The one door to the optional C modules: the only importer of ``_speedups`` and ``_linescan``.

Each is the built module, or None where it was not built or where the environment sets
``SESSION_CONTRACTS_PURE_PYTHON=1``; every caller keeps its Python twin beside the call,
and the answers are the same either way (``nox -s tests_pure_python`` runs the suite so).
"""

from __future__ import annotations

import os

__all__ = ["PURE_PYTHON_VARIABLE", "linescan", "speedups", "switched_off"]

PURE_PYTHON_VARIABLE = "SESSION_CONTRACTS_PURE_PYTHON"


def switched_off() -> bool:
    """Whether the environment asks for the Python twins only."""
    return os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0")


try:
    from session_contracts import _speedups as speedups
except ImportError:  # built without a C compiler
    speedups = None  # type: ignore[assignment,unused-ignore]
try:
    from session_contracts import _linescan as linescan
except ImportError:  # built without a C compiler
    linescan = None  # type: ignore[assignment,unused-ignore]
if switched_off():
    speedups = None  # type: ignore[assignment,unused-ignore]
    linescan = None  # type: ignore[assignment,unused-ignore]
