"""JUnit XML for ``session-contracts check``: one test case per input file.

A CI system shows a failed case per file that holds an invalid document, with
the first findings in it.  Memory stays bounded whatever the input's size: a
case keeps counts and at most :data:`FINDINGS_PER_FILE` rendered findings, and
files past :data:`MAX_FILES` share one case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from session_contracts.conformance.judge.junit import JunitCase, JunitSuite, junit_suite_xml
from session_contracts.errors import Finding

__all__ = ["FINDINGS_PER_FILE", "MAX_FILES", "CheckJunit"]

FINDINGS_PER_FILE = 20
MAX_FILES = 10_000
_OTHER_FILES = "(other files)"


@dataclass(slots=True)
class _FileCase:
    documents: int = 0
    with_errors: int = 0
    errors: int = 0
    shown: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CheckJunit:
    """Collects what ``check`` found, per input file, as it streams."""

    files: dict[str, _FileCase] = field(default_factory=dict)

    def add(self, source: str, findings: Sequence[Finding]) -> None:
        """Count one document read from ``source`` (``file`` or ``file:line``)."""
        name = source.rsplit(":", 1)[0] if source[-1:].isdigit() and ":" in source else source
        if name not in self.files and len(self.files) >= MAX_FILES:
            name = _OTHER_FILES
        case = self.files.setdefault(name, _FileCase())
        case.documents += 1
        errors = [f for f in findings if f.level == "error"]
        case.with_errors += bool(errors)
        case.errors += len(errors)
        for finding in errors:
            if len(case.shown) >= FINDINGS_PER_FILE:
                break
            case.shown.append(finding.at(source).render())

    def xml(self, *, seconds: float) -> bytes:
        cases = []
        for name, case in self.files.items():
            more = case.errors - len(case.shown)
            cases.append(
                JunitCase(
                    "check",
                    name,
                    "failure" if case.with_errors else "passed",
                    f"{case.with_errors} of {case.documents} document(s) invalid, "
                    f"{case.errors} error(s)",
                    "\n".join(case.shown + ([f"... and {more} more"] if more > 0 else [])),
                )
            )
        return junit_suite_xml(JunitSuite("session-contracts check", tuple(cases), seconds))
