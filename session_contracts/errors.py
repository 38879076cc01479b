"""Errors and findings as data.

Every problem the toolkit reports is a :class:`Finding`: a stable ``code`` for
programs, a JSON ``path`` saying where, a human ``message`` saying what, and a
``hint`` saying how to fix it.  Exceptions carry findings; they never carry
only prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_USAGE",
    "Finding",
    "InvalidDocument",
    "SessionContractsError",
    "ToolError",
    "UsageError",
    "json_path",
    "json_path_steps",
]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem found in a document, a request or an invocation."""

    path: str
    code: str
    message: str
    hint: str = ""
    level: str = field(default="error", compare=False)
    source: str = field(default="", compare=False)

    def render(self) -> str:
        where = f"{self.source} {self.path}" if self.source else self.path
        text = f"{where}: {self.message} [{self.code}]"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict[str, str]:
        return {
            "code": self.code,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
            "level": self.level,
            "source": self.source,
        }

    def at(self, source: str) -> Finding:
        """The same finding, located in a file or a line of one."""
        return Finding(self.path, self.code, self.message, self.hint, self.level, source)


class SessionContractsError(Exception):
    """Root of every error this toolkit raises on purpose."""

    exit_status = EXIT_USAGE

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.findings: tuple[Finding, ...] = tuple(findings)
        super().__init__("\n".join(f.render() for f in self.findings))


class InvalidDocument(SessionContractsError):
    """The input document breaks the contract (exit status 1)."""

    exit_status = EXIT_FINDINGS


class UsageError(SessionContractsError):
    """The invocation itself is wrong: unknown document type, missing file (exit 2)."""

    exit_status = EXIT_USAGE


class ToolError(SessionContractsError):
    """The toolkit could not do its job (a generator failure, an I/O error) (exit 2)."""

    exit_status = EXIT_USAGE


def _is_identifier(key: str) -> bool:
    return key.isidentifier() and key.isascii()


def json_path(parts: Sequence[str | int]) -> str:
    """Render a location as a JSONPath: ``$.snapshot.turns[0]['odd key']``."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _is_identifier(part):
            out.append(f".{part}")
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            out.append(f"['{escaped}']")
    return "".join(out)


# One step of json_path's grammar: .name, ['quoted'] (\\ and \' escaped), [index].
_PATH_STEP = re.compile(
    r"\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^\\']|\\\\|\\')*)'\]|\[(0|[1-9][0-9]*)\]"
)


def json_path_steps(path: str) -> list[str | int] | None:
    """The parts of a path :func:`json_path` writes (its inverse); ``None`` for a string
    that is not such a path."""
    if not path.startswith("$"):
        return None
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _PATH_STEP.match(path, position)
        if match is None:
            return None
        name, quoted, index = match.groups()
        if name is not None:
            steps.append(name)
        elif quoted is not None:
            steps.append(re.sub(r"\\([\\'])", r"\1", quoted))
        else:
            steps.append(int(index))
        position = match.end()
    return steps
