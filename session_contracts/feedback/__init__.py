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

from session_contracts.feedback.rules import (
    CONTRACT_VERSION,
    LIMIT_FINDING_CODES,
    MISSING_REASONS,
    REJECTION_CODES,
    STALE_AFTER_MS,
    USAGE_FUTURE_TOLERANCE_MS,
    Accept,
    CheckpointPrior,
    CheckpointRequest,
    CounterPeak,
    Decision,
    MissingReason,
    PriorRequest,
    Rejection,
    RejectionCode,
    Replay,
    SessionReports,
    StartPrior,
    StartRequest,
    StoredReport,
    UsagePrior,
    UsageSample,
    capabilities,
    decide_checkpoint,
    decide_start,
    observe_session,
    parse_checkpoint,
    parse_start,
    receipt,
)
from session_contracts.feedback.store import (
    APPLICATION_ID,
    FORMAT_VERSION,
    FeedbackStore,
    FeedbackStoreError,
    Synchronous,
)

__all__ = [
    "APPLICATION_ID",
    "CONTRACT_VERSION",
    "FORMAT_VERSION",
    "LIMIT_FINDING_CODES",
    "MISSING_REASONS",
    "REJECTION_CODES",
    "STALE_AFTER_MS",
    "USAGE_FUTURE_TOLERANCE_MS",
    "Accept",
    "CheckpointPrior",
    "CheckpointRequest",
    "CounterPeak",
    "Decision",
    "FeedbackStore",
    "FeedbackStoreError",
    "MissingReason",
    "PriorRequest",
    "Rejection",
    "RejectionCode",
    "Replay",
    "SessionReports",
    "StartPrior",
    "StartRequest",
    "StoredReport",
    "Synchronous",
    "UsagePrior",
    "UsageSample",
    "capabilities",
    "decide_checkpoint",
    "decide_start",
    "observe_session",
    "parse_checkpoint",
    "parse_start",
    "receipt",
]
