"""GitHub Actions workflow commands: findings as ``::error`` annotations.

A CI job that prints ``::error file=F,line=L,title=T::message`` lines gets each
problem shown on the pull request, at the file and line it concerns.  The
format (and its escaping rules) is GitHub's "workflow commands" syntax.
"""

from __future__ import annotations

import os
import re

from session_contracts.errors import Finding

__all__ = ["annotations_wanted", "finding_annotation", "github_annotation"]

_LEVELS = {"error": "error", "warning": "warning", "notice": "notice", "info": "notice"}
_LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>[0-9]+)$")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(
    level: str,
    message: str,
    *,
    title: str | None = None,
    file: str | None = None,
    line: int | None = None,
) -> str:
    """One workflow command line (no trailing newline); ``level`` is error,
    warning or notice (info maps to notice)."""
    properties = []
    if file:
        properties.append(f"file={_escape_property(file)}")
        if line is not None:
            properties.append(f"line={line}")
    if title:
        properties.append(f"title={_escape_property(title)}")
    head = _LEVELS.get(level, "error")
    if properties:
        head += " " + ",".join(properties)
    return f"::{head}::{_escape_data(message)}"


def finding_annotation(finding: Finding) -> str:
    """A finding as an annotation: its source (``file`` or ``file:line``)
    locates it, its code and JSON path title it, its message and hint say
    what and how to fix it."""
    file: str | None = finding.source or None
    line: int | None = None
    if file is not None and (located := _LOCATED.match(file)):
        file, line = located["file"], int(located["line"])
    if file == "-":
        file = None
    message = finding.message if not finding.hint else f"{finding.message}\nhint: {finding.hint}"
    return github_annotation(
        finding.level,
        message,
        title=f"{finding.code} at {finding.path}",
        file=file,
        line=line,
    )


def annotations_wanted(choice: str | None = None) -> bool:
    """``choice`` is "github", "none" or None (auto: on inside GitHub Actions)."""
    if choice is not None:
        return choice == "github"
    return os.environ.get("GITHUB_ACTIONS") == "true"
