"""TypeScript, Go and Rust bindings: one model, closed types, verbatim opaque values.

Each language's own toolchain compiles its bindings and one program round-trips every
example document (and the cases below) in one process. Where a toolchain is missing the
test says so and skips; in CI (CI=true) a missing toolchain fails instead.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from session_contracts.generator import polyglot
from session_contracts.generator.polyglot import ObjectDef, UnionDef

from session_contracts._errors import ToolError
from session_contracts._validator import default_validator
from session_contracts.cli import main

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "schemas"
EXAMPLES = SCHEMAS / "examples"
GENERATED = REPO / "generated"
BUILD = REPO / "build" / "polyglot"
TSC = REPO / "tools" / "typescript" / "node_modules" / ".bin" / "tsc"

# Opaque members whose numbers must come back as the same text, not just the same value.
TRICKY_EXTENSIONS = (
    '{"big": 123456789012345678901234567890, "e": 1e2, "f": 1.0, "z": -0.0,'
    ' "tiny": 1E-7, "s": "\\u00e9<>&", "n": [0.1, {"k": null, "a": []}]}'
)


def _example(name: str) -> Any:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def _without(document: Any, *path: str | int) -> Any:
    result = copy.deepcopy(document)
    target = result
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return result


def _with(document: Any, value: Any, *path: str | int) -> Any:
    result = copy.deepcopy(document)
    target = result
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return result


def _accepted_cases() -> list[tuple[str, str, str]]:
    """(case id, doctype, JSON text) that every binding must decode and re-encode."""
    cases = []
    for path in sorted(EXAMPLES.glob("*.json")):
        contract, kind = path.stem.split(".", 1)
        cases.append((path.stem, f"{contract}.{kind}", path.read_text(encoding="utf-8")))
    fact = _example("session-health.fact")
    cases += [
        (
            "optional nullable member absent",
            "session-health.fact",
            json.dumps(_without(fact, "turn", "last_stop_class")),
        ),
        (
            "optional nullable member null",
            "session-health.fact",
            json.dumps(_with(fact, None, "turn", "last_stop_class")),
        ),
    ]
    # JSON Schema's integer is a value, not a spelling: 4.0 and 1e0 are integers.
    cases.append(
        ("integer spelled 4.0", "session-health.fact", json.dumps(_with(fact, 4.0, "iteration")))
    )
    turn_ids = _example("session-recap.snapshot")["turns"][0]["sourceEventIds"]
    cases.append(
        (
            "integers in an array spelled 1.0 and 2e0",
            "session-recap.snapshot",
            json.dumps(
                _with(
                    _example("session-recap.snapshot"),
                    turn_ids[0] * 1.0,
                    "turns",
                    0,
                    "sourceEventIds",
                    0,
                )
            ).replace(
                f"[{turn_ids[0]:.1f}, {turn_ids[1]}", f"[{turn_ids[0]:.1f}, {turn_ids[1]}e0", 1
            ),
        )
    )
    snapshot = (EXAMPLES / "session-recap.snapshot.json").read_text(encoding="utf-8")
    assert '"extensions": {}' in snapshot
    cases.append(
        (
            "extensions with tricky numbers",
            "session-recap.snapshot",
            snapshot.replace('"extensions": {}', f'"extensions": {TRICKY_EXTENSIONS}'),
        )
    )
    return cases


def _refused_cases() -> list[tuple[str, str, str]]:
    """(case id, doctype, JSON text) that every binding must refuse."""
    fact = _example("session-health.fact")
    snapshot = _example("session-recap.snapshot")
    event = _example("session-event.event")
    span = _example("run-record.span")
    cases = [
        ("unknown top-level member", "session-health.fact", _with(fact, 1, "zz")),
        ("unknown nested member", "session-health.fact", _with(fact, True, "turn", "zz")),
        ("missing required member", "session-health.fact", _without(fact, "session_id")),
        ("null for a non-nullable member", "session-health.fact", _with(fact, None, "turn")),
        (
            "null for an optional non-nullable member",
            "run-record.span",
            _with(span, None, "ttft_ms"),
        ),
        ("wrong type", "session-health.fact", _with(fact, "4", "iteration")),
        ("integer with a fraction", "session-health.fact", _with(fact, 4.5, "iteration")),
        (
            "value outside the enum",
            "session-health.fact",
            _with(fact, "sideways", "turn", "diagnostic_trend"),
        ),
        (
            "wrong string const",
            "session-health.acp-notification",
            _with(_example("session-health.acp-notification"), "2.1", "jsonrpc"),
        ),
        ("wrong integer const", "session-recap.snapshot", _with(snapshot, 2, "schemaVersion")),
        ("unknown union tag", "session-event.event", _with(event, "nope", "kind")),
        ("union variant with an unknown member", "session-event.event", _with(event, 1, "zz")),
        ("not an object", "session-health.fact", []),
    ]
    texts = [(name, doctype, json.dumps(doc)) for name, doctype, doc in cases]
    text = (EXAMPLES / "session-health.fact.json").read_text(encoding="utf-8")
    texts.append(
        ("repeated member", "session-health.fact", text.replace("{", '{"session_id": "x",', 1))
    )
    texts.append(("not JSON", "session-health.fact", text[:-3]))
    return texts


def _manifest(tmp: Path, cases: list[tuple[str, str, str]]) -> Path:
    lines = []
    for index, (_, doctype, text) in enumerate(cases):
        path = tmp / f"case-{index}.json"
        path.write_text(text, encoding="utf-8")
        lines.append(f"{doctype}\t{path}")
    manifest = tmp / "manifest.txt"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


def _missing(what: str) -> None:
    message = f"{what} (see .ci/run for the install steps)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {message}")
    pytest.skip(message)


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _build_typescript() -> list[str]:
    if shutil.which("node") is None:
        _missing("node is not installed")
    if not TSC.exists():
        _missing("TypeScript is not installed: run `npm ci` in tools/typescript")
    out = BUILD / "typescript"
    _run(
        [str(TSC), "-p", str(GENERATED / "typescript" / "tsconfig.json"), "--outDir", str(out)],
        REPO,
    )
    return ["node", str(out / "roundtrip.js")]


def _build_go() -> list[str]:
    if shutil.which("go") is None:
        _missing("go is not installed")
    binary = BUILD / "go" / "roundtrip"
    env = {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    _run(["go", "vet", "./..."], GENERATED / "go", env)
    _run(["go", "build", "-o", str(binary), "./cmd/roundtrip"], GENERATED / "go", env)
    unformatted = _run(["gofmt", "-l", "."], GENERATED / "go") if shutil.which("gofmt") else ""
    assert unformatted == "", f"generated Go is not gofmt-clean: {unformatted}"
    return [str(binary)]


def _build_rust() -> list[str]:
    if shutil.which("cargo") is None:
        _missing("cargo is not installed")
    target = BUILD / "rust"
    _run(
        ["cargo", "build", "--locked", "--quiet", "--bin", "roundtrip"],
        GENERATED / "rust",
        {"CARGO_TARGET_DIR": str(target)},
    )
    return [str(target / "debug" / "roundtrip")]


BUILDERS: dict[str, Callable[[], list[str]]] = {
    "typescript": _build_typescript,
    "go": _build_go,
    "rust": _build_rust,
}


def _numbers_as_text(text: str) -> Any:
    # Numbers keep their spelling: 1e2 and 100 differ here, as they do in the source.
    return json.loads(text, parse_float=lambda s: ("number", s), parse_int=lambda s: ("number", s))


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def roundtrip(
    request: pytest.FixtureRequest,
) -> Callable[[Path, list[tuple[str, str, str]]], list[dict[str, str]]]:
    command = BUILDERS[request.param]()

    def run(tmp: Path, cases: list[tuple[str, str, str]]) -> list[dict[str, str]]:
        output = _run([*command, str(_manifest(tmp, cases))], REPO)
        results = [json.loads(line) for line in output.splitlines()]
        assert len(results) == len(cases)
        return results

    return run


def test_every_example_round_trips_to_the_same_json_value(
    roundtrip: Callable[[Path, list[tuple[str, str, str]]], list[dict[str, str]]], tmp_path: Path
) -> None:
    cases = _accepted_cases()
    assert len(cases) > len(list(EXAMPLES.glob("*.json")))
    for (name, _, text), result in zip(cases, roundtrip(tmp_path, cases), strict=True):
        assert "error" not in result, f"{name}: {result['error']}"
        assert json.loads(result["encoded"]) == json.loads(text), name


def test_extensions_keep_every_number_verbatim(
    roundtrip: Callable[[Path, list[tuple[str, str, str]]], list[dict[str, str]]], tmp_path: Path
) -> None:
    (case,) = [c for c in _accepted_cases() if c[0] == "extensions with tricky numbers"]
    (result,) = roundtrip(tmp_path, [case])
    encoded = _numbers_as_text(result["encoded"])["extensions"]
    assert encoded == _numbers_as_text(TRICKY_EXTENSIONS)


def test_absent_and_null_stay_apart(
    roundtrip: Callable[[Path, list[tuple[str, str, str]]], list[dict[str, str]]], tmp_path: Path
) -> None:
    cases = [c for c in _accepted_cases() if c[0].startswith("optional nullable member")]
    absent, null = (json.loads(r["encoded"]) for r in roundtrip(tmp_path, cases))
    assert "last_stop_class" not in absent["turn"]
    assert null["turn"]["last_stop_class"] is None


def test_closed_types_refuse_what_the_schema_refuses(
    roundtrip: Callable[[Path, list[tuple[str, str, str]]], list[dict[str, str]]], tmp_path: Path
) -> None:
    cases = _refused_cases()
    results = roundtrip(tmp_path, cases)
    accepted = [name for (name, _, _), r in zip(cases, results, strict=True) if "error" not in r]
    assert accepted == []


def test_the_cases_agree_with_the_schemas() -> None:
    # The bindings must accept what the schemas accept and refuse only what they refuse.
    validator = default_validator()
    for name, doctype, text in _accepted_cases():
        assert validator.is_valid(doctype, json.loads(text)), name
    for name, doctype, text in _refused_cases():
        try:
            document = json.loads(text, object_pairs_hook=_refuse_repeated_members)
        except ValueError:
            continue  # not JSON, or a repeated member: refused before any schema
        assert not validator.is_valid(doctype, document), name


def _refuse_repeated_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({name for name, _ in pairs}) != len(pairs):
        raise ValueError("repeated member")
    return dict(pairs)


def test_polyglot_outputs_are_current() -> None:
    assert polyglot.check(SCHEMAS, GENERATED) == []


def test_rendering_is_deterministic_across_runs_and_hash_seeds(tmp_path: Path) -> None:
    script = (
        "import sys, hashlib; from pathlib import Path;"
        "from session_contracts.generator import polyglot;"
        "files = polyglot.render_all(Path(sys.argv[1]));"
        "print(hashlib.sha256(repr(files).encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", script, str(SCHEMAS)],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        ).stdout.strip()
        for seed in ("0", "12345")
    }
    here = hashlib.sha256(repr(polyglot.render_all(SCHEMAS)).encode()).hexdigest()
    assert digests == {here}


def test_drift_names_stale_missing_and_orphaned_files(tmp_path: Path) -> None:
    shutil.copytree(GENERATED / "go", tmp_path / "go")
    shutil.copytree(GENERATED / "rust", tmp_path / "rust", ignore=shutil.ignore_patterns("target"))
    (tmp_path / "go" / "types.go").write_text("package sessioncontracts\n", encoding="utf-8")
    (tmp_path / "go" / "left_over.go").write_text("package sessioncontracts\n", encoding="utf-8")
    drifts = {(d.name, d.state) for d in polyglot.check(SCHEMAS, tmp_path)}
    assert ("go/types.go", "stale") in drifts
    assert ("go/left_over.go", "orphaned") in drifts
    assert ("typescript/session_contracts.ts", "missing") in drifts
    polyglot.write(SCHEMAS, tmp_path)
    assert polyglot.check(SCHEMAS, tmp_path) == []
    assert not (tmp_path / "go" / "left_over.go").exists()


def test_a_shared_definition_is_one_type_in_every_language() -> None:
    model = polyglot.build_model(SCHEMAS)
    origins = [d.origin for d in model.definitions if "(inline)" not in d.origin]
    assert len(origins) == len(set(origins)), "a definition became two types"
    # session-event's provider_call_response payload is run-record's ProviderCallResponse,
    # an open object (Harn's growing json! literal, run-record contract version 2): kept
    # verbatim in every language, and never declared a second time.
    event = model.definition("ProviderCallResponseEvent")
    assert isinstance(event, ObjectDef)
    payload = next(f for f in event.fields if f.json_name == "payload")
    assert payload.type.kind == "opaque"
    files = {f.name: f.content for f in polyglot.render_all(SCHEMAS)}
    declarations = {
        "typescript/session_contracts.ts": "export interface ProviderCallResponse ",
        "go/types.go": "type ProviderCallResponse struct",
        "rust/src/lib.rs": "pub struct ProviderCallResponse ",
    }
    for name, declaration in declarations.items():
        assert files[name].count(declaration) == 0, name
    # A closed definition that two document types share ($ref) stays one type: run-record's
    # Evidence (record.evidence and the evidence document), beside certification's own.
    assert model.definition("RunRecordEvidence").origin.startswith("run-record.schema.json")
    for name, declaration in {
        "typescript/session_contracts.ts": "export interface RunRecordEvidence ",
        "go/types.go": "type RunRecordEvidence struct",
        "rust/src/lib.rs": "pub struct RunRecordEvidence ",
    }.items():
        assert files[name].count(declaration) == 1, name
    # Two different definitions under one name in two files stay two types, told apart.
    names = {d.name for d in model.definitions}
    assert {"SessionEventPlanStep", "SessionRecapPlanStep"} <= names
    union = model.definition("SessionEvent")
    assert isinstance(union, UnionDef)
    assert union.discriminator == "kind"


def test_a_schema_the_model_cannot_type_is_a_tool_error(tmp_path: Path) -> None:
    shutil.copytree(SCHEMAS, tmp_path / "schemas")
    path = tmp_path / "schemas" / "session-event.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    # Two variants of the event union now share the tag "message".
    schema["$defs"]["PlanEvent"]["properties"]["kind"]["const"] = "message"
    path.write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(ToolError) as caught:
        polyglot.render_all(tmp_path / "schemas")
    assert [f.code for f in caught.value.findings] == ["polyglot_union_unsupported"]


def test_generate_check_names_a_stale_polyglot_file_and_generate_repairs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(SCHEMAS, tmp_path / "schemas")
    shutil.copytree(GENERATED, tmp_path / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'copy'\n", encoding="utf-8")
    (tmp_path / "generated" / "rust" / "src" / "lib.rs").write_text("// edited\n", encoding="utf-8")
    assert main(["generate", "--check", "--root", str(tmp_path)]) == 1
    stale = "generated/rust/src/lib.rs differs from what its schema generates"
    assert stale in capsys.readouterr().out
    assert main(["generate", "--root", str(tmp_path)]) == 0
    assert main(["generate", "--check", "--root", str(tmp_path)]) == 0
