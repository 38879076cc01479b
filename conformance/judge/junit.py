"""The one JUnit XML writer of certify, golden and check.

Each command turns its results into suites of cases, each passed, failed, errored or
skipped; this module alone knows how JUnit spells them, so the three reports agree on
attributes, counts and the length of a message.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MESSAGE_LIMIT",
    "JunitCase",
    "JunitSuite",
    "Outcome",
    "junit_suite_xml",
    "junit_suites_xml",
]

# A CI page shows the message attribute on one line; the whole text goes in the body.
MESSAGE_LIMIT = 500

Outcome = Literal["passed", "failure", "error", "skipped"]


@dataclass(frozen=True, slots=True)
class JunitCase:
    """One test case: ``text`` is the body of a failure or an error."""

    classname: str
    name: str
    outcome: Outcome = "passed"
    message: str = ""
    text: str = ""
    seconds: float | None = None
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class JunitSuite:
    name: str
    cases: tuple[JunitCase, ...]
    seconds: float | None = None


def _suite_element(suite: JunitSuite, parent: ET.Element | None) -> ET.Element:
    attributes = {
        "name": suite.name,
        "tests": str(len(suite.cases)),
        "failures": str(sum(case.outcome == "failure" for case in suite.cases)),
        "errors": str(sum(case.outcome == "error" for case in suite.cases)),
        "skipped": str(sum(case.outcome == "skipped" for case in suite.cases)),
    }
    if suite.seconds is not None:
        attributes["time"] = f"{suite.seconds:.3f}"
    element = (
        ET.Element("testsuite", attributes)
        if parent is None
        else ET.SubElement(parent, "testsuite", attributes)
    )
    for case in suite.cases:
        case_attributes = {"classname": case.classname, "name": case.name}
        if case.seconds is not None:
            case_attributes["time"] = f"{case.seconds:.6f}"
        testcase = ET.SubElement(element, "testcase", case_attributes)
        if case.properties:
            properties = ET.SubElement(testcase, "properties")
            for name, value in case.properties:
                ET.SubElement(properties, "property", name=name, value=value)
        if case.outcome == "passed":
            continue
        outcome = ET.SubElement(testcase, case.outcome, message=case.message[:MESSAGE_LIMIT])
        if case.outcome != "skipped" and case.text:
            outcome.text = case.text
    return element


def junit_suites_xml(name: str, suites: Sequence[JunitSuite], *, seconds: float) -> bytes:
    """A ``<testsuites>`` document."""
    root = ET.Element("testsuites", name=name, time=f"{seconds:.3f}")
    for suite in suites:
        _suite_element(suite, root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml


def junit_suite_xml(suite: JunitSuite) -> bytes:
    """A document of one ``<testsuite>``."""
    xml: bytes = ET.tostring(_suite_element(suite, None), encoding="utf-8", xml_declaration=True)
    return xml
