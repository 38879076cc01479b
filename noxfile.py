"""The single source of truth for sessions: tests, lint, typecheck, generate, golden, certify,
bench."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.error_on_missing_interpreters = True

PYTHON = "3.11"
# Every install pins what it can to the versions CI tests (constraints.txt).
CONSTRAINTS = ("-c", "constraints.txt")
HAND_WRITTEN = ["session_contracts", "generator", "conformance", "tests", "bench", "noxfile.py"]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole test suite (property tests, golden examples, the drift check), but the
    tests marked slow (`nox -s slow`); `-- ARGS` replaces the selection."""
    session.install(*CONSTRAINTS, "-e", ".[dev]")
    session.run("pytest", *(session.posargs or ["-m", "not slow"]))


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
    # A regular (non-editable) install: mypy cannot follow an editable
    # install's import hook, and our folders map onto one package.
    session.install(*CONSTRAINTS, ".[dev]")
    session.chdir(session.create_tmp())
    session.run(
        "mypy", "--config-file", f"{session.invoked_from}/pyproject.toml", "-p", "session_contracts"
    )


@nox.session(python=PYTHON)
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from schemas/ (`-- --check` only reports drift)."""
    session.install(*CONSTRAINTS, "-e", ".[codegen]")
    session.run("session-contracts", "generate", *session.posargs)


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
    session.install(*CONSTRAINTS, "-e", ".")
    session.run("session-contracts", "diff", base, "schemas", *session.posargs)


@nox.session(python=PYTHON)
def golden(session: nox.Session) -> None:
    """Replay the golden fixtures (`-- --producer 'CMD'` for another producer than ours)."""
    session.install(*CONSTRAINTS, "-e", ".")
    session.run("session-contracts", "golden", "check", *session.posargs)


@nox.session(python=PYTHON)
def golden_update(session: nox.Session) -> None:
    """Rewrite the golden fixtures' expected files from the reference producer."""
    session.install(*CONSTRAINTS, "-e", ".")
    session.run("session-contracts", "golden", "update", *session.posargs)


@nox.session(python=PYTHON)
def certify(session: nox.Session) -> None:
    """Certify a producer (default: the reference; `-- --producer 'CMD'` for yours)."""
    session.install(*CONSTRAINTS, "-e", ".")
    session.run("session-contracts", "certify", *session.posargs)


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
