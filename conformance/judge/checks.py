"""The catalogue of checks: each with a stable id, a level, its contract and
the seed sentence it enforces.  ``session-contracts checks`` lists it; the
judges that decide a case live in :mod:`session_contracts.conformance.judge.certify`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHECKS", "Check", "check_by_id"]


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    level: str  # "required" | "recommended"
    contract: str  # a contract name, or "all"
    operation: str
    title: str
    seed: str  # the normative sentence (or where it is)


CHECKS: tuple[Check, ...] = (
    Check(
        "roundtrip.identity",
        "required",
        "all",
        "document.roundtrip",
        "a valid document decodes and re-encodes to the same JSON value",
        "002: typed bindings preserve [extensions] when they decode and re-encode a snapshot",
    ),
    Check(
        "closed.unknown-field-rejected",
        "required",
        "all",
        "document.roundtrip",
        "an unknown field at any object path outside extensions is rejected",
        "002: The schema-v1 write contract is closed. A writer must reject unknown fields",
    ),
    Check(
        "extensions.verbatim",
        "required",
        "session-recap",
        "document.roundtrip",
        "extensions survive decode and encode verbatim, nested values and nulls included",
        "002: Forward-compatible data belongs in the extensions object, which typed bindings "
        "preserve when they decode and re-encode a snapshot",
    ),
    Check(
        "schema.output",
        "required",
        "all",
        "*",
        "every output validates against its contract, x- rules included",
        "000/001/002/003: the generated contracts",
    ),
    Check(
        "determinism.same-bytes",
        "required",
        "all",
        "*",
        "the same case twice gives the same canonical bytes",
        "002: Session recaps are deterministic, read-only projections",
    ),
    Check(
        "health.semantics",
        "required",
        "session-health",
        "health.reduce",
        "facts equal the reference reducer's for the same observation stream (streams "
        "without a transcript reset)",
        "000: every measurement rule (rates, exclusions, gauges, populations)",
    ),
    Check(
        "health.no-zero-rate",
        "required",
        "session-health",
        "health.reduce",
        "without qualifying observations a rate is null, never a zero rate",
        "000: no qualifying observations produce null, not a zero rate",
    ),
    # Recommended: Harn's runtime has no reset path (its reset_transcript never
    # touches health), so a producer doing what Harn does is certified without it.
    Check(
        "health.transcript-reset",
        "recommended",
        "session-health",
        "health.reduce",
        "a transcript reset empties the rolling population and keeps the session gauges, "
        "the current iteration and the counted call and command ids",
        "000: Resetting the session transcript resets these observations.",
    ),
    Check(
        "feedback.semantics",
        "required",
        "session-feedback",
        "feedback.run",
        "receipts, rejections and work.observe equal the reference store's",
        "001: replay, replacement, usage ordering and counter rules, freshness",
    ),
    Check(
        "runrecord.semantics",
        "required",
        "run-record",
        "runrecord.project",
        "run records equal the reference projection (receipt, evidence, gaps, span tree)",
        "003: Session-backed run records always carry metadata.completion_receipt; Harn does "
        "not relabel a run or session ID as an execution ID",
    ),
    Check(
        "runrecord.response-semantics",
        "required",
        "run-record",
        "runrecord.provider_call_response",
        "provider_call_response payloads equal the reference (tool-call parse, loop_state)",
        "003: Booleans, numbers, null, and nil become JSON primitives; other values remain "
        "strings. The field is null when no complete block exists",
    ),
    Check(
        "runrecord.reference-when-identical",
        "required",
        "run-record",
        "runrecord.provider_call_response",
        "parsed_tool_calls_ref exactly when a non-empty parse equals tool_calls",
        "003: When a non-empty view is structurally identical to the provider-native tool_calls "
        "array, the response stores parsed_tool_calls_ref",
    ),
    Check(
        "redaction.canaries",
        "required",
        "run-record",
        "runrecord.provider_call_response",
        "a canary secret of every detector kind planted in the text never reaches the output",
        "003: These projections are redacted by the same transcript policy as text before they "
        "reach SQLite",
    ),
    Check(
        "recap.semantics",
        "required",
        "session-recap",
        "recap.project",
        "envelopes equal the reference projection (grouping, coverage, cursor, reasons)",
        "002: A recap groups visible prompts, assistant text, tool exchanges, plans, progress, "
        "and terminal facts by prompt turn and agent-loop iteration",
    ),
    Check(
        "recap.hashes",
        "required",
        "session-recap",
        "recap.project",
        "every record hash, contentHash and projectionHash recomputes (Harn's canonical JSON)",
        "002: source.events identifies each contributing canonical event by ID and record hash. "
        "contentHash binds the source content. projectionHash binds ...",
    ),
    Check(
        "recap.limit",
        "required",
        "session-recap",
        "recap.project",
        "the read is bounded by limit (4,096 by default, clamped into 1..32,768); the echo "
        "keeps the limit as received",
        "002: Harn defaults to 4,096 and clamps the effective bound into 1 through 32,768",
    ),
    Check(
        "recap.query-aliases",
        "required",
        "session-recap",
        "recap.project",
        "a query in snake-case aliases gives the same envelope as in camelCase",
        "002: Both accept snake-case aliases for query fields",
    ),
    Check(
        "redaction.recap-canaries",
        "required",
        "session-recap",
        "recap.project",
        "a canary secret of every detector kind in a journal text never reaches the snapshot",
        "002: Public text is redacted through Harn's active redaction policy before it "
        "reaches the snapshot",
    ),
    Check(
        "redaction.lookalikes-survive",
        "recommended",
        "session-recap",
        "recap.project",
        "text that only resembles a secret (a public key, `sk-` in prose) stays intact",
        "002: Public text is redacted through Harn's active redaction policy (redaction removes "
        "secrets, not the text around them)",
    ),
    Check(
        "redaction.apply",
        "required",
        "all",
        "redaction.apply",
        "every redaction vector (docs/vectors/redaction.json) redacts to exactly the reference's "
        "text or value; a failure names the detector",
        "002: Public text is redacted through Harn's active redaction policy before it "
        "reaches the snapshot",
    ),
    Check(
        "feedback.usage-never-summed",
        "required",
        "session-feedback",
        "feedback.run",
        "work.observe reports the latest usage snapshot, never a sum",
        "001: AWR retains snapshots but does not sum them",
    ),
    Check(
        "health.a2a-preserves-state",
        "required",
        "session-health",
        "health.a2a_status_update",
        "an A2A status update carries the fact verbatim and keeps the task's current state",
        "000: A2A task streams carry the same fact in metadata.harn.sessionHealth on a standard "
        "status update, preserving the current task state",
    ),
    Check(
        "recap.stored-events",
        "required",
        "session-recap",
        "recap.project",
        "a session given as Harn's stored events (storedEvents) projects as Harn's recap reads "
        "its store: headers, raw-message fallbacks, null versus absent, plans, per-session ids",
        "002: Session recaps are deterministic, read-only projections over the canonical "
        "session journal (as Harn's store holds it: docs/recap.md section 11)",
    ),
    Check(
        "recap.unavailable-states",
        "required",
        "session-recap",
        "recap.project",
        "a journal that is not available, a runtime that refuses the read and a damaged row "
        "read by the query give the seed's unavailable reasons",
        "002: journal_unavailable: The canonical session journal isn't available. "
        "projection_failed: Harn couldn't derive the deterministic projection. "
        "admission_terminal: The owning runtime couldn't admit the read.",
    ),
)


def check_by_id(check_id: str) -> Check | None:
    return next((check for check in CHECKS if check.id == check_id), None)
