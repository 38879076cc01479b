"""The session-feedback rules, as pure functions: no clock, no SQLite, no I/O.

The store (``store.py``) reads the prior state a decision needs, calls these
functions, and writes what they accept.  Keeping the rules here means the
conformance suite, the store and any other implementation can be checked
against one statement of them:

* :func:`parse_start` / :func:`parse_checkpoint` apply the schema and its x-
  rules (``limit_exceeded`` for UTF-8 byte and list limits, ``invalid_request``
  for every other finding) and turn a valid request into a typed view.
* :func:`decide_start` / :func:`decide_checkpoint` decide accept, replay or
  reject from the stored prior state and the server time.
* :func:`observe_session` builds the ``work.observe`` read model from the
  stored reports and a query time.

Everything caller-declared here (client_info, progress, usage) is metadata: no
rule reads it to grant a permission, change a work status or renew anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, get_args

from session_contracts.doctypes import (
    FEEDBACK_CHECKPOINT_DOCUMENT_TYPE,
    FEEDBACK_START_DOCUMENT_TYPE,
)
from session_contracts.errors import Finding, InvalidDocument
from session_contracts.jsontext.canonical import canonical_bytes
from session_contracts.jsontext.records import read_record
from session_contracts.validation.validator import DocumentValidator, default_validator

__all__ = [
    "CONTRACT_VERSION",
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
    "MissingReason",
    "PriorRequest",
    "Rejection",
    "RejectionCode",
    "Replay",
    "SessionReports",
    "StartPrior",
    "StartRequest",
    "StoredReport",
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
# The package exports __all__; identifier_problem, request_body_hash and usage_rejection
# stay public for the store without joining the package's API.

CONTRACT_VERSION: Final = 1
"""The feedback contract version this store writes reports under and advertises."""

USAGE_FUTURE_TOLERANCE_MS: Final = 300_000
"""A usage observation may be at most five minutes ahead of the server clock."""

STALE_AFTER_MS: Final = 900_000
"""A report older than 15 minutes is stale (an observation age, not proof of inactivity)."""

MAX_IDENTIFIER_BYTES: Final = 256

RejectionCode: TypeAlias = Literal[
    "invalid_request",
    "limit_exceeded",
    "session_missing",
    "session_version_conflict",
    "request_conflict",
    "usage_older_observation",
    "usage_conflicting_sample",
    "usage_counter_decreased",
    "usage_future_timestamp",
]
REJECTION_CODES: Final[tuple[RejectionCode, ...]] = get_args(RejectionCode)

MissingReason: TypeAlias = Literal[
    "no_session",
    "client_capability_unknown",
    "client_collection_unsupported",
    "not_reported_by_client",
]
MISSING_REASONS: Final[tuple[MissingReason, ...]] = get_args(MissingReason)

LIMIT_FINDING_CODES: Final = frozenset({"max_utf8_bytes", "max_items"})
"""Validator finding codes that are size limits (UTF-8 bytes, list entries)."""

_TOKEN_FIELDS: Final = ("input_tokens", "output_tokens", "cached_input_tokens")
_START_OPERATION: Final = "session.start"
_CHECKPOINT_OPERATION: Final = "session.checkpoint"

JsonObject: TypeAlias = dict[str, Any]


# --------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused request: a stable code and the JSON path of what is wrong."""

    request_id: str | None
    code: RejectionCode
    path: str
    message: str

    def to_json(self) -> JsonObject:
        """The ``session-feedback.checkpoint-rejection`` value."""
        return {
            "request_id": self.request_id,
            "code": self.code,
            "path": self.path,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class UsageSample:
    """One usage snapshot as submitted: a cumulative host counter, never a delta."""

    source: str
    counter_id: str
    observed_at_unix_ms: int
    input_tokens: int | None
    output_tokens: int | None
    cached_input_tokens: int | None
    canonical: bytes
    """RFC 8785 bytes of the whole usage object: two samples are the same sample
    exactly when these are equal."""

    @classmethod
    def from_json(cls, usage: Mapping[str, Any]) -> UsageSample:
        return read_record(cls, usage, canonical=canonical_bytes(dict(usage)))

    def tokens(self, field: str) -> int | None:
        value: int | None = getattr(self, field)
        return value


@dataclass(frozen=True, slots=True)
class StartRequest:
    """A valid session.start."""

    request_id: str
    session_id: str
    client_info: JsonObject | None
    request_hash: str


@dataclass(frozen=True, slots=True)
class CheckpointRequest:
    """A valid session.checkpoint."""

    request_id: str
    session_id: str
    session_version: int
    context_hash: str
    next_action: str
    open_loops: tuple[str, ...]
    client_info: JsonObject | None
    progress: JsonObject | None
    usage: JsonObject | None
    usage_sample: UsageSample | None
    request_hash: str


@dataclass(frozen=True, slots=True)
class PriorRequest:
    """An accepted request of the same session with the same request_id."""

    request_hash: str
    receipt: JsonObject


@dataclass(frozen=True, slots=True)
class CounterPeak:
    """The highest accepted value of each field of one (source, counter_id).

    Accepted values never decrease, so this is also the latest value of each
    field that was reported; ``None`` when the counter never reported it.
    """

    input_tokens: int | None
    output_tokens: int | None
    cached_input_tokens: int | None

    def tokens(self, field: str) -> int | None:
        value: int | None = getattr(self, field)
        return value


@dataclass(frozen=True, slots=True)
class UsagePrior:
    """The session's accepted usage, as far as a new sample's rules need it."""

    latest_observed_at_unix_ms: int | None
    """The latest accepted observation time of the session, across all counters."""
    samples_at_latest: frozenset[bytes]
    """Canonical bytes of every accepted sample observed at that time."""
    counter: CounterPeak | None
    """The same (source, counter_id) as the new sample; ``None`` if new."""


NO_USAGE: Final = UsagePrior(None, frozenset(), None)


@dataclass(frozen=True, slots=True)
class StartPrior:
    """What the store holds of the session that a start's rules read."""

    session_version: int | None
    """The session's current version, ``None`` when it does not exist."""
    prior_request: PriorRequest | None


@dataclass(frozen=True, slots=True)
class CheckpointPrior(StartPrior):
    """A start's prior state and the session's accepted usage: what a checkpoint's rules read."""

    usage: UsagePrior


@dataclass(frozen=True, slots=True)
class Accept:
    """Store the request; the session moves to ``session_version``."""

    session_version: int
    reported_at_unix_ms: int


@dataclass(frozen=True, slots=True)
class Replay:
    """A duplicate request: answer with the original receipt, change nothing."""

    receipt: JsonObject


Decision: TypeAlias = Accept | Replay | Rejection


@dataclass(frozen=True, slots=True)
class StoredReport:
    """One stored report: the value and when and under which contract it arrived."""

    checkpoint_id: str
    reported_at_unix_ms: int
    contract_version: int
    value: JsonObject


@dataclass(frozen=True, slots=True)
class SessionReports:
    """What ``work.observe`` reads of one existing session."""

    client: StoredReport | None
    """The current client declaration (the latest supplied one)."""
    progress: StoredReport | None
    usage: StoredReport | None
    raw_receipts: tuple[JsonObject, ...] | None
    """The session's original receipts; ``None`` when the reader may not see them
    (the store does not even read them then)."""


# -------------------------------------------------------------------- parsing


def capabilities() -> JsonObject:
    """The server's ``capabilities`` member for feedback (``session-feedback.capabilities``)."""
    return {"session_feedback": {"version": CONTRACT_VERSION}}


def identifier_problem(value: object) -> str | None:
    """Why ``value`` is not an Identifier (1..256 UTF-8 bytes), or ``None``."""
    if not isinstance(value, str):
        return "an identifier is a string"
    if not value:
        return "an identifier is not empty"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return "an identifier is valid Unicode text (no lone surrogates)"
    if size > MAX_IDENTIFIER_BYTES:
        return f"an identifier is at most {MAX_IDENTIFIER_BYTES} UTF-8 bytes, not {size}"
    return None


def _echoed_request_id(request: object) -> str | None:
    # A rejection repeats the request_id only when it is itself a valid
    # Identifier: a rejection must validate even when the request_id is the
    # problem.
    if isinstance(request, Mapping):
        candidate = request.get("request_id")
        if identifier_problem(candidate) is None:
            assert isinstance(candidate, str)
            return candidate
    return None


def _schema_rejection(
    doctype: str, request: object, validator: DocumentValidator
) -> Rejection | None:
    try:
        findings = validator.validate(doctype, request)
    except (TypeError, ValueError) as exc:
        # Python values JSON cannot hold (an object(), a non-string key): the
        # request never came off the wire, but it still gets a rejection.
        return Rejection(
            _echoed_request_id(request),
            "invalid_request",
            "$",
            f"the request is not a JSON value: {exc}",
        )
    if not findings:
        return None
    # Findings come sorted by (path, code): the first is a stable choice.
    first = findings[0]
    code: RejectionCode = (
        "limit_exceeded" if first.code in LIMIT_FINDING_CODES else "invalid_request"
    )
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return Rejection(
        _echoed_request_id(request), code, first.path, f"{first.message} [{first.code}]{more}"
    )


def request_body_hash(operation: str, request: Mapping[str, Any]) -> str | Rejection:
    # The operation is part of the hash, so a start and a checkpoint that share
    # a request_id never count as the same body.
    try:
        body = canonical_bytes(dict(request))
    except InvalidDocument as exc:
        first: Finding = exc.findings[0]
        return Rejection(_echoed_request_id(request), "invalid_request", first.path, first.message)
    return hashlib.sha256(operation.encode() + b"\n" + body).hexdigest()


def parse_start(
    request: object, *, validator: DocumentValidator | None = None
) -> StartRequest | Rejection:
    """Apply the schema and its x- rules to a session.start request."""
    rejection = _schema_rejection(
        FEEDBACK_START_DOCUMENT_TYPE, request, validator or default_validator()
    )
    if rejection is not None:
        return rejection
    assert isinstance(request, Mapping)
    request_hash = request_body_hash(_START_OPERATION, request)
    if isinstance(request_hash, Rejection):
        return request_hash
    return read_record(StartRequest, request, request_hash=request_hash)


def parse_checkpoint(
    request: object, *, validator: DocumentValidator | None = None
) -> CheckpointRequest | Rejection:
    """Apply the schema and its x- rules to a session.checkpoint request."""
    rejection = _schema_rejection(
        FEEDBACK_CHECKPOINT_DOCUMENT_TYPE, request, validator or default_validator()
    )
    if rejection is not None:
        return rejection
    assert isinstance(request, Mapping)
    request_hash = request_body_hash(_CHECKPOINT_OPERATION, request)
    if isinstance(request_hash, Rejection):
        return request_hash
    usage = request.get("usage")
    return read_record(
        CheckpointRequest,
        request,
        open_loops=tuple(request["open_loops"]),
        usage_sample=None if usage is None else UsageSample.from_json(usage),
        request_hash=request_hash,
    )


# ------------------------------------------------------------------ decisions


def receipt(
    *,
    request_id: str,
    session_id: str,
    checkpoint_id: str,
    session_version: int,
    reported_at_unix_ms: int,
) -> JsonObject:
    """An original (not replayed) ``session-feedback.checkpoint-receipt``."""
    return {
        "request_id": request_id,
        "session_id": session_id,
        "checkpoint_id": checkpoint_id,
        "session_version": session_version,
        "reported_at_unix_ms": reported_at_unix_ms,
        "replayed": False,
    }


def _replay_or_conflict(
    request_id: str, request_hash: str, prior: PriorRequest | None
) -> Replay | Rejection | None:
    if prior is None:
        return None
    if prior.request_hash == request_hash:
        return Replay({**prior.receipt, "replayed": True})
    return Rejection(
        request_id,
        "request_conflict",
        "$.request_id",
        f"request_id {request_id!r} was already used in this session with a different body; "
        "a new request needs a new request_id",
    )


def decide_start(request: StartRequest, prior: StartPrior, *, now_ms: int) -> Decision:
    """Accept a new session at version 0, replay a duplicate, or reject.

    Order: replay (a duplicate start must replay even though the session now
    exists), then the session must not exist yet.
    """
    replayed = _replay_or_conflict(request.request_id, request.request_hash, prior.prior_request)
    if replayed is not None:
        return replayed
    if prior.session_version is not None:
        # No RejectionCode says "already exists": a start asserts that the
        # session has no version yet, and the stored version contradicts it.
        return Rejection(
            request.request_id,
            "session_version_conflict",
            "$.session_id",
            f"session {request.session_id!r} already exists at session_version "
            f"{prior.session_version}; continue it with session.checkpoint",
        )
    return Accept(session_version=0, reported_at_unix_ms=now_ms)


def usage_rejection(
    request_id: str, sample: UsageSample, usage: UsagePrior, now_ms: int
) -> Rejection | None:
    observed = sample.observed_at_unix_ms
    if observed > now_ms + USAGE_FUTURE_TOLERANCE_MS:
        return Rejection(
            request_id,
            "usage_future_timestamp",
            "$.usage.observed_at_unix_ms",
            f"observed_at_unix_ms {observed} is {observed - now_ms} ms ahead of the server "
            f"clock ({now_ms}); at most {USAGE_FUTURE_TOLERANCE_MS} ms are tolerated",
        )
    latest = usage.latest_observed_at_unix_ms
    if latest is not None and observed < latest:
        return Rejection(
            request_id,
            "usage_older_observation",
            "$.usage.observed_at_unix_ms",
            f"observed_at_unix_ms {observed} is older than the session's latest accepted "
            f"usage observation ({latest}), across all counters",
        )
    if latest == observed and any(other != sample.canonical for other in usage.samples_at_latest):
        return Rejection(
            request_id,
            "usage_conflicting_sample",
            "$.usage",
            f"the session already holds a different usage sample observed at {observed}; "
            "one observation time has one sample, across all counters",
        )
    peak = usage.counter
    if peak is not None:
        for field in _TOKEN_FIELDS:
            new, old = sample.tokens(field), peak.tokens(field)
            if new is not None and old is not None and new < old:
                return Rejection(
                    request_id,
                    "usage_counter_decreased",
                    f"$.usage.{field}",
                    f"{field} went from {old} to {new} for counter {sample.counter_id!r} of "
                    f"source {sample.source!r}; a host counter reset needs a new counter_id",
                )
    return None


def decide_checkpoint(
    request: CheckpointRequest, prior: CheckpointPrior, *, now_ms: int
) -> Decision:
    """Accept, replay or reject a valid checkpoint against the stored prior state.

    Order: the session must exist; a request_id already used in the session
    replays (same body) or conflicts (different body), so a retried request is
    never judged against the version it moved the session to; the checkpoint
    must name the current session version; then the usage rules.
    """
    if prior.session_version is None:
        return Rejection(
            request.request_id,
            "session_missing",
            "$.session_id",
            f"there is no session {request.session_id!r}; start it with session.start",
        )
    replayed = _replay_or_conflict(request.request_id, request.request_hash, prior.prior_request)
    if replayed is not None:
        return replayed
    if request.session_version != prior.session_version:
        return Rejection(
            request.request_id,
            "session_version_conflict",
            "$.session_version",
            f"session_version {request.session_version} is not the session's current "
            f"version {prior.session_version}",
        )
    if request.usage_sample is not None:
        rejection = usage_rejection(request.request_id, request.usage_sample, prior.usage, now_ms)
        if rejection is not None:
            return rejection
    return Accept(session_version=prior.session_version + 1, reported_at_unix_ms=now_ms)


# ---------------------------------------------------------------- observation


def _missing(reason: MissingReason) -> JsonObject:
    return {"state": "missing", "reason": reason}


def _absence(declaration: StoredReport | None, capability: str) -> MissingReason:
    # Old clients never declare anything: they are unknown-capability
    # clients, and their silence is not labelled a reporting failure.
    if declaration is None:
        return "client_capability_unknown"
    state = declaration.value.get("capabilities", {}).get(capability, "unknown")
    if state == "supported":
        return "not_reported_by_client"
    if state == "unsupported":
        return "client_collection_unsupported"
    return "client_capability_unknown"


def _reported(
    report: StoredReport,
    value: JsonObject,
    *,
    source: str | None,
    measured_at_unix_ms: int,
    now_ms: int,
    reader_contract_version: int,
) -> JsonObject:
    # A clock behind the report (or a usage sample up to five minutes ahead
    # of it) would give a negative age; age is unsigned, so it floors at 0.
    age_ms = max(0, now_ms - measured_at_unix_ms)
    contract_match = report.contract_version == reader_contract_version
    stale_reasons = []
    if not contract_match:
        stale_reasons.append("contract_mismatch")
    if age_ms > STALE_AFTER_MS:
        stale_reasons.append("age_exceeded")
    return {
        "state": "reported",
        "report": {
            "checkpoint_id": report.checkpoint_id,
            "reported_at_unix_ms": report.reported_at_unix_ms,
            "provenance": {"declared_by": "client", "source": source},
            "contract_version": report.contract_version,
            "contract_match": contract_match,
            "age_ms": age_ms,
            "stale": bool(stale_reasons),
            "stale_reasons": stale_reasons,
        },
        "value": value,
    }


def observe_session(
    session_id: str,
    reports: SessionReports | None,
    *,
    now_ms: int,
    reader_can_read_raw_receipts: bool,
    reader_contract_version: int = CONTRACT_VERSION,
) -> JsonObject:
    """The ``session-feedback.observation`` of a session at query time ``now_ms``.

    ``reports`` is ``None`` for an unknown session: every feedback slot then
    says ``no_session``.  Raw receipts have no ``no_session`` variant: a
    reader without the permission sees ``permission_restricted`` (the gate
    comes first), a permitted reader an empty list (nothing is stored).
    """
    if not reader_can_read_raw_receipts:
        raw: JsonObject = {"state": "missing", "reason": "permission_restricted"}
    else:
        stored = () if reports is None or reports.raw_receipts is None else reports.raw_receipts
        raw = {"state": "available", "receipts": [dict(r) for r in stored]}
    if reports is None:
        return {
            "observed_at_unix_ms": now_ms,
            "session_id": session_id,
            "client": _missing("no_session"),
            "model": _missing("no_session"),
            "progress": _missing("no_session"),
            "usage": _missing("no_session"),
            "raw_receipts": raw,
        }

    def reported(
        report: StoredReport, value: JsonObject, source: str | None, at: int
    ) -> JsonObject:
        return _reported(
            report,
            value,
            source=source,
            measured_at_unix_ms=at,
            now_ms=now_ms,
            reader_contract_version=reader_contract_version,
        )

    declaration = reports.client
    client = (
        _missing("client_capability_unknown")
        if declaration is None
        else reported(declaration, declaration.value, None, declaration.reported_at_unix_ms)
    )
    model_value = None if declaration is None else declaration.value.get("model")
    # A report, when there is one, is shown whatever the capability says; the
    # capability only explains an absence.
    model = (
        _missing(_absence(declaration, "model"))
        if declaration is None or model_value is None
        else reported(
            declaration, model_value, model_value["source"], declaration.reported_at_unix_ms
        )
    )
    progress = (
        _missing(_absence(declaration, "progress"))
        if reports.progress is None
        else reported(
            reports.progress, reports.progress.value, None, reports.progress.reported_at_unix_ms
        )
    )
    # Usage ages from the host's measurement time, never from ingestion.
    usage = (
        _missing(_absence(declaration, "usage"))
        if reports.usage is None
        else reported(
            reports.usage,
            reports.usage.value,
            reports.usage.value["source"],
            reports.usage.value["observed_at_unix_ms"],
        )
    )
    return {
        "observed_at_unix_ms": now_ms,
        "session_id": session_id,
        "client": client,
        "model": model,
        "progress": progress,
        "usage": usage,
        "raw_receipts": raw,
    }
