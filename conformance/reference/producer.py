"""Our reference producer: the oracle, speaking the producer protocol.

``session-contracts reference-producer`` runs it on stdio.  Each operation is
a thin adapter from the protocol's case input to the reference implementation
of one contract; docs/protocol.md specifies inputs and outputs.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from session_contracts.accel import paused_gc
from session_contracts.conformance.protocol import Handler, Rejected, serve
from session_contracts.contracts import CONTRACTS
from session_contracts.errors import Finding, InvalidDocument, json_path, json_path_steps
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER
from session_contracts.jsontext.wire import dumps_wire
from session_contracts.validation.schema_set import DocumentType
from session_contracts.validation.validator import DocumentValidator, default_validator
from session_contracts.version import __version__

if TYPE_CHECKING:
    from session_contracts.journal import CheckedEvents
    from session_contracts.recap import RecapService

__all__ = ["HANDLERS", "MAX_REJECTION_FINDINGS", "main"]

# The protocol's bound on a rejection's findings list (producer-protocol.schema.json).
MAX_REJECTION_FINDINGS = 1000


# -- the case input's own shape ---------------------------------------------------------------
# Each operation's case input is described once, as a $defs entry of
# producer-protocol.schema.json (docs/protocol.md, "Case inputs"), and checked
# against it with the toolkit's validator before any contract code sees it, so a
# malformed case input is refused member by member at paths into it.  The few
# members whose findings the protocol gives codes of their own (document.roundtrip's
# doctype and historical, recap.project's runtime conditions, redaction.apply's
# text and value) are checked here, with the same paths.

_JSON_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "boolean": "true or false",
    "integer": "an integer",
    "null": "null",
}


# A Python value's JSON type, the first that matches (bool before int: True is an int).
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (Mapping, "object"),
)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "unsupported")


def _type_finding(value: Any, path: str, *types: str) -> Finding | None:
    """``wrong_type`` unless ``value`` is of one of the JSON ``types``."""
    if _json_type(value) in types:
        return None
    wanted = " or ".join(_JSON_TYPE_NAMES[kind] for kind in types)
    if (
        "integer" in types
        and isinstance(value, float)
        and value.is_integer()
        and abs(value) <= MAX_SAFE_INTEGER
    ):
        return Finding(
            path,
            "integer_literal_required",
            f"{value!r} is written as a fraction or exponent; {path} takes an integer literal",
            f"write it as {int(value)}",
        )
    return Finding(path, "wrong_type", f"{path} is {wanted}", f"send {wanted}")


def _members(
    value: Any,
    path: str,
    required: Sequence[str],
    known: Sequence[str] | None = None,
) -> list[Finding]:
    """``wrong_type`` at ``path`` for a non-object; otherwise ``required`` at each missing
    member and, when ``known`` is given (a closed object), ``unknown_field`` at each
    member it does not name."""
    if not isinstance(value, Mapping):
        found = _type_finding(value, path, "object")
        return [found] if found else []
    findings = [
        Finding(_json_path_join(path, name), "required", f"{name} is missing", f"send {name}")
        for name in required
        if name not in value
    ]
    if known is not None:
        findings.extend(
            Finding(
                _json_path_join(path, name),
                "unknown_field",
                f"{name} is not a member of this case input",
                "leave it out: docs/protocol.md lists the members",
            )
            for name in value
            if name not in known
        )
    return findings


def _json_path_join(path: str, name: Any) -> str:
    """``path`` followed by member ``name`` in the protocol's path grammar."""
    return path + json_path([str(name)])[1:]


def _check(findings: Sequence[Finding | None]) -> None:
    """Refuse the case input with every finding, if there is any."""
    found = [finding for finding in findings if finding is not None]
    if found:
        raise _rejected(found)


@functools.cache
def _input_validator() -> DocumentValidator:
    """The toolkit's validator, also knowing each case input of the protocol schema
    ($defs/...Input) as a document type of its own: the protocol's bindings do not
    publish them as document types, only the reference checks case inputs with them."""
    schema_set = default_validator().schema_set
    (schema_id,) = [
        schema_id
        for schema_id, name in schema_set.files.items()
        if name == "producer-protocol.schema.json"
    ]
    definitions = schema_set.schemas[schema_id]["$defs"]
    inputs = {
        f"producer-protocol.{name}": DocumentType(
            name=f"producer-protocol.{name}",
            contract="producer-protocol",
            kind=name,
            schema_id=schema_id,
            pointer=f"#/$defs/{name}",
            definition=definitions[name],
        )
        for name in definitions
        if name.endswith("Input")
    }
    return DocumentValidator(
        dataclasses.replace(schema_set, document_types={**schema_set.document_types, **inputs})
    )


def _input_findings(definition: str, case: Any) -> list[Finding]:
    """The case input's findings against its $defs entry, at paths into it."""
    return _input_validator().validate(f"producer-protocol.{definition}", case)


def _case_object(case: Any) -> Mapping[str, Any]:
    """The case input as an object: every operation's input is one."""
    _check([_type_finding(case, "$", "object")])
    checked: Mapping[str, Any] = case
    return checked


def _rebase(path: str, prefix: str = "$", renames: Mapping[str, str] | None = None) -> str:
    """A library finding's path as a path into the case input: ``prefix`` is where
    the checked value sits in the input, ``renames`` maps an output path (the library
    reports a run record's own paths) to the input member it came from."""
    for output_path, input_path in (renames or {}).items():
        if path == output_path or path.startswith((output_path + ".", output_path + "[")):
            return input_path + path[len(output_path) :]
    return prefix + path[1:]


def _rejected(findings: Sequence[Finding]) -> Rejected:
    """Every finding of an input as one rejection: ``code`` and ``path`` name the
    first (findings are sorted by path, then code), ``findings`` lists them all."""
    findings = [_in_vocabulary(f) for f in findings]
    unique = sorted({(f.path, f.code): f for f in findings}.values())[:MAX_REJECTION_FINDINGS]
    first = unique[0]
    return Rejected(
        first.code,
        first.path,
        _fit(first.message),
        [{"code": f.code, "path": f.path, "message": _fit(f.message)} for f in unique],
    )


def _in_vocabulary(finding: Finding) -> Finding:
    """A finding whose code is in the rejection vocabulary: the typed bindings name a
    wrong JSON type after pydantic's error types (``int_type``, ``string_type``)."""
    from session_contracts.rejections import REJECTION_CODES

    if finding.code in REJECTION_CODES:
        return finding
    code = "wrong_type" if finding.code.endswith("_type") else "invalid_case"
    return Finding(finding.path, code, finding.message, finding.hint)


def _fit(message: str) -> str:
    """A message within the protocol's 4,096 UTF-8 bytes (cut at a character)."""
    return message.encode("utf-8")[:4096].decode("utf-8", "ignore")


def _rebased(finding: Finding, prefix: str) -> Finding:
    return Finding(_rebase(finding.path, prefix), finding.code, finding.message, finding.hint)


def _reject(
    exc: InvalidDocument, prefix: str = "$", renames: Mapping[str, str] | None = None
) -> Rejected:
    """An invalid input's findings as a rejection whose paths point into the case input."""
    return _rejected(
        [Finding(_rebase(f.path, prefix, renames), f.code, f.message, f.hint) for f in exc.findings]
    )


def _parse_each(items: Any, parse: Any, prefix: str) -> tuple[list[Any], list[Finding]]:
    """Parse every item of an input list: the parsed items and the findings of every
    item that failed (each located at its index), so that one bad item never hides
    the next."""
    parsed: list[Any] = []
    findings: list[Finding] = []
    if not isinstance(items, list):
        return parsed, [
            Finding(prefix, "wrong_type", f"{prefix[2:]} is a JSON array", "send an array")
        ]
    for index, item in enumerate(items):
        try:
            parsed.append(parse(item))
        except InvalidDocument as exc:
            findings.extend(
                Finding(_rebase(f.path, f"{prefix}[{index}]"), f.code, f.message, f.hint)
                for f in exc.findings
            )
    return parsed, findings


def _each(items: Any, parse: Any, prefix: str) -> list[Any]:
    """Parse every item of an input list; a rejection names every failing item's index."""
    parsed, findings = _parse_each(items, parse, prefix)
    if findings:
        raise _rejected(findings)
    return parsed


def _events(case: Mapping[str, Any]) -> tuple[CheckedEvents, list[Finding]]:
    """A case's journal events, checked for the journal (``CheckedEvents``), and the
    findings against them: each event's own, and each id that does not increase on the
    one before (the protocol's events are one list in journal order: such a list is a
    rejected input, not an error of ours)."""
    from session_contracts.journal import check_events

    raw = case.get("events", [])
    findings: list[Finding] = []
    if not isinstance(raw, list):
        findings.append(
            Finding("$.events", "wrong_type", "events is a JSON array", "send an array")
        )
        raw = []
    # Each event against the contract, and for an RFC 8785 form: a journal event's
    # record hash is of that form, so a number it cannot hold exactly (an integer
    # beyond 2**53 - 1 in an open payload) is refused as the event is written, a
    # rejected input like any other finding.
    events, found = check_events(raw)
    findings.extend(_rebased(finding, f"$.events[{index}]") for index, finding in found)
    if not found and _ids_increase(events.events):  # the usual list, decided at once
        return events, findings
    previous: int | None = None
    for index, event in enumerate(raw):
        event_id = event.get("id") if isinstance(event, Mapping) else None
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            continue
        if previous is not None and event_id <= previous:
            findings.append(
                Finding(
                    f"$.events[{index}].id",
                    "events_not_increasing",
                    f"event id {event_id} does not follow the previous id {previous}",
                    "event ids are unique and increase in journal order; sort the events by id",
                )
            )
        previous = event_id
    return events, findings


def _ids_increase(events: Sequence[Mapping[str, Any]]) -> bool:
    """Whether checked events' ids (each an int) increase through the list (loops in C)."""
    ids = list(map(operator.itemgetter("id"), events))
    return all(map(operator.lt, ids, ids[1:]))


def document_roundtrip(case: Any) -> Any:
    from session_contracts.bindings import decode, encode

    case = _case_object(case)
    validator = default_validator()
    # injected_at is the harness's note of where closed.unknown-field-rejected planted its
    # unknown member: part of the case, not of the document.
    known = ("doctype", "document", "historical", "injected_at")
    findings = _members(case, "$", ("doctype", "document"), known)
    doctype = case.get("doctype")
    if "doctype" in case and not isinstance(doctype, str):
        findings.append(Finding("$.doctype", "wrong_type", "doctype is a string", "send a string"))
    elif "doctype" in case and doctype not in validator.document_types():
        findings.append(
            Finding(
                "$.doctype",
                "not_allowed_value",
                f"there is no document type {doctype!r}",
                "send a document type of a contract the producer declares",
            )
        )
    historical = case.get("historical", False)
    if not isinstance(historical, bool):
        findings.append(
            Finding("$.historical", "invalid_case", "historical is true or false", "send a boolean")
        )
    _check(findings)
    document = case["document"]
    if isinstance(document, str):
        # The document is the JSON value itself: a string is a string document
        # (which no document type is), never JSON text to parse.
        _check([_rebased(f, "$.document") for f in validator.validate(doctype, document)])
    try:
        # historical: load a record written before the current contract (its
        # legacy names accepted), then write it as newly persisted records are.
        return encode(decode(doctype, document, historical=historical))
    except InvalidDocument as exc:
        rejection = _reject(exc, "$.document")
        if not historical:
            raise rejection from None
        # A finding about a member read under its historical name (a span's
        # parent_id) names the member as the input spells it.
        raise _rejected(
            [
                Finding(_as_spelled(case, f["path"]), f["code"], f.get("message", ""))
                for f in rejection.findings
            ]
        ) from None


def _historical_names() -> dict[str, str]:
    """Each current member name that a historical record spelled otherwise, with that
    spelling (x-historicalAliases of the contract schemas)."""
    names: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            aliases = node.get("x-historicalAliases")
            if isinstance(aliases, Mapping):
                names.update({new: old for old, new in aliases.items()})
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    for schema in default_validator().schema_set.schemas.values():
        walk(schema)
    return names


def _as_spelled(case_input: Any, path: str) -> str:
    """``path`` with each member the input gives only under its historical name
    renamed to that name."""
    steps = json_path_steps(path)
    if not steps:
        return path
    historical = _historical_names()
    value, spelled = case_input, []
    for step in steps:
        if isinstance(step, str) and isinstance(value, Mapping) and step not in value:
            old_name = historical.get(step)
            if old_name is not None and old_name in value:
                step = old_name
        spelled.append(step)
        value = value[step] if _holds(value, step) else None
    return json_path(spelled)


def _holds(value: Any, step: str | int) -> bool:
    if isinstance(step, int):
        return isinstance(value, list) and 0 <= step < len(value)
    return isinstance(value, Mapping) and step in value


def health_reduce(case: Any) -> Any:
    from session_contracts.health import reduce

    # The case input is a health-observation.stream document: closed, session_id a
    # non-empty string, observations an array of observations.
    _check(default_validator().validate("health-observation.stream", case))
    try:
        return {"facts": reduce(case["session_id"], case["observations"])}
    except InvalidDocument as exc:
        raise _reject(exc) from None


def health_a2a_status_update(case: Any) -> Any:
    """Seed 000: "A2A task streams carry the same fact in metadata.harn.sessionHealth on a
    standard status update, preserving the current task state"."""
    from session_contracts.health import a2a_status_update

    case = _case_object(case)
    _check(_input_findings("HealthA2aStatusUpdateInput", case))
    fact: Any = case["fact"]
    findings = default_validator().validate("session-health.fact", fact)
    if findings:
        raise _reject(InvalidDocument(findings), "$.fact")
    task: Any = case["task"]
    _check([_type_finding(task, "$.task", "object")])
    try:
        return a2a_status_update(fact, task)
    except InvalidDocument as exc:
        rejection = _reject(exc, "$.task")
        status = task.get("status")
        if isinstance(status, Mapping):
            raise rejection from None
        # Without a status object there is no status.state to point into: the
        # finding is the status itself.
        found = [
            Finding(f["path"], f["code"], f.get("message", ""))
            for f in rejection.findings
            if not f["path"].startswith("$.task.status")
        ]
        found.append(
            Finding("$.task.status", "required", "the task has no status", "send status.state")
            if "status" not in task
            else _type_finding(status, "$.task.status", "object")  # type: ignore[arg-type]
        )
        raise _rejected(found) from None


# -- the throwaway stores a case writes ---------------------------------------------------------
# feedback.run, and recap.project under a runtime condition (a journal unavailable, admission
# refused, damaged rows), write each case to a fresh SQLite file and remove it at the case's
# end (a healthy recap case holds its journal in memory: _recap_project). Its durable
# commits (synchronous = FULL) cost a disk flush each: in a memory file system (Linux's
# /dev/shm) a small recap case costs half the CPU time and a sixth of the wall time. The
# stores are the same; only their folder differs.
MEMORY_FOLDER = Path("/dev/shm")
#: A case's journal, with its write-ahead log, takes up to about 9 times the case's JSON
#: size (50 MB for the 32,770-event case of 5.9 MB): the memory folder is used only
#: with this many times that free, and MEMORY_FOLDER_SPARE_BYTES more (a container's
#: /dev/shm is often 64 MB, shared with the judge's own copy of the case).
MEMORY_FOLDER_FACTOR = 20
MEMORY_FOLDER_SPARE_BYTES = 64 * 1024 * 1024


def _scratch(case: Any, prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A fresh folder for one case's stores: in the memory folder when it exists, is
    writable, has room for the case and TMPDIR does not name another place; else in
    the system's temporary folder."""
    folder: str | None = None
    if "TMPDIR" not in os.environ and os.access(MEMORY_FOLDER, os.W_OK | os.X_OK):
        try:
            stats = os.statvfs(MEMORY_FOLDER)
            needed = MEMORY_FOLDER_FACTOR * len(dumps_wire(case)) + MEMORY_FOLDER_SPARE_BYTES
            if stats.f_bavail * stats.f_frsize >= needed:
                folder = str(MEMORY_FOLDER)
        except (OSError, TypeError):
            folder = None
    return tempfile.TemporaryDirectory(prefix=prefix, dir=folder)


def _new_store(path: Path, kind: str) -> Path:
    """Put an empty journal (``kind`` "journal") or feedback store ("feedback") at ``path``,
    as its ``open`` would create it: a copy of one made once in this process, so that a
    case's store is opened as an existing one, its layout not written again (half of what
    opening a new store cost)."""
    path.write_bytes(_empty_store(kind))
    return path


@functools.cache
def _empty_store(kind: str) -> bytes:
    from session_contracts.feedback import FeedbackStore
    from session_contracts.journal import SqliteJournal

    with tempfile.TemporaryDirectory(prefix="sc-empty-") as folder:
        path = Path(folder) / "store.sqlite"
        if kind == "journal":
            SqliteJournal.open(path, create=True).close()
        else:
            FeedbackStore.open(path, clock=lambda: 0).close()
        # Closing the last connection checkpoints the write-ahead log into the file.
        return path.read_bytes()


def _reader_version(step: Mapping[str, Any], index: int) -> int:
    """The reader's contract version (default 1): reports of another are stale."""
    version = step.get("reader_contract_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 2**53:
        raise Rejected(
            "invalid_step",
            f"$.steps[{index}].reader_contract_version",
            "reader_contract_version must be an unsigned safe integer",
        )
    return version


def feedback_run(case: Any) -> Any:
    from session_contracts.feedback import FeedbackStore

    case = _case_object(case)
    _check(_input_findings("FeedbackRunInput", case))
    steps = case["steps"]
    for index, step in enumerate(steps):
        if step["call"] == "observe":
            _reader_version(step, index)
    now = {"ms": 0}
    responses: list[Any] = []
    with _scratch(case, "sc-feedback-") as folder:
        path = _new_store(Path(folder) / "feedback.sqlite", "feedback")
        store = FeedbackStore.open(path, clock=lambda: now["ms"])
        try:
            for index, step in enumerate(steps):
                now["ms"] = step["at_unix_ms"]
                call = step["call"]
                try:
                    if call == "start":
                        responses.append(store.start(step["request"]))
                    elif call == "checkpoint":
                        responses.append(store.checkpoint(step["request"]))
                    else:
                        responses.append(
                            store.observe(
                                step["session_id"],
                                reader_can_read_raw_receipts=step["can_read_raw_receipts"],
                                contract_version=_reader_version(step, index),
                            )
                        )
                except InvalidDocument as exc:
                    # The store names its own arguments ($.session_id, $ for a
                    # request): they are members of this step.
                    where = f"$.steps[{index}]"
                    raise _reject(exc, where if call == "observe" else where + ".request") from None
        finally:
            store.close()
    return {"responses": responses}


def _run_spec(value: Mapping[str, Any]) -> Any:
    from session_contracts.runrecord import (
        EvidenceGap,
        FlightRecording,
        RunSpec,
        Span,
    )

    flight = value.get("flight_recording")
    return RunSpec(
        kind=value["kind"],
        status=value["status"],
        session_id=value.get("session_id"),
        execution_id=value.get("execution_id"),
        id=value.get("id"),
        spans=_each(value.get("spans", []), Span.from_json, "$.run.spans"),
        flight_recording=FlightRecording.from_json(flight) if flight is not None else None,
        gaps=[
            EvidenceGap(gap["component"], gap["code"], gap["message"])
            for gap in value.get("gaps", [])
        ],
        execution_gap_reason=value.get("execution_gap_reason"),
    )


_RUN_RECORD_TO_INPUT = {
    "$.evidence.trace_spans": "$.run.spans",
    "$.evidence.execution_id": "$.run.execution_id",
    "$.evidence.gaps": "$.run.gaps",
    "$.evidence.flight_recording": "$.run.flight_recording",
    "$.evidence": "$.run",
}


def _run_path(record_path: str, run: Mapping[str, Any]) -> str:
    """A run record finding's path as a path into the case's run: ``$.run`` for a
    record member the run does not give (a run's ``id`` is its ``execution_id``)."""
    path = _rebase(record_path, "$.run", _RUN_RECORD_TO_INPUT)
    steps = json_path_steps(path)
    if steps is None or len(steps) < 2 or steps[1] in run:
        return path
    return "$.run"


def runrecord_project(case: Any) -> Any:
    from session_contracts.journal import SessionEvent
    from session_contracts.runrecord import project_run_record

    case = _case_object(case)
    shape = _input_findings("RunrecordProjectInput", case)
    run = case.get("run")
    if isinstance(run, Mapping) and "flight_recording" in run:
        # Left open by the schema (the run-record schema judges its members): an
        # object, and null is not an absent recording.
        found = _type_finding(run["flight_recording"], "$.run.flight_recording", "object")
        shape.extend([found] if found else [])
    events, findings = _events(case)
    findings.extend(shape)
    if findings:
        raise _rejected(findings)
    try:
        return project_run_record(
            _run_spec(case["run"]),
            [SessionEvent.from_json(event, checked=True) for event in events.events],
        )
    except InvalidDocument as exc:
        # The library names the record it would build; the input is the run.  A
        # record member the run does not give (a run's id is its execution_id) is
        # derived from the run as a whole.
        raise _rejected(
            [
                Finding(_run_path(f.path, case["run"]), f.code, f.message, f.hint)
                for f in exc.findings
            ]
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise Rejected("invalid_run", "$.run", str(exc)) from None


def runrecord_provider_call_response(case: Any) -> Any:
    from session_contracts.redaction.policy import default_policy
    from session_contracts.runrecord import provider_call_response

    case = _case_object(case)
    _check(_input_findings("RunrecordProviderCallResponseInput", case))

    try:
        return provider_call_response(
            case["response"], execution_id=case.get("execution_id"), policy=default_policy()
        )
    except InvalidDocument as exc:
        # The payload's execution_id is the case's own, not the response's.
        raise _reject(exc, "$.response", {"$.execution_id": "$.execution_id"}) from None


def _stored_events(case: Mapping[str, Any]) -> tuple[list[Any], list[Finding]]:
    """A case's Harn stored events and the findings against them: each event's own, and
    each id that does not increase on the session's one before (Harn's store numbers
    each session's events in append order)."""
    from session_contracts.recap import StoredEventOrder

    raw = case["storedEvents"]
    if not isinstance(raw, list):
        return [], [
            Finding(
                "$.storedEvents",
                "wrong_type",
                "storedEvents is not an array",
                "send the session store's events as an array",
            )
        ]
    order = StoredEventOrder()
    findings = [
        _rebased(finding, f"$.storedEvents[{index}]")
        for index, event in enumerate(raw)
        for finding in order.findings(event)
    ]
    return raw, findings


def _query_findings(case: Mapping[str, Any]) -> list[Finding]:
    from session_contracts.recap import query_echo

    if "query" not in case:
        return [
            Finding(
                "$.query",
                "required",
                "the case has no query",
                'send the recap query, such as {"sessionId": "sess-1"}',
            )
        ]
    try:
        query_echo(case["query"])
    except InvalidDocument as exc:
        return [
            Finding(_rebase(f.path, "$.query"), f.code, f.message, f.hint) for f in exc.findings
        ]
    return []


def _recap_of_stored(case: Mapping[str, Any], unknown: Sequence[Finding]) -> Any:
    """recap.project over Harn's stored events, held as Harn's in-memory store holds them."""
    from session_contracts.recap import recap_of_stored_events
    from session_contracts.recap.service import unavailable

    if "events" in case:
        raise Rejected(
            "invalid_case", "$", "give the session's events as events or as storedEvents, not both"
        )
    events, journal_state, admission, damaged = _recap_input(case, _stored_events(case), unknown)
    if damaged:
        raise Rejected(
            "invalid_case",
            "$.damagedEventIds",
            "damaged rows are a journal condition: give them with events, not storedEvents",
        )
    if journal_state == "unavailable":
        return unavailable("journal_unavailable").envelope
    if admission == "refused":
        return unavailable("admission_terminal").envelope
    return recap_of_stored_events(events, case["query"]).envelope


_RECAP_MEMBERS = ("events", "storedEvents", "query", "journal", "admission", "damagedEventIds")


def recap_project(case: Any) -> Any:
    """Write the case's events to a fresh journal and ask the recap service:
    the same path the HTTP, ACP and CLI adapters take, the journal held in memory
    unless the case presents a runtime condition (``MemoryJournal``, read as its file
    would be). Harn's stored events (``storedEvents``) are read as Harn's in-memory
    store reads them."""
    # Checking and writing 32,768 events makes hundreds of thousands of objects and no
    # cycles: the collector, held off, no longer walks them all again and again.
    with paused_gc():
        return _recap_project(case)


def _recap_project(case: Any) -> Any:
    from session_contracts.journal import MemoryJournal, SqliteJournal, damage_events
    from session_contracts.recap import RecapService
    from session_contracts.recap.service import MemoryRecapService

    case = _case_object(case)
    unknown = _members(case, "$", (), _RECAP_MEMBERS)
    if "storedEvents" in case:
        return _recap_of_stored(case, unknown)
    events, journal_state, admission, damaged = _recap_input(case, _events(case), unknown)
    if journal_state == "available" and admission == "open" and not damaged:
        # A healthy runtime: the fresh journal is read once and thrown away, so it is
        # held in memory and read as its file would be (docs/journal.md, "In memory").
        with MemoryRecapService(MemoryJournal.of_checked(events)) as service:
            return _recap_query(service, case["query"])
    with _scratch(case, "sc-recap-") as folder:
        path = _new_store(Path(folder) / "journal.sqlite", "journal")
        with SqliteJournal.open(path, create=True) as journal:
            if events.events:
                journal.append_checked(events)
        if damaged:
            damage_events(path, damaged, DAMAGED_ROW)
        if journal_state == "unavailable":
            path = Path(folder) / "no-journal-here" / "journal.sqlite"
        with RecapService(path) as service:
            if admission == "refused":
                service.close()
            return _recap_query(service, case["query"])


def _recap_query(service: RecapService, query: Any) -> Any:
    """The service's envelope for the case's query; an invalid query is rejected."""
    try:
        return service.query(query).envelope
    except InvalidDocument as exc:
        raise _reject(exc, "$.query") from None


_Events = TypeVar("_Events")


def _recap_input(
    case: Mapping[str, Any],
    events_read: tuple[_Events, list[Finding]],
    unknown: Sequence[Finding],
) -> tuple[_Events, str, str, list[int]]:
    """A recap case's events (as ``events_read`` read them, journal or stored events),
    journal state, admission and damaged ids; rejected with every finding against the
    events, the query and unknown members together."""
    events, findings = events_read
    findings.extend(_query_findings(case))
    findings.extend(unknown)
    if findings:
        raise _rejected(findings)
    return (events, *_recap_conditions(case))


_RECAP_CONDITIONS = ("journal", "admission", "damagedEventIds")


def _recap_conditions(case: Mapping[str, Any]) -> tuple[str, str, list[int]]:
    """The runtime conditions a recap case may present (docs/protocol.md, recap.project),
    judged by their entries of RecapProjectInput, every finding together (a ``journal``
    of another JSON type is both ``wrong_type`` and ``not_allowed_value``; a damaged id
    below 1 is ``minimum``)."""
    # Only the conditions' own members are judged: the schema's entries for them are
    # all that can find anything at their paths (the events are not read again here).
    conditions = {name: case[name] for name in _RECAP_CONDITIONS if name in case}
    _check(
        [
            finding
            for finding in _input_findings("RecapProjectInput", conditions)
            if any(
                finding.path == f"$.{name}" or finding.path.startswith(f"$.{name}[")
                for name in _RECAP_CONDITIONS
            )
        ]
    )
    return (
        case.get("journal", "available"),
        case.get("admission", "open"),
        case.get("damagedEventIds", []),
    )


# What a damaged row holds instead of its canonical event: not JSON at all.
DAMAGED_ROW = '{"event_id": 1, "damaged'


def redaction_apply(case: Any) -> Any:
    """Redact ``text`` (or the JSON ``value``) with the built-in ``policy``."""
    from session_contracts.redaction.vectors import POLICY_NAMES, apply

    # RedactionApplyInput is closed.
    case = _case_object(case)
    _check(_members(case, "$", (), ("text", "value", "policy")))
    if case.get("policy") not in POLICY_NAMES:
        raise Rejected("invalid_case", "$.policy", "policy is default or extended")
    if ("text" in case) == ("value" in case) or not isinstance(case.get("text", ""), str):
        raise Rejected("invalid_case", "$", "give exactly one of text (a string) and value")
    return apply(case)


# The reference claims every contract.
HELLO_CONTRACTS = tuple(contract.name for contract in CONTRACTS)

HANDLERS: dict[str, Handler] = {
    "recap.project": recap_project,
    "runrecord.project": runrecord_project,
    "runrecord.provider_call_response": runrecord_provider_call_response,
    "document.roundtrip": document_roundtrip,
    "health.reduce": health_reduce,
    "health.a2a_status_update": health_a2a_status_update,
    "feedback.run": feedback_run,
    "redaction.apply": redaction_apply,
}


def main() -> int:
    return serve(
        HANDLERS,
        implementation={
            "name": "session-contracts reference producer",
            "version": __version__,
            "language": "python",
        },
        contracts=list(HELLO_CONTRACTS),
    )
