"""A command imports only what it runs: the quick commands never load the certify
harness (its checks, judges and case strategies) nor Hypothesis, and the options of
``certify`` and ``golden``, declared on first use, are all in their help."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_process import run_cli_importing

from session_contracts.cli import main
from session_contracts.conformance.judge import certify_cli, golden_cli
from session_contracts.conformance.judge.certify import DEFAULT_EXAMPLES

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "schemas" / "examples" / "session-feedback.usage.json"

# The certify harness and what generates its cases: a module here, or under it.
HARNESS = (
    "hypothesis",
    "hypothesis_jsonschema",
    "session_contracts.conformance.judge.cases",
    "session_contracts.conformance.judge.certify",
    "session_contracts.conformance.judge.certify_cli",
    "session_contracts.conformance.judge.checks",
    "session_contracts.conformance.judge.golden",
    "session_contracts.conformance.judge.golden_cli",
    "session_contracts.conformance.judge.judges",
    "session_contracts.conformance.judge.report",
    "session_contracts.conformance.judge.runner",
)


def _harness(modules: frozenset[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HARNESS))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["doctypes"],
        ["validate", "session-feedback.usage", str(EXAMPLE)],
        ["check", str(EXAMPLE)],
        ["hash", str(EXAMPLE)],
        ["hash", "--form", "harn", str(EXAMPLE)],
        ["roundtrip", "session-feedback.usage", str(EXAMPLE)],
        ["verify", "session-feedback.usage", str(EXAMPLE)],
    ],
    ids=lambda args: " ".join(a for a in args if not a.startswith("/")),
)
def test_a_quick_command_imports_no_harness(args: list[str]) -> None:
    result, modules = run_cli_importing(*args)
    assert result.returncode == 0, result.stderr
    assert "session_contracts.cli" in modules  # the probe sees the command's imports
    assert _harness(modules) == []


def test_certify_loads_its_harness_when_it_runs() -> None:
    # The same probe sees the harness where it belongs: the declaration of
    # certify's options (its --help) loads certify_cli and what it needs.
    result, modules = run_cli_importing("certify", "--help")
    assert result.returncode == 0, result.stderr
    assert {"hypothesis", "session_contracts.conformance.judge.certify_cli"} <= modules


def _options(declare: Callable[[argparse.ArgumentParser], None]) -> set[str]:
    """Every option string a command's ``add_arguments`` declares, sub-commands included."""
    parser = argparse.ArgumentParser()
    declare(parser)
    found: set[str] = set()
    pending = [parser]
    while pending:
        current = pending.pop()
        for action in current._actions:
            if action.help == argparse.SUPPRESS:
                continue
            found.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
    return found


def _help(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*args, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_the_help_of_certify_and_golden_lists_every_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    certify_help = _help(["certify"], capsys)
    assert _options(certify_cli.add_arguments) - {"-h", "--help"}
    for option in _options(certify_cli.add_arguments):
        assert option in certify_help
    assert f"(default {DEFAULT_EXAMPLES})" in certify_help  # --examples names certify's
    golden_help = "".join(
        _help(["golden", action], capsys) for action in ("check", "update", "coverage")
    )
    for option in _options(golden_cli.add_arguments):
        assert option in golden_help
    assert all(action in _help(["golden"], capsys) for action in ("check", "update", "coverage"))


def test_the_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    top = _help([], capsys)
    for command in ("validate", "check", "hash", "doctypes", "certify", "golden", "checks"):
        assert f"    {command}" in top


def test_a_bad_certify_option_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--examples", "many"]) == 2
    assert "--examples" in capsys.readouterr().err
