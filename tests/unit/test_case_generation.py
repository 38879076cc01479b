"""Certify's cases are a function of the seed alone, drawn with Hypothesis's public API.

Hypothesis answers a draw now and then with a constant harvested from the source of the
"local" modules loaded in the process; certify's strategies draw nothing such a constant
fits (conformance/judge/cases/draws.py), so what was imported before does not change the
cases. And no module of the package reaches into Hypothesis's internals, which change
between its releases (certify runs in a third party's environment, on its Hypothesis).
"""

from __future__ import annotations

import ast
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from package_modules import module_files

from session_contracts.conformance.judge.cases import draws
from session_contracts.conformance.judge.cases.from_schema import SchemaStrategies

INTERNAL = "hypothesis.internal"


def _imports(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return found


def test_no_module_imports_hypothesis_internals() -> None:
    offenders = []
    for module, path in module_files(("session_contracts",)):
        source = path.read_text(encoding="utf-8")
        imported = _imports(ast.parse(source))
        if any(name == INTERNAL or name.startswith(INTERNAL + ".") for name in imported):
            offenders.append(module)
        elif INTERNAL in source:  # importlib, __import__, a string handed to getattr
            offenders.append(f"{module} (names {INTERNAL})")
    assert offenders == []


def test_the_walk_sees_the_judge_and_would_see_an_internal_import() -> None:
    modules = {module for module, _ in module_files(("session_contracts",))}
    assert "session_contracts.conformance.judge.certify" in modules
    assert "session_contracts.conformance.judge.cases.draws" in modules
    imported = _imports(ast.parse("from hypothesis.internal.conjecture import providers"))
    assert any(name.startswith(INTERNAL) for name in imported)


# Every check's cases at a few examples a strategy, with a producer that skips every case
# (the cases are drawn all the same): the digest of what was sent, in order.
_DIGEST = """
import hashlib, sys, tempfile
from pathlib import Path
for name in sys.argv[1:]:
    __import__(name)
from session_contracts.conformance.judge.certify import run_check
from session_contracts.conformance.judge.checks import CHECKS
from session_contracts.conformance.judge.runner import CaseOutcome
from session_contracts.conformance.reference.producer import HANDLERS
from session_contracts.contracts import CONTRACT_DOCTYPES
from session_contracts.jsontext.wire import dumps_wire

digest = hashlib.sha256()

def skipping(trial):
    digest.update(trial.operation.encode() + dumps_wire(trial.input) + b"\\n")
    return CaseOutcome(0, "skipped", reason="drawing only")

with tempfile.TemporaryDirectory() as folder:
    for check in CHECKS:
        run_check(check, skipping, contracts=tuple(CONTRACT_DOCTYPES),
                  operations=tuple(sorted(HANDLERS)), examples=4, seed=11,
                  failures_dir=Path(folder))
print(digest.hexdigest())
"""

# A local module full of what Hypothesis harvests: integers of magnitude 100 and more,
# short strings (one character to twenty), floats, bytes; new ones, and ones certify's
# cases are made of. (At most 1,024 a module: Hypothesis harvests nothing from more.)
_CONSTANTS = "\n".join(
    [
        f"INTEGERS = {[100, 101, 255, 1000, 4096, 5000, 32769, 2**53 - 1, -100, -1000]}",
        f"NEW_INTEGERS = {[104_729 * n + 101 for n in range(60)]}",
        f"STRINGS = {['c1', 'sess-1', 'run-1', 'x', 'a', '0', '/', 'edit', 'passed', 'sha256:']}",
        f"NEW_STRINGS = {[f'q{n}z' for n in range(60)] + [chr(0x4E00 + n) for n in range(40)]}",
        f"FLOATS = {[0.5, 1.5, 1e21, -0.1, 2.0**53] + [n + 0.37 for n in range(40)]}",
        f"BYTES = {[b'abc'] + [bytes([n, 255 - n]) for n in range(20)]}",
    ]
)


def _digest(cwd: Path, *imports: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _DIGEST, *imports],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_the_same_seed_gives_the_same_cases_whatever_was_imported(tmp_path: Path) -> None:
    (tmp_path / "harvested_constants.py").write_text(_CONSTANTS, encoding="utf-8")
    plain = _digest(tmp_path)
    # Another process (another hash seed), with constants to harvest and the reference's
    # modules loaded before the first case is drawn.
    primed = _digest(
        tmp_path,
        "harvested_constants",
        "session_contracts.conformance.reference.producer",
        "session_contracts.recap",
        "session_contracts.runrecord",
    )
    assert plain == primed


@pytest.mark.parametrize(
    "strategy",
    [
        draws.integers(-(2**53) + 1, 2**53 - 1),
        draws.integers(100, 10**40),
        draws.integers(-5000, -100),
        draws.floats(),
        draws.text(),
        draws.pick(list(range(1234))),
    ],
    ids=["safe-integers", "huge-integers", "negative-integers", "floats", "text", "pick"],
)
def test_each_primitive_reaches_its_whole_range(strategy: object) -> None:
    seen: list[object] = []

    @settings(
        max_examples=300,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(5)
    @given(strategy)  # type: ignore[arg-type]
    def collect(value: object) -> None:
        seen.append(value)

    collect()
    distinct = {repr(value) for value in seen}
    assert len(distinct) > 100
    if all(isinstance(value, int) for value in seen):
        values = [int(value) for value in seen]  # type: ignore[call-overload]
        spread = max(values) - min(values)
        assert spread > 1000, (min(values), max(values))


def test_the_integers_stay_within_their_bounds() -> None:
    @settings(max_examples=200, database=None, deadline=None)
    @hypothesis_seed(3)
    @given(draws.integers(-1_000_000, 250), draws.naturals(101), draws.floats(0, 1))
    def bounded(number: int, natural: int, ratio: float) -> None:
        assert -1_000_000 <= number <= 250
        assert 0 <= natural <= 101
        assert 0 <= ratio <= 1

    bounded()


def test_a_schema_beyond_what_is_drawn_is_refused_when_compiled() -> None:
    schema = {
        "$defs": {"a": {"type": "object", "patternProperties": {"^x": {}}}},
        "$ref": "#/$defs/a",
    }
    with pytest.raises(ValueError, match="patternProperties"):
        SchemaStrategies(schema).root()


def test_a_compiled_schema_draws_only_what_it_accepts() -> None:
    import jsonschema_rs

    schema = {
        "$defs": {
            "item": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": ["a", "b"]}},
            },
            "root": {
                "type": "object",
                "additionalProperties": False,
                "required": ["items", "id"],
                "properties": {
                    "id": {"type": "string", "pattern": "^blake3:[0-9a-f]{8}$"},
                    "n": {"type": "integer", "minimum": 3, "maximum": 100000},
                    "items": {
                        "type": "array",
                        "items": {"$ref": "#/$defs/item"},
                        "contains": {"properties": {"kind": {"const": "b"}}},
                    },
                    "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                },
                "if": {"required": ["n"]},
                "then": {"required": ["either"]},
            },
        },
        "$ref": "#/$defs/root",
    }
    accepts = jsonschema_rs.validator_for(schema).is_valid
    drawn: list[object] = []

    @settings(max_examples=60, database=None, deadline=None)
    @hypothesis_seed(2)
    @given(SchemaStrategies(schema).root())
    def valid(document: object) -> None:
        drawn.append(document)
        assert accepts(document), document

    valid()
    assert len({hashlib.sha256(repr(d).encode()).hexdigest() for d in drawn}) > 30
