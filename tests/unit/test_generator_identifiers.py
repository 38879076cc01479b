"""Two JSON names that map to one identifier are both held, in every generated language.

Harn's ACP session-health params carry ``sessionId`` beside the fact's ``session_id``
(docs/health.md section 5): both are ``session_id`` in Rust and Python and ``SessionID``
in Go. The rule of generator/identifiers.py keeps the snake_case member's plain name and
names the other after its spelling; each keeps its JSON name explicitly.
"""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from session_contracts.errors import ToolError
from session_contracts.generator import polyglot, render_all
from session_contracts.generator.identifiers import member_identifiers, snake, spelling
from session_contracts.generator.polyglot.model import ObjectDef
from session_contracts.generator.polyglot.render import go_members, go_name, rust_members

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("session_id", "snake"),
        ("kind", "snake"),
        ("a2a", "snake"),
        ("sessionId", "camel"),
        ("SessionId", "pascal"),
        ("session-id", "kebab"),
        ("session.id", "other"),
        ("_harn", "other"),
    ],
)
def test_spellings(name: str, expected: str) -> None:
    assert spelling(name) == expected


def _rust_like(names: list[str]) -> tuple[str, ...]:
    return member_identifiers(names, snake, lambda n, how: f"{n}_{how}", "Params")


def test_the_snake_case_member_keeps_the_plain_name_wherever_it_stands() -> None:
    assert _rust_like(["sessionId", "kind", "session_id"]) == (
        "session_id_camel",
        "kind",
        "session_id",
    )
    assert _rust_like(["session_id", "sessionId"]) == ("session_id", "session_id_camel")
    # No snake_case member: the first spelling of the order snake, camel, pascal, ... keeps it.
    assert _rust_like(["SessionId", "sessionId"]) == ("session_id_pascal", "session_id")
    assert _rust_like(["session-id", "session.id"]) == ("session_id", "session_id_other")
    # Three spellings of one name: each its own.
    assert _rust_like(["SessionId", "session_id", "sessionId"]) == (
        "session_id_pascal",
        "session_id",
        "session_id_camel",
    )


def test_members_the_rule_cannot_tell_apart_stop_the_generator() -> None:
    with pytest.raises(ToolError) as alike:
        _rust_like(["a.b", "a:b", "a_b"])  # two "other" spellings beside the keeper
    assert [f.code for f in alike.value.findings] == ["polyglot_name_clash"]
    assert "spelt alike" in alike.value.findings[0].message
    with pytest.raises(ToolError) as taken:
        _rust_like(["sessionId", "session_id", "session_id_camel"])
    assert [f.code for f in taken.value.findings] == ["polyglot_name_clash"]
    assert "session_id_camel" in taken.value.findings[0].message


def test_the_acp_params_in_go_and_rust() -> None:
    params = polyglot.build_model(REPO / "schemas").definition("AcpAgentEventParams")
    assert isinstance(params, ObjectDef)
    names = [f.json_name for f in params.fields]
    go = dict(zip(names, go_members(params), strict=True))
    rust = dict(zip(names, rust_members(params), strict=True))
    assert (go["sessionId"], go["session_id"]) == ("SessionIDCamel", "SessionID")
    assert (rust["sessionId"], rust["session_id"]) == ("session_id_camel", "session_id")
    assert go_name("sessionId") == go_name("session_id")  # the pair this rule is for


def _pair_schema(tmp_path: Path, *, beside_ours: bool = False) -> Path:
    """A contract whose one closed object holds a name pair (and a Rust keyword pair);
    ``beside_ours``: in a copy of schemas/ (the polyglot model checks its domain table
    against the recap schema)."""
    schemas = tmp_path / "schemas"
    if beside_ours:
        shutil.copytree(REPO / "schemas", schemas)
    else:
        schemas.mkdir(parents=True)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://schemas.session-contracts.dev/v1/pair.schema.json",
        "title": "PairContract",
        "x-documentTypes": {"event": "#/$defs/PairEvent"},
        "$defs": {
            "PairEvent": {
                "title": "PairEvent",
                "type": "object",
                "additionalProperties": False,
                "required": ["sessionId", "session_id"],
                "properties": {
                    "sessionId": {"type": "string"},
                    "session_id": {"type": "string"},
                    "type": {"type": "string"},
                    "Type": {"type": "integer"},
                },
            }
        },
    }
    (schemas / "pair.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return schemas


def test_every_language_holds_the_pair_under_its_json_names(tmp_path: Path) -> None:
    schemas = _pair_schema(tmp_path, beside_ours=True)
    files = {f.name: f.content for f in polyglot.render_all(schemas)}
    expected = {
        "typescript/session_contracts.ts": [
            "  sessionId: string;\n  session_id: string;\n",  # explicit JSON names
        ],
        "rust/src/lib.rs": [
            '#[serde(rename = "sessionId")]\n    pub session_id_camel: String,',
            '#[serde(rename = "session_id")]\n    pub session_id: String,',
            '#[serde(rename = "type"',
            "pub r#type: Option<String>,",
            '#[serde(rename = "Type"',
            "pub type_pascal: Option<i64>,",
        ],
        "go/types.go": [
            'SessionIDCamel string  // "sessionId" (required)',
            'SessionID      string  // "session_id" (required)',
            'case "sessionId":',
            "x.SessionIDCamel",
            'case "session_id":',
            "&x.SessionID)",
            "TypePascal",
        ],
    }
    for name, texts in expected.items():
        assert [text for text in texts if text not in files[name]] == [], name
    python = {f.name: f.content for f in render_all(_pair_schema(tmp_path / "alone"))}["pair.py"]
    assert 'session_id_camel: Annotated[StrictStr, Field(alias="sessionId")]' in python
    assert "    session_id: StrictStr\n" in python
    assert "type_1" not in python
    assert "session_id_1" not in python


def test_the_python_binding_decodes_and_encodes_both_members(tmp_path: Path) -> None:
    python = {f.name: f.content for f in render_all(_pair_schema(tmp_path))}["pair.py"]
    module = types.ModuleType("generated_pair")
    sys.modules[module.__name__] = module  # pydantic resolves the module's names through it
    try:
        exec(compile(python, "pair.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    event_class = module.PairEvent
    document = {"sessionId": "s-acp", "session_id": "s-fact", "Type": 3}
    event = event_class.model_validate(document)
    assert (event.session_id_camel, event.session_id, event.type_pascal) == ("s-acp", "s-fact", 3)
    assert event.model_dump(mode="json", by_alias=True, exclude_unset=True) == document
