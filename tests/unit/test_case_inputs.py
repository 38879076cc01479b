"""The reference producer answers every malformed case input with a rejection at a
JSON path into that input: never an exception (an ``errored`` answer), never a
code outside the vocabulary, never a path the input does not have.

The inputs are the golden fixtures' case inputs (valid inputs or deliberate
rejections), mutated: each member dropped, replaced by a value of every other JSON
type, an unknown member added, at every object down to a few levels, and the
whole input replaced by a value that is not an object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_contracts.conformance.protocol import Rejected
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.errors import json_path, json_path_steps
from session_contracts.rejections import REJECTION_CODES, rejection_class

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "conformance" / "fixtures"

# One value of every JSON type, integers and floats both integral and not, a
# number beyond 64 bits, empty and non-empty containers.
VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    1.0,
    2**70,
    "",
    "ab",
    [],
    [1],
    {},
    {"x": 1},
)
UNKNOWN = "zz_not_a_member"
# How deep mutations reach into the case input, and how many items of an array.
DEPTH = 3
ITEMS = 2
# Fixtures per operation and per set of top-level members (keeps the run short).
PER_SHAPE = 2


def _fixtures() -> dict[str, list[tuple[str, Any]]]:
    by_operation: dict[str, dict[tuple[str, ...], list[tuple[str, Any]]]] = {}
    for path in sorted(FIXTURES.rglob("*.case.json")):
        case = json.loads(path.read_text())
        case_input = case["input"]
        shape = tuple(sorted(case_input)) if isinstance(case_input, dict) else ()
        shapes = by_operation.setdefault(case["operation"], {})
        shapes.setdefault(shape, []).append((path.name, case_input))
    return {
        operation: [case for cases in shapes.values() for case in cases[:PER_SHAPE]]
        for operation, shapes in by_operation.items()
    }


FIXTURE_INPUTS = _fixtures()


def _mutations(value: Any, where: str = "$", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(description, mutated value) for every mutation of ``value`` and its members."""
    if isinstance(value, dict):
        for name in value:
            at = f"{where}.{name}"
            dropped = dict(value)
            del dropped[name]
            yield f"{at} dropped", dropped
            for replacement in VALUES:
                replaced = dict(value)
                replaced[name] = replacement
                yield f"{at} = {replacement!r}", replaced
            if depth < DEPTH:
                for description, inner in _mutations(value[name], at, depth + 1):
                    yield description, {**value, name: inner}
        yield f"{where}.{UNKNOWN} added", {**value, UNKNOWN: 1}
    elif isinstance(value, list) and depth < DEPTH:
        for index, item in enumerate(value[:ITEMS]):
            at = f"{where}[{index}]"
            for replacement in (None, "ab", [], 1.5):
                yield f"{at} = {replacement!r}", [*value[:index], replacement, *value[index + 1 :]]
            for description, inner in _mutations(item, at, depth + 1):
                yield description, [*value[:index], inner, *value[index + 1 :]]


def _steps(path: str) -> list[str | int]:
    """A path of the protocol's grammar as its steps (docs/protocol.md, JSON paths)."""
    assert path.startswith("$"), path
    steps = json_path_steps(path)
    assert steps is not None, f"{path!r} is not a path of the protocol's grammar"
    return steps


def _names_a_path_into(case_input: Any, path: str, code: str) -> bool:
    """The path leads into the input; only its last step may name a member that is
    not there (where a missing member would be: ``required``, ``ratio_missing``),
    under an object that is, and never for an unknown member."""
    value = case_input
    steps = _steps(path)
    for number, step in enumerate(steps):
        last = number == len(steps) - 1
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return False
            value = value[step]
        else:
            if not isinstance(value, dict):
                return False
            if step not in value:
                return last and rejection_class(code) != "unknown_field"
            value = value[step]
    return True


def _answer(operation: str, case_input: Any) -> str:
    """Run the case; a problem with the answer as a sentence, or ''."""
    try:
        HANDLERS[operation](case_input)
    except Rejected as rejection:
        findings = [{"code": rejection.code, "path": rejection.path}, *rejection.findings]
        for finding in findings:
            code, path = finding["code"], finding["path"]
            if code not in REJECTION_CODES:
                return f"code {code!r} at {path} is not in the vocabulary"
            if not _names_a_path_into(case_input, path, code):
                return f"{code} at {path}: the path does not lead into the case input"
        return ""
    except Exception as exc:  # any other exception is the finding
        return f"raised {type(exc).__name__}: {exc}"
    return ""


@pytest.mark.parametrize("operation", sorted(HANDLERS))
def test_every_malformed_case_input_is_answered_with_a_rejection_into_it(
    operation: str,
) -> None:
    cases = FIXTURE_INPUTS[operation]
    assert cases, f"no golden fixture of {operation}"
    problems: list[str] = []
    for replacement in VALUES:
        if problem := _answer(operation, replacement):
            problems.append(f"input {replacement!r}: {problem}")
    for fixture, case_input in cases:
        for description, mutated in _mutations(case_input):
            if problem := _answer(operation, mutated):
                problems.append(f"{fixture}, {description}: {problem}")
    assert not problems, "\n".join(problems[:20])


def _rejection(operation: str, case_input: Any) -> tuple[str, str]:
    with pytest.raises(Rejected) as caught:
        HANDLERS[operation](case_input)
    return caught.value.code, caught.value.path


OBSERVE = {"at_unix_ms": 1, "call": "observe", "session_id": "s", "can_read_raw_receipts": True}


@pytest.mark.parametrize(
    ("operation", "case_input", "code", "path"),
    [
        ("health.reduce", {"observations": []}, "required", "$.session_id"),
        ("health.reduce", {"session_id": 5, "observations": []}, "wrong_type", "$.session_id"),
        (
            "health.reduce",
            {"session_id": "s", "observations": [], "extra": 1},
            "unknown_field",
            "$.extra",
        ),
        (
            "health.reduce",
            {"session_id": "s", "observations": "ab"},
            "wrong_type",
            "$.observations",
        ),
        ("health.reduce", [], "wrong_type", "$"),
        ("document.roundtrip", {"document": {}}, "required", "$.doctype"),
        ("document.roundtrip", {"doctype": "session-health.fact"}, "required", "$.document"),
        ("document.roundtrip", {"doctype": 1, "document": {}}, "wrong_type", "$.doctype"),
        (
            "document.roundtrip",
            {"doctype": "x.y", "document": {}},
            "not_allowed_value",
            "$.doctype",
        ),
        (
            "document.roundtrip",
            {"doctype": "session-health.fact", "document": "{}"},
            "wrong_type",
            "$.document",
        ),
        (
            "document.roundtrip",
            {"doctype": "session-health.fact", "document": {}, "x": 1},
            "unknown_field",
            "$.x",
        ),
        ("feedback.run", {}, "required", "$.steps"),
        ("feedback.run", {"steps": {}}, "wrong_type", "$.steps"),
        ("feedback.run", {"steps": [], "x": 1}, "unknown_field", "$.x"),
        ("feedback.run", {"steps": [1]}, "wrong_type", "$.steps[0]"),
        ("feedback.run", {"steps": [{"at_unix_ms": 1}]}, "required", "$.steps[0].call"),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "call": "stop"}]},
            "not_allowed_value",
            "$.steps[0].call",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "at_unix_ms": 1.5}]},
            "wrong_type",
            "$.steps[0].at_unix_ms",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "at_unix_ms": 1.0}]},
            "integer_literal_required",
            "$.steps[0].at_unix_ms",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "at_unix_ms": 2**53}]},
            "unsafe_integer",
            "$.steps[0].at_unix_ms",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "at_unix_ms": -1}]},
            "minimum",
            "$.steps[0].at_unix_ms",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "can_read_raw_receipts": 1}]},
            "wrong_type",
            "$.steps[0].can_read_raw_receipts",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "session_id": ""}]},
            "invalid_request",
            "$.steps[0].session_id",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "request": {}}]},
            "unknown_field",
            "$.steps[0].request",
        ),
        ("runrecord.provider_call_response", {}, "required", "$.response"),
        (
            "runrecord.provider_call_response",
            {"response": {}, "execution_id": 1},
            "wrong_type",
            "$.execution_id",
        ),
        ("runrecord.project", {"events": []}, "required", "$.run"),
        ("runrecord.project", {"run": [], "events": []}, "wrong_type", "$.run"),
        (
            "runrecord.project",
            {"run": {"kind": "run", "status": "ok", "gaps": [{}]}},
            "required",
            "$.run.gaps[0].code",
        ),
        (
            "runrecord.project",
            {"run": {"kind": "run", "status": "ok", "flight_recording": None}},
            "wrong_type",
            "$.run.flight_recording",
        ),
        (
            "feedback.run",
            {"steps": [{**OBSERVE, "reader_contract_version": 1.5}]},
            "invalid_step",
            "$.steps[0].reader_contract_version",
        ),
        ("recap.project", "ab", "wrong_type", "$"),
        ("recap.project", {"query": {"sessionId": "s"}, "x": 1}, "unknown_field", "$.x"),
        ("redaction.apply", {"policy": "default", "text": "", "x": 1}, "unknown_field", "$.x"),
        ("health.a2a_status_update", {"task": {}}, "required", "$.fact"),
    ],
)
def test_a_malformed_case_input_is_refused_at_its_member(
    operation: str, case_input: Any, code: str, path: str
) -> None:
    assert _rejection(operation, case_input) == (code, path)


def test_a_document_with_an_integral_float_for_an_integer_roundtrips_as_validate_says() -> None:
    from session_contracts.validation.validator import default_validator

    fixture = FIXTURES / "health" / "a2a-completed-task-stays-completed.case.json"
    fact = json.loads(fixture.read_text())["input"]["fact"]
    fact = {**fact, "schema_version": 1.0, "iteration": 4.0}
    assert default_validator().validate("session-health.fact", fact) == []
    output = HANDLERS["document.roundtrip"]({"doctype": "session-health.fact", "document": fact})
    assert (output["schema_version"], output["iteration"]) == (1, 4)
    assert all(type(output[name]) is int for name in ("schema_version", "iteration"))
    # Only the members the bindings hold as integers are rewritten.
    expected = output["turn"]["turn_wall_time"]["expected"]["milliseconds"]
    assert type(expected) is float


# -- the schema's description of each case input agrees with the reference ---------------------
INPUT_DEFS = {
    "document.roundtrip": "DocumentRoundtripInput",
    "health.reduce": "HealthReduceInput",
    "health.a2a_status_update": "HealthA2aStatusUpdateInput",
    "feedback.run": "FeedbackRunInput",
    "recap.project": "RecapProjectInput",
    "runrecord.project": "RunrecordProjectInput",
    "runrecord.provider_call_response": "RunrecordProviderCallResponseInput",
    "redaction.apply": "RedactionApplyInput",
}


def test_every_operation_has_its_input_described_in_the_protocol_schema() -> None:
    schema = json.loads((REPO / "schemas" / "producer-protocol.schema.json").read_text())
    assert set(INPUT_DEFS) == set(HANDLERS) == set(schema["$defs"]["Operation"]["enum"])
    for name in INPUT_DEFS.values():
        assert name in schema["$defs"], name
    protocol = (REPO / "docs" / "protocol.md").read_text()
    for name in INPUT_DEFS.values():
        assert f"`{name}`" in protocol, f"docs/protocol.md does not name {name}"


@pytest.mark.parametrize("operation", sorted(HANDLERS))
def test_a_case_input_the_reference_answers_has_the_shape_its_schema_describes(
    operation: str,
) -> None:
    # The $defs leave contract documents open (their own schemas judge them, at
    # their own paths), so the reference may refuse more than the shape; it may
    # never answer an input the shape refuses.
    import jsonschema

    schema = json.loads((REPO / "schemas" / "producer-protocol.schema.json").read_text())
    shape = jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{INPUT_DEFS[operation]}", "$defs": schema["$defs"]}
    )
    answered = 0
    for _fixture, case_input in FIXTURE_INPUTS[operation]:
        for description, mutated in [("as given", case_input), *_mutations(case_input)]:
            try:
                HANDLERS[operation](mutated)
            except Rejected:
                continue
            answered += 1
            errors = [error.message for error in shape.iter_errors(mutated)]
            assert not errors, f"{description}: answered, but {errors[0]}"
    assert answered


@pytest.mark.parametrize(
    "parts", [[], ["a", 0, "b_c"], ["odd key", "it's", "back\\slash", 12], ["0abc", "é"]]
)
def test_json_path_steps_reads_back_what_json_path_writes(parts: list[str | int]) -> None:
    assert json_path_steps(json_path(parts)) == parts


@pytest.mark.parametrize("text", ["", "a.b", "$.", "$[01]", "$['open", "$.a b"])
def test_json_path_steps_refuses_what_is_not_a_path(text: str) -> None:
    assert json_path_steps(text) is None


# -- arbitrary JSON: the reference never errors, whatever the case input ------------------------
_keys = st.sampled_from(["", "x", "__proto__", "é", "\U0001f600"]) | st.text(max_size=6)
_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)


def _spliced(case_input: Any, steps: list[int], value: Any) -> Any:
    """``case_input`` with ``value`` in place of the member that ``steps`` pick, level by level
    (each step an index into the members or items there, modulo their number)."""
    if not steps or not isinstance(case_input, dict | list) or not case_input:
        return value
    if isinstance(case_input, dict):
        name = sorted(case_input)[steps[0] % len(case_input)]
        return {**case_input, name: _spliced(case_input[name], steps[1:], value)}
    index = steps[0] % len(case_input)
    inner = _spliced(case_input[index], steps[1:], value)
    return [*case_input[:index], inner, *case_input[index + 1 :]]


@pytest.mark.parametrize("operation", sorted(HANDLERS))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_json_as_a_case_input_never_errors_the_reference(
    operation: str, data: st.DataObject
) -> None:
    # Inputs come from two places: any JSON value at all (most are refused at
    # the root), and a golden fixture's input with any JSON value spliced in at any depth,
    # so the members the operation reads get values of every shape.
    value = data.draw(_json_values, label="value")
    fixtures = FIXTURE_INPUTS[operation]
    if data.draw(st.booleans(), label="splice"):
        _, case_input = fixtures[data.draw(st.integers(0, len(fixtures) - 1), label="fixture")]
        steps = data.draw(st.lists(st.integers(0, 50), max_size=DEPTH + 2), label="steps")
        value = _spliced(case_input, steps, value)
    problem = _answer(operation, value)
    assert not problem, problem
