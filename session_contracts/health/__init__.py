"""Session health (seed 000): the reducer of observations into facts; the reference
producer answers with it, so it is the oracle producers are compared against.

Observations (``schemas/health-observation.schema.json``) go in, session-health
facts (``schemas/session-health.schema.json``, seed 000) come out:
:func:`initial_state` and :func:`step` fold one observation at a time,
:func:`reduce` checks and folds a whole session, and :func:`acp_notification` /
:func:`a2a_status_update` wrap a fact for its transports.  ``docs/health.md``
specifies every measurement and the decisions taken where the seed is silent;
they follow Harn's own session-health reducer.
"""

from session_contracts.health import reducer
from session_contracts.health.reducer import *  # noqa: F403

__all__: list[str] = []
__all__ += reducer.__all__
