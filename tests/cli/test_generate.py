"""generate: deterministic output, a drift check that names each stale file."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_contracts.cli import main
from session_contracts.generator import check, render_all, write

REPO = Path(__file__).resolve().parents[2]


def test_generated_is_current() -> None:
    # The drift check of the checkout: edit a schema without regenerating and this fails.
    assert check(REPO / "schemas", REPO / "generated") == []


def test_rendering_is_byte_identical_across_runs() -> None:
    first = render_all(REPO / "schemas")
    second = render_all(REPO / "schemas")
    assert first == second


def test_rendering_does_not_depend_on_hash_seed_or_working_folder(tmp_path: Path) -> None:
    script = (
        "import sys, hashlib; from pathlib import Path;"
        "from session_contracts.generator import render_all;"
        "files = render_all(Path(sys.argv[1]));"
        "print(hashlib.sha256(repr(files).encode()).hexdigest())"
    )
    digests = set()
    for seed in ("0", "12345"):
        out = subprocess.run(
            [sys.executable, "-c", script, str(REPO / "schemas")],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        )
        digests.add(out.stdout.strip())
    here = hashlib.sha256(repr(render_all(REPO / "schemas")).encode()).hexdigest()
    assert digests == {here}


def test_each_file_records_its_schema_and_sha256() -> None:
    for generated in render_all(REPO / "schemas"):
        if generated.name == "__init__.py":
            continue
        source = generated.content.splitlines()[0].split(" from ")[1].split(" --")[0]
        digest = hashlib.sha256((REPO / source).read_bytes()).hexdigest()
        assert f"# source-sha256: {digest}" in generated.content


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "schemas", tmp_path / "schemas")
    shutil.copytree(REPO / "generated", tmp_path / "generated")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    return tmp_path


def test_check_names_stale_missing_and_orphaned_files(checkout: Path) -> None:
    schema_path = checkout / "schemas" / "session-health.schema.json"
    schema = json.loads(schema_path.read_text())
    schema["$defs"]["SessionHealthFact"]["description"] = "changed"
    schema_path.write_text(json.dumps(schema))
    (checkout / "generated" / "run_record.py").unlink()
    (checkout / "generated" / "left_over.py").write_text("x = 1\n")
    drifts = {(d.name, d.state) for d in check(checkout / "schemas", checkout / "generated")}
    assert drifts == {
        ("__init__.py", "stale"),  # the index records every schema's sha256
        ("session_health.py", "stale"),
        ("run_record.py", "missing"),
        ("left_over.py", "orphaned"),
    }
    write(checkout / "schemas", checkout / "generated")
    assert check(checkout / "schemas", checkout / "generated") == []
    assert not (checkout / "generated" / "left_over.py").exists()


def test_cli_check_exit_codes(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--check", "--root", str(checkout)]) == 0
    (checkout / "generated" / "session_health.py").write_text("# edited by hand\n")
    assert main(["generate", "--check", "--root", str(checkout)]) == 1
    out = capsys.readouterr().out
    assert "generated/session_health.py differs from what its schema generates" in out
    assert main(["generate", "--root", str(checkout)]) == 0
    assert main(["generate", "--check", "--root", str(checkout)]) == 0


def test_a_broken_schema_is_a_tool_error_not_a_traceback(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = checkout / "schemas" / "session-health.schema.json"
    schema = json.loads(bad.read_text())
    schema["x-documentTypes"]["fact"] = "#/$defs/Nope"
    bad.write_text(json.dumps(schema))
    assert main(["generate", "--root", str(checkout)]) == 2
    assert "document_type_unresolved" in capsys.readouterr().err
