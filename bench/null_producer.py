"""A producer that declares every operation and contract and skips every case at once.

Certified against it, ``certify`` spends only what the harness itself costs: drawing the
cases, sending them, reading the answers (``python -m bench.null_producer``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from session_contracts.conformance.protocol import Skipped, serve
from session_contracts.conformance.reference.producer import HANDLERS, HELLO_CONTRACTS


def _skip(case_input: Mapping[str, Any]) -> Any:
    raise Skipped("the null producer answers no case")


def main() -> int:
    return serve(
        dict.fromkeys(HANDLERS, _skip),
        implementation={"name": "null producer", "version": "0", "language": "python"},
        contracts=list(HELLO_CONTRACTS),
    )


if __name__ == "__main__":
    sys.exit(main())
