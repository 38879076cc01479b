"""The oracle: our reference producer (``producer``), which answers the producer
protocol for every operation with the seeds' semantics in ``session_contracts.health``,
``.feedback``, ``.recap``, ``.runrecord`` and ``.journal``.

Nothing here imports the judge (``conformance/judge``): the reference answers cases, it
never certifies anything; ``tests/unit/test_layering.py`` holds that rule. The semantics'
earlier import paths (``session_contracts.conformance.reference.journal`` and the like)
name the same packages, so users' imports keep working.
"""

from __future__ import annotations

import sys

from session_contracts import feedback, health, journal, recap, runrecord

__all__ = ["feedback", "health", "journal", "recap", "runrecord"]

for _package in (feedback, health, journal, recap, runrecord):
    sys.modules[f"{__name__}.{_package.__name__.rpartition('.')[2]}"] = _package
