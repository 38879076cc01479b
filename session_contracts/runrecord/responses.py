"""Per-turn parsed output (seed 003): the ``provider_call_response`` payload, as pure functions.

A model response (``call_id``, ``iteration``, ``span_id``, raw ``text`` and the
provider-native ``tool_calls``) becomes the payload Harn appends on the
``agent.transcript.llm`` topic (``run-record.provider-call-response``):

* ``parsed_tool_calls`` / ``parsed_tool_calls_ref``: Harn's normalized parse
  (:func:`parse_tool_calls`) of the provider-native calls, the text tool
  protocol ``<tool_call>{json}</tool_call>`` and its legacy ``name({...})``
  line.  When the parse is non-empty and JSON-equal to ``tool_calls`` the
  payload says ``parsed_tool_calls_ref: "tool_calls"``; otherwise (empty,
  distinct, or holding text-protocol calls) it carries the parse inline.
* ``loop_state``: the last complete ``## LOOP_STATE`` / ``## END_LOOP_STATE``
  block, decoded (:func:`decode_loop_state`), or ``null``.
* everything is redacted with the transcript policy before it is returned,
  so nothing unredacted can reach a store.

What is wrong with the *model's* output (an unterminated block, a call that
does not parse) never raises: the payload follows the seed (``loop_state``
null, the call left out of the parse) and :func:`parse_provider_response`
reports it as warning findings.  ``docs/runrecord.md`` is the specification.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from session_contracts.doctypes import PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE
from session_contracts.errors import Finding, InvalidDocument, json_path
from session_contracts.jsontext.canonical import MAX_SAFE_INTEGER, canonical_bytes
from session_contracts.jsontext.frozen import thaw_json
from session_contracts.jsontext.strict import loads_strict
from session_contracts.redaction.engine import Detection, RedactionPolicy, redact_text, redact_value
from session_contracts.validation.validator import default_validator
from session_contracts.validation.xkeywords import json_equal

__all__ = [
    "LOOP_STATE_BEGIN",
    "LOOP_STATE_END",
    "LOOP_STATE_MALFORMED",
    "PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE",
    "TOOL_CALLS_REFERENCE",
    "TOOL_CALL_UNPARSED",
    "ParsedResponse",
    "decode_loop_state",
    "parse_provider_response",
    "parse_tool_calls",
    "provider_call_response",
    "resolve_parsed_tool_calls",
]

TOOL_CALLS_REFERENCE: Final = "tool_calls"
LOOP_STATE_BEGIN: Final = "## LOOP_STATE"
LOOP_STATE_END: Final = "## END_LOOP_STATE"

# Warning codes about the model's output; the payload is still produced.
LOOP_STATE_MALFORMED: Final = "loop_state_malformed"
TOOL_CALL_UNPARSED: Final = "tool_call_unparsed"

_MAX_NAME_BYTES: Final = 256  # ParsedToolCall.name and .id (x-maxUtf8Bytes)
# A secret found in one place is scrubbed from every other stored string; a
# very short "secret" (a 2-character password) would shred unrelated text.
_MIN_SCRUB_LENGTH: Final = 8

_TOOL_CALL_OPEN: Final = "<tool_call>"
_TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_PROTOCOL_KEYS: Final = frozenset({"id", "name", "arguments"})
# The legacy form: a tool name at the start of a line, then `(`, a JSON object, `)`.
_LEGACY_HEAD = re.compile(r"^[ \t]*(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)\([ \t]*(?=\{)", re.MULTILINE)
_LEGACY_TAIL = re.compile(r"[ \t]*\)[ \t]*(?:\r?\n|\r|\Z)")
_JSON_NUMBER = re.compile(
    r"-?(?:0|[1-9][0-9]*)(?P<fraction>\.[0-9]+)?(?P<exponent>[eE][+-]?[0-9]+)?"
)
_SCANNER = json.JSONDecoder()

_TRUE_FALSE: Final = {"true": True, "false": False}
_NULLS: Final = frozenset({"null", "nil"})


# ---------------------------------------------------------------------------- text lines


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """``(line number, start offset, line)`` for each ``\\n``-separated line (``\\r`` dropped)."""
    start, number = 0, 1
    while True:
        end = text.find("\n", start)
        if end == -1:
            yield number, start, text[start:].removesuffix("\r")
            return
        yield number, start, text[start:end].removesuffix("\r")
        start, number = end + 1, number + 1


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _warning(path: str, code: str, message: str, hint: str) -> Finding:
    return Finding(path, code, message, hint, level="warning")


# ---------------------------------------------------------------------------- loop state


@dataclass(frozen=True, slots=True)
class _LoopStateBlock:
    """The raw ``(key, value, line)`` of the last complete block's pairs, and where blocks lie."""

    pairs: tuple[tuple[str, str, str], ...] | None
    spans: tuple[tuple[int, int], ...]  # [start, end) offsets of every complete block
    findings: tuple[Finding, ...]


def _loop_state_block(text: str) -> _LoopStateBlock:
    findings: list[Finding] = []
    hint = f"close the block with a {LOOP_STATE_END!r} line; loop_state is null without one"
    blocks: list[list[tuple[int, str]]] = []
    spans: list[tuple[int, int]] = []
    current: list[tuple[int, str]] | None = None
    opened = (0, 0)  # line number, offset
    for number, offset, line in _lines(text):
        marker = line.strip()
        if marker == LOOP_STATE_BEGIN:
            if current is not None:
                findings.append(
                    _warning(
                        "$.text",
                        LOOP_STATE_MALFORMED,
                        f"the {LOOP_STATE_BEGIN} block opened at line {opened[0]} is opened "
                        f"again at line {number} before it ends; the first one is dropped",
                        hint,
                    )
                )
            current, opened = [], (number, offset)
        elif marker == LOOP_STATE_END:
            if current is None:
                findings.append(
                    _warning(
                        "$.text",
                        LOOP_STATE_MALFORMED,
                        f"line {number} ends a {LOOP_STATE_BEGIN} block that was never opened",
                        f"open the block with a {LOOP_STATE_BEGIN!r} line",
                    )
                )
                continue
            blocks.append(current)
            spans.append((opened[1], offset + len(line)))
            current = None
        elif current is not None:
            current.append((number, line))
    if current is not None:
        findings.append(
            _warning(
                "$.text",
                LOOP_STATE_MALFORMED,
                f"the {LOOP_STATE_BEGIN} block opened at line {opened[0]} never ends",
                hint,
            )
        )
    if not blocks:
        return _LoopStateBlock(None, tuple(spans), tuple(findings))
    pairs: list[tuple[str, str, str]] = []
    for number, line in blocks[-1]:
        if not line.strip():
            continue  # blank lines separate nothing
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            findings.append(
                _warning(
                    "$.text",
                    LOOP_STATE_MALFORMED,
                    f"line {number} of the loop-state block is not `key: value`; it is skipped",
                    "write one `key: value` pair a line",
                )
            )
            continue
        pairs.append((key.strip(), value.strip(), line))
    return _LoopStateBlock(tuple(pairs), tuple(spans), tuple(findings))


def _primitive(value: str) -> Any:
    """``true``/``false``, ``null``/``nil`` and JSON numbers become primitives; the rest stays."""
    if value in _TRUE_FALSE:
        return _TRUE_FALSE[value]
    if value in _NULLS:
        return None
    number = _JSON_NUMBER.fullmatch(value)
    if number is None:
        return value
    if number["fraction"] is None and number["exponent"] is None:
        integer = int(value)
        # Beyond 2**53 a JSON number stops being exact (and the journal's
        # canonical form refuses it): the value stays the string it was.
        return integer if abs(integer) <= MAX_SAFE_INTEGER else value
    decimal = float(value)
    return decimal if math.isfinite(decimal) else value


def decode_loop_state(text: str) -> tuple[dict[str, Any] | None, tuple[Finding, ...]]:
    """The decoded last complete loop-state block of ``text`` (unredacted), with warnings.

    ``None`` when no complete block exists.  Lines are ``key: value`` (split at
    the first colon, both sides trimmed); a repeated key keeps its last value.
    """
    block = _loop_state_block(text)
    if block.pairs is None:
        return None, block.findings
    return {key: _primitive(value) for key, value, _ in block.pairs}, block.findings


# ---------------------------------------------------------------------------- tool calls


def _json_object(value: Any, text_is: str, value_is: str) -> Mapping[str, Any] | str:
    """``value`` (parsed first when it is a JSON text) as an object, or why it is not one:
    ``{text_is} not JSON (code)`` or ``{value_is} not a JSON object``."""
    if isinstance(value, str):
        try:
            value = loads_strict(value)
        except InvalidDocument as exc:
            return f"{text_is} not JSON ({exc.findings[0].code})"
    if not isinstance(value, Mapping):
        return f"{value_is} not a JSON object"
    return value


def _arguments(value: Any) -> dict[str, Any] | str:
    """A call's arguments as an object, or why they are not one."""
    if value is None or value == "":
        return {}
    # OpenAI sends arguments as a JSON text.
    found = _json_object(value, "its arguments text is", "its arguments are")
    if isinstance(found, str):
        return found
    arguments: dict[str, Any] = thaw_json(found)
    return arguments


def _normalized(call_id: Any, name: Any, arguments: Any) -> dict[str, Any] | str:
    if not isinstance(name, str) or not name:
        return "it has no tool name"
    if call_id == "":
        call_id = None
    if call_id is not None and not isinstance(call_id, str):
        return "its id is not a string"
    parsed = _arguments(arguments)
    if isinstance(parsed, str):
        return parsed
    return {"id": call_id, "name": name, "arguments": parsed}


def _normalize_native(call: Any) -> dict[str, Any] | str:
    """One provider-native call as ``{id, name, arguments}``, or why it cannot be one."""
    if not isinstance(call, Mapping):
        return "it is not a JSON object"
    function = call.get("function")
    if isinstance(function, Mapping):  # OpenAI chat completions
        return _normalized(call.get("id"), function.get("name"), function.get("arguments"))
    if call.get("type") == "tool_use":  # Anthropic messages
        return _normalized(call.get("id"), call.get("name"), call.get("input"))
    gemini = call.get("functionCall")
    if isinstance(gemini, Mapping):  # Gemini
        return _normalized(gemini.get("id"), gemini.get("name"), gemini.get("args"))
    if call.get("type") == "function_call":  # OpenAI responses
        return _normalized(call.get("call_id"), call.get("name"), call.get("arguments"))
    return _normalized(call.get("id"), call.get("name"), call.get("arguments"))


def _protocol_call(body: str) -> dict[str, Any] | str:
    value = _json_object(body, "it is", "it is")
    if isinstance(value, str):
        return value
    unknown = set(value) - _PROTOCOL_KEYS
    if unknown:
        return f"it has members other than id, name and arguments ({len(unknown)})"
    if "arguments" in value and not isinstance(value["arguments"], dict):
        return "its arguments are not a JSON object"
    return _normalized(value.get("id"), value.get("name"), value.get("arguments"))


def _inside(offset: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= offset < end for start, end in spans)


def _text_calls(
    text: str, loop_state_spans: Sequence[tuple[int, int]]
) -> tuple[list[tuple[int, dict[str, Any]]], list[Finding]]:
    """Calls of the text protocol and the legacy form, with their offsets, outside loop state."""
    calls: list[tuple[int, dict[str, Any]]] = []
    findings: list[Finding] = []
    hint = (
        'write <tool_call>{"name": ..., "arguments": {...}}</tool_call> or, on a line of its '
        "own, name({...})"
    )
    blocks: list[tuple[int, int]] = []
    for match in _TOOL_CALL_BLOCK.finditer(text):
        blocks.append(match.span())
        if _inside(match.start(), loop_state_spans):
            continue
        call = _protocol_call(match[1])
        if isinstance(call, str):
            findings.append(
                _warning(
                    "$.text",
                    TOOL_CALL_UNPARSED,
                    f"the <tool_call> block at line {_line_of(text, match.start())} is not "
                    f"a tool call: {call}",
                    hint,
                )
            )
        else:
            calls.append((match.start(), call))
    position = text.find(_TOOL_CALL_OPEN)
    while position != -1:
        if not _inside(position, blocks) and not _inside(position, loop_state_spans):
            findings.append(
                _warning(
                    "$.text",
                    TOOL_CALL_UNPARSED,
                    f"the <tool_call> opened at line {_line_of(text, position)} is never closed",
                    hint,
                )
            )
        position = text.find(_TOOL_CALL_OPEN, position + 1)
    excluded = [*blocks, *loop_state_spans]
    for head in _LEGACY_HEAD.finditer(text):
        if _inside(head.start("name"), excluded):
            continue
        problem = _legacy_problem(text, head.end())
        if isinstance(problem, str):
            findings.append(
                _warning(
                    "$.text",
                    TOOL_CALL_UNPARSED,
                    f"line {_line_of(text, head.start('name'))} looks like a legacy tool call "
                    f"but {problem}",
                    hint,
                )
            )
            continue
        call = _normalized(None, head["name"], problem)
        if isinstance(call, str):  # cannot happen for a parsed object; kept for totality
            continue
        calls.append((head.start("name"), call))
    calls.sort(key=lambda item: item[0])
    return calls, findings


def _legacy_problem(text: str, start: int) -> dict[str, Any] | str:
    """The legacy call's argument object starting at ``start``, or what is wrong with it."""
    try:
        _, end = _SCANNER.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError):
        return "its argument is not a JSON object"
    if _LEGACY_TAIL.match(text, end) is None:
        return "the argument object is not followed by `)` and the end of the line"
    try:
        # raw_decode found the extent; the strict reader refuses NaN, duplicate keys...
        value = loads_strict(text[start:end])
    except InvalidDocument as exc:
        return f"its argument is not strict JSON ({exc.findings[0].code})"
    if not isinstance(value, dict):
        return "its argument is not a JSON object"
    return value


def _parse_tool_calls(
    text: str, tool_calls: Sequence[Any], loop_state_spans: Sequence[tuple[int, int]]
) -> tuple[list[dict[str, Any]], tuple[Finding, ...]]:
    parsed: list[dict[str, Any]] = []
    findings: list[Finding] = []
    for index, call in enumerate(tool_calls):
        normalized = _normalize_native(call)
        if isinstance(normalized, str):
            findings.append(
                _warning(
                    json_path(["tool_calls", index]),
                    TOOL_CALL_UNPARSED,
                    f"provider-native call {index} is left out of the parse: {normalized}",
                    "a call needs a tool name and object (or JSON-text) arguments",
                )
            )
        else:
            parsed.append(normalized)
    text_calls, text_findings = _text_calls(text, loop_state_spans)
    parsed.extend(call for _, call in text_calls)
    return parsed, (*findings, *text_findings)


def parse_tool_calls(
    text: str, tool_calls: Sequence[Any]
) -> tuple[list[dict[str, Any]], tuple[Finding, ...]]:
    """Harn's normalized parse (unredacted): native calls first, then text calls in text order.

    Each call is ``{id, name, arguments}``; ``id`` is ``None`` where the source
    has none (always for the legacy form).  Calls inside a complete loop-state
    block are not calls.  A call that cannot be normalized is left out and
    reported as a ``tool_call_unparsed`` warning.
    """
    return _parse_tool_calls(text, tool_calls, _loop_state_block(text).spans)


def resolve_parsed_tool_calls(payload: Mapping[str, Any]) -> list[Any] | None:
    """The parse a payload carries: the inline view, ``tool_calls`` for the reference.

    ``None`` for a row with neither member: a historical or partial row, not an
    empty parse and not an alias of ``tool_calls``.
    """
    if payload.get("parsed_tool_calls_ref") == TOOL_CALLS_REFERENCE:
        return list(thaw_json(payload.get("tool_calls", [])))
    if "parsed_tool_calls" in payload:
        return list(thaw_json(payload["parsed_tool_calls"]))
    return None


# ---------------------------------------------------------------------------- redaction


class _Redactor:
    """The transcript policy applied to every string of a payload, keys included.

    Each string is redacted on its own with its object key as context (the
    key-entropy detectors) and then as it stands in text: ``"key": "value"`` for
    JSON members, ``key: value`` for loop-state lines, so a value caught in the
    raw text is caught in the parsed view too.  A string replaced whole is
    remembered and scrubbed from every other string (:meth:`scrub`): a secret
    that only a parsed view's key revealed must not survive in ``text``.
    """

    def __init__(self, policy: RedactionPolicy) -> None:
        self.policy = policy
        self.markers = policy.whole_value_markers
        self.secrets: dict[str, str] = {}

    def text(self, value: str) -> str:
        return redact_text(value, self.policy).text

    def keyed(self, key: str | None, value: str) -> str:
        if key is None:
            return self.text(value)
        redacted: str = redact_value({key: value}, self.policy)[key]
        return redacted

    def _note(self, secret: str, marker: str) -> None:
        if len(secret) >= _MIN_SCRUB_LENGTH and secret not in self.markers:
            self.secrets.setdefault(secret, marker)

    def _note_detections(self, text: str) -> None:
        self._note_context(text, redact_text(text, self.policy).detections)

    def raw_text(self, text: str) -> str:
        """The redacted response text; what the policy finds in it is remembered for the scrub."""
        result = redact_text(text, self.policy)
        self._note_context(text, result.detections)
        return result.text

    def _own(self, key: str | None, value: str) -> str:
        """The string on its own, its key as context; whole-string secrets are remembered."""
        out = self.keyed(key, value)
        if out != value:
            if out in self.markers:
                self._note(value, out)  # replaced whole: the key revealed it
            else:
                self._note_detections(value)
        return out

    def member(self, key: str | None, value: str) -> str:
        """A JSON string value, also redacted as its member ``"key": "value"`` reads in text."""
        out = self._own(key, value)
        if key is None:
            return out
        context = json.dumps({key: out}, ensure_ascii=False)
        result = redact_text(context, self.policy)
        if not result.changed:
            return out
        self._note_context(context, result.detections)
        try:
            member = loads_strict(result.text)
        except InvalidDocument:
            member = None
        if isinstance(member, dict) and isinstance(member.get(key), str):
            return str(member[key])
        # The detection reached across the JSON syntax: fail closed, the whole value goes.
        return self.policy.marker_for(result.detections[0].kind, out)

    def loop_state_pair(self, key: str, value: str, line: str) -> tuple[str, str]:
        """A loop-state pair, redacted as its raw line reads in text, then on its own."""
        result = redact_text(line, self.policy)
        if result.changed:
            self._note_context(line, result.detections)
            head = line.partition(":")[0] + ":"
            if result.text.startswith(head):
                value = result.text[len(head) :].strip()
            else:
                # The detection reached into the key: fail closed, the whole value goes.
                value = self.policy.marker_for(result.detections[0].kind, value)
        safe_key = self.text(key)
        return safe_key, self._own(safe_key, value)

    def _note_context(self, context: str, detections: Sequence[Detection]) -> None:
        # The secret as it is spelled in its context (JSON-escaped inside a
        # member): the spelling the raw text holds too.
        for detection in detections:
            secret = context[detection.start : detection.end]
            self._note(
                secret, detection.replacement or self.policy.marker_for(detection.kind, secret)
            )

    def tree(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            return self.member(key, value)
        rule = self.policy.sensitive_keys
        if key is not None and self.policy.pattern_style and rule and rule.matches(key):
            # A sensitive key's value of any type goes whole, as Harn's redact_json replaces
            # it (docs/redaction.md); the strings it held are scrubbed from the other views.
            for leaf in _strings_in(value):
                self._note(leaf, self.policy.key_placeholder)
            return self.policy.key_placeholder
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for name, item in value.items():
                safe = self.text(name)
                out[safe] = self.tree(item, safe)
            return out
        if isinstance(value, list | tuple):
            return [self.tree(item) for item in value]
        return value

    def _scrub_string(self, value: str, key: str | None) -> str:
        out = value
        for secret, marker in self._table():
            for form in _spellings(secret):
                out = out.replace(form, marker)
        # Markers cut the string into new pieces; redacting again keeps the
        # result a fixed point of the policy (what a scan of the store checks).
        return out if out == value else self.keyed(key, out)

    def scrub(self, value: Any, key: str | None = None) -> Any:
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self._scrub_string(value, key)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for name, item in value.items():
                safe = self._scrub_string(name, None)
                out[safe] = self.scrub(item, safe)
            return out
        if isinstance(value, list):
            return [self.scrub(item) for item in value]
        return value

    def _table(self) -> list[tuple[str, str]]:
        return sorted(self.secrets.items(), key=lambda item: -len(item[0]))


def _strings_in(value: Any) -> Iterator[str]:
    """Every string value inside a JSON value (object keys aside)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings_in(item)


def _spellings(secret: str) -> tuple[str, ...]:
    """The secret as it may stand in text: raw, and escaped inside a JSON string."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    return tuple(sorted(forms, key=len, reverse=True))


# ---------------------------------------------------------------------------- the payload


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    """A redacted, valid ``provider_call_response`` payload and warnings about the model output.

    Warnings (level ``warning``): ``loop_state_malformed`` (an unterminated,
    reopened or stray block, or a line that is not ``key: value``) and
    ``tool_call_unparsed`` (a call left out of the parse).  They never quote
    the text, only say where.
    """

    payload: dict[str, Any] = field(hash=False)
    findings: tuple[Finding, ...] = ()


def _raw_problems(raw: Any) -> list[Finding]:
    if not isinstance(raw, Mapping):
        return [Finding("$", "wrong_type", "the model response is not an object")]
    problems = []
    for name, kind, label in (
        ("call_id", str, "a string"),
        ("iteration", int, "an integer"),
        ("text", str, "a string"),
    ):
        if name not in raw:
            problems.append(Finding(f"$.{name}", "required", f"the response has no {name}"))
        elif not isinstance(raw[name], kind) or isinstance(raw[name], bool):
            problems.append(Finding(f"$.{name}", "wrong_type", f"{name} is not {label}"))
    tool_calls = raw.get("tool_calls")
    if tool_calls is not None and not isinstance(tool_calls, list | tuple):
        problems.append(Finding("$.tool_calls", "wrong_type", "tool_calls is not an array"))
    return problems


def _storable_problem(call: Mapping[str, Any]) -> str | None:
    if len(call["name"].encode("utf-8")) > _MAX_NAME_BYTES:
        return f"its tool name is over {_MAX_NAME_BYTES} UTF-8 bytes"
    if call["id"] is not None and len(call["id"].encode("utf-8")) > _MAX_NAME_BYTES:
        return f"its id is over {_MAX_NAME_BYTES} UTF-8 bytes"
    try:
        canonical_bytes(call)
    except InvalidDocument as exc:
        return f"it has no canonical JSON form ({exc.findings[0].code})"
    return None


def parse_provider_response(
    raw: Mapping[str, Any], *, execution_id: str | None, policy: RedactionPolicy
) -> ParsedResponse:
    """Build the payload of one model response, with warnings about its output.

    ``raw`` holds ``call_id``, ``iteration``, ``span_id`` (or ``None``),
    ``text`` and the provider-native ``tool_calls`` (missing means none).
    ``execution_id`` is the VM execution the response was produced in, ``None``
    outside a VM scope; never a session id.  Parsing reads the raw response;
    everything stored is redacted with ``policy`` first, and the choice between
    the reference and the inline parse is made on the redacted views, which
    are what a store compares.  Raises :class:`InvalidDocument` when ``raw``
    is not a response or the payload would break the contract.
    """
    problems = _raw_problems(raw)
    if problems:
        raise InvalidDocument(problems)
    text: str = raw["text"]
    native = list(raw.get("tool_calls") or ())
    block = _loop_state_block(text)
    parsed, parse_findings = _parse_tool_calls(text, native, block.spans)

    redactor = _Redactor(policy)
    native_clean = redactor.tree(native)
    parsed_clean = [redactor.tree(call) for call in parsed]
    loop_state: dict[str, Any] | None = None
    if block.pairs is not None:
        loop_state = {}
        for key, value, line in block.pairs:
            safe_key, safe_value = redactor.loop_state_pair(key, value, line)
            loop_state[safe_key] = _primitive(safe_value)
    text_clean = redactor.raw_text(text)
    # Second pass: what one view revealed is scrubbed from all of them.
    text_clean = redactor.scrub(text_clean)
    native_clean = redactor.scrub(native_clean)
    parsed_clean = redactor.scrub(parsed_clean)
    loop_state = redactor.scrub(loop_state)

    findings = list(parse_findings)
    kept: list[dict[str, Any]] = []
    for call in parsed_clean:
        problem = _storable_problem(call)
        if problem is None:
            kept.append(call)
        else:
            findings.append(
                _warning(
                    "$.parsed_tool_calls",
                    TOOL_CALL_UNPARSED,
                    f"a parsed call is left out: {problem}",
                    "tool names and ids are at most 256 UTF-8 bytes; numbers stay within "
                    "+-(2**53 - 1)",
                )
            )

    payload: dict[str, Any] = {
        "call_id": raw["call_id"],
        "iteration": raw["iteration"],
        "span_id": raw.get("span_id"),
        "execution_id": execution_id,
        "text": text_clean,
        "tool_calls": native_clean,
    }
    if kept and json_equal(kept, native_clean):
        payload["parsed_tool_calls_ref"] = TOOL_CALLS_REFERENCE
    else:
        payload["parsed_tool_calls"] = kept
    payload["loop_state"] = loop_state
    schema_findings = default_validator().validate(PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE, payload)
    if schema_findings:
        raise InvalidDocument(schema_findings)
    canonical_bytes(payload)  # storable as the journal stores it, or InvalidDocument
    return ParsedResponse(payload, (*block.findings, *findings))


def provider_call_response(
    raw: Mapping[str, Any], *, execution_id: str | None, policy: RedactionPolicy
) -> dict[str, Any]:
    """The redacted, valid ``provider_call_response`` payload of one model response.

    See :func:`parse_provider_response`, which also returns the warnings.
    """
    return parse_provider_response(raw, execution_id=execution_id, policy=policy).payload
