"""The finding-code registry (session_contracts/codes.py): every code the shipped code
can emit is registered, once, in one area, and nothing registered is dead."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import jsonschema_rs
from package_modules import module_files

from session_contracts.codes import AREAS, CODES_BY_AREA, FINDING_CODES, codes_page
from session_contracts.rejections import REJECTION_CODES
from session_contracts.validation.validator import KIND_CODES, snake_name

REPO = Path(__file__).resolve().parents[2]
# Calls whose first two arguments may be a code: the finding itself, the rejection of a
# case, and the helpers each module builds its findings with.
EMITTERS = {
    "Finding",
    "Rejected",
    "Violation",
    "_kind",
    "_refusal",
    "_error",
    "_write_error",
    "_store_error",
    "StoreFailure",
    "_CarriedHash",
    "_broken",
    "_warning",
}
SHIPPED = ("session_contracts", "session_contracts.conformance", "session_contracts.generator")
SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
# The jsonschema-rs kind of our own x- keywords: its findings carry the x- rule's code.
X_KEYWORD_KIND = "Custom"


def _codes_in(module: str, source: str) -> Iterator[str]:
    """String codes given to an emitter, literally or as a constant of ``module``."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", None))
        if name not in EMITTERS:
            continue
        arguments = [*node.args[:2], *(k.value for k in node.keywords if k.arg == "code")]
        for argument in arguments:
            choices = (
                [argument.body, argument.orelse] if isinstance(argument, ast.IfExp) else [argument]
            )
            for choice in choices:
                value = None
                if isinstance(choice, ast.Constant):
                    value = choice.value
                elif isinstance(choice, ast.Name | ast.Attribute) and name == "Finding":
                    namespace = vars(importlib.import_module(module))
                    try:
                        value = eval(ast.unparse(choice), dict(namespace))
                    except (NameError, AttributeError):
                        value = None  # a local: the finding re-carries a code found earlier
                if isinstance(value, str) and SNAKE.match(value):
                    yield value


def _emitted() -> dict[str, str]:
    found: dict[str, str] = {}
    for module, path in module_files(SHIPPED):
        for code in _codes_in(module, path.read_text(encoding="utf-8")):
            found.setdefault(code, module)
    return found


def _schema_kind_codes() -> set[str]:
    kinds = vars(jsonschema_rs.ValidationErrorKind)
    return {
        KIND_CODES.get(name, snake_name(name))
        for name, value in kinds.items()
        if inspect.isclass(value) and name != X_KEYWORD_KIND
    }


def test_every_emitted_code_is_registered() -> None:
    unregistered = {
        code: module for code, module in _emitted().items() if code not in FINDING_CODES
    }
    assert unregistered == {}, "register each in session_contracts/codes.py"


def test_every_rejection_class_member_and_schema_error_kind_is_registered() -> None:
    assert set(REJECTION_CODES) - set(FINDING_CODES) == set()
    assert _schema_kind_codes() - set(FINDING_CODES) == set()


def test_nothing_registered_is_dead() -> None:
    alive = set(_emitted()) | set(REJECTION_CODES) | _schema_kind_codes()
    assert set(FINDING_CODES) - alive == set()


def test_each_code_is_registered_once_in_a_described_area() -> None:
    assert sum(len(codes) for codes in CODES_BY_AREA.values()) == len(FINDING_CODES)
    assert set(CODES_BY_AREA) == set(AREAS)
    for codes in CODES_BY_AREA.values():
        assert list(codes) == sorted(codes)
    assert all(SNAKE.match(code) for code in FINDING_CODES)


def test_an_unregistered_code_is_seen() -> None:
    planted = 'Finding("$", "a_code_nobody_registered", "m", "h")\nRejected("another_one", "$")'
    found = set(_codes_in("session_contracts.errors", planted))
    assert found == {"a_code_nobody_registered", "another_one"}
    assert found.isdisjoint(FINDING_CODES)


def test_the_codes_page_is_the_registry() -> None:
    page = (REPO / "docs" / "finding-codes.md").read_text(encoding="utf-8")
    assert page == codes_page(), "regenerate docs/finding-codes.md (its first lines say how)"
