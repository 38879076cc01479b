from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# Copies of what the tests read from ../shared (tests/vectors/README.md).
VENDORED = REPO / "tests" / "vectors"

# Property tests: a quick profile for every run, a thorough one on demand
# (HYPOTHESIS_PROFILE=thorough nox -s tests).
settings.register_profile(
    "default",
    max_examples=10,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
    derandomize=True,
    database=None,
)
settings.register_profile(
    "thorough",
    max_examples=200,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
# certify, run in-process by the tests, would otherwise send the suite's Hypothesis caches
# to the user's cache folder; they stay in the checkout's ignored .hypothesis.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(REPO / ".hypothesis"))

# Tests live in folders by kind; a test in integration/ (subprocesses, servers, toolchains,
# certify and golden of whole producers) is marked so, wherever its file says nothing.
KINDS = ("unit", "rules", "cli", "integration")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        kind = item.path.parent.name
        if kind == "integration":
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared() -> Path:
    """The vendored copy of what the tests need from ../shared (seeds/, jcs/)."""
    return VENDORED


@pytest.fixture(autouse=True)
def _outside_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    # Inside GitHub Actions the CLI adds workflow annotations to its output;
    # the tests pin the plain output and ask for annotations explicitly.
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
