"""The oracle never imports the judge.

The reference producer and its semantics (``conformance/reference``) and the
producer side of the protocol (``conformance/protocol``) must stand on their
own: a certifier bug must never change what the reference answers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "conformance"
JUDGE = "session_contracts.conformance.judge"


def _imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules_of(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", ["reference", "protocol"])
def test_oracle_side_never_imports_the_judge(folder: str) -> None:
    modules = _modules_of(folder)
    assert modules, f"no modules under conformance/{folder}"
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in modules
        for name in _imported_modules(path)
        if name == JUDGE or name.startswith(JUDGE + ".")
    ]
    assert offenders == []


def test_the_layering_check_sees_an_offending_import(tmp_path: Path) -> None:
    offending = tmp_path / "bad.py"
    offending.write_text(
        "from session_contracts.conformance.judge._certify import certify\n", encoding="utf-8"
    )
    assert any(name.startswith(JUDGE) for name in _imported_modules(offending))


def test_no_module_is_left_in_the_flat_conformance_folder() -> None:
    flat = sorted(p.name for p in ROOT.glob("*.py") if p.name != "__init__.py")
    assert flat == []
