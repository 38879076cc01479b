"""TypeScript, Go and Rust bindings: one model, closed types, verbatim opaque values.

Each language's own toolchain compiles its bindings and one program round-trips every
example document, every reference output of the golden corpus (and the cases below) in one
process. Where a toolchain is missing the test says so and skips; in CI (CI=true) a missing
toolchain fails instead.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from session_contracts.cli import main
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.errors import ToolError
from session_contracts.generator import polyglot
from session_contracts.generator.polyglot.domains import SAME_DOMAIN
from session_contracts.generator.polyglot.model import Model, ObjectDef, TypeRef, UnionDef
from session_contracts.validation.validator import default_validator

pytestmark = pytest.mark.integration  # compiles with tsc, go and cargo

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"
EXAMPLES = SCHEMAS / "examples"
FIXTURES = REPO / "conformance" / "fixtures"
GENERATED = REPO / "generated"
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


def _output_documents(operation: str, case_input: Any, output: Any) -> list[tuple[str, Any]]:
    """(doctype, document) of each document an operation's output is made of, as
    docs/protocol.md's Operations table says; redaction.apply's output is no document type."""
    if operation == "document.roundtrip":
        return [(str(case_input["doctype"]), output)]
    if operation == "health.reduce":
        return [("session-health.fact", fact) for fact in output["facts"]]
    if operation == "health.a2a_status_update":
        return [("session-health.a2a-status-update", output)]
    if operation == "recap.project":
        return [("session-recap.envelope", output)]
    if operation == "runrecord.project":
        return [("run-record.record", output)]
    if operation == "runrecord.provider_call_response":
        return [("run-record.provider-call-response", output)]
    if operation == "feedback.run":
        documents = []
        for response in output["responses"]:
            if "observed_at_unix_ms" in response:  # a work.observe answer
                documents.append(("session-feedback.observation", response))
            elif "code" in response:
                documents.append(("session-feedback.checkpoint-rejection", response))
            else:
                documents.append(("session-feedback.checkpoint-receipt", response))
        return documents
    assert operation == "redaction.apply", operation
    return []


def _golden() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for case_path in sorted(FIXTURES.glob("*/*.case.json")):
        name = case_path.name.removesuffix(".case.json")
        expected_path = case_path.with_name(f"{name}.expected.json")
        case = json.loads(case_path.read_text(encoding="utf-8"))
        expected = json.loads(expected_path.read_text(encoding="utf-8"))
        yield f"{case_path.parent.name}/{name}", case, expected


def _golden_output_cases() -> list[tuple[str, str, str]]:
    """(case id, doctype, JSON text) of every document in the golden corpus's expected
    outputs: what our reference answered."""
    cases = []
    for name, case, expected in _golden():
        if expected["outcome"] != "result":
            continue
        documents = _output_documents(case["operation"], case["input"], expected["output"])
        for index, (doctype, document) in enumerate(documents):
            cases.append((f"{name} output {index}", doctype, json.dumps(document)))
    return cases


def _reference_recap_at_the_top_of_u64() -> list[tuple[str, str, str]]:
    """The reference's own envelopes for queries at 2^63 and 2^64-1, which seed 002 allows:
    "fromEventId | unsigned integer", "limit | unsigned integer"."""
    (case,) = [c for name, c, _ in _golden() if name == "recap/continuation-page"]
    cases = []
    for from_event_id, limit in ((2**63, 2**64 - 1), (2**64 - 1, 2**63), (0, 2**64 - 1)):
        query = {**case["input"]["query"], "fromEventId": from_event_id, "limit": limit}
        output = HANDLERS["recap.project"]({**case["input"], "query": query})
        assert output["snapshot"]["query"]["fromEventId"] == from_event_id
        name = f"reference recap, fromEventId {from_event_id}, limit {limit}"
        cases.append((name, "session-recap.envelope", json.dumps(output)))
    return cases


def _sample_documents() -> list[tuple[str, Any]]:
    """Valid documents to plant wide integers in: the examples, the reference outputs and
    the session events and observation streams the golden cases feed the reference."""
    documents = [(doctype, json.loads(text)) for _, doctype, text in _accepted_cases()]
    documents += [(doctype, json.loads(text)) for _, doctype, text in _golden_output_cases()]
    for _, case, _ in _golden():
        if case["operation"] in ("recap.project", "runrecord.project"):
            for doctype, member in (
                ("session-event.event", "events"),
                ("session-event.stored", "storedEvents"),
            ):
                documents += [
                    (doctype, event)
                    for event in case["input"].get(member, [])
                    if not default_validator().validate(doctype, event)
                ]
        if case["operation"] == "health.reduce":
            documents.append(("health-observation.stream", case["input"]))
    return documents


JsonPath = tuple[str | int, ...]


def _integer_slots(
    model: Model, type_name: str, value: Any, path: JsonPath
) -> Iterator[tuple[tuple[str, str], JsonPath, bool]]:
    """((type, member), path, unsigned) of each integer held in ``value`` (consts aside)."""
    definition = model.definition(type_name)
    if isinstance(definition, UnionDef) and isinstance(value, dict):
        for variant in definition.variants:
            if value.get(definition.discriminator) == variant.tag:
                yield from _integer_slots(model, variant.type_name, value, path)
    if isinstance(definition, ObjectDef) and isinstance(value, dict):
        for field in definition.fields:
            if field.json_name in value and field.const is None:
                owner = (definition.name, field.json_name)
                member_path = (*path, field.json_name)
                yield from _slots_in(model, field.type, value[field.json_name], member_path, owner)


def _slots_in(
    model: Model, t: TypeRef, value: Any, path: JsonPath, owner: tuple[str, str]
) -> Iterator[tuple[tuple[str, str], JsonPath, bool]]:
    # A nullable member's null holds the member too: the planted integer replaces it.
    if t.kind == "integer" and (value is None or type(value) is int):
        yield owner, path, t.unsigned
    elif t.kind == "array" and isinstance(value, list) and t.item is not None:
        for index, item in enumerate(value):
            yield from _slots_in(model, t.item, item, (*path, index), owner)
    elif t.kind == "map" and isinstance(value, dict) and t.item is not None:
        for key, item in value.items():
            yield from _slots_in(model, t.item, item, (*path, key), owner)
    elif t.kind == "named":
        yield from _integer_slots(model, t.name, value, path)


def _json_path(path: JsonPath) -> str:
    # The bindings' path spelling: $.member, $["odd member"], [index].
    steps = []
    for step in path:
        if isinstance(step, int):
            steps.append(f"[{step}]")
        elif step.isidentifier():
            steps.append(f".{step}")
        else:
            steps.append(f"[{json.dumps(step)}]")
    return "$" + "".join(steps)


@dataclass(frozen=True)
class IntegerCase:
    name: str
    doctype: str
    text: str
    path: str  # where the planted integer sits
    unsigned: bool
    value: int


def _planted(values_unsigned: tuple[int, ...], values_signed: tuple[int, ...]) -> list[IntegerCase]:
    """One document per integer member and value: the first sample document that holds
    the member, with the member's first occurrence set to the value."""
    model = polyglot.build_model(SCHEMAS)
    doctypes = {d.doctype: d.type_name for d in model.document_types}
    first: dict[tuple[str, str], tuple[str, Any, JsonPath, bool]] = {}
    for doctype, document in _sample_documents():
        for owner, path, unsigned in _integer_slots(model, doctypes[doctype], document, ()):
            first.setdefault(owner, (doctype, document, path, unsigned))
    cases = []
    for (type_name, member), (doctype, document, path, unsigned) in sorted(first.items()):
        for value in values_unsigned if unsigned else values_signed:
            cases.append(
                IntegerCase(
                    f"{type_name}.{member} = {value}",
                    doctype,
                    json.dumps(_with(document, value, *path)),
                    _json_path(path),
                    unsigned,
                    value,
                )
            )
    return cases


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


def _build_typescript(out: Path) -> list[str]:
    if shutil.which("node") is None:
        _missing("node is not installed")
    if not TSC.exists():
        _missing("TypeScript is not installed: run `npm ci` in tools/typescript")
    _run(
        [str(TSC), "-p", str(GENERATED / "typescript" / "tsconfig.json"), "--outDir", str(out)],
        REPO,
    )
    return ["node", str(out / "roundtrip.js")]


def _build_go(out: Path) -> list[str]:
    if shutil.which("go") is None:
        _missing("go is not installed")
    binary = out / "roundtrip"
    env = {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    _run(["go", "vet", "./..."], GENERATED / "go", env)
    _run(["go", "build", "-o", str(binary), "./cmd/roundtrip"], GENERATED / "go", env)
    unformatted = _run(["gofmt", "-l", "."], GENERATED / "go") if shutil.which("gofmt") else ""
    assert unformatted == "", f"generated Go is not gofmt-clean: {unformatted}"
    return [str(binary)]


def _rust_target(out: Path) -> Path:
    """Cargo's target folder. On a developer's machine, one per checkout in the user's cache:
    it keeps the compiled crates between runs (about 20 s of CPU each time otherwise), and
    Cargo's freshness test (file times, not contents) stays right within one checkout, where
    a folder shared with another could hand it that checkout's program. A CI run is a fresh
    clone that would only leave a folder behind: it builds in pytest's temporary one."""
    if os.environ.get("CI") == "true":
        return out / "target"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    checkout = hashlib.sha256(str(REPO).encode()).hexdigest()[:16]
    return cache / "session-contracts" / f"polyglot-rust-{checkout}"


def _build_rust(out: Path) -> list[str]:
    if shutil.which("cargo") is None:
        _missing("cargo is not installed")
    target = _rust_target(out)
    _run(
        ["cargo", "build", "--locked", "--quiet", "--bin", "roundtrip"],
        GENERATED / "rust",
        {"CARGO_TARGET_DIR": str(target)},
    )
    return [str(target / "debug" / "roundtrip")]


# Nothing built lands in the checkout: each builder writes into the folder it is given
# (pytest's temporary folder; Go keeps its own build cache) or, for Rust outside CI, a user
# cache.
BUILDERS: dict[str, Callable[[Path], list[str]]] = {
    "typescript": _build_typescript,
    "go": _build_go,
    "rust": _build_rust,
}


def _numbers_as_text(text: str) -> Any:
    # Numbers keep their spelling: 1e2 and 100 differ here, as they do in the source.
    return json.loads(text, parse_float=lambda s: ("number", s), parse_int=lambda s: ("number", s))


@dataclass(frozen=True)
class Binding:
    """One language's round-trip program: call it with (tmp folder, cases)."""

    language: str
    command: list[str]

    def __call__(self, tmp: Path, cases: list[tuple[str, str, str]]) -> list[dict[str, str]]:
        output = _run([*self.command, str(_manifest(tmp, cases))], REPO)
        results = [json.loads(line) for line in output.splitlines()]
        assert len(results) == len(cases)
        return results


# Where the toolchains run, and where this test used to keep its builds.
BUILT_BESIDE = (GENERATED, REPO / "build")


def _untracked() -> set[str]:
    """What git reports untracked or ignored in BUILT_BESIDE, Python's caches aside (other
    tests import generated/ meanwhile); nothing outside a git checkout."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--", *map(str, BUILT_BESIDE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    return {line for line in status.stdout.splitlines() if "__pycache__" not in line}


@pytest.fixture(scope="module")
def untracked_before_building() -> set[str]:
    return _untracked()


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def roundtrip(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    untracked_before_building: set[str],
) -> Binding:
    out = tmp_path_factory.mktemp(f"polyglot-{request.param}")
    return Binding(request.param, BUILDERS[request.param](out))


def test_building_leaves_nothing_in_the_checkout(
    roundtrip: Binding, untracked_before_building: set[str]
) -> None:
    # A clean clone (CI) shows any build product; a folder that was already there hides one.
    assert _untracked() - untracked_before_building == set(), roundtrip.language


@pytest.mark.sentence("recap.generated-languages")
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


def test_every_reference_output_in_the_golden_corpus_round_trips(
    roundtrip: Binding, tmp_path: Path
) -> None:
    # Harn's generated bindings decode every recap envelope our reference writes
    # (upstream DIFFERENCES.md, "Generated types"); ours decode every output of it.
    cases = _golden_output_cases()
    assert len({doctype for _, doctype, _ in cases}) >= 10
    for (name, _, text), result in zip(cases, roundtrip(tmp_path, cases), strict=True):
        assert "error" not in result, f"{name}: {result['error']}"
        assert json.loads(result["encoded"]) == json.loads(text), name


def test_the_reference_recap_of_a_query_at_the_top_of_u64(
    roundtrip: Binding, tmp_path: Path
) -> None:
    # Seed 002: "fromEventId | unsigned integer", "limit | unsigned integer"; Harn's
    # SessionRecapQuery holds them as u64, so Go and Rust must read 2^63 and 2^64-1.
    cases = _reference_recap_at_the_top_of_u64()
    for (name, _, text), result in zip(cases, roundtrip(tmp_path, cases), strict=True):
        if roundtrip.language == "typescript":
            assert result.get("error", "").startswith("$.snapshot.query."), name
            assert result["error"].endswith("[unsafe_integer]"), name
        else:
            assert "error" not in result, f"{name}: {result['error']}"
            assert json.loads(result["encoded"]) == json.loads(text), name


def test_unsigned_members_hold_every_u64_and_signed_ones_every_i64(
    roundtrip: Binding, tmp_path: Path
) -> None:
    cases = _planted((2**63, 2**64 - 1), (-(2**63), 2**63 - 1))
    planted = {c.name.split(" = ")[0] for c in cases if c.unsigned}
    # Harn's schema leaves these unbounded; seed 002 ("fromEventId | unsigned integer") and
    # Harn's SessionRecapQuery, SessionRecapCursor and SessionRecapSource make them u64.
    recap = {"QueryEcho.fromEventId", "QueryEcho.limit", "RecapCursor.lastEventId"}
    recap |= {"RecapCursor.nextEventId", "RecapSource.firstEventId", "RecapSource.lastEventId"}
    assert recap <= planted
    assert len(planted) >= 60
    results = roundtrip(tmp_path, [(c.name, c.doctype, c.text) for c in cases])
    for case, result in zip(cases, results, strict=True):
        if roundtrip.language == "typescript":  # refused, never rounded
            assert result.get("error", "").startswith(f"{case.path}: {case.value} "), case.name
            assert result["error"].endswith("[unsafe_integer]"), case.name
        else:
            assert "error" not in result, f"{case.name}: {result['error']}"
            assert json.loads(result["encoded"]) == json.loads(case.text), case.name


def test_integers_beyond_their_type_are_refused_with_a_clear_error(
    roundtrip: Binding, tmp_path: Path
) -> None:
    cases = _planted((2**64, -1), (2**63, -(2**63) - 1))
    results = roundtrip(tmp_path, [(c.name, c.doctype, c.text) for c in cases])
    for case, result in zip(cases, results, strict=True):
        error = result.get("error", "")
        if roundtrip.language == "go":
            assert error.startswith(f"{case.path}: {case.value} is outside "), case.name
            assert error.endswith("[integer_out_of_range]"), case.name
        elif roundtrip.language == "typescript":
            code = "negative_integer" if case.unsigned and case.value < 0 else "unsafe_integer"
            assert error.startswith(f"{case.path}: {case.value} "), case.name
            assert error.endswith(f"[{code}]"), case.name
        else:  # serde names the type it could not fill, and the line and column
            assert ("u64" if case.unsigned else "i64") in error, case.name
            assert "line 1 column" in error, case.name


def test_the_cases_agree_with_the_schemas() -> None:
    # The bindings must accept what the schemas accept and refuse only what they refuse.
    validator = default_validator()
    for name, doctype, text in _accepted_cases():
        assert validator.is_valid(doctype, json.loads(text)), name
    # The golden outputs are documents of the types _output_documents names.
    for name, doctype, text in _golden_output_cases() + _reference_recap_at_the_top_of_u64():
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
    assert model.definition("Evidence").origin.startswith("run-record.schema.json")
    for name, declaration in {
        "typescript/session_contracts.ts": "export interface Evidence ",
        "go/types.go": "type Evidence struct",
        "rust/src/lib.rs": "pub struct Evidence ",
    }.items():
        assert files[name].count(declaration) == 1, name
    # A type is named by its schema title, as the Python class is: two definitions that
    # share a $defs key in two files have titles that tell them apart.
    assert model.definition("CheckEvidence").origin.startswith("certification-report.schema")
    assert model.definition("PlanPayloadStep").origin == (
        "session-event.schema.json#/$defs/PlanStep"
    )
    assert model.definition("PlanStep").origin.startswith("session-recap-v1.schema.json")
    union = model.definition("SessionEvent")
    assert isinstance(union, UnionDef)
    assert union.discriminator == "kind"


def _lower_bound(schemas: dict[str, Any], file: str, schema: Any) -> float | None:
    # The least integer a member admits, read from the schema text: minimum,
    # exclusiveMinimum and const, through $ref and a nullable anyOf/oneOf.
    if not isinstance(schema, dict):
        return None
    bounds = []
    if isinstance(schema.get("minimum"), int | float):
        bounds.append(schema["minimum"])
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        bounds.append(int(schema["exclusiveMinimum"]) + 1)
    if isinstance(schema.get("const"), int) and not isinstance(schema["const"], bool):
        bounds.append(schema["const"])
    if "$ref" in schema:
        target, _, pointer = schema["$ref"].partition("#")
        target = target or file
        definition = schemas[target]["$defs"][pointer.removeprefix("/$defs/")]
        bounds.append(_lower_bound(schemas, target, definition))
    for key in ("anyOf", "oneOf"):
        rest = [b for b in schema.get(key, []) if b.get("type") != "null"]
        if len(rest) == 1:
            bounds.append(_lower_bound(schemas, file, rest[0]))
    known = [b for b in bounds if b is not None]
    return max(known) if known else None


def test_integer_signs_follow_the_schemas_lower_bounds() -> None:
    # Unsigned where the schema bounds the integer at 0 or more, or where domains.py ties
    # a member Harn's schema leaves unbounded to one that is (seed 002: "fromEventId |
    # unsigned integer"); signed where the schema allows negatives.
    schemas = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMAS.glob("*.json")}
    tied = {(e.member.file, e.member.definition, e.member.member) for e in SAME_DOMAIN}
    model = polyglot.build_model(SCHEMAS)
    signs = {}
    for definition in model.definitions:
        if not isinstance(definition, ObjectDef) or "#/$defs/" not in definition.origin:
            continue
        file, _, def_name = definition.origin.partition("#/$defs/")
        for field in definition.fields:
            t = field.type
            while t.item is not None:
                t = t.item
            if t.kind != "integer":
                continue
            member = schemas[file]["$defs"][def_name]["properties"][field.json_name]
            if member.get("type") == "array":
                member = member["items"]
            bound = _lower_bound(schemas, file, member)
            if (file, def_name, field.json_name) in tied:
                assert bound is None, (def_name, field.json_name)
                assert t.unsigned, (def_name, field.json_name)
            else:
                assert t.unsigned == (bound is not None and bound >= 0), (def_name, field.json_name)
            signs[(def_name, field.json_name)] = t.unsigned
    assert len(signs) >= 100
    # Harn's IterationRecap.iteration is Option<i64>: the recap's iteration stays signed.
    assert signs[("RecapIteration", "iteration")] is False
    assert signs[("QueryEcho", "fromEventId")]
    assert signs[("RecapCursor", "nextEventId")]


def test_the_tied_members_are_where_the_bindings_refuse_what_the_schema_accepts() -> None:
    # Harn's schema (nullableInteger) accepts a negative cursor; Harn's SessionRecapCursor
    # (Option<u64>) and our bindings refuse it. Our reference never writes one.
    snapshot = _example("session-recap.snapshot")
    validator = default_validator()
    model = polyglot.build_model(SCHEMAS)
    for entry in SAME_DOMAIN:
        definition = model.definition(entry.member.definition)
        assert isinstance(definition, ObjectDef)
        (field,) = [f for f in definition.fields if f.json_name == entry.member.member]
        assert field.type.unsigned
    assert validator.is_valid(
        "session-recap.snapshot", _with(snapshot, -1, "cursor", "lastEventId")
    )
    assert validator.is_valid("session-recap.snapshot", _with(snapshot, -1, "query", "limit"))


def _edited_schemas(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    shutil.copytree(SCHEMAS, tmp_path / "schemas")
    path = tmp_path / "schemas" / "session-recap-v1.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    edit(schema["$defs"])
    path.write_text(json.dumps(schema), encoding="utf-8")
    return tmp_path / "schemas"


def test_a_bound_beside_a_ref_or_an_exclusive_minimum_makes_an_integer_unsigned(
    tmp_path: Path,
) -> None:
    def edit(defs: dict[str, Any]) -> None:
        iteration = defs["RecapIteration"]["properties"]["iteration"]
        iteration["minimum"] = 0  # beside its $ref, which 2020-12 applies too
        defs["RecapCoverage"]["properties"]["scanned"] = {"type": "integer", "exclusiveMinimum": -1}
        defs["RecapCoverage"]["properties"]["matched"] = {"type": "integer", "minimum": -1}

    model = polyglot.build_model(_edited_schemas(tmp_path, edit))
    types = {}
    for name in ("RecapIteration", "RecapCoverage"):
        definition = model.definition(name)
        assert isinstance(definition, ObjectDef)
        types.update({(name, f.json_name): f.type for f in definition.fields})
    assert types[("RecapIteration", "iteration")].unsigned
    assert types[("RecapCoverage", "scanned")].unsigned
    assert not types[("RecapCoverage", "matched")].unsigned


def test_two_definitions_titled_alike_in_two_files_get_their_contracts_names(
    tmp_path: Path,
) -> None:
    def edit(defs: dict[str, Any]) -> None:
        defs["PlanStep"]["title"] = "PlanPayloadStep"  # session-event's PlanStep's title

    model = polyglot.build_model(_edited_schemas(tmp_path, edit))
    names = {d.name for d in model.definitions}
    assert {"SessionEventPlanPayloadStep", "SessionRecapPlanPayloadStep"} <= names
    assert "PlanPayloadStep" not in names


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("bound", "has a lower bound of its own"),
        ("gone", "is not an integer member"),
        ("signed source", "is not an integer bounded at 0 or more"),
    ],
)
def test_a_domain_entry_the_schemas_no_longer_fit_is_a_tool_error(
    tmp_path: Path, change: str, reason: str
) -> None:
    def edit(defs: dict[str, Any]) -> None:
        if change == "bound":  # the schema now says it itself: the entry must go
            defs["NullableInteger"]["minimum"] = 0
        elif change == "gone":
            del defs["RecapCursor"]["properties"]["nextEventId"]
            defs["RecapCursor"]["required"].remove("nextEventId")
        else:
            defs["EventId"]["minimum"] = -1

    with pytest.raises(ToolError) as caught:
        polyglot.build_model(_edited_schemas(tmp_path, edit))
    (finding,) = caught.value.findings
    assert finding.code == "polyglot_domain_stale"
    assert reason in finding.message


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
