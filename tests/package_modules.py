"""The package's modules as the checkout holds them: import name and file, for the tests
that read the source (layering, finding codes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Where each import prefix lives in the checkout (pyproject.toml's package-dir).
FOLDERS = {
    "session_contracts.schemas": REPO / "schemas",
    "session_contracts.generator": REPO / "generator",
    "session_contracts.generated": REPO / "generated",
    "session_contracts.conformance": REPO / "conformance",
    "session_contracts": REPO / "session_contracts",
}


def module_files(prefixes: tuple[str, ...] = tuple(FOLDERS)) -> Iterator[tuple[str, Path]]:
    """(module name, file) of every module under the given prefixes."""
    for prefix in prefixes:
        folder = FOLDERS[prefix]
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if prefix == "session_contracts" and parts[0] in ("schemas", "generator"):
                continue
            if parts[-1] == "__init__":
                parts.pop()
            yield ".".join([prefix, *parts]), path
