"""The package's modules as the build maps them: import name and file, for the tests that
read the source (layering, finding codes) and for mypy (tests/typecheck.py).

pyproject.toml's ``[tool.setuptools]`` lists every package, and ``package-dir`` maps the
design's top-level folders into the package: ``session_contracts.conformance.judge`` is
conformance/judge/, ``session_contracts.jsontext`` is session_contracts/jsontext/.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def package_folders(repo: Path = REPO) -> dict[str, Path]:
    """Each package the build ships, with the folder that holds it."""
    with (repo / "pyproject.toml").open("rb") as handle:
        setuptools = tomllib.load(handle)["tool"]["setuptools"]
    mapped: dict[str, str] = setuptools["package-dir"]
    folders = {}
    for package in setuptools["packages"]:
        root = max(
            (name for name in mapped if package == name or package.startswith(name + ".")),
            key=len,
            default=None,
        )
        if root is None:
            folders[package] = repo.joinpath(*package.split("."))
        else:
            below = package.removeprefix(root).split(".")[1:]
            folders[package] = repo.joinpath(mapped[root], *below)
    return folders


def module_files(prefixes: tuple[str, ...] = ("session_contracts",)) -> Iterator[tuple[str, Path]]:
    """(module name, file) of every module under the given prefixes, packages first."""
    for package, folder in package_folders().items():
        for path in sorted(folder.glob("*.py")):
            module = package if path.stem == "__init__" else f"{package}.{path.stem}"
            if any(module == p or module.startswith(p + ".") for p in prefixes):
                yield module, path
