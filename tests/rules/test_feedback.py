"""The reference session-feedback store: one test per rule of seed 001, plus properties.

Every response goes through the generated bindings (``decode``), so a test
also fails when the store answers outside the contract.  Times come from a
fake clock, so every report time, age and receipt is asserted exactly.
"""

from __future__ import annotations

import copy
import json
import random
import socket
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_contracts import feedback
from session_contracts.bindings import decode
from session_contracts.errors import InvalidDocument
from session_contracts.feedback import (
    CONTRACT_VERSION,
    STALE_AFTER_MS,
    USAGE_FUTURE_TOLERANCE_MS,
    Accept,
    CheckpointPrior,
    FeedbackStore,
    FeedbackStoreError,
    Rejection,
    UsagePrior,
    capabilities,
    decide_checkpoint,
    parse_checkpoint,
)

T0 = 1_700_000_000_000
SESSION = "sess-01"
SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "session-feedback.schema.json"

CLIENT_A: dict[str, Any] = {
    "product": "Example Agent",
    "version": "1.2.3",
    "model": {"id": "example-model", "provider": "example", "source": "host_metadata"},
    "capabilities": {"model": "supported", "usage": "supported", "progress": "supported"},
}
CLIENT_B: dict[str, Any] = {"product": "Other Agent"}
PROGRESS: dict[str, Any] = {
    "phase": "testing",
    "summary": "Atomic writes implemented; durability checks are next.",
    "completed": ["Implemented atomic storage writes"],
    "blockers": [],
    "artifacts": [{"label": "Implementation", "reference": "src/store.rs"}],
    "tests": [{"name": "durability", "outcome": "not_run"}],
}


class FakeClock:
    """Server time in unix ms, moved only by the test."""

    def __init__(self, now: int = T0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "feedback.db"


@pytest.fixture
def store(db: Path, clock: FakeClock) -> Iterator[FeedbackStore]:
    with FeedbackStore.open(db, clock=clock) as opened:
        yield opened


# ------------------------------------------------------------------- helpers


def start_request(
    request_id: str = "req-start", *, session_id: str = SESSION, client_info: Any = None
) -> dict[str, Any]:
    request: dict[str, Any] = {"request_id": request_id, "session_id": session_id}
    if client_info is not None:
        request["client_info"] = copy.deepcopy(client_info)
    return request


def checkpoint_request(
    version: int,
    request_id: str,
    *,
    session_id: str = SESSION,
    client_info: Any = None,
    progress: Any = None,
    usage: Any = None,
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "request_id": request_id,
        "session_id": session_id,
        "session_version": version,
        "context_hash": "ctx-9f2",
        "next_action": "Run the durability checks.",
        "open_loops": ["durability"],
    }
    for name, value in (("client_info", client_info), ("progress", progress), ("usage", usage)):
        if value is not None:
            request[name] = copy.deepcopy(value)
    return request


def usage_sample(
    observed_at: int,
    *,
    counter_id: str = "counter-1",
    source: str = "native_host_event",
    input_tokens: int | None = 4000,
    output_tokens: int | None = 500,
    cached_input_tokens: int | None = None,
) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "source": source,
        "counter_id": counter_id,
        "scope": "host_session",
        "coverage": "partial",
        "observed_at_unix_ms": observed_at,
    }
    for name, value in (
        ("input_tokens", input_tokens),
        ("output_tokens", output_tokens),
        ("cached_input_tokens", cached_input_tokens),
    ):
        if value is not None:
            usage[name] = value
    return usage


def checked(response: dict[str, Any]) -> dict[str, Any]:
    """The response, after proving it is a receipt or a rejection of the contract."""
    kind = "checkpoint-rejection" if "code" in response else "checkpoint-receipt"
    decode(f"session-feedback.{kind}", response)
    return response


def accepted(response: dict[str, Any]) -> dict[str, Any]:
    checked(response)
    assert "code" not in response, response
    assert response["replayed"] is False
    return response


def assert_rejected(response: dict[str, Any], code: str, path: str) -> None:
    checked(response)
    assert (response.get("code"), response.get("path")) == (code, path), response


def observe(store: FeedbackStore, session_id: str = SESSION, **options: Any) -> dict[str, Any]:
    options.setdefault("reader_can_read_raw_receipts", False)
    observation = store.observe(session_id, **options)
    decode("session-feedback.observation", observation)
    return observation


def started(store: FeedbackStore, *, client_info: Any = None) -> dict[str, Any]:
    return accepted(store.start(start_request(client_info=client_info)))


def dump(db: Path) -> list[str]:
    connection = sqlite3.connect(db)
    try:
        return list(connection.iterdump())
    finally:
        connection.close()


def meta(
    checkpoint_id: str,
    reported_at: int,
    age_ms: int,
    *,
    source: str | None = None,
    stale_reasons: tuple[str, ...] = (),
    contract_match: bool = True,
) -> dict[str, Any]:
    return {
        "checkpoint_id": checkpoint_id,
        "reported_at_unix_ms": reported_at,
        "provenance": {"declared_by": "client", "source": source},
        "contract_version": CONTRACT_VERSION,
        "contract_match": contract_match,
        "age_ms": age_ms,
        "stale": bool(stale_reasons),
        "stale_reasons": list(stale_reasons),
    }


def schema_enum(name: str) -> list[str]:
    enum: list[str] = json.loads(SCHEMA.read_text())["$defs"][name]["enum"]
    return enum


# ------------------------------------------------------- schema and x- rules


@pytest.mark.sentence("feedback.missing-reasons")
def test_rejection_codes_and_missing_reasons_are_the_schema_enums() -> None:
    assert list(feedback.REJECTION_CODES) == schema_enum("RejectionCode")
    assert list(feedback.MISSING_REASONS) == schema_enum("MissingReason")


@pytest.mark.sentence("feedback.capabilities-version")
def test_capabilities_advertise_feedback_version_one() -> None:
    document = capabilities()
    decode("session-feedback.capabilities", document)
    assert document == {"session_feedback": {"version": 1}}


def test_schema_errors_are_invalid_request_with_the_finding_path(store: FeedbackStore) -> None:
    started(store)
    request = checkpoint_request(0, "req-1")
    request["surprise"] = True
    response = store.checkpoint(request)
    assert_rejected(response, "invalid_request", "$.surprise")
    assert response["request_id"] == "req-1"
    assert "[unknown_field]" in response["message"]


@pytest.mark.sentence("feedback.next-action-open-loops-required")
def test_next_action_and_open_loops_remain_required(store: FeedbackStore) -> None:
    started(store)
    for member in ("next_action", "open_loops"):
        request = checkpoint_request(0, "req-1")
        del request[member]
        assert_rejected(store.checkpoint(request), "invalid_request", f"$.{member}")
    accepted(store.checkpoint(checkpoint_request(0, "req-1")))


@pytest.mark.sentence("feedback.client-info-optional", "feedback.model-source")
def test_start_is_validated_against_the_schema(store: FeedbackStore) -> None:
    request = start_request(client_info={"product": "Agent", "model": {"id": "m"}})
    assert_rejected(store.start(request), "invalid_request", "$.client_info.model.source")
    assert_rejected(
        store.start(start_request(client_info={"product": "x" * 257})),
        "limit_exceeded",
        "$.client_info.product",
    )


@pytest.mark.sentence("feedback.summary-limit")
def test_summary_limit_is_utf8_bytes(store: FeedbackStore) -> None:
    started(store)
    at_limit = dict(PROGRESS, summary="é" * 1024)  # 1,024 characters, 2,048 bytes
    accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=at_limit)))
    over = dict(PROGRESS, summary="é" * 1024 + "a")  # 1,025 characters, 2,049 bytes
    response = store.checkpoint(checkpoint_request(1, "req-2", progress=over))
    assert_rejected(response, "limit_exceeded", "$.progress.summary")
    assert "2,049 UTF-8 bytes" in response["message"]


@pytest.mark.sentence("feedback.list-and-entry-limits")
@pytest.mark.parametrize("member", ["completed", "blockers", "artifacts", "tests"])
def test_list_limit_is_eight_entries(store: FeedbackStore, member: str) -> None:
    started(store)
    entry = {
        "completed": "done",
        "blockers": "waiting",
        "artifacts": {"label": "a", "reference": "r"},
        "tests": {"name": "t", "outcome": "passed"},
    }[member]
    eight = dict(PROGRESS, **{member: [entry] * 8})
    accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=eight)))
    nine = dict(PROGRESS, **{member: [entry] * 9})
    assert_rejected(
        store.checkpoint(checkpoint_request(1, "req-2", progress=nine)),
        "limit_exceeded",
        f"$.progress.{member}",
    )


@pytest.mark.sentence("feedback.list-and-entry-limits", "feedback.usage-label-limits")
@pytest.mark.parametrize(
    ("where", "limit", "path"),
    [
        ("completed", 1024, "$.progress.completed[0]"),
        ("blockers", 1024, "$.progress.blockers[0]"),
        ("artifact_label", 256, "$.progress.artifacts[0].label"),
        ("artifact_reference", 1024, "$.progress.artifacts[0].reference"),
        ("test_name", 256, "$.progress.tests[0].name"),
        ("test_reference", 1024, "$.progress.tests[0].reference"),
        ("usage_source", 128, "$.usage.source"),
        ("usage_counter_id", 128, "$.usage.counter_id"),
        ("usage_source_ref", 1024, "$.usage.source_ref"),
    ],
)
def test_entry_limits_are_utf8_bytes(
    store: FeedbackStore, clock: FakeClock, where: str, limit: int, path: str
) -> None:
    started(store)

    def request(text: str, request_id: str, version: int) -> dict[str, Any]:
        progress = copy.deepcopy(PROGRESS)
        usage = usage_sample(clock.now)
        if where in ("completed", "blockers"):
            progress[where] = [text]
        elif where.startswith("artifact_"):
            progress["artifacts"] = [{"label": "l", "reference": "r", where[9:]: text}]
        elif where.startswith("test_"):
            progress["tests"] = [{"name": "n", "outcome": "failed", where[5:]: text}]
        else:
            usage[where[6:]] = text
        return checkpoint_request(version, request_id, progress=progress, usage=usage)

    # "€" is three UTF-8 bytes: limit // 3 of them and the rest ASCII hits the limit exactly.
    exact = "€" * (limit // 3) + "a" * (limit % 3)
    accepted(store.checkpoint(request(exact, "req-1", 0)))
    clock.advance(1)
    assert_rejected(store.checkpoint(request("€" + exact[:-1], "req-2", 1)), "limit_exceeded", path)


@pytest.mark.sentence("feedback.safe-integers")
def test_usage_integers_must_be_safe_integer_literals(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store)
    for value in (2**53, 5.0, True, -1):
        request = checkpoint_request(0, "req-1", usage=usage_sample(clock.now, input_tokens=1))
        request["usage"]["input_tokens"] = value
        assert_rejected(store.checkpoint(request), "invalid_request", "$.usage.input_tokens")
    accepted(
        store.checkpoint(
            checkpoint_request(0, "req-1", usage=usage_sample(clock.now, input_tokens=2**53 - 1))
        )
    )


@pytest.mark.sentence("feedback.input-or-output-required")
def test_usage_needs_input_or_output_and_cached_within_input(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store)
    neither = usage_sample(clock.now, input_tokens=None, output_tokens=None)
    assert_rejected(
        store.checkpoint(checkpoint_request(0, "req-1", usage=neither)),
        "invalid_request",
        "$.usage",
    )
    cached_over = usage_sample(clock.now, input_tokens=10, cached_input_tokens=11)
    assert_rejected(
        store.checkpoint(checkpoint_request(0, "req-1", usage=cached_over)),
        "invalid_request",
        "$.usage.cached_input_tokens",
    )
    output_only = usage_sample(clock.now, input_tokens=None, output_tokens=7)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=output_only)))


def test_rejection_names_request_id_only_when_it_is_valid(store: FeedbackStore) -> None:
    started(store)
    response = store.checkpoint(checkpoint_request(0, "r" * 257))
    assert_rejected(response, "limit_exceeded", "$.request_id")
    assert response["request_id"] is None
    not_an_object = store.checkpoint(["req-1"])
    assert_rejected(not_an_object, "invalid_request", "$")
    assert not_an_object["request_id"] is None


def test_non_json_request_is_invalid_request(store: FeedbackStore) -> None:
    started(store)
    for request in (
        {"request_id": "req-1", "session_id": SESSION, "context_hash": object()},
        {"request_id": "req-1", 1: "a non-string key"},
    ):
        response = store.checkpoint(request)
        assert_rejected(response, "invalid_request", "$")
        assert response["request_id"] == "req-1"
        assert response["message"].startswith("the request is not a JSON value")


# ---------------------------------------------------------- client declaration


@pytest.mark.sentence("feedback.declaration-replace-preserve")
@pytest.mark.parametrize(
    ("declaration", "client", "model"),
    [
        pytest.param(
            {"client_info": CLIENT_B},
            {"state": "reported", "report": meta("ckpt-2", T0 + 1_000, 1_000), "value": CLIENT_B},
            # Replaced, not merged: CLIENT_B has no model and no capabilities.
            {"state": "missing", "reason": "client_capability_unknown"},
            id="supplied-replaces",
        ),
        pytest.param(
            {},
            {"state": "reported", "report": meta("ckpt-1", T0, 2_000), "value": CLIENT_A},
            {
                "state": "reported",
                "report": meta("ckpt-1", T0, 2_000, source="host_metadata"),
                "value": CLIENT_A["model"],
            },
            id="omitted-preserves",
        ),
    ],
)
def test_a_client_declaration_supplied_replaces_and_omitted_preserves_the_previous(
    store: FeedbackStore,
    clock: FakeClock,
    declaration: dict[str, Any],
    client: dict[str, Any],
    model: dict[str, Any],
) -> None:
    started(store, client_info=CLIENT_A)
    clock.advance(1_000)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", **declaration)))
    clock.advance(1_000)
    observation = observe(store)
    assert observation["client"] == client
    assert observation["model"] == model


@pytest.mark.sentence("feedback.omit-unknown-fields")
@pytest.mark.parametrize("unknown", ["version", "model.id", "model.provider"])
@pytest.mark.parametrize("placeholder", [None, ""])
def test_an_unknown_version_or_model_field_is_omitted_not_sent_empty(
    store: FeedbackStore, unknown: str, placeholder: Any
) -> None:
    # "Omit unknown version/model fields": a null or empty placeholder is refused at its path.
    client = copy.deepcopy(CLIENT_A)
    member, _, inner = unknown.partition(".")
    if inner:
        client[member][inner] = placeholder
    else:
        client[member] = placeholder
    response = store.start(start_request(client_info=client))
    assert_rejected(response, "invalid_request", f"$.client_info.{unknown}")


@pytest.mark.sentence("feedback.omit-unknown-fields")
def test_omitted_version_and_model_fields_are_observed_as_omitted(
    store: FeedbackStore, clock: FakeClock
) -> None:
    # Nothing is filled in for what the client left out: no guessed model name, no version.
    client = {"product": "Example Agent", "model": {"source": "client_configuration"}}
    started(store, client_info=client)
    observation = observe(store)
    assert observation["client"]["value"] == client
    assert observation["model"]["value"] == {"source": "client_configuration"}
    clock.advance(1_000)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", client_info=CLIENT_B)))
    assert observe(store)["client"]["value"] == CLIENT_B
    assert observe(store)["model"] == {"state": "missing", "reason": "client_capability_unknown"}


@pytest.mark.sentence("feedback.reported-not-verified", "feedback.no-fetching")
def test_progress_outcomes_and_references_are_reported_never_fetched(
    store: FeedbackStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # "These are reported outcomes and references, not verified evidence. No files or URLs
    # are fetched automatically": references to nothing are kept as sent, and the store
    # opens no file and no connection while it accepts and shows them.
    missing = tmp_path / "never-written.log"
    progress = dict(
        PROGRESS,
        artifacts=[
            {"label": "log", "reference": str(missing)},
            {"label": "ci", "reference": "https://ci.invalid/run/7"},
        ],
        tests=[{"name": "durability", "outcome": "passed", "reference": str(missing)}],
    )
    touched: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        touched.append(repr(args[:2]))
        raise AssertionError(f"the store reached out: {args[:2]!r}")

    started(store)
    real_open = open

    def watched_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(missing):
            refuse(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", watched_open)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=progress)))
    shown = observe(store)["progress"]
    assert touched == []
    assert not missing.exists()
    assert shown["state"] == "reported"
    assert shown["value"] == progress
    assert shown["report"]["provenance"]["declared_by"] == "client"


@pytest.mark.sentence("feedback.model-source", "feedback.report-meta")
def test_model_provenance_names_the_declared_source(store: FeedbackStore, clock: FakeClock) -> None:
    configured = dict(CLIENT_A, model={"id": "requested-model", "source": "client_configuration"})
    started(store, client_info=configured)
    observation = observe(store)
    assert observation["model"]["report"]["provenance"] == {
        "declared_by": "client",
        "source": "client_configuration",
    }
    assert observation["client"]["report"]["provenance"] == {
        "declared_by": "client",
        "source": None,
    }


# -------------------------------------------------------------- session version


@pytest.mark.sentence("feedback.existing-checks-apply")
def test_start_creates_session_at_version_zero(store: FeedbackStore) -> None:
    assert started(store) == {
        "request_id": "req-start",
        "session_id": SESSION,
        "checkpoint_id": "ckpt-1",
        "session_version": 0,
        "reported_at_unix_ms": T0,
        "replayed": False,
    }


@pytest.mark.sentence("feedback.existing-checks-apply")
def test_accepted_checkpoint_increments_session_version(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store)
    versions = []
    for version in range(3):
        clock.advance(10)
        versions.append(accepted(store.checkpoint(checkpoint_request(version, f"req-{version}"))))
    assert [(r["session_version"], r["checkpoint_id"]) for r in versions] == [
        (1, "ckpt-2"),
        (2, "ckpt-3"),
        (3, "ckpt-4"),
    ]


@pytest.mark.sentence("feedback.existing-checks-apply")
def test_checkpoint_must_name_current_session_version(store: FeedbackStore) -> None:
    started(store)
    assert_rejected(
        store.checkpoint(checkpoint_request(1, "req-1")),
        "session_version_conflict",
        "$.session_version",
    )
    accepted(store.checkpoint(checkpoint_request(0, "req-1")))
    response = store.checkpoint(checkpoint_request(0, "req-2"))
    assert_rejected(response, "session_version_conflict", "$.session_version")
    assert response["message"] == "session_version 0 is not the session's current version 1"


@pytest.mark.sentence("feedback.existing-checks-apply")
def test_checkpoint_on_unknown_session_is_session_missing(store: FeedbackStore) -> None:
    assert_rejected(
        store.checkpoint(checkpoint_request(0, "req-1", session_id="sess-unknown")),
        "session_missing",
        "$.session_id",
    )


@pytest.mark.sentence("feedback.existing-checks-apply")
def test_start_of_existing_session_is_version_conflict(store: FeedbackStore) -> None:
    started(store)
    assert_rejected(
        store.start(start_request("req-start-again")), "session_version_conflict", "$.session_id"
    )


# ------------------------------------------------------------------- replay


@pytest.mark.sentence("feedback.duplicate-replay")
def test_duplicate_request_replays_original_receipt(
    store: FeedbackStore, clock: FakeClock, db: Path
) -> None:
    started(store)
    clock.advance(1_000)
    request = checkpoint_request(0, "req-1", progress=PROGRESS, usage=usage_sample(clock.now))
    original = accepted(store.checkpoint(request))
    clock.advance(5_000)
    before, observed = dump(db), observe(store)
    replayed = checked(store.checkpoint(copy.deepcopy(request)))
    assert replayed == {**original, "replayed": True}
    assert replayed["reported_at_unix_ms"] == T0 + 1_000
    assert dump(db) == before
    assert observe(store) == observed
    # The replay did not move the session: the next checkpoint still names version 1.
    assert accepted(store.checkpoint(checkpoint_request(1, "req-2")))["session_version"] == 2


@pytest.mark.sentence("feedback.duplicate-replay")
def test_duplicate_start_replays_original_receipt(store: FeedbackStore, clock: FakeClock) -> None:
    original = started(store, client_info=CLIENT_A)
    clock.advance(60_000)
    replay = checked(store.start(start_request(client_info=CLIENT_A)))
    assert replay == {**original, "replayed": True}


@pytest.mark.sentence("feedback.existing-checks-apply", "feedback.duplicate-replay")
def test_same_request_id_different_body_is_request_conflict(store: FeedbackStore, db: Path) -> None:
    started(store)
    accepted(store.checkpoint(checkpoint_request(0, "req-1")))
    before = dump(db)
    changed = checkpoint_request(0, "req-1", progress=PROGRESS)
    assert_rejected(store.checkpoint(changed), "request_conflict", "$.request_id")
    # A start's request_id is used too: the same id on a checkpoint conflicts.
    assert_rejected(
        store.checkpoint(checkpoint_request(1, "req-start")), "request_conflict", "$.request_id"
    )
    assert dump(db) == before


@pytest.mark.sentence("feedback.existing-checks-apply")
def test_request_id_is_scoped_to_its_session(store: FeedbackStore) -> None:
    started(store)
    accepted(store.start(start_request(session_id="sess-02")))
    first = accepted(store.checkpoint(checkpoint_request(0, "req-1")))
    second = accepted(store.checkpoint(checkpoint_request(0, "req-1", session_id="sess-02")))
    assert (first["checkpoint_id"], second["checkpoint_id"]) == ("ckpt-3", "ckpt-4")


# --------------------------------------------------------------------- usage


@pytest.mark.sentence("feedback.older-and-conflicting-rejected")
def test_older_usage_observation_rejected_across_counters(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store)
    clock.advance(10_000)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=usage_sample(clock.now))))
    older_elsewhere = usage_sample(clock.now - 1, counter_id="counter-2", input_tokens=1)
    response = store.checkpoint(checkpoint_request(1, "req-2", usage=older_elsewhere))
    assert_rejected(response, "usage_older_observation", "$.usage.observed_at_unix_ms")
    # The same reading is accepted once it is not older than the session's latest.
    newer = usage_sample(clock.now + 1, counter_id="counter-2", input_tokens=1)
    accepted(store.checkpoint(checkpoint_request(1, "req-2", usage=newer)))


@pytest.mark.sentence("feedback.older-and-conflicting-rejected")
def test_conflicting_same_time_sample_rejected(store: FeedbackStore, clock: FakeClock) -> None:
    started(store)
    sample = usage_sample(clock.now, input_tokens=100, output_tokens=10)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=sample)))
    same_time_other_counter = dict(sample, counter_id="counter-2")
    same_time_other_values = dict(sample, input_tokens=101)
    for number, conflicting in enumerate((same_time_other_counter, same_time_other_values)):
        assert_rejected(
            store.checkpoint(checkpoint_request(1, f"req-x{number}", usage=conflicting)),
            "usage_conflicting_sample",
            "$.usage",
        )


@pytest.mark.sentence(
    "feedback.older-and-conflicting-rejected", "feedback.usage-freshness-host-time"
)
def test_identical_same_time_sample_is_accepted(store: FeedbackStore, clock: FakeClock) -> None:
    started(store)
    sample = usage_sample(clock.now, input_tokens=100, output_tokens=10)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=sample)))
    clock.advance(1_000)
    again = accepted(store.checkpoint(checkpoint_request(1, "req-2", usage=sample)))
    usage = observe(store)["usage"]
    assert usage["report"]["checkpoint_id"] == again["checkpoint_id"] == "ckpt-3"
    assert usage["report"]["age_ms"] == 1_000  # still aged from the host measurement


@pytest.mark.sentence("feedback.decreasing-counter-rejected")
def test_decreasing_counter_rejected_reset_needs_new_counter_id(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store)
    first = usage_sample(clock.now, input_tokens=100, output_tokens=50, cached_input_tokens=20)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=first)))
    for number, (field, value) in enumerate(
        (("input_tokens", 99), ("output_tokens", 49), ("cached_input_tokens", 19))
    ):
        lower = dict(first, observed_at_unix_ms=clock.now + 1 + number, **{field: value})
        response = store.checkpoint(checkpoint_request(1, f"req-d{number}", usage=lower))
        assert_rejected(response, "usage_counter_decreased", f"$.usage.{field}")
    reset = usage_sample(
        clock.now + 10, counter_id="counter-1-reset", input_tokens=5, output_tokens=1
    )
    accepted(store.checkpoint(checkpoint_request(1, "req-2", usage=reset)))


@pytest.mark.sentence("feedback.decreasing-counter-rejected")
def test_decrease_is_judged_per_source_and_counter(store: FeedbackStore, clock: FakeClock) -> None:
    started(store)
    accepted(
        store.checkpoint(
            checkpoint_request(0, "req-1", usage=usage_sample(clock.now, input_tokens=100))
        )
    )
    other_source = usage_sample(clock.now + 1, source="sdk_counter", input_tokens=1)
    accepted(store.checkpoint(checkpoint_request(1, "req-2", usage=other_source)))
    # A field the counter omits is not compared; the one it reported still is.
    without_input = usage_sample(clock.now + 2, input_tokens=None, output_tokens=600)
    accepted(store.checkpoint(checkpoint_request(2, "req-3", usage=without_input)))
    back_lower = usage_sample(clock.now + 3, input_tokens=99, output_tokens=600)
    assert_rejected(
        store.checkpoint(checkpoint_request(3, "req-4", usage=back_lower)),
        "usage_counter_decreased",
        "$.usage.input_tokens",
    )


@pytest.mark.sentence("feedback.future-timestamp-rejected")
def test_future_timestamp_beyond_five_minutes_rejected(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store)
    beyond = usage_sample(clock.now + USAGE_FUTURE_TOLERANCE_MS + 1)
    response = store.checkpoint(checkpoint_request(0, "req-1", usage=beyond))
    assert_rejected(response, "usage_future_timestamp", "$.usage.observed_at_unix_ms")
    at_tolerance = usage_sample(clock.now + 300_000)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=at_tolerance)))
    # Observed ahead of the query time: the age floors at zero.
    assert observe(store)["usage"]["report"]["age_ms"] == 0


@pytest.mark.sentence(
    "feedback.usage-cumulative-snapshot",
    "feedback.usage-retained-not-summed",
    "feedback.raw-events-not-added",
)
def test_usage_is_never_summed(store: FeedbackStore, clock: FakeClock, db: Path) -> None:
    started(store)
    first = usage_sample(clock.now, counter_id="counter-1", input_tokens=100, output_tokens=10)
    second = usage_sample(clock.now + 1, counter_id="counter-2", input_tokens=50, output_tokens=5)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", usage=first)))
    accepted(store.checkpoint(checkpoint_request(1, "req-2", usage=second)))
    third = dict(first, observed_at_unix_ms=clock.now + 2, input_tokens=150)
    accepted(store.checkpoint(checkpoint_request(2, "req-3", usage=third)))
    usage = observe(store)["usage"]
    # The latest snapshot verbatim: not 150 + 50, not 150 - 100, not split across work.
    assert usage["value"] == third
    assert usage["report"]["checkpoint_id"] == "ckpt-4"
    connection = sqlite3.connect(db)
    try:
        retained = connection.execute(
            "SELECT counter_id, input_tokens FROM usage_snapshots ORDER BY checkpoint_seq"
        ).fetchall()
    finally:
        connection.close()
    assert retained == [("counter-1", 100), ("counter-2", 50), ("counter-1", 150)]


# ------------------------------------------------------------- writes nothing


@pytest.mark.sentence(
    "feedback.existing-checks-apply",
    "feedback.older-and-conflicting-rejected",
    "feedback.decreasing-counter-rejected",
    "feedback.future-timestamp-rejected",
)
def test_rejected_checkpoint_writes_nothing(
    store: FeedbackStore, clock: FakeClock, db: Path
) -> None:
    started(store, client_info=CLIENT_A)
    accepted(
        store.checkpoint(
            checkpoint_request(0, "req-1", progress=PROGRESS, usage=usage_sample(clock.now))
        )
    )
    clock.advance(1_000)
    before, observed = dump(db), observe(store, reader_can_read_raw_receipts=True)
    feedback: dict[str, Any] = {
        "client_info": CLIENT_B,
        "progress": dict(PROGRESS, phase="blocked"),
    }
    refused = [
        (checkpoint_request(1, "req-2", **feedback, usage={"source": "x"}), "invalid_request"),
        (checkpoint_request(5, "req-2", **feedback), "session_version_conflict"),
        (checkpoint_request(0, "req-1", **feedback), "request_conflict"),
        (checkpoint_request(0, "req-2", session_id="nope", **feedback), "session_missing"),
        (
            checkpoint_request(1, "req-2", **feedback, usage=usage_sample(T0 - 1)),
            "usage_older_observation",
        ),
        (
            checkpoint_request(1, "req-2", **feedback, usage=usage_sample(T0, input_tokens=1)),
            "usage_conflicting_sample",
        ),
        (
            checkpoint_request(1, "req-2", **feedback, usage=usage_sample(T0 + 1, input_tokens=1)),
            "usage_counter_decreased",
        ),
        (
            checkpoint_request(1, "req-2", **feedback, usage=usage_sample(clock.now + 300_001)),
            "usage_future_timestamp",
        ),
    ]
    for request, code in refused:
        assert checked(store.checkpoint(request))["code"] == code
    assert dump(db) == before
    assert observe(store, reader_can_read_raw_receipts=True) == observed


# ---------------------------------------------------------------- observation


@pytest.mark.sentence("feedback.later-checkpoint-preserves-report")
def test_later_checkpoint_without_feedback_keeps_report_and_timestamp(
    store: FeedbackStore, clock: FakeClock
) -> None:
    started(store, client_info=CLIENT_A)
    clock.advance(1_000)
    usage = usage_sample(clock.now - 200)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=PROGRESS, usage=usage)))
    for version in (1, 2):
        clock.advance(60_000)
        accepted(store.checkpoint(checkpoint_request(version, f"req-{version + 1}")))
    observation = observe(store)
    assert observation["progress"] == {
        "state": "reported",
        "report": meta("ckpt-2", T0 + 1_000, 120_000),
        "value": PROGRESS,
    }
    assert observation["usage"] == {
        "state": "reported",
        "report": meta("ckpt-2", T0 + 1_000, 120_200, source="native_host_event"),
        "value": usage,
    }


@pytest.mark.sentence("feedback.stale")
def test_stale_after_fifteen_minutes(store: FeedbackStore, clock: FakeClock) -> None:
    started(store, client_info=CLIENT_A)
    clock.advance(STALE_AFTER_MS)
    assert observe(store)["client"]["report"] == meta("ckpt-1", T0, 900_000)
    clock.advance(1)
    assert observe(store)["client"]["report"] == meta(
        "ckpt-1", T0, 900_001, stale_reasons=("age_exceeded",)
    )


@pytest.mark.sentence("feedback.usage-freshness-host-time")
def test_usage_freshness_uses_host_measurement_time(store: FeedbackStore, clock: FakeClock) -> None:
    started(store)
    measured = clock.now - 800_000  # the host measured it long before it was ingested
    usage = usage_sample(measured)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=PROGRESS, usage=usage)))
    observation = observe(store)
    assert observation["usage"]["report"] == meta("ckpt-2", T0, 800_000, source="native_host_event")
    assert observation["progress"]["report"]["age_ms"] == 0
    clock.advance(100_001)
    observation = observe(store)
    assert observation["usage"]["report"] == meta(
        "ckpt-2", T0, 900_001, source="native_host_event", stale_reasons=("age_exceeded",)
    )
    assert observation["progress"]["report"] == meta("ckpt-2", T0, 100_001)


@pytest.mark.sentence("feedback.report-meta", "feedback.stale")
def test_contract_mismatch_marks_stale(store: FeedbackStore, clock: FakeClock) -> None:
    started(store, client_info=CLIENT_A)
    assert observe(store, contract_version=2)["client"]["report"] == meta(
        "ckpt-1", T0, 0, contract_match=False, stale_reasons=("contract_mismatch",)
    )
    clock.advance(900_001)
    assert observe(store, contract_version=2)["model"]["report"] == meta(
        "ckpt-1",
        T0,
        900_001,
        source="host_metadata",
        contract_match=False,
        stale_reasons=("contract_mismatch", "age_exceeded"),
    )


@pytest.mark.sentence("feedback.observed-at-query-time")
def test_observed_at_is_query_time(store: FeedbackStore, clock: FakeClock) -> None:
    started(store, client_info=CLIENT_A)
    clock.advance(1_234)
    assert observe(store)["observed_at_unix_ms"] == T0 + 1_234
    clock.advance(1)
    assert observe(store, "sess-unknown")["observed_at_unix_ms"] == T0 + 1_235


@pytest.mark.sentence("feedback.capability-states", "feedback.missing-reasons")
@pytest.mark.parametrize(
    ("declared", "reason"),
    [
        (None, "client_capability_unknown"),
        ({}, "client_capability_unknown"),
        (
            {"model": "unknown", "progress": "unknown", "usage": "unknown"},
            "client_capability_unknown",
        ),
        (
            {"model": "unsupported", "progress": "unsupported", "usage": "unsupported"},
            "client_collection_unsupported",
        ),
        (
            {"model": "supported", "progress": "supported", "usage": "supported"},
            "not_reported_by_client",
        ),
    ],
)
def test_missing_reasons(store: FeedbackStore, declared: Any, reason: str) -> None:
    client = None if declared is None else {"product": "Agent", "capabilities": declared}
    started(store, client_info=client)
    observation = observe(store)
    for slot in ("model", "progress", "usage"):
        assert observation[slot] == {"state": "missing", "reason": reason}
    nothing = observe(store, "sess-unknown")
    for slot in ("client", "model", "progress", "usage"):
        assert nothing[slot] == {"state": "missing", "reason": "no_session"}


@pytest.mark.sentence("feedback.old-clients-valid", "feedback.old-client-unknown-capability")
def test_old_client_is_unknown_capability_not_failure(store: FeedbackStore) -> None:
    started(store)  # no client_info: an old client
    accepted(store.checkpoint(checkpoint_request(0, "req-1")))  # no v1 fields at all
    observation = observe(store)
    for slot in ("client", "model", "progress", "usage"):
        assert observation[slot] == {"state": "missing", "reason": "client_capability_unknown"}


@pytest.mark.sentence("feedback.progress-by-checkpoint", "feedback.observe-exposes")
def test_report_is_shown_whatever_the_capability_says(
    store: FeedbackStore, clock: FakeClock
) -> None:
    unsupported = {"product": "Agent", "capabilities": {"progress": "unsupported"}}
    started(store, client_info=unsupported)
    accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=PROGRESS)))
    assert observe(store)["progress"]["value"] == PROGRESS


@pytest.mark.sentence("feedback.raw-receipts-gate", "feedback.raw-receipts-restricted")
def test_raw_receipts_permission_restricted(store: FeedbackStore, clock: FakeClock) -> None:
    start_receipt = started(store)
    clock.advance(10)
    request = checkpoint_request(0, "req-1")
    checkpoint_receipt = accepted(store.checkpoint(request))
    store.checkpoint(request)  # a replay adds no receipt
    assert observe(store)["raw_receipts"] == {"state": "missing", "reason": "permission_restricted"}
    assert observe(store, reader_can_read_raw_receipts=True)["raw_receipts"] == {
        "state": "available",
        "receipts": [start_receipt, checkpoint_receipt],
    }


@pytest.mark.sentence("feedback.raw-receipts-gate", "feedback.raw-receipts-restricted")
def test_raw_receipts_of_unknown_session(store: FeedbackStore) -> None:
    assert observe(store, "sess-unknown")["raw_receipts"] == {
        "state": "missing",
        "reason": "permission_restricted",
    }
    assert observe(store, "sess-unknown", reader_can_read_raw_receipts=True)["raw_receipts"] == {
        "state": "available",
        "receipts": [],
    }


@pytest.mark.sentence(
    "feedback.metadata-not-authentication",
    "feedback.metadata-grants-nothing",
    "feedback.phase-descriptive",
)
def test_feedback_metadata_grants_nothing(store: FeedbackStore, clock: FakeClock) -> None:
    started(store)
    clock.advance(10)
    claims = {"product": "Admin Console", "capabilities": {"model": "supported"}}
    progress = dict(PROGRESS, phase="ready_for_review", summary="Grant me raw receipts.")
    request = checkpoint_request(0, "req-1", client_info=claims, progress=progress)
    assert accepted(store.checkpoint(request))["session_version"] == 1  # moved by one, as always
    assert observe(store)["raw_receipts"] == {"state": "missing", "reason": "permission_restricted"}
    # A phase settles nothing: the session still takes ordinary checkpoints.
    assert accepted(store.checkpoint(checkpoint_request(1, "req-2")))["session_version"] == 2


def test_observe_refuses_an_invalid_session_id(store: FeedbackStore) -> None:
    with pytest.raises(InvalidDocument) as raised:
        store.observe("", reader_can_read_raw_receipts=False)
    assert [(f.path, f.code) for f in raised.value.findings] == [
        ("$.session_id", "invalid_request")
    ]


# ----------------------------------------------------------------- durability


def test_receipt_only_after_durable_commit(
    store: FeedbackStore, clock: FakeClock, db: Path
) -> None:
    assert store.durability == ("wal", "FULL")
    started(store)
    response = accepted(store.checkpoint(checkpoint_request(0, "req-1", progress=PROGRESS)))
    # Another connection sees the checkpoint as soon as the call returned:
    # it was committed inside the call, not later.
    other = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        stored = other.execute(
            "SELECT receipt FROM checkpoints WHERE checkpoint_id = ?", (response["checkpoint_id"],)
        ).fetchone()
    finally:
        other.close()
    assert json.loads(stored[0]) == response
    store.close()
    with FeedbackStore.open(db, clock=clock) as reopened:
        receipts = observe(reopened, reader_can_read_raw_receipts=True)["raw_receipts"]["receipts"]
        assert receipts[-1] == response
        assert observe(reopened)["progress"]["report"]["checkpoint_id"] == "ckpt-2"


def test_no_receipt_when_commit_cannot_happen(db: Path, clock: FakeClock) -> None:
    with FeedbackStore.open(db, clock=clock, busy_timeout_ms=20) as store:
        started(store)
        blocker = sqlite3.connect(db, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
            with pytest.raises(FeedbackStoreError) as raised:
                store.checkpoint(checkpoint_request(0, "req-1"))
            assert [f.code for f in raised.value.findings] == ["feedback_store_write_failed"]
            blocker.execute("ROLLBACK")
        finally:
            blocker.close()
        # Nothing was committed: the retry is a first acceptance, not a replay.
        assert accepted(store.checkpoint(checkpoint_request(0, "req-1")))["session_version"] == 1


def test_open_refuses_a_foreign_database(tmp_path: Path, clock: FakeClock) -> None:
    foreign = tmp_path / "other.db"
    connection = sqlite3.connect(foreign)
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    with pytest.raises(FeedbackStoreError) as raised:
        FeedbackStore.open(foreign, clock=clock)
    assert [f.code for f in raised.value.findings] == ["feedback_store_unavailable"]


def test_rules_decide_without_sqlite() -> None:
    request = parse_checkpoint(checkpoint_request(3, "req-9", usage=usage_sample(T0)))
    assert not isinstance(request, Rejection)
    peak = UsagePrior(T0 - 1, frozenset(), None)
    assert decide_checkpoint(request, CheckpointPrior(3, None, peak), now_ms=T0) == Accept(4, T0)
    assert decide_checkpoint(request, CheckpointPrior(None, None, peak), now_ms=T0) == Rejection(
        "req-9",
        "session_missing",
        "$.session_id",
        "there is no session 'sess-01'; start it with session.start",
    )


# ------------------------------------------------------------------ properties
#
# A random program runs against a fresh store: sess-a and sess-b are started,
# sess-c is not (until a drawn start names it).  Checkpoints mostly name the
# current version and a fresh request_id; some are off by one, reuse the last
# request_id with another body, or are sent again verbatim.  Usage snapshots
# come from two sources and two counters, mostly growing but sometimes lower
# (decreases), at times around the clock (older, same-time and future samples).

_SESSIONS = ("sess-a", "sess-b", "sess-c")
_CLIENTS = (CLIENT_A, CLIENT_B, {"product": "P", "capabilities": {"usage": "unsupported"}})
_EXAMPLES = max(50, settings().max_examples)


def _random_program(rng: random.Random) -> list[tuple[Any, ...]]:
    """About 40 operations with rates that make every rule fire now and then.

    Built from a seed that hypothesis draws: hypothesis's own choices lean
    towards the simplest values (the same op, zero, the first option), which
    rarely reach the usage rules.
    """
    operations: list[tuple[Any, ...]] = []
    tokens: dict[tuple[str, str], int] = {}
    for _ in range(rng.randint(4, 40)):
        roll = rng.random()
        if roll < 0.05:
            operations.append(("start", rng.choice(_SESSIONS), rng.choice((None, *_CLIENTS))))
        elif roll < 0.25:
            operations.append(("advance", rng.randint(0, 5_000)))
        elif roll < 0.37:
            operations.append(("repeat",))
        else:
            usage = None
            if rng.random() < 0.7:
                key = (rng.choice(("native_host_event", "sdk")), rng.choice(("c1", "c2")))
                # Mostly growing counters, sometimes lower (a decrease).
                tokens[key] = max(0, tokens.get(key, 0) + rng.randint(-3, 20))
                # Same time, earlier or later (each twice as often), or far off.
                at = rng.choice((0, 0, -1, 1, 1)) * rng.randint(1, 3_000)
                if rng.random() < 0.1:
                    at = rng.choice((-400_000, 300_000, 300_001))
                output = None if rng.random() < 0.2 else tokens[key] // 2
                cached = None if rng.random() < 0.6 else rng.randint(0, 8)  # may exceed input
                usage = (*key, at, tokens[key], output, cached)
            operations.append(
                (
                    "checkpoint",
                    rng.choice(_SESSIONS[:2]) if rng.random() < 0.9 else _SESSIONS[2],
                    0 if rng.random() < 0.85 else rng.choice((1, -1)),  # off the current version
                    rng.random() < 0.08,  # reuse the last request_id with this body
                    None if rng.random() < 0.7 else rng.choice(_CLIENTS),
                    None if rng.random() < 0.6 else PROGRESS,
                    usage,
                )
            )
    return operations


_PROGRAMS = st.integers(0, 2**32 - 1).map(lambda seed: _random_program(random.Random(seed)))


class _Run:
    """One program's requests and responses, and the store it ran against (still open)."""

    def __init__(self, store: FeedbackStore, clock: FakeClock) -> None:
        self.store = store
        self.clock = clock
        self.versions: dict[str, int] = {}
        self.sent: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.numbers = iter(range(1_000_000))

    def send(self, kind: str, request: dict[str, Any]) -> dict[str, Any]:
        response = checked(getattr(self.store, kind)(copy.deepcopy(request)))
        self.sent.append((kind, request, response))
        if "code" not in response and not response["replayed"]:
            session = request["session_id"]
            # Accepted: the version moves by exactly one (a start begins at 0).
            expected = 0 if kind == "start" else self.versions[session] + 1
            assert response["session_version"] == expected
            self.versions[session] = expected
        return response

    def originals(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        return [s for s in self.sent if "code" not in s[2] and not s[2]["replayed"]]

    def step(self, operation: tuple[Any, ...]) -> None:
        kind = operation[0]
        if kind == "advance":
            self.clock.advance(operation[1])
        elif kind == "repeat":
            if self.sent:
                self.send(self.sent[-1][0], self.sent[-1][1])
        elif kind == "start":
            _, session, client = operation
            request = start_request(f"req-{next(self.numbers)}", session_id=session)
            if client is not None:
                request["client_info"] = client
            self.send("start", request)
        else:
            _, session, offset, reuse_id, client, progress, usage = operation
            request_id = (
                self.sent[-1][1]["request_id"]
                if reuse_id and self.sent
                else f"req-{next(self.numbers)}"
            )
            sample = None
            if usage is not None:
                source, counter, at, input_tokens, output_tokens, cached = usage
                sample = usage_sample(
                    self.clock.now + at,
                    source=source,
                    counter_id=counter,
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    cached_input_tokens=cached,
                )
            version = max(0, self.versions.get(session, 0) + offset)
            self.send(
                "checkpoint",
                checkpoint_request(
                    version,
                    request_id,
                    session_id=session,
                    client_info=client,
                    progress=progress,
                    usage=sample,
                ),
            )


def _run_program(folder: str, operations: list[tuple[Any, ...]]) -> tuple[_Run, Path]:
    clock = FakeClock()
    db = Path(folder) / "feedback.db"
    run = _Run(FeedbackStore.open(db, clock=clock), clock)
    for session in ("sess-a", "sess-b"):
        run.send("start", start_request(f"req-start-{session}", session_id=session))
    for operation in operations:
        run.step(operation)
    return run, db


@settings(max_examples=_EXAMPLES)
@given(_PROGRAMS)
def test_every_response_validates_through_the_bindings(operations: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run, _ = _run_program(folder, operations)  # send() decodes every response
        try:
            for session in _SESSIONS:
                for permitted in (False, True):
                    for version in (1, 2):
                        observe(
                            run.store,
                            session,
                            reader_can_read_raw_receipts=permitted,
                            contract_version=version,
                        )
        finally:
            run.store.close()


@pytest.mark.sentence(
    "feedback.older-and-conflicting-rejected", "feedback.decreasing-counter-rejected"
)
@settings(max_examples=_EXAMPLES)
@given(_PROGRAMS)
def test_accepted_usage_never_decreases_per_counter(operations: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run, _ = _run_program(folder, operations)
        run.store.close()
    by_session: dict[str, list[dict[str, Any]]] = {}
    for _, request, _ in run.originals():
        if "usage" in request:
            by_session.setdefault(request["session_id"], []).append(request["usage"])
    for samples in by_session.values():
        times = [u["observed_at_unix_ms"] for u in samples]
        assert times == sorted(times)  # never older, across counters
        by_time: dict[int, dict[str, Any]] = {}
        for usage in samples:  # one sample per observation time, across counters
            assert by_time.setdefault(usage["observed_at_unix_ms"], usage) == usage
        peaks: dict[tuple[str, str, str], int] = {}
        for usage in samples:
            for field in ("input_tokens", "output_tokens", "cached_input_tokens"):
                if field in usage:
                    key = (usage["source"], usage["counter_id"], field)
                    assert usage[field] >= peaks.get(key, 0)
                    peaks[key] = usage[field]


@pytest.mark.sentence("feedback.duplicate-replay")
@settings(max_examples=_EXAMPLES)
@given(_PROGRAMS)
def test_replay_is_idempotent(operations: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run, db = _run_program(folder, operations)
        try:
            before = dump(db)
            observed = [observe(run.store, s, reader_can_read_raw_receipts=True) for s in _SESSIONS]
            for kind, request, response in run.originals():
                for _ in range(2):
                    assert run.send(kind, request) == {**response, "replayed": True}
            assert dump(db) == before
            assert [
                observe(run.store, s, reader_can_read_raw_receipts=True) for s in _SESSIONS
            ] == observed
        finally:
            run.store.close()
