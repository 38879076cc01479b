"""Commands whose dependencies come with an extra of the package, not the default install.

A command that needs a missing one is refused before it starts, naming the extra to
install (exit 2), instead of failing on an import deep inside.
"""

from __future__ import annotations

import importlib

from session_contracts.errors import Finding, UsageError

__all__ = ["EXTRA_MODULES", "require_extra"]

# What each extra brings that some command imports (pyproject.toml's optional-dependencies).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "serve": ("uvicorn", "starlette"),
    "codegen": ("datamodel_code_generator", "jinja2"),
}


def require_extra(extra: str, command: str) -> None:
    """Raise :class:`UsageError` (``extra_missing``) unless every module of ``extra`` imports."""
    for module in EXTRA_MODULES[extra]:
        try:
            importlib.import_module(module)
        except ImportError:
            raise UsageError(
                [
                    Finding(
                        "$",
                        "extra_missing",
                        f"`session-contracts {command}` needs {module}, which is not installed: "
                        f"it comes with the [{extra}] extra",
                        f"pip install 'session-contracts[{extra}]'",
                    )
                ]
            ) from None
