"""Explicit cases at every byte and item limit and every enum of the contracts.

Computed from the schemas, not listed by hand: for each document (a bundled
example, or the input of an operation that is a document of its contract),
the validator is asked which of its strings carry an ``x-maxUtf8Bytes``
limit, which arrays a ``maxItems`` limit, and which strings an ``enum`` or
``const``, and where each limit lies (a binary search on the validator's own
finding). Each limit is then met exactly and passed by one byte in 1-, 2-,
3- and 4-byte UTF-8 text, and by a multibyte character that straddles it:
every ASCII case lets bytes and characters agree, so a producer counting
characters or UTF-16 units passes them all. Arrays get exactly the limit of
items and one more. Every enum and const value is sent where the schema
allows it, and near misses (another case, padded, a neighbour's spelling)
where it does not. A variant the validator refuses for any other reason than
the one it is about is dropped, so the reference's verdict on each case is
the rule the case names.

The variants reach a check through the operation whose rules impose them:
documents through ``roundtrip.identity`` (kept exactly at the limit, refused
past it), checkpoint and start requests through ``feedback.semantics``
(``limit_exceeded`` past a limit), health observation streams through
``health.semantics``, the events of a recap journal through ``recap.semantics``, the
identifiers a provider response copies into its payload through
``runrecord.response-semantics``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from session_contracts.conformance.judge.cases.explicit import ExplicitCase
from session_contracts.errors import json_path
from session_contracts.validation.validator import default_validator

__all__ = [
    "Variant",
    "document_limit_cases",
    "feedback_limit_cases",
    "health_limit_cases",
    "limit_variants",
    "provider_response_limit_cases",
    "recap_limit_cases",
    "sized_texts",
]

Path = tuple[str | int, ...]

# One character of each UTF-8 width: ASCII, Latin-1, CJK, an emoji (two UTF-16 units).
WIDTHS = {1: "a", 2: "\u00e9", 3: "\u8a9e", 4: "\U0001f600"}


@dataclass(frozen=True, slots=True)
class Variant:
    """One document changed at one place, with whether the contract accepts it."""

    document: Any
    valid: bool
    why: str
    where: Path = ()  # the value changed
    limit: int = 0  # the byte limit it meets or passes (0: another rule)


def _schema_nodes(schemas: Sequence[Any]) -> Iterator[dict[str, Any]]:
    """Every schema object of ``schemas``, subschemas included."""
    pending: list[Any] = list(schemas)
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            yield node
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


def _all_schemas() -> list[Any]:
    return list(default_validator().schema_set.schemas.values())


@functools.cache
def _limits(keyword: str, doctype: str) -> tuple[int, ...]:
    """Every value of ``keyword`` in the schema of ``doctype``, ascending: a limit met in
    one of its documents is one of them."""
    schema_set = default_validator().schema_set
    schema = schema_set.schemas[schema_set.document_type(doctype).schema_id]
    values = {n[keyword] for n in _schema_nodes([schema]) if isinstance(n.get(keyword), int)}
    return tuple(sorted(values))


def _limit_of(over: Callable[[int], bool], limits: Sequence[int]) -> int | None:
    """The limit ``over`` (true past it) shows, trying the schema's limits in turn."""
    for limit in limits:
        if over(limit + 1):
            return None if over(limit) else limit
    return None


@functools.cache
def _enum_lists() -> tuple[tuple[str, ...], ...]:
    """Every list of string values an ``enum`` (or a ``const``) of the schemas allows."""
    found: set[tuple[str, ...]] = set()
    for node in _schema_nodes(_all_schemas()):
        if isinstance(node.get("enum"), list):
            found.add(tuple(v for v in node["enum"] if isinstance(v, str)))
        if isinstance(node.get("const"), str):
            found.add((node["const"],))
    return tuple(sorted(values for values in found if values))


def _leaves(document: Any, kind: type) -> Iterator[Path]:
    """Where ``document`` holds a value of ``kind``."""
    pending: list[tuple[Any, Path]] = [(document, ())]
    while pending:
        node, where = pending.pop(0)
        if isinstance(node, kind) and not isinstance(node, bool):
            yield where
        if isinstance(node, dict):
            pending.extend((value, (*where, key)) for key, value in node.items())
        elif isinstance(node, list):
            # Items of one shape stand for each other; a union's variants each get a visit.
            shapes = set()
            for index, item in enumerate(node):
                shape = tuple(sorted(item)) if isinstance(item, dict) else type(item).__name__
                if shape not in shapes:
                    shapes.add(shape)
                    pending.append((item, (*where, index)))


def _set(document: Any, where: Path, value: Any) -> Any:
    """``document`` with ``value`` at ``where``: the containers on the path are new, the
    rest is shared with ``document`` (nothing here changes a document in place, and a
    case is copied before it is sent: certify.explicit_trials)."""
    if not where:
        return value
    head, *rest = where
    changed = copy.copy(document)
    changed[head] = _set(document[head], tuple(rest), value)
    return changed


def _codes(doctype: str, document: Any) -> set[tuple[str, str]]:
    return {(f.path, f.code) for f in default_validator().validate(doctype, document)}


def sized_texts(limit: int) -> list[tuple[str, str, bool]]:
    """(what, text, within) at a byte limit: exactly ``limit`` bytes and ``limit`` + 1 in
    text of each UTF-8 width (ASCII filling what the width does not divide), and a
    character of each multibyte width whose bytes straddle the limit."""
    texts = []
    for width, char in WIDTHS.items():
        for size, within in ((limit, True), (limit + 1, False)):
            count, rest = divmod(size, width)
            what = f"{size} bytes of {width}-byte text ({count + rest} characters)"
            texts.append((what, "a" * rest + char * count, within))
    for width, char in list(WIDTHS.items())[1:]:
        texts.append(
            (
                f"{limit - 1} ASCII bytes and a {width}-byte character straddling byte {limit}",
                "a" * (limit - 1) + char,
                False,
            )
        )
    return texts


def _byte_limit(doctype: str, document: Any, where: Path) -> int | None:
    path = json_path(where)

    def over(size: int) -> bool:
        return (path, "max_utf8_bytes") in _codes(doctype, _set(document, where, "a" * size))

    return _limit_of(over, _limits("x-maxUtf8Bytes", doctype))


def _item_limit(doctype: str, document: Any, where: Path, item: Any) -> int | None:
    path = json_path(where)

    def over(count: int) -> bool:
        return (path, "max_items") in _codes(doctype, _set(document, where, [item] * count))

    return _limit_of(over, _limits("maxItems", doctype))


def _get(document: Any, where: Path) -> Any:
    node = document
    for part in where:
        node = node[part]
    return node


def _only(doctype: str, document: Any, path: str, code: str) -> bool:
    """Whether the document's one finding is ``code`` at ``path``."""
    return _codes(doctype, document) == {(path, code)}


def _near_misses(value: str, allowed: Sequence[str]) -> list[tuple[str, str]]:
    neighbour = value.replace("_", "-") if "_" in value else value.replace("-", "_")
    misses = [
        ("in upper case", value.upper()),
        ("capitalized", value[:1].upper() + value[1:]),
        ("padded with a space", f" {value}"),
        ("with _ and - exchanged", neighbour),
        ("without its last character", value[:-1]),
    ]
    return [(what, miss) for what, miss in misses if miss and miss not in allowed]


# Whether the variants of the value at a path are wanted, by the limit they meet (0: an
# enum or item variant; None: any of them). Each is asked before the validator is.
Wanted = Callable[[Path, int | None], bool]


def _every(where: Path, limit: int | None) -> bool:
    return True


def limit_variants(doctype: str, document: Any, wanted: Wanted = _every) -> list[Variant]:
    """Every limit and enum variant of one valid document (see the module docstring),
    but those ``wanted`` declines, which are not computed."""
    if _codes(doctype, document):
        return []
    variants = []
    for where in _leaves(document, str):
        if not wanted(where, None):
            continue
        path = json_path(where)
        limit = _byte_limit(doctype, document, where)
        if limit is not None and wanted(where, limit):
            for what, text, within in sized_texts(limit):
                changed = _set(document, where, text)
                verdict = "kept" if within else "refused (max_utf8_bytes)"
                if within and _codes(doctype, changed):
                    continue
                if not within and not _only(doctype, changed, path, "max_utf8_bytes"):
                    continue
                why = f"{doctype} {path} (x-maxUtf8Bytes {limit}): {what}, {verdict}"
                variants.append(Variant(changed, within, why, where, limit))
        if wanted(where, 0):
            variants.extend(_enum_variants(doctype, document, where))
    for where in _leaves(document, list):
        if wanted(where, 0):
            variants.extend(_item_variants(doctype, document, where))
    return variants


def _enum_variants(doctype: str, document: Any, where: Path) -> list[Variant]:
    path = json_path(where)
    value = _get(document, where)
    if not _only(doctype, _set(document, where, "\u0000"), path, "not_allowed_value"):
        return []
    allowed = sorted({v for values in _enum_lists() if value in values for v in values})
    variants = []
    for candidate in allowed:
        changed = _set(document, where, candidate)
        if not _codes(doctype, changed):
            variants.append(
                Variant(
                    changed, True, f"{doctype} {path} = {candidate!r}: a value of its enum", where
                )
            )
    for what, miss in _near_misses(value, allowed):
        changed = _set(document, where, miss)
        if _only(doctype, changed, path, "not_allowed_value"):
            why = f"{doctype} {path} = {miss!r}, {value!r} {what}: not a value of its enum"
            variants.append(Variant(changed, False, why, where))
    return variants


def _item_variants(doctype: str, document: Any, where: Path) -> list[Variant]:
    path = json_path(where)
    items = _get(document, where)
    # An empty array is probed with a string item where the contract takes one.
    item = items[0] if items else "x"
    if not items and _codes(doctype, _set(document, where, [item])):
        return []
    limit = _item_limit(doctype, document, where, item)
    if limit is None:
        return []
    variants = []
    for count in (limit, limit + 1):
        changed = _set(document, where, [copy.deepcopy(item) for _ in range(count)])
        within = count <= limit
        if (within and _codes(doctype, changed)) or (
            not within and not _only(doctype, changed, path, "max_items")
        ):
            continue
        verdict = "kept" if within else "refused (max_items)"
        why = f"{doctype} {path} (maxItems {limit}): {count} items, {verdict}"
        variants.append(Variant(changed, within, why, where))
    return variants


def _member(where: Path) -> tuple[str | int, ...]:
    """A value's member and the member holding it: the same type in another document."""
    return tuple(part for part in where if isinstance(part, str))[-2:]


def document_limit_cases() -> list[ExplicitCase]:
    """Every limit and enum variant of the bundled examples, for ``roundtrip.identity``.

    A member met in two document types of one contract (a progress report inside a
    checkpoint and inside an observation) is varied in the first only: the same
    definition, and a case count that stays in proportion.
    """
    from session_contracts.conformance.judge.cases.operations import bundled_examples
    from session_contracts.contracts import CONTRACT_DOCTYPES

    prefixes = tuple(p for contract in CONTRACT_DOCTYPES.values() for p in contract)
    examples = bundled_examples()
    cases = []
    varied: dict[tuple[Any, ...], str] = {}
    for doctype in sorted(examples):
        if not doctype.startswith(prefixes):
            continue

        def unvaried(where: Path, limit: int | None, doctype: str = doctype) -> bool:
            return varied.get((doctype.split(".")[0], _member(where)), doctype) == doctype

        for variant in limit_variants(doctype, examples[doctype], unvaried):
            key = (doctype.split(".")[0], _member(variant.where))
            if varied.setdefault(key, doctype) != doctype:
                continue
            document = {"doctype": doctype, "document": variant.document}
            cases.append(ExplicitCase("document.roundtrip", document, variant.why))
    return cases


_AT = 1_700_000_000_000


def feedback_limit_cases() -> list[ExplicitCase]:
    """The start and checkpoint requests' variants, each in a run of its own: a start, the
    request, an observe (``feedback.semantics``; a refused request is limit_exceeded or
    invalid_request at the path of its finding)."""
    from session_contracts.conformance.judge.cases.operations import bundled_examples

    examples = bundled_examples()
    start = copy.deepcopy(examples["session-feedback.start"])
    checkpoint = copy.deepcopy(examples["session-feedback.checkpoint"])
    # The first checkpoint of a session carries version 1, observed when it is made.
    checkpoint.update(session_id=start["session_id"], session_version=1)
    usage = checkpoint.get("usage")
    if isinstance(usage, dict):
        usage["observed_at_unix_ms"] = _AT
    observe = {
        "at_unix_ms": _AT + 1,
        "call": "observe",
        "session_id": start["session_id"],
        "can_read_raw_receipts": True,
    }

    def run(start_request: Any, checkpoint_request: Any) -> dict[str, Any]:
        return {
            "steps": [
                {"at_unix_ms": _AT, "call": "start", "request": start_request},
                {"at_unix_ms": _AT, "call": "checkpoint", "request": checkpoint_request},
                observe,
            ]
        }

    cases = [
        ExplicitCase("feedback.run", run(v.document, checkpoint), v.why)
        for v in limit_variants("session-feedback.start", start)
        if v.document.get("session_id") == start["session_id"]
    ]
    cases += [
        ExplicitCase("feedback.run", run(start, v.document), v.why)
        for v in limit_variants("session-feedback.checkpoint", checkpoint)
        if v.document.get("session_id") == start["session_id"]
    ]
    return cases


def health_limit_cases() -> list[ExplicitCase]:
    """The observation stream's variants as ``health.reduce`` inputs (``health.semantics``:
    streams without a transcript reset)."""
    from session_contracts.conformance.judge.cases.operations import bundled_examples

    stream = copy.deepcopy(bundled_examples()["health-observation.stream"])
    stream["observations"] = [
        o for o in stream["observations"] if o.get("kind") != "transcript_reset"
    ]
    return [
        ExplicitCase("health.reduce", v.document, v.why)
        for v in limit_variants("health-observation.stream", stream)
        if v.document.get("session_id") == stream["session_id"]
    ]


_LARGE = 65_536


def _richest_journal() -> dict[str, Any]:
    """The recap.project golden fixture whose journal holds the most kinds of events and
    which the reference projects to an available snapshot: a journal whose every event
    kind is read, so each member of each event gets its variants."""
    from session_contracts.conformance.judge.cases.explicit import golden_corpus
    from session_contracts.conformance.reference.producer import HANDLERS

    ranked = sorted(
        (
            (-len({event.get("kind") for event in case_input["events"]}), name, case_input)
            for operation, name, _, case_input in golden_corpus()
            if operation == "recap.project" and isinstance(case_input.get("events"), list)
        ),
        key=lambda item: item[:2],
    )
    for _, _, case_input in ranked:
        answer = HANDLERS["recap.project"](copy.deepcopy(case_input))
        if answer.get("state") == "available":
            return copy.deepcopy(dict(case_input))
    raise LookupError("no recap.project fixture projects to an available snapshot")


def recap_limit_cases() -> list[ExplicitCase]:
    """Each event of a journal varied in turn (``recap.semantics``: an event past a limit
    is refused at its path); a member shared by events is varied in the first."""
    journal = _richest_journal()
    cases = []
    varied: dict[tuple[Any, ...], tuple[int, Path]] = {}
    for index, event in enumerate(journal["events"]):

        def keys(where: Path, limit: int | None, event: Any = event) -> list[tuple[Any, ...]]:
            # The envelope is every kind's; a payload member is its kind's. A text limit
            # of a mebibyte (one definition, many members) is met once: its cases cost
            # a mebibyte each.
            kind = event.get("kind") if where[:1] == ("payload",) else None
            if limit is None:
                return [("large",), (kind, where)]
            return [("large",) if limit > _LARGE else (kind, where)]

        def unvaried(where: Path, limit: int | None, index: int = index) -> bool:
            return any(
                varied.get(key, (index, where)) == (index, where) for key in keys(where, limit)
            )

        for variant in limit_variants("session-event.event", event, unvaried):
            [key] = keys(variant.where, variant.limit)
            if varied.setdefault(key, (index, variant.where)) != (index, variant.where):
                continue
            events = [*journal["events"][:index], variant.document, *journal["events"][index + 1 :]]
            why = f"event {index} of the journal, {variant.why}"
            cases.append(ExplicitCase("recap.project", {**journal, "events": events}, why))
    return cases


def provider_response_limit_cases() -> list[ExplicitCase]:
    """The identifiers ``runrecord.provider_call_response`` copies into its payload verbatim,
    ``call_id`` and ``execution_id``, at the payload's byte limit and one byte past it in text
    of each UTF-8 width and straddling it (``runrecord.response-semantics``: kept, then
    ``max_utf8_bytes`` at ``$.response.call_id`` or ``$.execution_id``)."""
    from session_contracts.conformance.reference.producer import HANDLERS

    response = {"call_id": "call-1", "iteration": 1, "span_id": None, "text": "done"}
    payload = HANDLERS["runrecord.provider_call_response"](
        {"response": response, "execution_id": "hxe-1"}
    )
    doctype = "run-record.provider-call-response"
    cases = []
    for member, where in (("call_id", "$.response.call_id"), ("execution_id", "$.execution_id")):
        limit = _byte_limit(doctype, payload, (member,))
        if limit is None:
            raise LookupError(f"{doctype} {member} has no byte limit")
        for what, text, within in sized_texts(limit):
            case_input: dict[str, Any] = {"response": dict(response), "execution_id": "hxe-1"}
            if member == "call_id":
                case_input["response"]["call_id"] = text
            else:
                case_input["execution_id"] = text
            verdict = "kept" if within else f"refused (max_utf8_bytes at {where})"
            why = f"{where} (x-maxUtf8Bytes {limit} in the payload): {what}, {verdict}"
            cases.append(ExplicitCase("runrecord.provider_call_response", case_input, why))
    return cases
