"""Write generated/{typescript,go,rust}/ or compare them with what the schemas produce."""

from __future__ import annotations

from pathlib import Path

from session_contracts.generator.drift import Drift, drifts_between, write_atomically
from session_contracts.generator.polyglot.render import LANGUAGES, PolyglotFile, render_all

__all__ = ["PolyglotDrift", "check", "write"]

# Written by the toolchains, never by us: not orphans.
_NOT_OURS = {"node_modules", "target"}


# One drift checker for every language (generator/drift.py).
PolyglotDrift = Drift


def _on_disk(generated_dir: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for language in LANGUAGES:
        root = generated_dir / language
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(generated_dir)
            if path.is_file() and not _NOT_OURS & set(relative.parts):
                found[relative.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return found


def _compare(files: list[PolyglotFile], generated_dir: Path) -> list[Drift]:
    return drifts_between({f.name: f.content for f in files}, _on_disk(generated_dir))


def check(schemas_dir: Path, generated_dir: Path) -> list[Drift]:
    """Every difference between generated/<language>/ and a fresh rendering."""
    return _compare(render_all(schemas_dir), generated_dir)


def write(schemas_dir: Path, generated_dir: Path) -> list[Drift]:
    """Regenerate generated/<language>/; return what changed (as the drift it repaired)."""
    files = render_all(schemas_dir)
    drifts = _compare(files, generated_dir)
    for drift in drifts:
        target = generated_dir / drift.name
        if drift.state == "orphaned":
            target.unlink()
        else:
            write_atomically(target, next(f.content for f in files if f.name == drift.name))
    return drifts
