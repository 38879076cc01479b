"""Run records (seed 003): records, spans, provider responses and the event log; the
reference producer answers with them, so they are the oracle producers are compared against.

* :func:`project_run_record` projects a ``run-record.record`` from a
  :class:`RunSpec` and the session's canonical events (completion receipt,
  execution evidence, span tree); :func:`read_completion_receipt` and
  :func:`evidence_is_partial` say how a consumer reads one.
* :func:`build_tree` joins ``parent_span_id`` to ``span_id``;
  :func:`load_historical` loads records that wrote ``parent_id``.
* :func:`provider_call_response` builds a model response's redacted payload
  (normalized tool-call parse, reference or inline, decoded loop state).
* :func:`append_provider_call_response`, :func:`read_by_execution_id`, :func:`read_session` and
  :func:`tape_entry` are the I/O edge: the SQLite journal and JSONL envelopes.

``docs/runrecord.md`` specifies each rule and the decisions taken where the
seed is silent.
"""

from session_contracts.runrecord.eventlog import (
    LLM_TOPIC,
    PROVIDER_CALL_RESPONSE_KIND,
    TAPE_ENTRY_DOCUMENT_TYPE,
    TAPE_RECORD_DOCUMENT_TYPE,
    append_provider_call_response,
    next_event_id,
    provider_call_response_event,
    read_by_execution_id,
    read_session,
    tape_entry,
    tape_line,
    tape_record,
    tape_record_line,
)
from session_contracts.runrecord.record import (
    COMPLETION_RECEIPT,
    EVIDENCE_SCHEMA_VERSION,
    EXECUTION_ID_RELABELLED,
    EXECUTION_IDENTITY,
    FLIGHT_RECORDING_FORMAT,
    OWNER_NOT_RECORDED,
    PROJECTION_INVALID,
    RECORD_KINDS,
    SPAN_EXECUTION_MISMATCH,
    CompletionReceipt,
    EvidenceGap,
    ExecutionOwner,
    FlightRecording,
    ReceiptState,
    RecordKind,
    RunSpec,
    evidence_is_partial,
    execution_owner,
    is_harn_execution_id,
    latest_completion_receipt,
    project_run_record,
    read_completion_receipt,
)
from session_contracts.runrecord.responses import (
    LOOP_STATE_BEGIN,
    LOOP_STATE_END,
    LOOP_STATE_MALFORMED,
    PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE,
    TOOL_CALL_UNPARSED,
    TOOL_CALLS_REFERENCE,
    ParsedResponse,
    decode_loop_state,
    parse_provider_response,
    parse_tool_calls,
    provider_call_response,
    resolve_parsed_tool_calls,
)
from session_contracts.runrecord.spans import (
    EXECUTION_ATTRIBUTE,
    RECORD_DOCUMENT_TYPE,
    SPAN_CYCLE,
    SPAN_DOCUMENT_TYPE,
    SPAN_ID_DUPLICATE,
    Span,
    SpanTree,
    build_tree,
    load_historical,
    span_tree_findings,
)

__all__ = [
    "COMPLETION_RECEIPT",
    "EVIDENCE_SCHEMA_VERSION",
    "EXECUTION_ATTRIBUTE",
    "EXECUTION_IDENTITY",
    "EXECUTION_ID_RELABELLED",
    "FLIGHT_RECORDING_FORMAT",
    "LLM_TOPIC",
    "LOOP_STATE_BEGIN",
    "LOOP_STATE_END",
    "LOOP_STATE_MALFORMED",
    "OWNER_NOT_RECORDED",
    "PROJECTION_INVALID",
    "PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE",
    "PROVIDER_CALL_RESPONSE_KIND",
    "RECORD_DOCUMENT_TYPE",
    "RECORD_KINDS",
    "SPAN_CYCLE",
    "SPAN_DOCUMENT_TYPE",
    "SPAN_EXECUTION_MISMATCH",
    "SPAN_ID_DUPLICATE",
    "TAPE_ENTRY_DOCUMENT_TYPE",
    "TAPE_RECORD_DOCUMENT_TYPE",
    "TOOL_CALLS_REFERENCE",
    "TOOL_CALL_UNPARSED",
    "CompletionReceipt",
    "EvidenceGap",
    "ExecutionOwner",
    "FlightRecording",
    "ParsedResponse",
    "ReceiptState",
    "RecordKind",
    "RunSpec",
    "Span",
    "SpanTree",
    "append_provider_call_response",
    "build_tree",
    "decode_loop_state",
    "evidence_is_partial",
    "execution_owner",
    "is_harn_execution_id",
    "latest_completion_receipt",
    "load_historical",
    "next_event_id",
    "parse_provider_response",
    "parse_tool_calls",
    "project_run_record",
    "provider_call_response",
    "provider_call_response_event",
    "read_by_execution_id",
    "read_completion_receipt",
    "read_session",
    "resolve_parsed_tool_calls",
    "span_tree_findings",
    "tape_entry",
    "tape_line",
    "tape_record",
    "tape_record_line",
]
