"""Session feedback (seed 001): the rules and the durable store; the reference producer
answers with them, so they are the oracle of the conformance suite.

:class:`FeedbackStore` keeps sessions, checkpoints, client declarations,
progress reports and usage snapshots in SQLite and answers ``session.start``,
``session.checkpoint`` and ``work.observe`` with JSON values of the
``session-feedback`` contract.  The rules themselves are pure functions
(:func:`parse_checkpoint`, :func:`decide_checkpoint`, :func:`observe_session`
and their start counterparts), so another implementation can be held to them
without SQLite.  ``docs/feedback.md`` describes the rules, their codes and the
decisions taken where the specification is silent.
"""

# Each module's __all__ is its public API; the package exports both, restating neither.
from session_contracts.feedback import rules, store
from session_contracts.feedback.rules import *  # noqa: F403
from session_contracts.feedback.store import *  # noqa: F403

__all__: list[str] = []
__all__ += rules.__all__
__all__ += store.__all__
