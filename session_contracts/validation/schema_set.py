"""The contract schemas and their document types, loaded once."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from session_contracts.errors import Finding, UsageError

__all__ = ["DocumentType", "SchemaSet", "default_schema_set"]

_VERSION_SUFFIX = re.compile(r"-v\d+$")


@dataclass(frozen=True, slots=True)
class DocumentType:
    """A document type ``CONTRACT.KIND``: where its schema lives and how input is read."""

    name: str
    contract: str
    kind: str
    schema_id: str
    pointer: str
    definition: Mapping[str, Any]

    @property
    def ref(self) -> str:
        return f"{self.schema_id}{self.pointer}"

    @property
    def title(self) -> str:
        return str(self.definition.get("title", self.kind))

    @property
    def description(self) -> str:
        return str(self.definition.get("description", ""))

    @property
    def input_aliases(self) -> Mapping[str, str]:
        aliases = self.definition.get("x-inputAliases", {})
        return aliases if isinstance(aliases, dict) else {}


@dataclass(frozen=True)
class SchemaSet:
    """Every schema by $id, and every document type by name."""

    schemas: Mapping[str, Mapping[str, Any]]
    files: Mapping[str, str]  # $id -> file name
    document_types: Mapping[str, DocumentType]

    def document_type(self, name: str) -> DocumentType:
        try:
            return self.document_types[name]
        except KeyError:
            known = ", ".join(sorted(self.document_types))
            raise UsageError(
                [
                    Finding(
                        "$",
                        "unknown_document_type",
                        f"there is no document type {name!r}",
                        f"use one of: {known} (list them with `session-contracts doctypes`)",
                    )
                ]
            ) from None

    @classmethod
    def from_texts(cls, texts: Mapping[str, str]) -> SchemaSet:
        schemas: dict[str, Mapping[str, Any]] = {}
        files: dict[str, str] = {}
        document_types: dict[str, DocumentType] = {}
        for file_name, text in sorted(texts.items()):
            schema = json.loads(text)
            schema_id = schema["$id"]
            schemas[schema_id] = schema
            files[schema_id] = file_name
            stem = file_name.removesuffix(".schema.json")
            contract = _VERSION_SUFFIX.sub("", stem)
            for kind, pointer in sorted(schema.get("x-documentTypes", {}).items()):
                definition = schema["$defs"][pointer.removeprefix("#/$defs/")]
                name = f"{contract}.{kind}"
                document_types[name] = DocumentType(
                    name, contract, kind, schema_id, pointer, definition
                )
        return cls(schemas, files, document_types)


@cache
def default_schema_set() -> SchemaSet:
    """The schemas shipped with this package (in a checkout: schemas/)."""
    folder = resources.files("session_contracts.schemas")
    texts = {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".schema.json")
    }
    return SchemaSet.from_texts(texts)
