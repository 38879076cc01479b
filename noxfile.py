"""The single source of truth for sessions: tests, lint, typecheck, generate, golden, certify,
bench."""

from __future__ import annotations

import os
import time
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
# `nox` alone runs what CI runs after the wheel (.ci/run); `nox -s tests` is the quick loop.
nox.options.sessions = ["tests", "integration", "compat", "pure_python", "lint", "typecheck"]
# CI must not pass by skipping a Python it lacks; a developer's machine may have 3.11 alone.
nox.options.error_on_missing_interpreters = os.environ.get("CI") == "true"

PYTHON = "3.11"  # the oldest supported: every session but compat and wheel runs on it
NEWER = ["3.12", "3.13"]
PYTHONS = [PYTHON, *NEWER]
# Tests sit in folders by kind: unit/, rules/ (a seed's or a contract's rules), cli/ (the
# commands in process) and integration/ (subprocesses, servers, toolchains, whole producers).
FAST = "not slow and not integration"
# pytest-xdist: a worker per core; a file's tests stay on one worker (they share fixtures).
PARALLEL = ("-n", "auto", "--dist", "loadfile")
# Every install pins what it can to the versions CI tests (constraints.txt).
CONSTRAINTS = ("-c", "constraints.txt")
HAND_WRITTEN = [
    "session_contracts",
    "session_contracts_c",
    "generator",
    "conformance",
    "tests",
    "bench",
    "noxfile.py",
    "setup.py",
]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """What a developer runs: the unit, rule and CLI tests (neither integration nor slow),
    a few minutes on two cores; `-- ARGS` replaces the selection."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("pytest", *PARALLEL, *(session.posargs or ["-m", FAST]))


@nox.session(python=PYTHON)
def integration(session: nox.Session) -> None:
    """The integration tests: producers, servers and toolchains (tsc, go, cargo, Chromium)."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("pytest", *PARALLEL, "-m", "integration and not slow", *session.posargs)


@nox.session(python=NEWER)
def compat(session: nox.Session) -> None:
    """The unit tests on the newer Pythons: the C census, canonical forms, strict reading,
    redaction and the journal are where an interpreter's changes would show."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("pytest", *PARALLEL, "-m", FAST, "tests/unit", *session.posargs)


@nox.session(python=PYTHON)
def pure_python(session: nox.Session) -> None:
    """The unit tests with the C census switched off (session_contracts/accel.py): each
    Python twin must give the C module's answers, as on an install built without a C
    compiler."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run(
        "pytest", *PARALLEL, "-m", FAST, "tests/unit", *session.posargs,
        env={"SESSION_CONTRACTS_PURE_PYTHON": "1"},
    )  # fmt: skip


@nox.session(python=PYTHON)
def slow(session: nox.Session) -> None:
    """The tests marked slow: the reference certified at 500 cases a check (about 10 CPU
    minutes, too long for every CI run)."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("pytest", "-m", "slow", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting of the hand-written code."""
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", *HAND_WRITTEN)
    session.run("ruff", "format", "--check", *HAND_WRITTEN)


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the hand-written code (generated/ is checked by its tests)."""
    # Not `mypy -p session_contracts`: pyproject.toml maps the top-level folders into the
    # package, and mypy finds a module by its folders' names only (it does not run the
    # editable install's import hook; setuptools' editable_mode=strict would build a link
    # tree for it in ./build, inside the checkout).  tests/typecheck.py gives mypy every
    # module of the map by name and file, with pyproject.toml's [tool.mypy] options.
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("python", "tests/typecheck.py", *session.posargs)


def _command(session: nox.Session, *command: str, extras: str = "") -> None:
    """Install this repository (with ``extras``), then run a session-contracts command with
    the session's arguments after it."""
    session.install(*CONSTRAINTS, "-e", f".{extras}")
    session.run("session-contracts", *command, *session.posargs)


@nox.session(python=PYTHON)
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from schemas/ (`-- --check` only reports drift)."""
    _command(session, "generate", extras="[codegen]")


def _schema_baseline() -> tuple[str, str] | None:
    """The merge base with origin/main; HEAD~1 when that is HEAD itself (a clone of main)."""
    import subprocess

    def git(*args: str) -> str | None:
        done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None

    head = git("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head is None:
        return None
    base = git("merge-base", "HEAD", "origin/main")
    if base is not None and base != head:
        return base, "the merge base with origin/main"
    parent = git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}")
    return None if parent is None else (parent, "HEAD~1")


@nox.session(python=PYTHON)
def schema_diff(session: nox.Session) -> None:
    """The breaking-change gate: schemas/ against the merge base with origin/main (else HEAD~1)."""
    baseline = _schema_baseline()
    if baseline is None:
        session.log("schema_diff skipped: no history to compare schemas/ with")
        return
    base, what = baseline
    session.log(f"schema_diff: schemas/ against {what} ({base})")
    _command(session, "diff", base, "schemas")


@nox.session(python=PYTHON)
def golden(session: nox.Session) -> None:
    """Replay the golden fixtures (`-- --producer 'CMD'` for another producer than ours)."""
    _command(session, "golden", "check")


@nox.session(python=PYTHON)
def golden_update(session: nox.Session) -> None:
    """Rewrite the golden fixtures' expected files from the reference producer."""
    _command(session, "golden", "update")


@nox.session(python=PYTHON)
def certify(session: nox.Session) -> None:
    """Certify a producer (default: the reference; `-- --producer 'CMD'` for yours)."""
    _command(session, "certify")


@nox.session(python=PYTHON)
def quickstart(session: nox.Session) -> None:
    """The main job on built-in defaults (it regenerates generated/, hence [codegen])."""
    session.install(*CONSTRAINTS, "-e", ".[codegen]")
    session.run("session-contracts", "quickstart")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: medians of several runs, printed as ratios against the peers."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("python", "-m", "bench", *session.posargs)


# What a wheel must hold beyond Python modules: the schemas and examples, the codegen
# templates and the golden fixtures (certify and golden check read them).
WHEEL_MUST_HOLD = {
    "the C census": r"^session_contracts_c/_speedups\..*(so|pyd)$",
    "the schemas": r"session_contracts/schemas/session-recap-v1\.schema\.json$",
    "the example documents": r"session_contracts/schemas/examples/session-recap\.query\.json$",
    "the codegen templates": r"session_contracts/generator/templates/.+\.jinja2$",
    "the polyglot templates": r"session_contracts/generator/polyglot/templates/.+",
    "the golden fixtures": r"session_contracts/conformance/fixtures/recap/.+\.json$",
    "Harn's recorded answers": r"session_contracts/conformance/recorded/recap\.jsonl\.gz$",
    "Harn's licence beside them": r"session_contracts/conformance/recorded/LICENSE-MIT$",
    "the typing marker": r"session_contracts/py\.typed$",
}
# certify with every explicit case and 5 random cases a check (the default is 25).
LIGHT_CERTIFY = ["certify", "--examples", "5"]
# The newest releases of these go into the second venv before the wheel, which must leave them
# as they are: certify runs in a third party's test environment, on whatever Hypothesis is there.
NEWEST = [
    "hypothesis", "hypothesis-jsonschema", "pydantic", "orjson",
    "jsonschema", "jsonschema-rs", "rich",
]  # fmt: skip


def _venv(session: nox.Session, where: Path) -> Path:
    """A fresh venv at ``where`` (outside the repository); returns its bin folder."""
    session.run("python", "-m", "venv", str(where))
    return where / "bin"


# No repository on sys.path: the venvs and the working folder are outside it, and neither
# PYTHONPATH nor the working folder is searched.
OUTSIDE_ENV = {"PYTHONPATH": "", "PYTHONSAFEPATH": "1"}


def _in_venv(session: nox.Session, bin_dir: Path, program: str, *args: str) -> None:
    started = time.perf_counter()
    session.run(str(bin_dir / program), *args, env=OUTSIDE_ENV, external=True)
    session.log(f"{program} {' '.join(args[:1])}: {time.perf_counter() - started:.0f} s")


@nox.session(python=PYTHONS)
def wheel(session: nox.Session) -> None:
    """Build the sdist, then the wheel from the sdist (a file missing from the sdist fails);
    check what the wheel holds; install it into fresh venvs outside the repository and run
    certify (in full on the oldest Python), golden check (there also Harn's recorded answers)
    and quickstart there: on every supported Python, one venv on constraints.txt's pins; on
    the newest Python, one more that already holds the newest releases of NEWEST, which
    installing the wheel must leave as they are."""
    import re
    import shutil
    import tempfile
    import zipfile

    constraints = str(Path(session.invoked_from) / "constraints.txt")
    session.install(*CONSTRAINTS, "build")
    outside = Path(tempfile.mkdtemp(prefix="session-contracts-wheel-"))
    try:
        dist = outside / "dist"
        # No --sdist/--wheel: build makes the sdist, then the wheel from the unpacked sdist.
        # Silent: its file-by-file log is shown only when it fails.
        started = time.perf_counter()
        session.run(
            "python", "-m", "build", "--outdir", str(dist), session.invoked_from, silent=True
        )
        (sdist,), (built,) = dist.glob("*.tar.gz"), dist.glob("*.whl")
        session.log(
            f"built {sdist.name}, then from it {built.name}: {time.perf_counter() - started:.0f} s"
        )
        names = zipfile.ZipFile(built).namelist()
        absent = [
            what for what, pattern in WHEEL_MUST_HOLD.items()
            if not any(re.search(pattern, name) for name in names)
        ]  # fmt: skip
        if absent:
            session.error(f"{built.name} lacks {', '.join(absent)}")
        # The C census makes the wheel one Python's and one platform's (docs/hashing.md
        # section 5); no other compiled file and no C source goes in.
        compiled = [name for name in names if name.endswith((".so", ".pyd", ".c"))]
        if built.name.endswith("-none-any.whl") or len(compiled) != 1:
            session.error(f"{built.name}: not the one C module: {', '.join(compiled)}")
        session.log(f"{built.name}: {len(names)} files, with {', '.join(WHEEL_MUST_HOLD)}")

        session.chdir(outside)
        pinned = _venv(session, outside / "pinned")
        _in_venv(session, pinned, "pip", "install", "-q", "-c", constraints, str(built))
        if session.python == PYTHON:
            _run_from_the_wheel(
                session,
                pinned,
                ["certify"],
                ["golden", "check"],
                ["golden", "check", "--recorded"],
                ["quickstart"],
            )
            return
        # The full certify runs once, on the oldest Python; the newer ones certify with
        # the explicit cases and a few random ones each (the suite's code is the same).
        _run_from_the_wheel(session, pinned, LIGHT_CERTIFY, ["golden", "check"], ["quickstart"])
        if session.python != PYTHONS[-1]:
            return

        newest = _venv(session, outside / "newest")
        _in_venv(session, newest, "pip", "install", "-q", "--upgrade", *NEWEST)
        before = _versions(session, newest)
        _in_venv(session, newest, "pip", "install", "-q", str(built))
        after = _versions(session, newest)
        changed = [f"{name} {before[name]} -> {after.get(name)}" for name in before
                   if after.get(name) != before[name]]  # fmt: skip
        if changed:
            session.error(f"installing {built.name} changed the user's {', '.join(changed)}")
        kept = ", ".join(f"{name} {before[name]}" for name in before)
        session.log(f"the newest releases, as they were after installing the wheel: {kept}")
        _run_from_the_wheel(session, newest, LIGHT_CERTIFY)
    finally:
        session.chdir(session.invoked_from)
        shutil.rmtree(outside, ignore_errors=True)


def _versions(session: nox.Session, bin_dir: Path) -> dict[str, str]:
    """The venv's distributions named in NEWEST, with their versions."""
    frozen = session.run(
        str(bin_dir / "pip"), "list", "--format", "freeze", silent=True, external=True
    )
    pinned = (line.partition("==") for line in str(frozen).splitlines())
    # pip writes a distribution's name as its metadata spells it (jsonschema_rs).
    named = ((name.lower().replace("_", "-"), version) for name, _, version in pinned)
    return {name: version for name, version in named if name in NEWEST}


def _run_from_the_wheel(session: nox.Session, bin_dir: Path, *commands: list[str]) -> None:
    """Run each command with the venv's session-contracts, after checking that the package
    and its C census are imported from the venv."""
    imported_from_the_venv = (
        "import pathlib, session_contracts, session_contracts_c._speedups; "
        f"assert pathlib.Path(session_contracts.__file__).is_relative_to({str(bin_dir.parent)!r})"
        ", session_contracts.__file__"
    )
    _in_venv(session, bin_dir, "python", "-c", imported_from_the_venv)
    for command in commands:
        _in_venv(session, bin_dir, "session-contracts", *command)
