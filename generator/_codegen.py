"""Render the Python bindings of every contract schema, in memory.

Pure with respect to the tree: it reads schemas/ and returns file contents;
writing and drift checking live in :mod:`session_contracts.generator._files`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2

from session_contracts._errors import Finding, ToolError

__all__ = ["CODEGEN_ARGUMENTS", "GeneratedFile", "contract_name", "render_all"]

# Flags chosen from shared/notes/codegen-facts.md: closed models, absent stays
# absent (MISSING sentinel), no lax coercion, formats kept as plain strings so
# values round-trip byte for byte, no timestamp so output is reproducible.
CODEGEN_ARGUMENTS: tuple[str, ...] = (
    "--input-file-type", "jsonschema",
    "--schema-version", "2020-12",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.11",
    "--target-pydantic-version", "2.14",
    "--use-annotated",
    "--field-constraints",
    "--snake-case-field",
    "--allow-population-by-field-name",
    "--use-missing-sentinel",
    "--collapse-root-models",
    "--strict-types", "int", "float", "str", "bool",
    "--type-mappings",
    "string+uri=string",
    "string+date-time=string",
    "string+date=string",
    "string+email=string",
    "string+uuid=string",
    "--use-title-as-name",
    "--use-schema-description",
    "--capitalise-enum-members",
    "--use-specialized-enum",
    "--disable-timestamp",
    "--use-double-quotes",
    "--formatters", "builtin",
)  # fmt: skip

_TEMPLATES = Path(__file__).with_name("templates")
_VERSION_SUFFIX = re.compile(r"-v\d+$")


@dataclass(frozen=True, slots=True)
class GeneratedFile:
    """One file of generated/, relative to that folder."""

    name: str
    content: str


def contract_name(schema_file: Path) -> str:
    """``session-recap-v1.schema.json`` -> ``session-recap``."""
    stem = schema_file.name.removesuffix(".schema.json")
    return _VERSION_SUFFIX.sub("", stem)


def _module_name(schema_file: Path) -> str:
    return schema_file.name.removesuffix(".schema.json").replace("-", "_")


def _environment() -> jinja2.Environment:
    # StrictUndefined: a misspelt variable must fail, not render as nothing.
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def _run_codegen(schema_file: Path) -> str:
    from datamodel_code_generator.__main__ import main as codegen_main

    with tempfile.TemporaryDirectory(prefix="session-contracts-gen-") as tmp:
        out = Path(tmp) / "module.py"
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = codegen_main([
                "--input", str(schema_file), "--output", str(out), *CODEGEN_ARGUMENTS,
            ])  # fmt: skip
        if int(status) != 0 or not out.exists():
            raise ToolError(
                [
                    Finding(
                        "$",
                        "codegen_failed",
                        f"datamodel-code-generator failed on {schema_file.name}: "
                        + (stderr.getvalue().strip().splitlines() or ["no message"])[-1],
                        "run `datamodel-codegen --input` on that schema to see the whole error",
                        source=str(schema_file),
                    )
                ]
            )
        return out.read_text(encoding="utf-8")


def _strip_codegen_header(body: str) -> str:
    lines = body.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).rstrip() + "\n"


def _class_name(schema: Mapping[str, Any], pointer: str, schema_file: Path) -> str:
    name = pointer.removeprefix("#/$defs/")
    definition = schema.get("$defs", {}).get(name)
    if not pointer.startswith("#/$defs/") or not isinstance(definition, dict):
        raise ToolError(
            [
                Finding(
                    "$['x-documentTypes']",
                    "document_type_unresolved",
                    f"{schema_file.name}: document type pointer {pointer!r} names no $defs entry",
                    "point each x-documentTypes entry at #/$defs/<Name>",
                    source=str(schema_file),
                )
            ]
        )
    title = definition.get("title", name)
    return str(title)


def render_all(schemas_dir: Path) -> list[GeneratedFile]:
    """Render every file generated/ must hold, sorted by name."""
    env = _environment()
    tool_version = metadata.version("session-contracts")
    codegen_version = metadata.version("datamodel-code-generator")
    modules: list[dict[str, Any]] = []
    files: list[GeneratedFile] = []
    for schema_file in sorted(schemas_dir.glob("*.schema.json")):
        raw = schema_file.read_bytes()
        schema = json.loads(raw)
        if "x-documentTypes" not in schema:
            continue  # helper schemas (policies, protocol pieces) have no bindings
        document_types = [
            (kind, _class_name(schema, pointer, schema_file))
            for kind, pointer in sorted(schema["x-documentTypes"].items())
        ]
        body = _strip_codegen_header(_run_codegen(schema_file))
        module = {
            "name": _module_name(schema_file),
            "contract": contract_name(schema_file),
            "source": f"schemas/{schema_file.name}",
            "source_sha256": hashlib.sha256(raw).hexdigest(),
            "schema_id": schema.get("$id", ""),
            "title": schema.get("title", schema_file.name),
            "description": schema.get("description", ""),
            "document_types": document_types,
        }
        content = env.get_template("module.py.jinja2").render(
            tool_version=tool_version, codegen_version=codegen_version, body=body, **module
        )
        files.append(GeneratedFile(f"{module['name']}.py", content))
        modules.append(module)
    index = env.get_template("index.py.jinja2").render(tool_version=tool_version, modules=modules)
    files.append(GeneratedFile("__init__.py", index))
    for generated in files:
        _syntax_check(generated)
    return sorted(files, key=lambda f: f.name)


def _syntax_check(generated: GeneratedFile) -> None:
    try:
        compile(generated.content, generated.name, "exec")
    except SyntaxError as exc:
        raise ToolError(
            [
                Finding(
                    "$",
                    "codegen_syntax_error",
                    f"generated {generated.name} is not valid Python: line {exc.lineno}: {exc.msg}",
                    "a template under generator/templates produced broken code; fix the template",
                )
            ]
        ) from None
