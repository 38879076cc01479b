"""The package's layers, and what one module may take from another.

Layers, lowest first: the data (schemas, generated bindings); the core (strict JSON,
canonical forms, validation, redaction, schema diff); the seeds' semantics (health,
feedback, recap, run records, the journal); the code generator; the producer side of the
protocol; the reference producer (the oracle); the judge (certify, golden, check); the entry
points (the public API, the CLI, quickstart). A module imports only
from its own layer or below, so the oracle never imports the judge and a certifier bug
can never change what the reference answers.

Modules are public: no module name starts with ``_``, and across modules only public
names are imported.  The one compiled module, ``session_contracts_c._speedups`` (the C
census, docs/hashing.md section 5), is imported by ``session_contracts.accel`` alone and
uses CPython's public C API only: no struct of the interpreter's internals, no private
function, so no interpreter release can change what it reads.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest
from package_modules import module_files

REPO = Path(__file__).resolve().parents[2]
# Lowest first; a module belongs to the layer of its longest matching name (the name itself
# or a package above it). The core is every module of session_contracts/ not named elsewhere.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("data", ("session_contracts.schemas", "session_contracts.generated")),
    ("core", ("session_contracts",)),
    (
        "semantics",
        (
            "session_contracts.health",
            "session_contracts.feedback",
            "session_contracts.recap",
            "session_contracts.runrecord",
            "session_contracts.journal",
        ),
    ),
    ("codegen", ("session_contracts.generator",)),
    ("protocol", ("session_contracts.conformance.protocol",)),
    ("oracle", ("session_contracts.conformance.reference",)),
    ("judge", ("session_contracts.conformance",)),
    (
        "entry",
        (
            "session_contracts.__main__",
            "session_contracts.cli",
            "session_contracts.api",
            "session_contracts.quickstart",
        ),
    ),
)
# The package's __init__ exports the public API, so it sits with the entry points.
TOP = "session_contracts"
C_MODULES = ("session_contracts_c._speedups",)
C_FOLDER = REPO / "session_contracts_c"
ACCEL = "session_contracts.accel"


def _layer(module: str) -> int:
    if module == TOP:
        return len(LAYERS) - 1
    best, rank = -1, -1
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, rank = len(name), index
    assert rank >= 0, f"{module} is in no layer"
    return rank


MODULES = dict(module_files())


def _is_module(name: str) -> bool:
    return name in MODULES or name in C_MODULES


def _imports(module: str, path: Path) -> Iterator[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import, lazy ones included."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full, None) if _is_module(full) else (base, alias.name)


def _ours(name: str) -> bool:
    return name == "session_contracts" or name.startswith("session_contracts.")


def test_every_module_is_in_a_layer() -> None:
    assert len(MODULES) > 100
    for module in MODULES:
        _layer(module)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    offenders = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, path in MODULES.items()
        for target, _ in _imports(module, path)
        if _ours(target) and _layer(target) > _layer(module)
    ]
    assert offenders == []


def _circles() -> list[list[str]]:
    """Every set of modules that import each other round a circle, lazy imports included
    (Tarjan's strongly connected components of the import graph)."""
    graph = {
        module: {t for t, _ in _imports(module, path) if t in MODULES and t != module}
        for module, path in MODULES.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while (member := stack.pop()) != module:
                component.append(member)
            if component:
                circles.append(sorted([module, *component]))

    for module in graph:
        if module not in index:
            visit(module)
    return circles


def test_no_modules_import_each_other_round_a_circle() -> None:
    # The package's own __init__ re-exports the public API; no module imports it back.
    assert _circles() == []


def test_the_oracle_never_imports_the_judge() -> None:
    # At run time too: the reference producer and the semantics it answers with load no
    # judge module (an importlib call would escape the static check above).
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, session_contracts.conformance.reference.producer\n"
            "import session_contracts.feedback, session_contracts.health\n"
            "import session_contracts.journal, session_contracts.recap\n"
            "import session_contracts.runrecord\n"
            "print('\\n'.join(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout.split()
    assert "session_contracts.recap.projection" in loaded
    assert [name for name in loaded if name.startswith("session_contracts.conformance.judge")] == []


def test_every_package_says_what_it_holds() -> None:
    # A newcomer reads the tree: each folder's __init__.py opens with a docstring.
    silent = [
        module
        for module, path in MODULES.items()
        if path.name == "__init__.py"
        and not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert silent == []


def test_no_module_name_starts_with_an_underscore() -> None:
    private = [
        module
        for module in MODULES
        if any(part.startswith("_") and part != "__main__" for part in module.split("."))
    ]
    assert private == []


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = [
        f"{module} imports {name} from {target}"
        for module, path in MODULES.items()
        for target, name in _imports(module, path)
        if _ours(target)
        and name is not None
        and name.startswith("_")
        and not name.startswith("__")
        and target != module
    ]
    assert offenders == []


def _importers(targets: Collection[str], allowed: Collection[str]) -> list[str]:
    """Each import of one of ``targets`` by a module that is not one of the ``allowed``."""
    return [
        f"{module} imports {target}"
        for module, path in MODULES.items()
        for target, _ in _imports(module, path)
        if target in targets and module not in allowed
    ]


def test_only_the_accel_module_imports_the_c_modules() -> None:
    assert _importers(C_MODULES, {ACCEL}) == []


def test_the_c_modules_are_the_ones_the_build_declares() -> None:
    # setup.py declares each C module with its source; nothing else is compiled.
    setup = (REPO / "setup.py").read_text(encoding="utf-8")
    declared = re.findall(r'Extension\(\s*"([^"]+)",\s*sources=\["([^"]+)"\]', setup)
    assert declared == [
        (name, f"session_contracts_c/{name.rpartition('.')[2]}.c") for name in C_MODULES
    ]
    compiled = sorted(
        path.relative_to(REPO).as_posix()
        for suffix in ("*.c", "*.h", "*.cc", "*.cpp", "*.pyx", "*.rs")
        for folder in ("session_contracts", "session_contracts_c", "conformance", "generator")
        for path in (REPO / folder).rglob(suffix)
    )
    assert compiled == [source for _, source in declared]


# What a module reading CPython's internals would show: a private function (_Py...), the
# unstable tier, the internal headers, or a cast to an object's struct to read its fields.
_PRIVATE_C_API = re.compile(
    r"\b_Py[A-Za-z]|\bPyUnstable_|Py_BUILD_CORE|pycore_|internal/"
    r"|\((?:PyDictObject|PyDictKeysObject|PyListObject|PyTupleObject|PyLongObject"
    r"|PyASCIIObject|PyCompactUnicodeObject|PyUnicodeObject|PyFloatObject) \*\)"
    r"|->(?:ob_item|ob_digit|ma_keys|ma_values|dk_\w+|utf8\w*|long_value|lv_tag)\b"
)


def test_the_c_modules_use_the_public_c_api_only() -> None:
    offenders = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(C_FOLDER.glob("*.c"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _PRIVATE_C_API.search(line)
    ]
    assert offenders == []
    assert _PRIVATE_C_API.search("KeysLayout *keys = (KeysLayout *)d->ma_keys;")
    assert _PRIVATE_C_API.search("size_t bits = _PyLong_NumBits(v);")
    assert _PRIVATE_C_API.search("PyObject **items = ((PyListObject *)v)->ob_item;")


def test_only_the_accel_module_touches_the_collector() -> None:
    # Speed machinery sits behind one door: pausing the collector is accel.paused_gc.
    assert _importers({"gc"}, {ACCEL}) == []


# The two stores: the journal (Harn's stored events) and the feedback store (seed 001's
# durable commits). No other module writes SQL.
SQL_SPEAKERS = (
    "session_contracts.journal.sqlite",
    "session_contracts.feedback.store",
)


def test_only_the_two_stores_speak_sql() -> None:
    assert _importers({"sqlite3"}, SQL_SPEAKERS) == []


def test_the_checks_see_an_offending_module(tmp_path: Path) -> None:
    offending = tmp_path / "bad.py"
    offending.write_text(
        "from session_contracts.conformance.judge.certify import certify\n"
        "from session_contracts.jsontext.canonical import _fast_bytes\n"
        "from session_contracts_c import _speedups\n",
        encoding="utf-8",
    )
    found = list(_imports("session_contracts.conformance.reference.bad", offending))
    assert ("session_contracts.conformance.judge.certify", "certify") in found
    assert ("session_contracts.jsontext.canonical", "_fast_bytes") in found
    assert ("session_contracts_c._speedups", None) in found
    oracle = _layer("session_contracts.conformance.reference.bad")
    assert _layer("session_contracts.conformance.judge.certify") > oracle


def test_the_oracle_folder_holds_only_the_reference_producer() -> None:
    # The semantics it answers with are packages of their own, shipped as commands too.
    oracle = sorted(
        p.relative_to(REPO / "conformance" / "reference").as_posix()
        for p in (REPO / "conformance" / "reference").rglob("*.py")
    )
    assert oracle == ["__init__.py", "producer.py"]


@pytest.mark.parametrize("semantics", ["feedback", "health", "journal", "recap", "runrecord"])
def test_the_semantics_have_one_import_name(semantics: str) -> None:
    # session_contracts.<semantics>, not also under the oracle (no sys.modules aliases).
    importlib.import_module(f"session_contracts.{semantics}")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"session_contracts.conformance.reference.{semantics}")


def test_no_module_is_left_in_the_flat_conformance_folder() -> None:
    flat = sorted(p.name for p in (REPO / "conformance").glob("*.py") if p.name != "__init__.py")
    assert flat == []
