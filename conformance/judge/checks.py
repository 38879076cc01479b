"""The catalogue of checks: one :class:`Check` a rule, carrying all of it.

A check has a stable id, a level, its contract and operation, a title and the seed
sentence it enforces (``session-contracts checks`` lists them); its judge (how a case's
answer is compared with the reference's, :mod:`.judges`); its trials (the random cases,
drawn from :mod:`.cases.operations`); and its explicit cases (the decisive inputs sent
first, at every setting, from :mod:`.cases`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from session_contracts.conformance.judge import judges
from session_contracts.conformance.judge.cases import (
    draws,
    explicit,
    hashes,
    limits,
    redaction,
    regressions,
    sameness,
    stored,
)
from session_contracts.conformance.judge.cases import operations as strategies
from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.conformance.judge.trials import Trial

__all__ = ["CHECKS", "RUN_ORDER", "Check", "check_by_id", "in_run_order"]

# The random cases of a check, given the producer's contracts and operations: one strategy,
# or one per operation (each then gets its own cases).
TrialPlan = Callable[
    [tuple[str, ...], tuple[str, ...]],
    "st.SearchStrategy[Trial] | list[st.SearchStrategy[Trial]]",
]
_BUILT: dict[str, tuple[ExplicitCase, ...]] = {}


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    level: str  # "required" | "recommended"
    contract: str  # a contract name, or "all"
    operation: str
    title: str
    seed: str  # the normative sentence (or where it is)
    judge: Callable[[judges.Runner, Trial], None] = field(repr=False, compare=False)
    trials: TrialPlan = field(repr=False, compare=False)
    explicit: Callable[[], list[ExplicitCase]] = field(repr=False, compare=False)

    def explicit_cases(self) -> Sequence[ExplicitCase]:
        """The explicit cases, in order (built once, on first use)."""
        if self.id not in _BUILT:
            _BUILT[self.id] = tuple(self.explicit())
        return _BUILT[self.id]


def _trials(operation: str, strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Trial]:
    return strategy.map(lambda case_input: Trial(operation, case_input))


def _every_operation(
    claimed: tuple[str, ...], declared: tuple[str, ...]
) -> list[st.SearchStrategy[Trial]]:
    """One strategy per supported operation: a cross-cutting check runs its cases
    on each operation in turn, so no operation is left to chance."""
    options: list[st.SearchStrategy[Trial]] = []
    if "document.roundtrip" in declared:
        options.append(_trials("document.roundtrip", strategies.roundtrip_inputs(claimed)))
    if "health.reduce" in declared:
        options.append(_trials("health.reduce", strategies.health_streams()))
    if "feedback.run" in declared:
        options.append(_trials("feedback.run", strategies.feedback_steps()))
    if "recap.project" in declared:
        options.append(_trials("recap.project", strategies.recap_cases()))
    if "runrecord.project" in declared:
        options.append(_trials("runrecord.project", strategies.run_projections()))
    if "runrecord.provider_call_response" in declared:
        options.append(_trials("runrecord.provider_call_response", strategies.provider_responses()))
    if not options:
        raise judges.Skip("the producer supports none of the operations this check exercises")
    return options


def _drawn(operation: str, build: Callable[[], st.SearchStrategy[Any]]) -> TrialPlan:
    """The trials of a check that draws every case of one operation from one strategy."""
    return lambda claimed, declared: _trials(operation, build())


def _with_canary(build: Callable[..., st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Cases of ``build`` with a canary secret planted, of each detector kind in turn."""
    return st.sampled_from(sorted(_canary_texts())).flatmap(lambda canary: build(canary=canary))


def _canary_texts() -> list[str]:
    from session_contracts.redaction.canaries import canaries

    return list(canaries().values())


def _lookalike_texts() -> list[str]:
    from session_contracts.redaction.canaries import lookalikes

    return list(lookalikes().values())


def _redaction_vector_trials() -> list[st.SearchStrategy[Trial]]:
    """One strategy per policy and detector group of the redaction vectors, so every
    detector is tried at any number of examples."""
    from session_contracts.redaction.vectors import vector_groups

    return [_trials("redaction.apply", draws.pick(cases)) for _, cases in vector_groups()]


def _redaction_apply_edges() -> list[ExplicitCase]:
    from session_contracts.conformance.judge.cases.redaction import apply_edge_cases

    return apply_edge_cases()


def _all(*builders: Callable[[], list[ExplicitCase]]) -> Callable[[], list[ExplicitCase]]:
    return lambda: [case for build in builders for case in build()]


def _none() -> list[ExplicitCase]:
    return []


def _check(
    id: str,
    contract: str,
    operation: str,
    title: str,
    seed: str,
    *,
    judge: Callable[[judges.Runner, Trial], None],
    cases: Callable[[], st.SearchStrategy[Any]] | None = None,
    trials: TrialPlan | None = None,
    level: str = "required",
    explicit: Callable[[], list[ExplicitCase]] = _none,
) -> Check:
    """A catalogue entry, named with its operation once: its random cases are ``cases`` of
    that operation (the usual plan), or else ``trials``."""
    plan = trials if cases is None else _drawn(operation, cases)
    if plan is None or (cases is not None and trials is not None):
        raise TypeError(f"{id}: give exactly one of cases and trials")
    return Check(
        id, level, contract, operation, title, seed, judge=judge, trials=plan, explicit=explicit
    )


CHECKS: tuple[Check, ...] = (
    _check(
        "roundtrip.identity",
        "all",
        "document.roundtrip",
        "a valid document decodes and re-encodes to the same JSON value",
        "002: typed bindings preserve [extensions] when they decode and re-encode a snapshot",
        judge=judges.judge_roundtrip_identity,
        trials=lambda claimed, declared: _trials(
            "document.roundtrip", strategies.roundtrip_inputs(claimed)
        ),
        explicit=_all(limits.document_limit_cases, explicit.golden("document.roundtrip")),
    ),
    _check(
        "closed.unknown-field-rejected",
        "all",
        "document.roundtrip",
        "an unknown field at any object path outside extensions is rejected",
        "002: The schema-v1 write contract is closed. A writer must reject unknown fields",
        judge=judges.judge_unknown_field,
        trials=lambda claimed, declared: _trials(
            "document.roundtrip", strategies.unknown_field_inputs(claimed)
        ),
        explicit=_all(
            explicit.unknown_members, explicit.builtin_members, regressions.document_cases
        ),
    ),
    _check(
        "extensions.verbatim",
        "session-recap",
        "document.roundtrip",
        "extensions survive decode and encode verbatim, nested values and nulls included",
        "002: Forward-compatible data belongs in the extensions object, which typed bindings "
        "preserve when they decode and re-encode a snapshot",
        judge=judges.judge_extensions,
        cases=strategies.extension_inputs,
        explicit=explicit.extension_values,
    ),
    _check(
        "schema.output",
        "all",
        "*",
        "every output validates against its contract, x- rules included",
        "000/001/002/003: the generated contracts",
        judge=judges.judge_schema,
        trials=_every_operation,
    ),
    _check(
        "determinism.same-bytes",
        "all",
        "*",
        "the same case twice gives the same canonical bytes",
        "002: Session recaps are deterministic, read-only projections",
        judge=judges.judge_determinism,
        trials=_every_operation,
    ),
    _check(
        "health.semantics",
        "session-health",
        "health.reduce",
        "facts equal the reference reducer's for the same observation stream (streams "
        "without a transcript reset)",
        "000: every measurement rule (rates, exclusions, gauges, populations)",
        judge=judges.judge_semantics,
        cases=strategies.health_streams,
        explicit=_all(
            explicit.health_streams,
            explicit.golden("health.reduce", lambda case: not explicit.has_reset(case)),
            limits.health_limit_cases,
            sameness.diagnostic_cases,
            sameness.health_state_cases,
        ),
    ),
    _check(
        "health.no-zero-rate",
        "session-health",
        "health.reduce",
        "without qualifying observations a rate is null, never a zero rate",
        "000: no qualifying observations produce null, not a zero rate",
        judge=judges.judge_no_zero_rate,
        cases=strategies.health_streams,
        explicit=explicit.rate_streams,
    ),
    # Recommended: Harn's runtime has no reset path (its reset_transcript never
    # touches health), so a producer doing what Harn does is certified without it.
    _check(
        "health.transcript-reset",
        "session-health",
        "health.reduce",
        "a transcript reset empties the rolling population and keeps the session gauges, "
        "the current iteration and the counted call and command ids",
        "000: Resetting the session transcript resets these observations.",
        judge=judges.judge_semantics,
        cases=strategies.reset_streams,
        level="recommended",
        explicit=_all(
            explicit.reset_streams,
            explicit.golden("health.reduce", explicit.has_reset),
            regressions.health_cases,
        ),
    ),
    _check(
        "feedback.semantics",
        "session-feedback",
        "feedback.run",
        "receipts, rejections and work.observe equal the reference store's",
        "001: replay, replacement, usage ordering and counter rules, freshness",
        judge=judges.judge_semantics,
        cases=strategies.feedback_steps,
        explicit=_all(
            explicit.feedback_runs,
            explicit.golden("feedback.run"),
            limits.feedback_limit_cases,
            sameness.usage_sample_cases,
            sameness.replay_cases,
            sameness.feedback_state_cases,
            regressions.feedback_cases,
        ),
    ),
    _check(
        "runrecord.semantics",
        "run-record",
        "runrecord.project",
        "run records equal the reference projection (receipt, evidence, gaps, span tree)",
        "003: Session-backed run records always carry metadata.completion_receipt; Harn does "
        "not relabel a run or session ID as an execution ID",
        judge=judges.judge_semantics,
        cases=strategies.run_projections,
        explicit=_all(
            explicit.run_projections,
            explicit.run_identities,
            explicit.golden("runrecord.project"),
            regressions.runrecord_cases,
        ),
    ),
    _check(
        "runrecord.response-semantics",
        "run-record",
        "runrecord.provider_call_response",
        "provider_call_response payloads equal the reference (tool-call parse, loop_state)",
        "003: Booleans, numbers, null, and nil become JSON primitives; other values remain "
        "strings. The field is null when no complete block exists",
        judge=judges.judge_semantics,
        cases=strategies.provider_responses,
        explicit=_all(
            explicit.provider_responses,
            explicit.golden("runrecord.provider_call_response"),
            redaction.provider_rule_cases,
            redaction.provider_key_cases,
            limits.provider_response_limit_cases,
        ),
    ),
    _check(
        "runrecord.reference-when-identical",
        "run-record",
        "runrecord.provider_call_response",
        "parsed_tool_calls_ref exactly when a non-empty parse equals tool_calls",
        "003: When a non-empty view is structurally identical to the provider-native tool_calls "
        "array, the response stores parsed_tool_calls_ref",
        judge=judges.judge_reference_rule,
        cases=strategies.provider_responses,
        explicit=_all(explicit.provider_responses, sameness.tool_call_cases),
    ),
    _check(
        "redaction.canaries",
        "run-record",
        "runrecord.provider_call_response",
        "a canary secret of every detector kind planted in the text never reaches the output",
        "003: These projections are redacted by the same transcript policy as text before they "
        "reach SQLite",
        judge=judges.judge_canaries,
        cases=lambda: _with_canary(strategies.provider_responses),
        explicit=_all(explicit.provider_canaries, redaction.provider_alone_cases),
    ),
    _check(
        "recap.semantics",
        "session-recap",
        "recap.project",
        "envelopes equal the reference projection (grouping, coverage, cursor, reasons)",
        "002: A recap groups visible prompts, assistant text, tool exchanges, plans, progress, "
        "and terminal facts by prompt turn and agent-loop iteration",
        judge=judges.judge_semantics,
        cases=strategies.recap_cases,
        explicit=_all(
            explicit.recap_pages,
            explicit.recap_text,
            explicit.recap_blank_ids,
            explicit.recap_numbers,
            explicit.recap_harn_read_numbers,
            explicit.golden("recap.project", lambda case: not explicit.is_stored(case)),
            limits.recap_limit_cases,
            sameness.exchange_cases,
            regressions.recap_cases,
            redaction.recap_rule_cases,
        ),
    ),
    _check(
        "recap.hashes",
        "session-recap",
        "recap.project",
        "every record hash, contentHash and projectionHash recomputes (Harn's canonical JSON)",
        "002: source.events identifies each contributing canonical event by ID and record hash. "
        "contentHash binds the source content. projectionHash binds ...",
        judge=judges.judge_recap_hashes,
        cases=strategies.recap_cases,
        explicit=_all(
            explicit.recap_pages,
            explicit.recap_numbers,
            explicit.recap_harn_read_numbers,
            hashes.hash_cases,
        ),
    ),
    _check(
        "recap.limit",
        "session-recap",
        "recap.project",
        "the read is bounded by limit (4,096 by default, clamped into 1..32,768); the echo "
        "keeps the limit as received",
        "002: Harn defaults to 4,096 and clamps the effective bound into 1 through 32,768",
        judge=judges.judge_recap_limit,
        cases=strategies.recap_cases,
        explicit=_all(explicit.recap_pages, regressions.recap_limit_cases),
    ),
    _check(
        "recap.query-aliases",
        "session-recap",
        "recap.project",
        "a query in snake-case aliases gives the same envelope as in camelCase",
        "002: Both accept snake-case aliases for query fields",
        judge=judges.judge_query_aliases,
        cases=strategies.recap_cases,
        explicit=explicit.recap_aliases,
    ),
    _check(
        "redaction.recap-canaries",
        "session-recap",
        "recap.project",
        "a canary secret of every detector kind in a journal text never reaches the snapshot",
        "002: Public text is redacted through Harn's active redaction policy before it "
        "reaches the snapshot",
        judge=judges.judge_canaries,
        cases=lambda: _with_canary(strategies.recap_cases),
        explicit=_all(explicit.recap_canaries, redaction.recap_alone_cases),
    ),
    _check(
        "redaction.lookalikes-survive",
        "session-recap",
        "recap.project",
        "text that only resembles a secret (a public key, `sk-` in prose) stays intact",
        "002: Public text is redacted through Harn's active redaction policy (redaction removes "
        "secrets, not the text around them)",
        judge=judges.judge_lookalikes,
        trials=lambda claimed, declared: _trials(
            "recap.project",
            st.sampled_from(sorted(_lookalike_texts())).flatmap(
                lambda text: strategies.recap_cases(canary=text).map(
                    lambda case: {**case, "lookalike": text}
                )
            ),
        ),
        level="recommended",
    ),
    _check(
        "redaction.apply",
        "all",
        "redaction.apply",
        "every redaction vector (docs/vectors/redaction.json) redacts to exactly the reference's "
        "text or value; a failure names the detector",
        "002: Public text is redacted through Harn's active redaction policy before it "
        "reaches the snapshot",
        judge=judges.judge_redaction_apply,
        trials=lambda claimed, declared: _redaction_vector_trials(),
        explicit=_all(_redaction_apply_edges, explicit.golden("redaction.apply")),
    ),
    _check(
        "feedback.usage-never-summed",
        "session-feedback",
        "feedback.run",
        "work.observe reports the latest usage snapshot, never a sum",
        "001: AWR retains snapshots but does not sum them",
        judge=judges.judge_usage_not_summed,
        cases=strategies.feedback_steps,
        explicit=explicit.usage_runs,
    ),
    _check(
        "health.a2a-preserves-state",
        "session-health",
        "health.a2a_status_update",
        "an A2A status update carries the fact verbatim and keeps the task's current state",
        "000: A2A task streams carry the same fact in metadata.harn.sessionHealth on a standard "
        "status update, preserving the current task state",
        judge=judges.judge_semantics,
        cases=strategies.a2a_cases,
        explicit=explicit.golden("health.a2a_status_update"),
    ),
    _check(
        "recap.stored-events",
        "session-recap",
        "recap.project",
        "a session given as Harn's stored events (storedEvents) projects as Harn's recap reads "
        "its store: headers, raw-message fallbacks, null versus absent, plans, per-session ids",
        "002: Session recaps are deterministic, read-only projections over the canonical "
        "session journal (as Harn's store holds it: docs/recap.md section 11)",
        judge=judges.judge_semantics,
        cases=lambda: st.one_of(
            strategies.recap_stored_cases(), _with_canary(strategies.recap_stored_cases)
        ),
        explicit=_all(
            stored.stored_event_cases,
            explicit.recap_stored_harn_read_numbers,
            explicit.golden("recap.project", explicit.is_stored),
        ),
    ),
    _check(
        "recap.unavailable-states",
        "session-recap",
        "recap.project",
        "a journal that is not available, a runtime that refuses the read and a damaged row "
        "read by the query give the seed's unavailable reasons",
        "002: journal_unavailable: The canonical session journal isn't available. "
        "projection_failed: Harn couldn't derive the deterministic projection. "
        "admission_terminal: The owning runtime couldn't admit the read.",
        judge=judges.judge_semantics,
        cases=strategies.recap_condition_cases,
    ),
)


#: The order certify runs the checks in, by contract: the contracts whose cases are smallest
#: first, and last the checks of every contract (hundreds of documents, every operation's
#: outputs); within a contract, its semantics check (``*.semantics``, the most cases) after
#: its checks of one rule, else the catalogue's order. A producer that breaks is told so
#: within seconds, not after the document round trip's 871 cases, and nothing the first
#: check does not need is built before its result. Reports keep the catalogue's order.
RUN_ORDER = ("session-health", "session-feedback", "run-record", "session-recap", "all")


def in_run_order(checks: Sequence[Check]) -> list[Check]:
    """``checks`` in the order certify runs them (:data:`RUN_ORDER`)."""
    return sorted(
        checks,
        key=lambda check: (RUN_ORDER.index(check.contract), check.id.endswith(".semantics")),
    )


def check_by_id(check_id: str) -> Check | None:
    return next((check for check in CHECKS if check.id == check_id), None)
