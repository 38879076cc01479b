"""The producer side of the producer protocol (docs/protocol.md): JSON Lines over stdio.

:func:`serve` turns Python functions into a producer (our reference producer
is one). The harness side, which runs any producer in any language with a
deadline on every read, is the judge's (``conformance/judge/runner.py``).
"""

from session_contracts.conformance.protocol.producer_loop import Handler, Rejected, Skipped, serve

__all__ = ["Handler", "Rejected", "Skipped", "serve"]
