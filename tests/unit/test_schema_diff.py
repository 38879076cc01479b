"""diff: every change kind on a pair of small schemas; folders, git revisions; the generate gate."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from session_contracts.cli import main
from session_contracts.errors import ToolError
from session_contracts.schema_diff import (
    CHANGE_KINDS,
    SchemaChange,
    blocking_changes,
    diff_schema_sets,
    load_schema_set,
    schema_version,
)

REPO = Path(__file__).resolve().parents[2]
FILE = "demo.schema.json"


def _base() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://schemas.example.invalid/v1/demo.schema.json",
        "title": "Demo",
        "x-schemaVersion": 1,
        "x-documentTypes": {"doc": "#/$defs/Doc", "other": "#/$defs/Other"},
        "$defs": {
            "Name": {"type": "string", "minLength": 1, "maxLength": 10},
            "Other": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"n": {"type": "integer"}},
            },
            "Doc": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "count"],
                "x-requireAnyOf": ["id", "name"],
                "x-inputAliases": {"doc_id": "id"},
                "properties": {
                    "id": {"type": "string", "pattern": "^d-", "x-maxUtf8Bytes": 64},
                    "name": {"$ref": "#/$defs/Name"},
                    "count": {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
                    "size": {"type": "integer"},
                    "state": {"enum": ["open", "closed"]},
                    "kind": {"const": "demo"},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                    "when": {"type": "string", "format": "date-time"},
                    "shape": {"oneOf": [{"$ref": "#/$defs/Name"}, {"type": "integer"}]},
                    "extensions": {
                        "type": "object",
                        "additionalProperties": True,
                        "properties": {"vendor": {"type": "string"}},
                    },
                },
            },
        },
    }


Mutation = Callable[[dict[str, Any]], None]


def _doc(schema: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = schema["$defs"]["Doc"]
    return doc


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = _doc(schema)["properties"]
    return props


DOC = "/$defs/Doc"
P = f"{DOC}/properties"

# (code, pointer, mutation): each mutation makes exactly one change of that kind.
CASES: list[tuple[str, str, Mutation]] = [
    ("member_added", f"{P}/note", lambda s: _props(s).update(note={"type": "string"})),
    (
        "member_added_open",
        f"{P}/extensions/properties/build",
        lambda s: _props(s)["extensions"]["properties"].update(build={"type": "string"}),
    ),
    (
        "member_added_required",
        f"{P}/note",
        lambda s: (_props(s).update(note={"type": "string"}), _doc(s)["required"].append("note")),
    ),
    ("member_removed", f"{P}/size", lambda s: _props(s).pop("size")),
    (
        "member_removed_open",
        f"{P}/extensions/properties/vendor",
        lambda s: _props(s)["extensions"]["properties"].pop("vendor"),
    ),
    ("member_now_required", f"{DOC}/required", lambda s: _doc(s)["required"].append("size")),
    ("member_now_optional", f"{DOC}/required", lambda s: _doc(s)["required"].remove("count")),
    (
        "object_closed",
        f"{P}/extensions/additionalProperties",
        lambda s: _props(s)["extensions"].update(additionalProperties=False),
    ),
    (
        "object_opened",
        f"{DOC}/additionalProperties",
        lambda s: _doc(s).update(additionalProperties=True),
    ),
    ("type_narrowed", f"{P}/count/type", lambda s: _props(s)["count"].update(type="integer")),
    ("type_widened", f"{P}/size/type", lambda s: _props(s)["size"].update(type="number")),
    ("type_changed", f"{P}/id/type", lambda s: _props(s)["id"].update(type="integer")),
    (
        "enum_value_added",
        f"{P}/state/enum",
        lambda s: _props(s)["state"]["enum"].append("archived"),
    ),
    (
        "enum_value_removed",
        f"{P}/state/enum",
        lambda s: _props(s)["state"]["enum"].remove("closed"),
    ),
    ("const_changed", f"{P}/kind/const", lambda s: _props(s)["kind"].update(const="other")),
    ("limit_tightened", f"{P}/tags/maxItems", lambda s: _props(s)["tags"].update(maxItems=4)),
    ("limit_relaxed", f"{P}/tags/maxItems", lambda s: _props(s)["tags"].update(maxItems=6)),
    ("pattern_changed", f"{P}/id/pattern", lambda s: _props(s)["id"].update(pattern="^doc-")),
    ("format_changed", f"{P}/when/format", lambda s: _props(s)["when"].update(format="date")),
    (
        "ref_changed",
        f"{P}/name/$ref",
        lambda s: _props(s)["name"].update({"$ref": "#/$defs/Other"}),
    ),
    (
        "variant_added",
        f"{P}/shape/oneOf/2",
        lambda s: _props(s)["shape"]["oneOf"].append({"type": "boolean"}),
    ),
    (
        "variant_removed",
        f"{P}/shape/oneOf/1",
        lambda s: _props(s)["shape"]["oneOf"].pop(),
    ),
    (
        "constraint_added",
        f"{P}/size/not",
        lambda s: _props(s)["size"].update({"not": {"const": 0}}),
    ),
    ("constraint_removed", f"{P}/tags/items", lambda s: _props(s)["tags"].pop("items")),
    (
        "x_rule_added",
        f"{DOC}/x-notGreaterThan",
        lambda s: _doc(s).update({"x-notGreaterThan": {"count": "size"}}),
    ),
    ("x_rule_removed", f"{DOC}/x-requireAnyOf", lambda s: _doc(s).pop("x-requireAnyOf")),
    (
        "x_rule_changed",
        f"{DOC}/x-requireAnyOf",
        lambda s: _doc(s).update({"x-requireAnyOf": ["id", "size"]}),
    ),
    (
        "alias_added",
        f"{DOC}/x-inputAliases/doc_name",
        lambda s: _doc(s)["x-inputAliases"].update(doc_name="name"),
    ),
    (
        "alias_removed",
        f"{DOC}/x-inputAliases/doc_id",
        lambda s: _doc(s)["x-inputAliases"].pop("doc_id"),
    ),
    (
        "alias_changed",
        f"{DOC}/x-inputAliases/doc_id",
        lambda s: _doc(s)["x-inputAliases"].update(doc_id="name"),
    ),
    (
        "document_type_added",
        "/x-documentTypes/name",
        lambda s: s["x-documentTypes"].update(name="#/$defs/Name"),
    ),
    (
        "document_type_removed",
        "/x-documentTypes/other",
        lambda s: s["x-documentTypes"].pop("other"),
    ),
    (
        "document_type_changed",
        "/x-documentTypes/other",
        lambda s: s["x-documentTypes"].update(other="#/$defs/Name"),
    ),
    (
        "definition_added",
        "/$defs/Spare",
        lambda s: s["$defs"].update(Spare={"type": "string"}),
    ),
    ("version_changed", "/x-schemaVersion", lambda s: s.update({"x-schemaVersion": 2})),
    (
        "id_changed",
        "/$id",
        lambda s: s.update({"$id": "https://schemas.example.invalid/v1/renamed.schema.json"}),
    ),
    (
        "annotation_changed",
        f"{P}/size/description",
        lambda s: _props(s)["size"].update(description="how big"),
    ),
    ("keyword_changed", f"{P}/size/multipleOf", lambda s: _props(s)["size"].update(multipleOf=2)),
]


def _diff(mutation: Mutation) -> list[SchemaChange]:
    base = _base()
    new = copy.deepcopy(base)
    mutation(new)
    return diff_schema_sets({FILE: base}, {FILE: new})


@pytest.mark.parametrize(("code", "pointer", "mutation"), CASES, ids=[c[0] for c in CASES])
def test_each_change_kind(code: str, pointer: str, mutation: Mutation) -> None:
    changes = _diff(mutation)
    assert [(c.code, c.pointer) for c in changes] == [(code, pointer)]
    assert changes[0].schema == FILE
    assert changes[0].breaking is CHANGE_KINDS[code].breaking


def test_definition_and_schema_removal_and_addition() -> None:
    base = _base()
    new = copy.deepcopy(base)
    new["$defs"]["Other"]["properties"]["n"] = {"type": "integer"}  # unchanged
    del new["x-documentTypes"]["other"]
    del new["$defs"]["Other"]
    codes = {(c.code, c.pointer) for c in diff_schema_sets({FILE: base}, {FILE: new})}
    assert codes == {
        ("document_type_removed", "/x-documentTypes/other"),
        ("definition_removed", "/$defs/Other"),
    }
    gone = diff_schema_sets({FILE: base}, {})
    assert [(c.code, c.breaking, c.document_types) for c in gone] == [
        ("schema_removed", True, ("demo.doc", "demo.other"))
    ]
    added = diff_schema_sets({}, {FILE: base})
    assert [(c.code, c.breaking) for c in added] == [("schema_added", False)]


def test_a_renamed_definition_is_no_break() -> None:
    def rename(s: dict[str, Any]) -> None:
        s["$defs"]["Label"] = s["$defs"].pop("Name")
        _props(s)["name"]["$ref"] = "#/$defs/Label"
        _props(s)["shape"]["oneOf"][0]["$ref"] = "#/$defs/Label"

    changes = _diff(rename)
    assert [(c.code, c.pointer, c.breaking) for c in changes] == [
        ("ref_renamed", f"{P}/name/$ref", False),
        ("ref_renamed", f"{P}/shape/oneOf/0/$ref", False),
        ("definition_added", "/$defs/Label", False),
        ("definition_removed", "/$defs/Name", False),
    ]

    def rename_and_change(s: dict[str, Any]) -> None:
        rename(s)
        s["$defs"]["Label"]["maxLength"] = 9

    assert {c.code for c in _diff(rename_and_change) if c.breaking} == {"ref_changed"}


def test_every_change_kind_is_tested_and_documented() -> None:
    tested = {code for code, _, _ in CASES} | {
        "definition_removed",
        "schema_removed",
        "schema_added",
        "ref_renamed",
    }
    assert tested == set(CHANGE_KINDS)
    table = (REPO / "docs" / "schema-diff.md").read_text(encoding="utf-8")
    for kind in CHANGE_KINDS.values():
        verdict = "breaking" if kind.breaking else "non-breaking"
        row = f"| `{kind.code}` | {kind.writers} | {kind.readers} | {verdict} |"
        assert row in table, row


def test_limits_in_both_directions() -> None:
    def tightened(keyword: str, value: Any, where: str = "count") -> str:
        changes = _diff(lambda s: _props(s)[where].update({keyword: value}))
        assert len(changes) == 1
        return changes[0].code

    assert tightened("maximum", 99) == "limit_tightened"
    assert tightened("maximum", 101) == "limit_relaxed"
    assert tightened("minimum", 1) == "limit_tightened"
    assert tightened("minimum", -1) == "limit_relaxed"
    assert tightened("exclusiveMaximum", 50) == "limit_tightened"  # added
    assert tightened("x-maxUtf8Bytes", 32, "id") == "limit_tightened"
    assert tightened("x-maxUtf8Bytes", 128, "id") == "limit_relaxed"
    assert tightened("x-jsSafeInteger", True, "size") == "limit_tightened"
    assert tightened("uniqueItems", True, "tags") == "limit_tightened"
    assert _diff(lambda s: _props(s)["count"].pop("maximum"))[0].code == "limit_relaxed"
    assert _diff(lambda s: _props(s)["id"].pop("pattern"))[0].code == "limit_relaxed"
    assert _diff(lambda s: _props(s)["id"].update(type=["string", "null"]))[0].code == (
        "type_widened"
    )


def test_a_new_member_of_an_open_object_and_a_closed_one() -> None:
    # Closed contracts break old readers; `extensions` stays open and is no break.
    closed = _diff(lambda s: _props(s).update(note={"type": "string"}))
    opened = _diff(lambda s: _props(s)["extensions"]["properties"].update(x={"type": "string"}))
    assert [c.breaking for c in closed] == [True]
    assert [c.breaking for c in opened] == [False]


def test_document_types_follow_references_across_files() -> None:
    base = {
        "shared.schema.json": {"$defs": {"Id": {"type": "string", "maxLength": 9}}},
        FILE: {
            "x-documentTypes": {"doc": "#/$defs/Doc"},
            "$defs": {
                "Doc": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"id": {"$ref": "shared.schema.json#/$defs/Id"}},
                }
            },
        },
    }
    new = copy.deepcopy(base)
    new["shared.schema.json"]["$defs"]["Id"]["maxLength"] = 8
    changes = diff_schema_sets(base, new)
    assert [(c.schema, c.pointer, c.document_types) for c in changes] == [
        ("shared.schema.json", "/$defs/Id/maxLength", ("demo.doc",))
    ]


def test_the_shipped_schemas_against_themselves() -> None:
    shipped = load_schema_set(str(REPO / "schemas"), REPO)
    assert diff_schema_sets(shipped, shipped) == []
    assert schema_version(shipped["session-recap-v1.schema.json"]) == 2


def test_version_is_x_schema_version_else_the_id_segment() -> None:
    assert schema_version({"x-schemaVersion": 3, "$id": "https://x.invalid/v1/a.json"}) == 3
    assert schema_version({"$id": "https://x.invalid/v2/a.schema.json"}) == 2
    assert schema_version({"$id": "https://x.invalid/a.schema.json"}) is None
    assert schema_version({"x-schemaVersion": True}) is None


def test_a_version_move_unblocks_breaking_changes() -> None:
    base = _base()
    new = copy.deepcopy(base)
    _props(new).pop("size")
    changes = diff_schema_sets({FILE: base}, {FILE: new})
    assert [c.code for c in blocking_changes({FILE: base}, {FILE: new}, changes)] == [
        "member_removed"
    ]
    new["x-schemaVersion"] = 2
    changes = diff_schema_sets({FILE: base}, {FILE: new})
    assert any(c.code == "member_removed" for c in changes)
    assert blocking_changes({FILE: base}, {FILE: new}, changes) == []


# --- the command line -----------------------------------------------------------------


def _write_set(folder: Path, schema: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FILE).write_text(json.dumps(schema, indent=2))
    return folder


def test_cli_folders_exit_codes_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _write_set(tmp_path / "a", _base())
    relaxed = _base()
    _props(relaxed)["tags"]["maxItems"] = 9
    ok = _write_set(tmp_path / "b", relaxed)
    assert main(["diff", str(base), str(ok)]) == 0
    out = capsys.readouterr().out
    assert f"ok {FILE}#{P}/tags/maxItems: maxItems changed from 5 to 9 [limit_relaxed]" in out
    assert "1 change(s), 0 breaking" in out
    broken = _base()
    _props(broken)["note"] = {"type": "string"}
    bad = _write_set(tmp_path / "c", broken)
    assert main(["diff", str(base), str(bad), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["breaking"] == 1
    (change,) = report["changes"]
    assert change["code"] == "member_added"
    assert change["pointer"] == f"{P}/note"
    assert change["documentTypes"] == ["demo.doc"]
    assert change["readers"].startswith("old readers refuse")
    assert change["fix"]


def test_cli_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["diff", str(empty), str(REPO / "schemas")]) == 2
    assert "diff_no_schemas" in capsys.readouterr().err
    assert main(["diff", str(REPO / "README.md"), str(REPO / "schemas")]) == 2
    assert "diff_folder_unreadable" in capsys.readouterr().err
    broken = _write_set(tmp_path / "broken", _base())
    (broken / FILE).write_text("{nope")
    assert main(["diff", str(broken), str(REPO / "schemas")]) == 2
    assert "diff_schema_unreadable" in capsys.readouterr().err
    outside = tmp_path / "outside"
    outside.mkdir()
    assert main(["diff", "HEAD", str(REPO / "schemas"), "--root", str(outside)]) == 2
    assert "diff_not_a_repository" in capsys.readouterr().err


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-C", str(repo), *args],
        check=True,
        capture_output=True,
    )


def test_cli_git_revisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    _write_set(repo / "schemas", _base())
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    changed = _base()
    _props(changed)["state"]["enum"].remove("closed")
    _write_set(repo / "schemas", changed)
    root = ["--root", str(repo)]
    assert main(["diff", "HEAD", str(repo / "schemas"), *root]) == 1
    assert "[enum_value_removed]" in capsys.readouterr().out
    _git(repo, "commit", "-qam", "two")
    assert main(["diff", "HEAD~1", "HEAD", *root]) == 1
    assert 'enum value "closed" removed' in capsys.readouterr().out
    assert main(["diff", "HEAD", "HEAD", *root]) == 0
    assert main(["diff", "no-such-branch", "HEAD", *root]) == 2
    assert "diff_revision_unknown" in capsys.readouterr().err
    assert main(["diff", *root, "--", "--output=x", "HEAD"]) == 2
    assert "diff_revision_unknown" in capsys.readouterr().err
    (repo / "sub").mkdir()
    _git(repo, "mv", "schemas", "sub/schemas")
    _git(repo, "commit", "-qm", "three")
    # A project in a subfolder of its repository: revisions are read at that prefix.
    sub = ["--root", str(repo / "sub")]
    assert main(["diff", "HEAD", str(repo / "sub" / "schemas"), *sub]) == 0
    capsys.readouterr()
    assert main(["diff", "HEAD~3", "HEAD", *root]) == 2  # no such revision
    assert "diff_revision_unknown" in capsys.readouterr().err
    assert main(["diff", "HEAD~1", "HEAD", *root]) == 2  # HEAD has no schemas/ at the top
    assert "diff_no_schemas" in capsys.readouterr().err


# --- the generate gate ------------------------------------------------------------------


@pytest.fixture
def git_checkout(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "schemas", tmp_path / "schemas")
    shutil.copytree(REPO / "generated", tmp_path / "generated")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "baseline")
    return tmp_path


def _add_member(checkout: Path, version: int | None = None) -> None:
    path = checkout / "schemas" / "session-health.schema.json"
    schema = json.loads(path.read_text())
    fact = schema["$defs"]["SessionHealthFact"]
    assert fact["additionalProperties"] is False
    fact["properties"]["mood"] = {"type": "string"}
    if version is not None:
        schema["x-schemaVersion"] = version
    path.write_text(json.dumps(schema, indent=2))


def test_generate_refuses_a_breaking_change_and_allows_it_when_asked(
    git_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (git_checkout / "generated" / "session_health.py").read_text()
    _add_member(git_checkout)
    assert main(["generate", "--root", str(git_checkout)]) == 1
    out = capsys.readouterr().out
    assert "BREAKING session-health.schema.json#/$defs/SessionHealthFact/properties/mood" in out
    assert "[member_added]" in out
    assert "generate refused: 1 breaking change(s) against HEAD" in out
    assert (git_checkout / "generated" / "session_health.py").read_text() == before
    assert main(["generate", "--root", str(git_checkout), "--allow-breaking"]) == 0
    assert "allowed" in capsys.readouterr().out
    assert "mood" in (git_checkout / "generated" / "session_health.py").read_text()


def test_generate_accepts_a_breaking_change_with_a_version_move(
    git_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = json.loads((git_checkout / "schemas" / "session-health.schema.json").read_text())
    moved = schema["x-schemaVersion"] + 1
    _add_member(git_checkout, version=moved)
    assert main(["generate", "--root", str(git_checkout)]) == 0
    _git(git_checkout, "commit", "-qam", "moved")
    _add_member(git_checkout, version=moved)  # unchanged since HEAD: nothing to judge
    assert main(["generate", "--root", str(git_checkout), "--baseline", "HEAD~1"]) == 0
    assert main(["generate", "--root", str(git_checkout), "--baseline", "nope"]) == 2
    assert "diff_revision_unknown" in capsys.readouterr().err


def test_generate_outside_git_skips_the_gate_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(REPO / "schemas", tmp_path / "schemas")
    shutil.copytree(REPO / "generated", tmp_path / "generated")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    _add_member(tmp_path)
    assert main(["generate", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("breaking-change gate skipped") == 1
    assert "is not in a git repository" in out


def test_malformed_schemas_are_compared_without_crashing() -> None:
    base = _base()
    new = copy.deepcopy(base)
    _props(new)["size"]["type"] = 5  # not a type name
    _doc(new)["required"] = "id"  # not a list
    new["$defs"]["Other"]["properties"] = ["n"]  # not an object
    new["x-documentTypes"]["other"] = 7
    codes = {c.code for c in diff_schema_sets({FILE: base}, {FILE: new})}
    assert {"type_widened", "member_removed", "document_type_changed"} <= codes


def test_too_deep_a_schema_is_a_tool_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep_a: dict[str, Any] = {"type": "string"}
    deep_b: dict[str, Any] = {"type": "integer"}
    for _ in range(5000):
        deep_a, deep_b = {"items": deep_a}, {"items": deep_b}
    with pytest.raises(ToolError) as caught:
        diff_schema_sets({FILE: deep_a}, {FILE: deep_b})
    assert [f.code for f in caught.value.findings] == ["diff_schema_too_deep"]
    for folder, leaf in (("a", "string"), ("b", "integer")):
        (tmp_path / folder).mkdir()
        text = '{"items":' * 100_000 + f'{{"type":"{leaf}"}}' + "}" * 100_000
        (tmp_path / folder / FILE).write_text(text)
    assert main(["diff", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "[diff_schema_unreadable]" in capsys.readouterr().err
