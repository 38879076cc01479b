"""The producer protocol (docs/protocol.md): JSON Lines over a producer's stdio.

:func:`serve` turns Python functions into a producer (our reference producer
is one); :class:`ProducerProcess` is the harness side, which runs any
producer, in any language, with a deadline on every read.
"""

from session_contracts.conformance.protocol._runner import (
    CaseOutcome,
    HarnessError,
    ProducerInfo,
    ProducerProcess,
    require_producer_command,
)
from session_contracts.conformance.protocol._serve import Handler, Rejected, Skipped, serve

__all__ = [
    "CaseOutcome",
    "Handler",
    "HarnessError",
    "ProducerInfo",
    "ProducerProcess",
    "Rejected",
    "Skipped",
    "require_producer_command",
    "serve",
]
