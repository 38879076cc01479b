"""A command whose extra is not installed names the extra to install (exit 2, no traceback),
and the default install's commands work without any extra.

Each case runs the command line in a subprocess where the extra's modules cannot be
imported (``sys.modules[name] = None`` makes every import of them fail).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from session_contracts.cli import main
from session_contracts.extras import EXTRA_MODULES
from session_contracts.generator.codegen import CODEGEN_VERSION

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "schemas" / "examples"
TIMEOUT_S = 120

_WITHOUT = """\
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
from session_contracts.cli import main
sys.exit(main(sys.argv[2:]))
"""

EVERY_EXTRA_MODULE = [module for modules in EXTRA_MODULES.values() for module in modules]


def _run_without(
    modules: list[str], argv: list[str], cwd: Path, stdin: bytes = b""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT, ",".join(modules), *argv],
        cwd=cwd,
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


@pytest.mark.parametrize(
    ("argv", "extra", "module"),
    [
        (["serve", "--journal", "journal.sqlite"], "serve", "uvicorn"),
        (["serve", "--journal", "journal.sqlite"], "serve", "starlette"),
        (["generate", "--check"], "codegen", "datamodel_code_generator"),
        (["generate"], "codegen", "jinja2"),
        (["quickstart"], "codegen", "datamodel_code_generator"),
    ],
)
def test_a_command_without_its_extra_names_the_extra(
    argv: list[str], extra: str, module: str
) -> None:
    done = _run_without([module], argv, cwd=REPO)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"needs {module}, which is not installed" in done.stderr
    assert "[extra_missing]" in done.stderr
    assert f"hint: pip install 'session-contracts[{extra}]'" in done.stderr


def test_a_refused_generate_changes_nothing(tmp_path: Path) -> None:
    before = sorted((REPO / "generated").glob("*.py"))
    done = _run_without(["jinja2"], ["generate"], cwd=REPO)
    assert done.returncode == 2
    assert sorted((REPO / "generated").glob("*.py")) == before
    assert done.stdout == ""


def test_acp_needs_no_extra(tmp_path: Path) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "harn.session_recap.query",
        "params": {"sessionId": "nobody"},
    }
    done = _run_without(
        EVERY_EXTRA_MODULE,
        ["acp", "--journal", str(tmp_path / "journal.sqlite")],
        cwd=tmp_path,
        stdin=json.dumps(request).encode() + b"\n",
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["id"] == 1
    assert "result" in answer


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "session-recap.query", str(EXAMPLES / "session-recap.query.json")],
        ["check", str(EXAMPLES / "session-recap.envelope.json")],
        ["golden", "check"],
        ["certify", "--examples", "1", "--check", "recap.semantics"],
        ["checks"],
    ],
    ids=lambda argv: argv[0],
)
def test_the_default_install_runs_without_any_extra(argv: list[str], tmp_path: Path) -> None:
    done = _run_without(EVERY_EXTRA_MODULE, argv, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "extra_missing" not in done.stderr


@pytest.mark.parametrize("argv", [["generate", "--check"], ["generate"]])
def test_another_generator_version_is_refused_not_reported_as_drift(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installed = metadata.version

    def version(name: str) -> str:
        return "0.0.1" if name == "datamodel-code-generator" else installed(name)

    monkeypatch.setattr(metadata, "version", version)
    before = {path: path.read_bytes() for path in (REPO / "generated").glob("*.py")}
    assert main([*argv, "--root", str(REPO)]) == 2
    out, err = capsys.readouterr()
    assert "out of date" not in out
    assert "updated" not in out
    assert {path: path.read_bytes() for path in (REPO / "generated").glob("*.py")} == before
    assert f"written by datamodel-code-generator {CODEGEN_VERSION} and 0.0.1 is installed" in err
    assert "[codegen_version_mismatch]" in err
    assert f"hint: pip install 'datamodel-code-generator=={CODEGEN_VERSION}'" in err
