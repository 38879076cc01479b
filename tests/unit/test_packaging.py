"""pyproject.toml's dependency ranges, constraints.txt's pins and the generator's pinned
version agree, and each extra holds what the commands guarded by it import; the build maps
every package folder, the top-level ones included, and the checkout holds no symlink and
nothing built."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from package_modules import package_folders

from session_contracts.extras import EXTRA_MODULES
from session_contracts.generator.codegen import CODEGEN_VERSION

REPO = Path(__file__).resolve().parents[2]
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _constraints() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        assert version, f"constraints.txt: {line!r} is not an exact pin"
        pins[_canonical(name)] = version
    return pins


def _project() -> dict[str, object]:
    with (REPO / "pyproject.toml").open("rb") as handle:
        project: dict[str, object] = tomllib.load(handle)["project"]
    return project


def _requirements() -> list[tuple[str, str, str]]:
    """(group, name, specifier) of every dependency, the default install's group ``""``."""
    project = _project()
    groups: dict[str, list[str]] = {"": project["dependencies"]}  # type: ignore[dict-item]
    groups.update(project["optional-dependencies"])  # type: ignore[call-overload]
    found = []
    for group, requirements in groups.items():
        for requirement in requirements:
            match = _REQUIREMENT.match(requirement)
            assert match is not None, requirement
            found.append((group, _canonical(match.group(1)), match.group(3).strip()))
    return found


def _lower_bound(specifier: str) -> str | None:
    for clause in specifier.split(","):
        clause = clause.strip()
        if clause.startswith((">=", "==")):
            return clause[2:]
    return None


def test_the_generator_pin_is_one_version_everywhere() -> None:
    assert _constraints()["datamodel-code-generator"] == CODEGEN_VERSION
    codegen = [spec for group, name, spec in _requirements() if name == "datamodel-code-generator"]
    assert codegen == [f"=={CODEGEN_VERSION}"]


def test_every_range_starts_at_the_tested_pin() -> None:
    pins = _constraints()
    for group, name, specifier in _requirements():
        if name == "session-contracts":
            continue  # dev's self-reference to the other extras
        assert name in pins, f"{name} ([{group}]) has no pin in constraints.txt"
        assert _lower_bound(specifier) == pins[name], f"{name}: {specifier!r} vs =={pins[name]}"


def test_only_the_generator_is_pinned_exactly_in_pyproject() -> None:
    exact = [name for _, name, spec in _requirements() if spec.startswith("==")]
    assert exact == ["datamodel-code-generator"]


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_each_guarded_module_comes_with_its_extra(extra: str) -> None:
    distributions = metadata.packages_distributions()
    wanted = {name for group, name, _ in _requirements() if group == extra}
    for module in EXTRA_MODULES[extra]:
        provided_by = {_canonical(d) for d in distributions.get(module, [])}
        assert provided_by & wanted, f"{module} is not installed by the [{extra}] extra"


def test_dev_holds_every_extra() -> None:
    dev = _project()["optional-dependencies"]["dev"]  # type: ignore[index]
    extras = sorted(set(EXTRA_MODULES))
    assert f"session-contracts[{','.join(extras)}]" in dev


PACKAGES = package_folders()


def test_every_package_folder_is_listed() -> None:
    # setuptools finds no subpackage of a mapped folder by itself: one left out of
    # pyproject.toml's list would be missing from the wheel (and from mypy and these tests).
    roots = [REPO / "session_contracts"] + [
        REPO / folder for folder in _pyproject_setuptools()["package-dir"].values()
    ]
    on_disk = {
        Path(folder)
        for root in roots
        for folder, _, names in os.walk(root)
        if "__init__.py" in names
    }
    listed = set(PACKAGES.values())
    assert sorted(on_disk - listed) == [], "package folders pyproject.toml does not list"
    assert sorted(listed - on_disk) == [], "listed packages without a folder and __init__.py"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_each_package_is_imported_from_its_folder(package: str) -> None:
    # The installed package (editable here) follows pyproject.toml's map.
    module_file = importlib.import_module(package).__file__
    assert module_file is not None
    assert Path(module_file) == PACKAGES[package] / "__init__.py"


def test_the_checkout_holds_no_symlink() -> None:
    # The top-level folders are mapped by the build, not linked (a Windows checkout has no
    # symlinks by default): no file git tracks is a link (mode 120000).
    staged = subprocess.run(
        ["git", "ls-files", "--stage"], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.splitlines()
    assert len(staged) > 100
    assert [line for line in staged if line.startswith("120000 ")] == []


def test_nothing_built_lies_in_the_checkout() -> None:
    # setup.py builds the C census outside the source tree: the editable install these tests
    # run on (setuptools' editable mode would copy it beside its source) and the wheel alike.
    folders = {*PACKAGES.values(), REPO / "session_contracts_c"}
    built = sorted(
        path.relative_to(REPO).as_posix()
        for folder in folders
        for suffix in ("*.so", "*.pyd", "*.dylib", "*.o", "*.obj")
        for path in folder.glob(suffix)
    )
    assert built == []


def _pyproject_setuptools() -> dict[str, object]:
    with (REPO / "pyproject.toml").open("rb") as handle:
        found: dict[str, object] = tomllib.load(handle)["tool"]["setuptools"]
    return found
