"""Run records projected from a session (seed 003), as pure functions.

:func:`project_run_record` turns a :class:`RunSpec` (what the runtime knows
about one run: its kind, status, execution owner, completed spans, flight
artifact and unpersisted evidence) and the session's canonical events into a
``run-record.record``.  The events are the only other input: the completion
receipt comes from the session attribute ``completion_receipt`` and nothing
else, so re-projecting a run from its session reproduces the receipt without
the launcher's stdout.

The readers :func:`read_completion_receipt` and :func:`evidence_is_partial`
say how a consumer must interpret what a record carries.  ``docs/runrecord.md``
states every rule and each decision taken where the seed is silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from session_contracts.errors import Finding, InvalidDocument, json_path
from session_contracts.journal import SessionEvent
from session_contracts.jsontext.frozen import thaw_json
from session_contracts.jsontext.records import read_record
from session_contracts.runrecord.spans import (
    EXECUTION_ATTRIBUTE,
    RECORD_DOCUMENT_TYPE,
    Span,
    span_tree_findings,
)
from session_contracts.validation.validator import default_validator

__all__ = [
    "COMPLETION_RECEIPT",
    "EVIDENCE_SCHEMA_VERSION",
    "EXECUTION_IDENTITY",
    "EXECUTION_ID_RELABELLED",
    "HARN_EXECUTION_ID_VECTORS",
    "PROJECTION_INVALID",
    "RECORD_KINDS",
    "SPAN_EXECUTION_MISMATCH",
    "CompletionReceipt",
    "EvidenceGap",
    "ExecutionOwner",
    "FlightRecording",
    "ReceiptState",
    "RecordKind",
    "RunSpec",
    "evidence_is_partial",
    "execution_owner",
    "is_harn_execution_id",
    "latest_completion_receipt",
    "project_run_record",
    "read_completion_receipt",
]

RecordKind = Literal["run", "workflow", "session"]
RECORD_KINDS: Final[tuple[RecordKind, ...]] = get_args(RecordKind)

# The canonical session attribute a host stores the completion owner's receipt in.
COMPLETION_RECEIPT: Final = "completion_receipt"
EVIDENCE_SCHEMA_VERSION: Final = 1
# The gap component that explains a null execution_id, and the code our
# projection gives it when no owner was recorded (Harn's own codes for an
# invalid owner are projection_invalid and session_projection_invalid).
EXECUTION_IDENTITY: Final = "execution_identity"
OWNER_NOT_RECORDED: Final = "owner_not_recorded"
# Harn's evidence projection (orchestration/records/view/evidence.rs) replaces an
# execution id that is not Harn-owned by null and records this gap, once.
PROJECTION_INVALID: Final = "projection_invalid"
_PROJECTION_INVALID_MESSAGE: Final = "The persisted run contained invalid Harn execution evidence."
# `hxe-` + a canonical (lowercase, hyphenated) UUIDv7 of the RFC 4122 variant: what
# Harn mints (observability/execution_scope.rs) and what its evidence validator accepts.
_HARN_EXECUTION_ID: Final = re.compile(
    r"hxe-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
)
# Harn's own test vectors of the rule (execution_evidence.rs, observability/execution_scope.rs),
# each with whether it is Harn-owned: the table of docs/runrecord.md section 1.3.
HARN_EXECUTION_ID_VECTORS: Final[tuple[tuple[str, bool], ...]] = (
    ("hxe-019c13e0-8080-7000-8000-000000000001", True),
    ("cloud-run-id", False),
    ("host-run-id", False),
    ("hxe-0199", False),
    ("hxe-019C13E0-8080-7000-8000-000000000001", False),  # upper case
    ("hxe-019c13e0808070008000000000000001", False),  # not hyphenated
    ("hxe-019c13e0-8080-4000-8000-000000000001", False),  # version 4
    ("hxe-019c13e0-8080-7000-c000-000000000001", False),  # variant c: Microsoft's
)
# Harn's flight_recorder.rs constants.
FLIGHT_RECORDING_SCHEMA_VERSION: Final = 1
FLIGHT_RECORDING_FORMAT: Final = "harn.flight.v1+json"
FLIGHT_VALUE_POLICY: Final = "omitted"

# Finding codes of the projection (beside the schema's own).
EXECUTION_ID_RELABELLED: Final = "execution_id_relabelled"
SPAN_EXECUTION_MISMATCH: Final = "span_execution_mismatch"

_SESSION_ONLY_REASON: Final = (
    "session-only projection: no VM execution owner is recorded for this session"
)
_UNRECORDED_OWNER_REASON: Final = "the VM execution that owned this record was not recorded"


@dataclass(frozen=True, slots=True)
class EvidenceGap:
    """Requested evidence that could not be persisted, as Harn writes a gap.

    ``component`` names the evidence (``execution_identity``,
    ``flight_recording``, ...), ``code`` says what went wrong in a stable
    machine form, ``message`` says it for a person (Harn's
    ``RunEvidenceGapRecord``).
    """

    component: str
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"component": self.component, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class FlightRecording:
    """The optional flight artifact of the execution (Harn's ``FlightRecordingArtifact``).

    ``execution_id`` is the execution that recorded it, which must be the
    record's own owner; ``path`` is the host-local file, ``None`` when a
    public projection hides it (written as JSON ``null``).
    """

    execution_id: str
    content_hash: str
    byte_length: int
    retained_events: int
    dropped_events: int = 0
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": FLIGHT_RECORDING_SCHEMA_VERSION,
            "execution_id": self.execution_id,
            "format": FLIGHT_RECORDING_FORMAT,
            "path": self.path,
            "content_hash": self.content_hash,
            "byte_length": self.byte_length,
            "retained_events": self.retained_events,
            "dropped_events": self.dropped_events,
            "value_policy": FLIGHT_VALUE_POLICY,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> FlightRecording:
        """Read the artifact members a producer-protocol case gives (the constants are implied)."""
        return read_record(cls, value)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSpec:
    """What the runtime knows about one run, besides the session's events.

    * ``kind``: ``run`` (a plain ``harn run``), ``workflow`` or ``session`` (a
      session-only projection).
    * ``session_id``: the backing session, or ``None`` for a record not
      produced from a session (it then carries no receipt key).
    * ``execution_id``: the VM execution owner when known, else ``None``;
      never a run or session id.  A plain run has one by definition: its
      execution identity is its record id.
    * ``id``: a workflow's own identity (required for ``workflow``); for
      ``session`` it defaults to the session id; for ``run`` it is derived
      (leave it ``None`` or pass the execution id).
    * ``spans``, ``flight_recording``: the completed spans and flight artifact.
    * ``gaps``: evidence that was requested but could not be persisted.
    * ``execution_gap_reason``: why the owner cannot be recovered (only with a
      null ``execution_id``; a default reason is used when omitted).

    Contradictory fields are misuse of the API and raise ``ValueError``.
    """

    kind: RecordKind
    status: str
    session_id: str | None
    execution_id: str | None
    id: str | None = None
    spans: Sequence[Span] = ()
    flight_recording: FlightRecording | None = None
    gaps: Sequence[EvidenceGap] = ()
    execution_gap_reason: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "spans", tuple(self.spans))
        object.__setattr__(self, "gaps", tuple(self.gaps))
        if self.kind not in RECORD_KINDS:
            raise ValueError(f"kind must be one of {', '.join(RECORD_KINDS)}, not {self.kind!r}")
        if self.kind == "run":
            if self.execution_id is None:
                raise ValueError(
                    "a plain run's record id is its execution identity, so it needs one; "
                    "project a run whose owner is unknown as kind 'session'"
                )
            if self.id not in (None, self.execution_id):
                raise ValueError("a plain run's record id is its execution id; leave id as None")
        if self.kind == "workflow" and not self.id:
            raise ValueError("a workflow record keeps its workflow identity: pass id")
        if self.kind == "session" and self.session_id is None:
            raise ValueError("a session-only projection needs its session_id")
        has_identity_gap = any(gap.component == EXECUTION_IDENTITY for gap in self.gaps)
        if self.execution_id is not None and (
            has_identity_gap or self.execution_gap_reason is not None
        ):
            raise ValueError(
                "an execution_identity gap explains a null execution_id; this run has one"
            )
        if has_identity_gap and self.execution_gap_reason is not None:
            raise ValueError("give the execution_identity reason once: as a gap or as the reason")

    @property
    def record_id(self) -> str:
        """The record's ``id``: execution id (run), workflow id, or the session's id."""
        if self.kind == "run":
            assert self.execution_id is not None  # __post_init__ guarantees it
            return self.execution_id
        if self.id is not None:
            return self.id
        assert self.session_id is not None  # a session record has one (__post_init__)
        return self.session_id


@dataclass(frozen=True, slots=True)
class ExecutionOwner:
    """The VM execution a session's events name, or why none can be recovered."""

    execution_id: str | None
    reason: str | None


def execution_owner(events: Iterable[SessionEvent]) -> ExecutionOwner:
    """Recover the execution owner from the events' ``executionId`` headers.

    One distinct non-null value is the owner.  None, or several (a session
    that spans executions), cannot name one owner: the result is ``None`` with
    the reason for the ``execution_identity`` gap.  Run and session ids are
    never considered.
    """
    owners = sorted({event.execution_id for event in events if event.execution_id is not None})
    if len(owners) == 1:
        return ExecutionOwner(owners[0], None)
    if not owners:
        return ExecutionOwner(None, "no event of the session was written inside a VM execution")
    return ExecutionOwner(
        None, f"the session's events name {len(owners)} VM executions; none owns the whole run"
    )


def latest_completion_receipt(events: Iterable[SessionEvent]) -> Any:
    """The value of the latest ``completion_receipt`` session attribute, or ``None``.

    "Latest" is the highest event id (id order is event order), so a receipt
    stored after the session was created, or replaced later, wins.  The value
    is returned as a plain JSON copy, uninterpreted: an explicit ``null`` and
    an absent attribute both give ``None``.
    """
    latest: SessionEvent | None = None
    for event in events:
        if (
            event.kind == "session_attribute"
            and event.payload.get("name") == COMPLETION_RECEIPT
            and (latest is None or event.id > latest.id)
        ):
            latest = event
    return None if latest is None else thaw_json(latest.payload["value"])


def is_harn_execution_id(candidate: str) -> bool:
    """Whether ``candidate`` is a Harn-owned execution identity (docs/runrecord.md 1.3).

    ``hxe-`` followed by a UUID of version 7 and the RFC 4122 variant, in its
    canonical lowercase hyphenated spelling.
    """
    return _HARN_EXECUTION_ID.fullmatch(candidate) is not None


def _relabel_findings(run: RunSpec, events: Sequence[SessionEvent]) -> list[Finding]:
    """A run or session id in ``execution_id`` is relabelling, whatever the caller meant."""
    execution_id = run.execution_id
    if execution_id is None:
        return []
    taken: dict[str, str] = {}
    for event in events:
        taken.setdefault(event.session_id, "a session id")
        if event.run_id is not None:
            taken.setdefault(event.run_id, "a run id")
    if run.session_id is not None:
        taken[run.session_id] = "the session id"
    if run.kind != "run" and run.id is not None:
        taken[run.id] = f"the {run.kind} record's own id"
    if execution_id not in taken:
        return []
    return [
        Finding(
            "$.evidence.execution_id",
            EXECUTION_ID_RELABELLED,
            f"execution_id {execution_id!r} is {taken[execution_id]}, not a VM execution owner",
            "pass the VM execution id, or None with an execution_identity gap when it cannot "
            "be recovered; never relabel a run or session id",
        )
    ]


def _span_owner_findings(run: RunSpec) -> list[Finding]:
    """A span's ``harn.execution.id`` names the record's owner: one identity for both."""
    findings = []
    for index, span in enumerate(run.spans):
        owner = span.metadata.get(EXECUTION_ATTRIBUTE)
        if owner is not None and owner != run.execution_id:
            findings.append(
                Finding(
                    json_path(["evidence", "trace_spans", index, "metadata", EXECUTION_ATTRIBUTE]),
                    SPAN_EXECUTION_MISMATCH,
                    f"span {span.span_id} belongs to execution {owner!r} but the record's "
                    f"execution_id is {run.execution_id!r}",
                    "the record, its spans and its flight artifact share one execution owner",
                )
            )
    return findings


def _gaps(run: RunSpec, owner_dropped: bool) -> list[dict[str, str]]:
    gaps = [gap.to_json() for gap in run.gaps]
    if owner_dropped:
        # As Harn's push_gap_once: appended, unless the same component and code is there.
        if not any(
            gap.component == EXECUTION_IDENTITY and gap.code == PROJECTION_INVALID
            for gap in run.gaps
        ):
            gaps.append(
                EvidenceGap(
                    EXECUTION_IDENTITY, PROJECTION_INVALID, _PROJECTION_INVALID_MESSAGE
                ).to_json()
            )
        return gaps
    if run.execution_id is None and not any(
        gap.component == EXECUTION_IDENTITY for gap in run.gaps
    ):
        reason = run.execution_gap_reason or (
            _SESSION_ONLY_REASON if run.kind == "session" else _UNRECORDED_OWNER_REASON
        )
        gaps.insert(0, EvidenceGap(EXECUTION_IDENTITY, OWNER_NOT_RECORDED, reason).to_json())
    return gaps


def _span_json(span: Span, owner_dropped: bool) -> dict[str, Any]:
    value = span.to_json()
    if owner_dropped:
        value["metadata"].pop(EXECUTION_ATTRIBUTE, None)
    return value


def project_run_record(run: RunSpec, events: Sequence[SessionEvent]) -> dict[str, Any]:
    """The run record of ``run``, projected from its session's ``events``.

    Pure: the same spec and events always give the same record.  A
    session-backed record always carries ``metadata.completion_receipt``,
    copied verbatim from the latest ``completion_receipt`` session attribute
    (JSON ``null`` when absent or explicitly null); a record without a session
    omits the key.  A null ``execution_id`` comes with an ``execution_identity``
    gap.  An ``execution_id`` that is not Harn-owned (:func:`is_harn_execution_id`)
    is projected as Harn projects it: ``null``, without the flight artifact and
    the spans' ``harn.execution.id``, with an ``execution_identity`` /
    ``projection_invalid`` gap.  The record is checked against ``run-record.record`` before it is
    returned.

    Raises ``ValueError`` when an event belongs to another session (or there
    is no session but there are events), and :class:`InvalidDocument` when the
    spec would produce a record the contract refuses: a run or session id as
    ``execution_id`` (``execution_id_relabelled``), a span owned by another
    execution (``span_execution_mismatch``), spans that are not a forest
    (``span_id_duplicate``, ``span_cycle``), or any
    schema finding.
    """
    foreign = [event.id for event in events if event.session_id != run.session_id]
    if foreign:
        raise ValueError(
            f"events {foreign[:5]} do not belong to session {run.session_id!r}; "
            "project one session's events"
        )
    # Harn applies its identity rule when it projects evidence: an owner that is not
    # Harn's is dropped with its artifact and the spans' copies of it, never refused.
    owner_dropped = run.execution_id is not None and not is_harn_execution_id(run.execution_id)
    findings = [
        *_relabel_findings(run, events),
        *([] if owner_dropped else _span_owner_findings(run)),
        *span_tree_findings(run.spans, ("evidence", "trace_spans")),
    ]
    if findings:
        raise InvalidDocument(sorted(findings))
    metadata: dict[str, Any] = {}
    if run.session_id is not None:
        metadata[COMPLETION_RECEIPT] = latest_completion_receipt(events)
    record: dict[str, Any] = {
        "id": run.record_id,
        "kind": run.kind,
        "session_id": run.session_id,
        "status": run.status,
        "metadata": metadata,
        "evidence": {
            "schema_version": EVIDENCE_SCHEMA_VERSION,
            "execution_id": None if owner_dropped else run.execution_id,
            "trace_spans": [_span_json(span, owner_dropped) for span in run.spans],
            "flight_recording": (
                None
                if run.flight_recording is None or owner_dropped
                else run.flight_recording.to_json()
            ),
            "gaps": _gaps(run, owner_dropped),
        },
    }
    problems = default_validator().validate(RECORD_DOCUMENT_TYPE, record)
    if problems:
        raise InvalidDocument(problems)
    return record


# --------------------------------------------------------------------------- readers

ReceiptState = Literal["recorded", "not_recorded", "historical"]


@dataclass(frozen=True, slots=True)
class CompletionReceipt:
    """How a consumer reads ``metadata.completion_receipt``.

    * ``recorded``: a non-null receipt, to interpret by the producing owner's
      schema (``value``);
    * ``not_recorded``: JSON ``null``, no receipt was recorded;
    * ``historical``: the key is missing, the record predates the projection
      contract (or was not produced from a session) and says nothing either way.
    """

    state: ReceiptState
    value: Any = None


def read_completion_receipt(record: Mapping[str, Any]) -> CompletionReceipt:
    """Classify a record's completion receipt (see :class:`CompletionReceipt`)."""
    metadata = record.get("metadata")
    if not isinstance(metadata, Mapping) or COMPLETION_RECEIPT not in metadata:
        return CompletionReceipt("historical")
    value = metadata[COMPLETION_RECEIPT]
    if value is None:
        return CompletionReceipt("not_recorded")
    return CompletionReceipt("recorded", thaw_json(value))


def evidence_is_partial(record_or_evidence: Mapping[str, Any]) -> bool:
    """Whether the evidence is partial: any gap at all, never silently complete.

    Takes a run record or its ``evidence`` object.  Evidence without a
    ``gaps`` list cannot vouch for its completeness and counts as partial.
    """
    evidence = record_or_evidence.get("evidence", record_or_evidence)
    gaps = evidence.get("gaps") if isinstance(evidence, Mapping) else None
    return not isinstance(gaps, list) or bool(gaps)
