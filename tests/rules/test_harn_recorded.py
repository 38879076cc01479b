"""Harn's own code is the oracle's oracle: the reference answers every recorded case as Harn did.

``conformance/recorded/`` (shipped with the package, for ``golden check --recorded``)
holds what Harn's Rust code (its recap projection and its session-health reducer,
compiled unchanged) answered for case inputs of the producer protocol; its README.md
says how they were made. The rule (that README, "The rule"; ``recorded.same_json``):
every case not tagged ``seed-differs`` agrees exactly, as a JSON value in which an
integer and a float differ. A case tagged
``seed-differs`` is where a seed sentence says what Harn's code does not do
(seed 000: "Resetting the session transcript resets these observations."): the
reference follows the seed there, and the test says so instead of skipping.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from session_contracts.cli import main
from session_contracts.conformance.judge.golden import GoldenCase
from session_contracts.conformance.judge.recorded import (
    RECORDINGS,
    SEED_DIFFERS,
    RecordedCase,
    default_recorded_dir,
    judge_recorded,
    replay_cases,
    same_json,
)
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.errors import InvalidDocument
from session_contracts.hashes.snapshot import record_hash
from session_contracts.journal import (
    SessionEvent,
    SqliteJournal,
    stored_event,
)
from session_contracts.recap import RecapService, recap_of_stored_events

RECORDED = default_recorded_dir()
SHARED_RECORDED = Path(__file__).resolve().parents[3] / "shared" / "upstream" / "harn" / "recorded"
FILES = RECORDINGS
# The sha256 of each uncompressed recording, as conformance/recorded/NOTICE.md gives it.
SHA256 = {
    "recap.jsonl.gz": "70c38704489f674282e25dc5b982ec01b955e2e29ffe803a20704f15f04045cf",
    "health.jsonl.gz": "ba0b6bdecde7babb46c97f9c5f807fac38f3750ccae5e4fae73cca9f6c0045e4",
}


@cache
def recorded_bytes(name: str) -> bytes:
    return gzip.decompress((RECORDED / name).read_bytes())


@cache
def cases(operation: str) -> tuple[dict[str, Any], ...]:
    lines = recorded_bytes(FILES[operation]).splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def answer(case: dict[str, Any]) -> Any:
    return HANDLERS[case["operation"]](case["input"])


def test_the_comparison_tells_an_integer_from_a_float() -> None:
    assert same_json({"a": 1.0, "b": [True]}, {"b": [True], "a": 1.0})
    assert not same_json({"a": 1.0}, {"a": 1})
    assert not same_json([-0.0], [0])
    assert not same_json([True], [1])


@pytest.mark.parametrize("name", sorted(SHA256))
def test_the_vendored_recordings_are_the_published_ones(name: str) -> None:
    data = recorded_bytes(name)
    assert hashlib.sha256(data).hexdigest() == SHA256[name]
    shared = SHARED_RECORDED / name.removesuffix(".gz")
    if shared.is_file():
        assert data == shared.read_bytes()


def test_the_corpus_is_whole() -> None:
    assert len(cases("recap.project")) == 299
    assert len(cases("health.reduce")) == 400
    assert (RECORDED / "README.md").is_file()
    assert (RECORDED / "NOTICE.md").is_file()
    # Harn's licence ships beside its recordings, the same text as the vendored contracts'.
    vendored_licence = Path(__file__).resolve().parents[1] / "fixtures/upstream/harn/LICENSE-MIT"
    assert (RECORDED / "LICENSE-MIT").read_bytes() == vendored_licence.read_bytes()


@pytest.mark.parametrize("operation", sorted(FILES))
def test_every_case_not_tagged_seed_differs_agrees_with_harn(operation: str) -> None:
    disagreeing = []
    for case in cases(operation):
        if "seed-differs" in case["tags"]:
            continue
        output = answer(case)
        if not same_json(output, case["harn_output"]):
            disagreeing.append(case["name"])
    assert disagreeing == [], f"{len(disagreeing)} recorded cases differ from Harn: {disagreeing}"


# -- the same sessions as Harn's store held them -------------------------------------------------


def recap_cases() -> tuple[dict[str, Any], ...]:
    return cases("recap.project")


def test_each_journal_event_maps_to_the_stored_event_harn_received() -> None:
    """docs/journal.md "As Harn stores it": the mapping the recordings were made with,
    member for member and in serde's member order; record hashes are the journal's."""
    for case in recap_cases():
        previous: dict[str, str] = {}
        mapped = []
        for event in case["input"]["events"]:
            record = record_hash(event)
            mapped.append(
                stored_event(event, record_hash=record, prev_hash=previous.get(event["sessionId"]))
            )
            previous[event["sessionId"]] = record
        assert same_json(mapped, case["harn_events"]), case["name"]
        assert [list(m) for m in mapped] == [list(e) for e in case["harn_events"]]


def test_every_recorded_session_read_from_harns_stored_events_agrees_with_harn() -> None:
    """The projection reads Harn's StoredEvent as session_recap.rs does (event_facts.rs
    pointers): the recorded stored events and query give Harn's answer."""
    disagreeing = []
    for case in recap_cases():
        outcome = recap_of_stored_events(case["harn_events"], case["harn_query"])
        if not same_json(outcome.envelope, case["harn_output"]):
            disagreeing.append(case["name"])
    assert disagreeing == []


def test_every_recorded_session_served_from_the_sqlite_journal_agrees_with_harn(
    tmp_path: Path,
) -> None:
    """docs/journal.md: the journal stores Harn's StoredEvent and reads it as Harn's store
    does (docs/recap.md section 2): the recorded stored events, appended as they are, and
    the journal-model events, stored as their stored form, both store exactly what Harn's
    code received and both give Harn's recorded answer through the recap service."""
    disagreeing = []
    for index, case in enumerate(recap_cases()):
        if case["input"].get("journal") == "unavailable" or "admission" in case["input"]:
            continue  # runtime conditions, not a journal's contents
        from_store = tmp_path / f"stored-{index}.sqlite"
        from_model = tmp_path / f"model-{index}.sqlite"
        with SqliteJournal.open(from_store, create=True) as journal:
            journal.append_stored(case["harn_events"])
        with SqliteJournal.open(from_model, create=True) as journal:
            journal.append([SessionEvent.from_json(e) for e in case["input"]["events"]])
            stored = list(journal.iter_events())
        assert same_json(stored, case["harn_events"]), case["name"]
        for path in (from_store, from_model):
            with RecapService(path) as service:
                try:
                    envelope = service.query(case["harn_query"]).envelope
                except InvalidDocument:
                    envelope = None
            if envelope is None or not same_json(envelope, case["harn_output"]):
                disagreeing.append(f"{case['name']} ({path.name})")
    assert disagreeing == []


# -- golden check --recorded: the shipped recordings replayed against a producer -----------------


def _recorded(name: str) -> tuple[GoldenCase, RecordedCase]:
    return next((case, origin) for case, origin in replay_cases() if case.name == name)


def _reference(origin: RecordedCase) -> Any:
    return answer({"operation": origin.operation, "input": origin.input})


def test_the_replay_sends_each_recap_session_twice_and_each_health_stream_once() -> None:
    names = [case.name for case, _origin in replay_cases()]
    assert len(names) == len(set(names)) == 2 * 299 + 400
    stored, origin = _recorded("recap-stored/edge-limit-0")
    assert stored.input == {"storedEvents": origin.harn_events, "query": origin.harn_query}


def test_the_recorded_judge_tells_an_integer_from_a_float() -> None:
    case, origin = _recorded("recap/edge-limit-0")
    harn = origin.harn_output
    assert judge_recorded(case, origin, CaseOutcome(1, "result", output=harn)).status == "passed"
    as_float = json.loads(json.dumps(harn))
    as_float["snapshot"]["schemaVersion"] = 1.0
    verdict = judge_recorded(case, origin, CaseOutcome(1, "result", output=as_float))
    assert (verdict.status, verdict.code) == ("failed", "answer_differs")
    assert [d.path for d in verdict.differences] == ["$.snapshot.schemaVersion"]
    rejected = CaseOutcome(1, "rejected", rejection={"code": "required", "path": "$.query"})
    assert judge_recorded(case, origin, rejected).code == "wrong_outcome"


def test_a_seed_differs_case_is_not_judged() -> None:
    # The reference follows the seed where Harn's code does not (a transcript reset).
    case, origin = next(
        (case, origin)
        for case, origin in replay_cases()
        if "seed-differs" in origin.tags and not same_json(_reference(origin), origin.harn_output)
    )
    verdict = judge_recorded(case, origin, CaseOutcome(1, "result", output=_reference(origin)))
    assert (verdict.status, verdict.code) == ("skipped", SEED_DIFFERS)


def test_golden_check_recorded_passes_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    selected = ["--case", "recap*/edge-*", "--case", "health/edge:*"]
    status = main(["golden", "check", "--recorded", *selected])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "recorded case(s)" in out
    assert " 0 failed, 0 errored" in out
