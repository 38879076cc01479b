"""Write generated/ or compare it with what the schemas produce (drift check)."""

from __future__ import annotations

from pathlib import Path

from session_contracts.generator.codegen import GeneratedFile, render_all
from session_contracts.generator.drift import Drift, drifts_between, write_atomically

__all__ = ["Drift", "check", "check_against", "write"]


def _on_disk(generated_dir: Path) -> dict[str, str]:
    if not generated_dir.is_dir():
        return {}
    return {
        path.name: path.read_text(encoding="utf-8") for path in sorted(generated_dir.glob("*.py"))
    }


def check(schemas_dir: Path, generated_dir: Path) -> list[Drift]:
    """Every difference between generated/ and a fresh rendering, by file name."""
    return check_against(render_all(schemas_dir), generated_dir)


def write(schemas_dir: Path, generated_dir: Path) -> list[Drift]:
    """Regenerate generated/; return what changed (as the drift it repaired)."""
    files: list[GeneratedFile] = render_all(schemas_dir)
    drifts = check_against(files, generated_dir)
    generated_dir.mkdir(parents=True, exist_ok=True)
    for generated in files:
        target = generated_dir / generated.name
        if not target.exists() or target.read_text(encoding="utf-8") != generated.content:
            write_atomically(target, generated.content)
    wanted = {f.name for f in files}
    for path in generated_dir.glob("*.py"):
        if path.name not in wanted:
            path.unlink()
    return drifts


def check_against(files: list[GeneratedFile], generated_dir: Path) -> list[Drift]:
    return drifts_between({f.name: f.content for f in files}, _on_disk(generated_dir))
