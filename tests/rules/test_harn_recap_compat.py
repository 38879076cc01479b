"""Our session-recap contract is Harn's on the wire, in both directions.

Harn (burin-labs/harn, dual MIT/Apache-2.0) publishes the authoritative
``schemas/session-recap-v1.schema.json`` (seed 002: "The authoritative schema
is schemas/session-recap-v1.schema.json").  A copy of it, a wire fixture built
by Harn's own generator, and the licence are vendored in
``tests/fixtures/upstream/harn/`` (README.md there names each source and commit).

* Harn -> ours: the fixture, and a generated corpus of every kind of document
  Harn's schema accepts, validate under our schema and round-trip through our
  bindings unchanged.  Our envelope and snapshot carry no x- rule of their own
  (no seed sentence states a rule Harn's schema cannot), so there is no
  exception to list.
* ours -> Harn: every bundled example and every reference projection output,
  over generated journals, validates under Harn's schema (python-jsonschema,
  Draft 2020-12, on the vendored file).
"""

from __future__ import annotations

import copy
import hashlib
import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from session_contracts.bindings import decode, encode
from session_contracts.conformance.judge.cases.operations import recap_cases
from session_contracts.journal import SessionEvent, SqliteJournal
from session_contracts.jsontext.harn_canonical import harn_sha256
from session_contracts.recap import (
    EventRecord,
    RecapService,
    project,
    query_echo,
)
from session_contracts.recap.service import envelope_bytes
from session_contracts.redaction.policy import default_policy
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "upstream" / "harn"
EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"
# From upstream README.md: the sha256 of the repository's LICENSE-MIT.
LICENSE_SHA256 = "5dd385784746f992ae1662b9a89d7506e93d99a2c411a5e56de78063de1c51b8"


@cache
def harn_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((UPSTREAM / "session-recap-v1.schema.json").read_bytes())
    return schema


def harn_definition(name: str) -> dict[str, Any]:
    """A schema for one of Harn's $defs (its references resolve against the same $defs)."""
    schema = harn_schema()
    return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}


def small(schema: Any) -> Any:
    """Harn's schema with every array held to two items: a subset of what it accepts,
    generated in a fraction of the time (the shapes, not the lengths, are what differ)."""
    if isinstance(schema, dict):
        out = {key: small(value) for key, value in schema.items()}
        if out.get("type") == "array":
            out["maxItems"] = 2
        if out.get("additionalProperties") is True:
            out["maxProperties"] = 2
        return out
    if isinstance(schema, list):
        return [small(item) for item in schema]
    return schema


def harn_errors(schema: dict[str, Any], document: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def fixture() -> Any:
    return json.loads((UPSTREAM / "session-recap.fixture.json").read_bytes())


# ----------------------------------------------------------------- vendored data


def test_vendored_files_are_the_upstream_ones() -> None:
    assert hashlib.sha256((UPSTREAM / "LICENSE-MIT").read_bytes()).hexdigest() == LICENSE_SHA256
    raw = (UPSTREAM / "session-recap-v1.schema.json").read_text(encoding="utf-8")
    # README.md: 13,115 characters, equal to its own sorted, 2-space re-serialization.
    assert len(raw) == 13_115
    assert json.dumps(json.loads(raw), indent=2, sort_keys=True) == raw.rstrip("\n")
    assert harn_schema()["$id"] == "https://harnlang.com/schemas/session-recap-v1.schema.json"
    assert harn_errors(harn_schema(), fixture()) == []


# ------------------------------------------------------------------ Harn -> ours


def test_harn_fixture_validates_under_ours_and_round_trips() -> None:
    document = fixture()
    assert default_validator().validate("session-recap.envelope", document) == []
    assert default_validator().validate("session-recap.snapshot", document["snapshot"]) == []
    assert json_equal(encode(decode("session-recap.envelope", document)), document)
    assert json_equal(
        encode(decode("session-recap.snapshot", document["snapshot"])), document["snapshot"]
    )
    # Its hashes are placeholders ("sha256:fixture-content"): a pattern stricter
    # than Harn's ^sha256: would refuse what Harn's own generator writes.
    assert document["snapshot"]["contentHash"] == "sha256:fixture-content"


def test_our_schema_refuses_what_harns_refuses() -> None:
    """Closed objects, required members and enums are Harn's: a sample of each."""
    broken = []
    for mutate in (
        lambda s: s.pop("extensions"),
        lambda s: s["coverage"].pop("truncated"),
        lambda s: s["cursor"].__setitem__("fromEventId", 1),
        lambda s: s["turns"][0].__setitem__("state", "done"),
        lambda s: s["turns"][0]["iterations"][0]["tools"][0].pop("input"),
        lambda s: s["turns"][0]["iterations"][0]["tools"][0]["verification"].__setitem__(
            "status", "failed"
        ),
        lambda s: s["source"]["events"][0].__setitem__("id", 1),
        lambda s: s.__setitem__("contentHash", "md5:abc"),
        lambda s: s["turns"][0].__setitem__("runId", None),
    ):
        document = fixture()
        mutate(document["snapshot"])
        assert harn_errors(harn_schema(), document), "the mutation must break Harn's schema"
        broken.append(default_validator().validate("session-recap.envelope", document))
    assert all(broken), broken


# Harn's documents with values a JSON text holds but our loader and bindings
# see the same way: integers are integers and strings are strings.
_HARN_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize(
    ("harn", "ours"),
    [
        (None, "session-recap.envelope"),
        ("snapshot", "session-recap.snapshot"),
    ],
)
def test_every_document_harns_schema_accepts_is_ours(harn: str | None, ours: str) -> None:
    schema = harn_schema() if harn is None else harn_definition(harn)

    @_HARN_SETTINGS
    @given(from_schema(small(schema)))
    def check(document: Any) -> None:
        assert harn_errors(schema, document) == []
        findings = default_validator().validate(ours, document)
        assert findings == [], [f.render() for f in findings]
        assert json_equal(encode(decode(ours, document)), document)

    check()


@pytest.mark.parametrize("name", ["turn", "iteration", "toolExchange", "terminalFact", "query"])
def test_every_part_harns_schema_accepts_fits_our_snapshot(name: str) -> None:
    """Parts generated on their own reach deeper shapes than whole snapshots do."""
    schema = harn_definition(name)
    where = {
        "turn": lambda s, part: s["turns"].__setitem__(0, part),
        "iteration": lambda s, part: s["turns"][0]["iterations"].__setitem__(0, part),
        "toolExchange": lambda s, part: s["turns"][0]["iterations"][0]["tools"].__setitem__(
            0, part
        ),
        "terminalFact": lambda s, part: s["turns"][0].__setitem__("terminal", part),
        "query": lambda s, part: s.__setitem__("query", part),
    }[name]

    @_HARN_SETTINGS
    @given(from_schema(small(schema)))
    def check(part: Any) -> None:
        snapshot = copy.deepcopy(fixture()["snapshot"])
        where(snapshot, part)
        assert harn_errors(harn_definition("snapshot"), snapshot) == []
        findings = default_validator().validate("session-recap.snapshot", snapshot)
        assert findings == [], [f.render() for f in findings]
        assert json_equal(encode(decode("session-recap.snapshot", snapshot)), snapshot)

    check()


# ------------------------------------------------------------------ ours -> Harn


@pytest.mark.parametrize(
    ("example", "definition"),
    [("session-recap.envelope", None), ("session-recap.snapshot", "snapshot")],
)
def test_our_examples_validate_under_harns_schema(example: str, definition: str | None) -> None:
    document = json.loads((EXAMPLES / f"{example}.json").read_bytes())
    schema = harn_schema() if definition is None else harn_definition(definition)
    assert harn_errors(schema, document) == []


def test_our_query_example_is_an_input_harn_accepts() -> None:
    """Harn's schema has no input query type; its echo type takes the query once filled in."""
    query = json.loads((EXAMPLES / "session-recap.query.json").read_bytes())
    echo = {"runId": None, "turnId": None, "fromEventId": None, "limit": None, **query}
    assert harn_errors(harn_definition("query"), echo) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=recap_cases(), as_snake=st.booleans())
def test_reference_outputs_validate_under_harns_schema(
    case: dict[str, Any], as_snake: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "journal.db"
        with SqliteJournal.open(path, create=True) as journal:
            journal.append([SessionEvent.from_json(event) for event in case["events"]])
        query = case["query"]
        if as_snake:
            query = {{"sessionId": "session_id"}.get(k, k): v for k, v in query.items()}
        with RecapService(path) as service:
            outcome = service.query(query)
    envelope = outcome.envelope
    assert harn_errors(harn_schema(), envelope) == []
    assert harn_errors(harn_schema(), json.loads(envelope_bytes(envelope))) == []
    if outcome.available:
        # The echo is the query as received: an absent limit is null, not 4,096.
        assert envelope["snapshot"]["query"]["limit"] == case["query"].get("limit")


# ------------------------------------------------------------- Harn's own example


def _fixture_journal() -> list[dict[str, Any]]:
    """The nine events Harn's fixture recaps, written in our journal's event model."""

    def event(event_id: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": event_id,
            "sessionId": "session-recap-fixture",
            "runId": "run-recap-fixture",
            "turnId": "turn-recap-fixture",
            "iteration": None,
            "executionId": None,
            "topic": "agent",
            "kind": kind,
            "recordedAtUnixMs": 1_760_000_000_000 + event_id,
            "payload": payload,
        }

    return [
        event(
            1, "message", {"role": "user", "visibility": None, "text": "Investigate the incident"}
        ),
        event(2, "loop_checkpoint", {"checkpoint": "iteration_start", "iteration": 0}),
        event(
            3,
            "message",
            {"role": "assistant", "visibility": "public", "text": "I found and fixed the cause."},
        ),
        event(
            4,
            "tool_call",
            {
                "callId": "tool-recap-fixture",
                "toolName": "write_file",
                "input": {"path": "src/lib.rs"},
            },
        ),
        event(
            5,
            "tool_result",
            {
                "callId": "tool-recap-fixture",
                "toolName": None,
                "isError": False,
                "output": {"changed": True},
                "verification": {
                    "schema": "harn.agent_tool_postcondition.v1",
                    "status": "passed",
                    "verifiedPaths": ["src/lib.rs"],
                },
            },
        ),
        event(
            6,
            "plan",
            {
                "documentId": "plan-recap-fixture",
                "revisionId": "revision-recap-fixture",
                "title": "Repair the incident",
                "summary": "Fix and verify the owning seam",
                "steps": [
                    {
                        "id": "step-recap-fixture",
                        "content": "Run the regression",
                        "status": "completed",
                    }
                ],
                "event": {
                    "kind": "updated",
                    "eventId": "plan-event-recap-fixture",
                    "inputRevisionId": "revision-before-recap-fixture",
                },
            },
        ),
        event(
            7,
            "progress",
            {
                "message": "Regression is green",
                "entries": [
                    {
                        "content": "Verify the canonical path",
                        "status": "completed",
                        "priority": "high",
                    }
                ],
                "replace": True,
            },
        ),
        event(8, "loop_checkpoint", {"checkpoint": "iteration_end", "iteration": 0}),
        event(
            9,
            "terminal",
            {
                "kind": "natural",
                "owner": "agent",
                "finalStatus": "done",
                "stopReason": "completed",
                "reason": "verified",
            },
        ),
    ]


def test_the_reference_projection_reproduces_harns_fixture() -> None:
    """Harn's fixture, projected from the same facts: every member but the hashes agrees.

    The fixture is built by Harn's generator (its nine record hashes and both
    snapshot hashes are placeholders); its cursor says one event lies beyond
    the nine read, so the projection is given one row beyond.
    """
    expected = fixture()["snapshot"]
    records = [EventRecord(event, f"sha256:fixture-{event['id']}") for event in _fixture_journal()]
    snapshot = project(
        records, query_echo(expected["query"]), rows_beyond=1, policy=default_policy()
    )
    for member in ("schemaVersion", "sessionId", "query", "cursor", "coverage", "source", "turns"):
        assert snapshot[member] == expected[member], member
    assert snapshot["contentHash"] == harn_sha256(expected["source"])
    assert harn_errors(harn_definition("snapshot"), snapshot) == []
