"""Where the checkout's schemas/ and generated/ are (for generate and its check)."""

from __future__ import annotations

from pathlib import Path

from session_contracts.errors import Finding, UsageError

__all__ = ["find_checkout"]


def find_checkout(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` holding schemas/ and pyproject.toml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "schemas").is_dir() and (folder / "pyproject.toml").is_file():
            return folder
    # An editable install knows its checkout: the schemas package is schemas/.
    import session_contracts.schemas as packaged

    package_dir = Path(packaged.__file__).resolve().parent
    if package_dir.name == "schemas" and (package_dir.parent / "pyproject.toml").is_file():
        return package_dir.parent
    raise UsageError(
        [
            Finding(
                "$",
                "no_checkout",
                "no session-contracts checkout (schemas/ beside pyproject.toml) "
                f"at or above {here}",
                "run this from the repository, or pass --root PATH",
            )
        ]
    )
