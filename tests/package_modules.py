"""The package's modules as the checkout holds them: import name and file, for the tests
that read the source (layering, finding codes)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "session_contracts"


def module_files(prefixes: tuple[str, ...] = ("session_contracts",)) -> Iterator[tuple[str, Path]]:
    """(module name, file) of every module under the given prefixes: the import name is the
    path under the repository (the top-level folders are linked into session_contracts/)."""
    for folder, _, names in sorted(os.walk(PACKAGE, followlinks=True)):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            parts = list(Path(folder, name).relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join(parts)
            if any(module == p or module.startswith(p + ".") for p in prefixes):
                yield module, Path(folder, name)
