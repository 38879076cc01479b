"""The document types the library names in code, in one table.

A document type is ``CONTRACT.KIND``: an entry of a schema's ``x-documentTypes``
(``SchemaSet.from_texts``, listed by ``session-contracts doctypes``).  The schemas define
them; this table only spells the names the library's modules validate or decode against,
and a unit test holds every name here to the bundled schemas.  The seed packages
re-export their own (``session_contracts.health.FACT_DOCUMENT_TYPE``, ...).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "A2A_DOCUMENT_TYPE",
    "ACP_DOCUMENT_TYPE",
    "ENVELOPE_DOCUMENT_TYPE",
    "EVENT_DOCUMENT_TYPE",
    "FACT_DOCUMENT_TYPE",
    "FEEDBACK_CHECKPOINT_DOCUMENT_TYPE",
    "FEEDBACK_START_DOCUMENT_TYPE",
    "OBSERVATION_DOCUMENT_TYPE",
    "PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE",
    "QUERY_DOCUMENT_TYPE",
    "RECORD_DOCUMENT_TYPE",
    "SNAPSHOT_DOCUMENT_TYPE",
    "SPAN_DOCUMENT_TYPE",
    "STORED_EVENT_DOCUMENT_TYPE",
    "STREAM_DOCUMENT_TYPE",
    "TAPE_ENTRY_DOCUMENT_TYPE",
    "TAPE_RECORD_DOCUMENT_TYPE",
]

# health-observation.schema.json: the reducer's input.
OBSERVATION_DOCUMENT_TYPE: Final = "health-observation.observation"
STREAM_DOCUMENT_TYPE: Final = "health-observation.stream"

# session-health.schema.json: the reducer's output and the two envelopes that carry it.
FACT_DOCUMENT_TYPE: Final = "session-health.fact"
ACP_DOCUMENT_TYPE: Final = "session-health.acp-notification"
A2A_DOCUMENT_TYPE: Final = "session-health.a2a-status-update"

# session-feedback.schema.json: the two requests the feedback rules check.
FEEDBACK_START_DOCUMENT_TYPE: Final = "session-feedback.start"
FEEDBACK_CHECKPOINT_DOCUMENT_TYPE: Final = "session-feedback.checkpoint"

# session-recap-v1.schema.json.
QUERY_DOCUMENT_TYPE: Final = "session-recap.query"
SNAPSHOT_DOCUMENT_TYPE: Final = "session-recap.snapshot"
ENVELOPE_DOCUMENT_TYPE: Final = "session-recap.envelope"

# run-record.schema.json.
RECORD_DOCUMENT_TYPE: Final = "run-record.record"
SPAN_DOCUMENT_TYPE: Final = "run-record.span"
PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE: Final = "run-record.provider-call-response"
TAPE_ENTRY_DOCUMENT_TYPE: Final = "run-record.tape-entry"
TAPE_RECORD_DOCUMENT_TYPE: Final = "run-record.tape-record"

# session-event.schema.json: an event as the journal takes it, and as Harn's session
# store holds it (docs/journal.md, "As Harn stores it").
EVENT_DOCUMENT_TYPE: Final = "session-event.event"
STORED_EVENT_DOCUMENT_TYPE: Final = "session-event.stored"
