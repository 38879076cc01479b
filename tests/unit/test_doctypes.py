"""One table of the document types the library names (session_contracts/doctypes.py): each
name is one the bundled schemas define, the seed packages re-export the table's constants,
and no other module defines a constant of its own for a document type."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from package_modules import module_files

from session_contracts import doctypes
from session_contracts.validation.validator import default_validator

SCHEMA_DOCTYPES = frozenset(default_validator().document_types())

# Where each constant was public before the table: the module and the package above it.
REEXPORTS: tuple[tuple[str, str], ...] = (
    *(
        (place, name)
        for place in ("session_contracts.health", "session_contracts.health.reducer")
        for name in (
            "A2A_DOCUMENT_TYPE",
            "ACP_DOCUMENT_TYPE",
            "FACT_DOCUMENT_TYPE",
            "OBSERVATION_DOCUMENT_TYPE",
            "STREAM_DOCUMENT_TYPE",
        )
    ),
    *(
        (place, name)
        for place in ("session_contracts.journal", "session_contracts.journal.model")
        for name in ("EVENT_DOCUMENT_TYPE", "STORED_EVENT_DOCUMENT_TYPE")
    ),
    ("session_contracts.recap", "ENVELOPE_DOCUMENT_TYPE"),
    ("session_contracts.recap.service", "ENVELOPE_DOCUMENT_TYPE"),
    ("session_contracts.recap", "QUERY_DOCUMENT_TYPE"),
    ("session_contracts.recap.query", "QUERY_DOCUMENT_TYPE"),
    ("session_contracts.recap", "SNAPSHOT_DOCUMENT_TYPE"),
    ("session_contracts.recap.projection", "SNAPSHOT_DOCUMENT_TYPE"),
    *(
        ("session_contracts.runrecord", name)
        for name in (
            "PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE",
            "RECORD_DOCUMENT_TYPE",
            "SPAN_DOCUMENT_TYPE",
            "TAPE_ENTRY_DOCUMENT_TYPE",
            "TAPE_RECORD_DOCUMENT_TYPE",
        )
    ),
    ("session_contracts.runrecord.responses", "PROVIDER_CALL_RESPONSE_DOCUMENT_TYPE"),
    ("session_contracts.runrecord.spans", "RECORD_DOCUMENT_TYPE"),
    ("session_contracts.runrecord.spans", "SPAN_DOCUMENT_TYPE"),
    ("session_contracts.runrecord.eventlog", "TAPE_ENTRY_DOCUMENT_TYPE"),
    ("session_contracts.runrecord.eventlog", "TAPE_RECORD_DOCUMENT_TYPE"),
)


@pytest.mark.parametrize("name", doctypes.__all__)
def test_each_name_of_the_table_is_a_document_type_of_the_schemas(name: str) -> None:
    # A renamed x-documentTypes entry or $defs target fails here, not at a caller's validate.
    assert getattr(doctypes, name) in SCHEMA_DOCTYPES


def test_the_table_names_each_document_type_once() -> None:
    values = [getattr(doctypes, name) for name in doctypes.__all__]
    assert len(set(values)) == len(values)


@pytest.mark.parametrize(("place", "name"), REEXPORTS)
def test_the_seed_packages_reexport_the_tables_constants(place: str, name: str) -> None:
    module = importlib.import_module(place)
    assert name in module.__all__
    assert getattr(module, name) is getattr(doctypes, name)


def _doctype_constants(path: Path) -> list[tuple[int, str]]:
    """The module-level names a file binds to a document type's name, with their lines."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Constant) and value.value in SCHEMA_DOCTYPES:
            found.append((node.lineno, value.value))
    return found


def test_no_other_module_defines_a_document_type_constant() -> None:
    defined = {
        f"{module}:{line} {value}"
        for module, path in module_files()
        if module != doctypes.__name__
        for line, value in _doctype_constants(path)
    }
    assert not defined, "name these from session_contracts.doctypes"
