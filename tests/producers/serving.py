"""How the Python producers here serve: the reference's protocol loop on stdio, each under a
name of its own (``python tests/producers/NAME.py ARGUMENT``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from session_contracts.conformance.protocol import Handler, serve

# The v1 contracts a producer declares unless it says otherwise.
CONTRACTS = ["session-health", "session-feedback", "session-recap", "run-record"]


def serve_as(
    name: str, handlers: Mapping[str, Handler], contracts: Sequence[str] = CONTRACTS
) -> int:
    """Serves ``handlers`` as the Python producer ``name`` (version 0) declaring ``contracts``."""
    implementation = {"name": name, "version": "0", "language": "python"}
    return serve(handlers, implementation=implementation, contracts=contracts)


def by_name(*defects: tuple[str, Handler]) -> dict[str, tuple[str, Handler]]:
    """A producer's defects, each (the operation it replaces, its handler) under the name of
    its handler."""
    return {handler.__name__: (operation, handler) for operation, handler in defects}
