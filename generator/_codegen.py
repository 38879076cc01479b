"""Render the Python bindings of every contract schema, in memory.

Pure with respect to the tree: it reads schemas/ and returns file contents;
writing and drift checking live in :mod:`session_contracts.generator._files`.
"""

from __future__ import annotations

import ast
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
_GENERATED_FROM = re.compile(r"^#   filename:  (\S+)$", re.MULTILINE)


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


def _cross_file_targets(node: Any) -> set[str]:
    """File names that ``$ref`` values under ``node`` point into (``other.schema.json#/...``)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                found.add(ref.split("#", 1)[0])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _referenced_closure(
    schemas_dir: Path, roots: list[Path], loaded: dict[str, Any]
) -> dict[str, list[str]]:
    """Every schema file the roots reach through ``$ref``, with its direct targets."""
    targets: dict[str, list[str]] = {}
    pending = [root.name for root in roots]
    while pending:
        name = pending.pop()
        if name in targets:
            continue
        if name not in loaded:
            path = schemas_dir / name
            if "/" in name or not path.is_file():
                raise ToolError(
                    [
                        Finding(
                            "$",
                            "ref_unresolved",
                            f"a $ref points into {name!r}, which is not a file of {schemas_dir}",
                            "point cross-file $refs at a sibling schema file by its name",
                        )
                    ]
                )
            loaded[name] = json.loads(path.read_bytes())
        targets[name] = sorted(_cross_file_targets(loaded[name]) - {name})
        pending.extend(targets[name])
    return targets


def _run_codegen(schemas_dir: Path, names: list[str]) -> dict[str, str]:
    """Modular generation: one Python module body per schema file, by file name.

    One run over every schema involved, so a definition that several contracts
    reach through ``$ref`` becomes one class in its own schema's module, which
    the others import (``from . import other_schema``) instead of re-declaring.
    """
    from datamodel_code_generator.__main__ import main as codegen_main

    with tempfile.TemporaryDirectory(prefix="session-contracts-gen-") as tmp:
        source, out = Path(tmp) / "in", Path(tmp) / "out"
        source.mkdir()
        for name in names:
            (source / name).write_bytes((schemas_dir / name).read_bytes())
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = codegen_main([
                "--input", str(source), "--output", str(out), *CODEGEN_ARGUMENTS,
            ])  # fmt: skip
        outputs = sorted(out.glob("*.py")) if out.is_dir() else []
        bodies: dict[str, str] = {}
        for output in outputs:
            text = output.read_text(encoding="utf-8")
            origin = _GENERATED_FROM.search(text)
            if origin is not None and origin.group(1) in names:
                bodies[origin.group(1)] = text
        if int(status) != 0 or sorted(bodies) != sorted(names):
            raise ToolError(
                [
                    Finding(
                        "$",
                        "codegen_failed",
                        f"datamodel-code-generator failed on {', '.join(sorted(names))}: "
                        + (stderr.getvalue().strip().splitlines() or ["no message"])[-1],
                        "run `datamodel-codegen --input` on those schemas to see the whole error",
                        source=str(schemas_dir),
                    )
                ]
            )
        return bodies


def _strip_codegen_header(body: str) -> str:
    lines = body.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).rstrip() + "\n"


def _module_alias(module: str) -> str:
    return f"_{module}"


def _link_imports(body: str, stem_to_module: Mapping[str, str]) -> tuple[str, list[str]]:
    """Rewrite the generator's package-relative imports to our package.

    ``from . import run_record_schema`` becomes ``from session_contracts.generated
    import run_record as _run_record`` and every ``run_record_schema.X`` becomes
    ``_run_record.X``; the alias is private so no field name can shadow it.
    Returns the body and the modules it imports.
    """
    tree = ast.parse(body)
    lines = body.splitlines()
    imported: list[str] = []
    replacements: list[tuple[int, int, list[str]]] = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        if node.level != 1:
            raise _link_error(body)
        new_lines = []
        if node.module is None:
            for alias in node.names:
                module = stem_to_module.get(alias.name)
                if module is None or alias.asname is not None:
                    raise _link_error(alias.name)
                imported.append(module)
                new_lines.append(
                    f"from session_contracts.generated import {module} as {_module_alias(module)}"
                )
        else:
            module = stem_to_module.get(node.module)
            if module is None:
                raise _link_error(node.module)
            imported.append(module)
            names = ", ".join(
                a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names
            )
            new_lines.append(f"from session_contracts.generated.{module} import {names}")
        end = node.end_lineno if node.end_lineno is not None else node.lineno
        replacements.append((node.lineno - 1, end, new_lines))
    for start, end, new_lines in reversed(replacements):
        lines[start:end] = new_lines
    linked = "\n".join(lines) + "\n"
    for stem, module in stem_to_module.items():
        linked = re.sub(rf"\b{re.escape(stem)}\.", f"{_module_alias(module)}.", linked)
    return linked, sorted(set(imported))


def _link_error(what: str) -> ToolError:
    return ToolError(
        [
            Finding(
                "$",
                "codegen_link_failed",
                f"cannot map the generator's import {what[:80]!r} to a module of generated/",
                "the pinned datamodel-code-generator changed its modular output; "
                "adapt generator/_codegen.py",
            )
        ]
    )


def _class_names(body: str) -> list[str]:
    return [node.name for node in ast.parse(body).body if isinstance(node, ast.ClassDef)]


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


def _reexports(
    module: str,
    imports: Mapping[str, list[str]],
    classes: Mapping[str, list[str]],
    roots: Mapping[str, str],
) -> list[tuple[str, list[str]]]:
    """Classes a module takes from the contracts it references, re-exported by name.

    Before modular generation each contract re-declared every definition of the
    schemas it references; the same names stay importable from it, now bound to
    the one class of the owning module. Local names win; a referenced schema's
    root class is not re-exported (it was never declared there).
    """
    taken = set(classes[module])
    result: list[tuple[str, list[str]]] = []
    order: list[str] = []
    pending = list(imports[module])
    while pending:
        other = pending.pop(0)
        if other in order or other == module:
            continue
        order.append(other)
        pending.extend(imports[other])
    for other in order:
        names = sorted(
            name for name in classes[other] if name not in taken and name != roots[other]
        )
        taken.update(names)
        if names:
            result.append((other, names))
    return result


def _check_acyclic(imports: Mapping[str, list[str]]) -> None:
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        if state.get(module) == 2:
            return
        if state.get(module) == 1:
            cycle = " -> ".join([*trail[trail.index(module) :], module])
            raise ToolError(
                [
                    Finding(
                        "$",
                        "ref_cycle",
                        f"schemas reference each other in a cycle ({cycle})",
                        "move the shared definitions into one schema that the others reference",
                    )
                ]
            )
        state[module] = 1
        for other in imports[module]:
            visit(other, [*trail, module])
        state[module] = 2

    for module in sorted(imports):
        visit(module, [])


def render_all(schemas_dir: Path) -> list[GeneratedFile]:
    """Render every file generated/ must hold, sorted by name."""
    env = _environment()
    tool_version = metadata.version("session-contracts")
    codegen_version = metadata.version("datamodel-code-generator")
    loaded: dict[str, Any] = {}
    raws: dict[str, bytes] = {}
    contracts: list[Path] = []
    for schema_file in sorted(schemas_dir.glob("*.schema.json")):
        raw = schema_file.read_bytes()
        schema = json.loads(raw)
        if "x-documentTypes" not in schema:
            continue  # helper schemas (policies, protocol pieces) have no bindings
        raws[schema_file.name], loaded[schema_file.name] = raw, schema
        contracts.append(schema_file)
    if not contracts:
        return [
            GeneratedFile(
                "__init__.py",
                env.get_template("index.py.jinja2").render(tool_version=tool_version, modules=[]),
            )
        ]
    closure = _referenced_closure(schemas_dir, contracts, loaded)
    names = sorted(closure)
    module_of = {name: _module_name(Path(name)) for name in names}
    # Modules that import each other at load time cannot express a cycle: refuse it early.
    _check_acyclic({module_of[n]: [module_of[t] for t in closure[n]] for n in names})
    bodies = _run_codegen(schemas_dir, names)
    stem_to_module = {
        name.replace("-", "_").replace(".json", "").replace(".", "_"): module_of[name]
        for name in names
    }
    linked: dict[str, str] = {}
    imports: dict[str, list[str]] = {}
    for name in names:
        body, imported = _link_imports(_strip_codegen_header(bodies[name]), stem_to_module)
        linked[module_of[name]], imports[module_of[name]] = body, imported
    classes = {module: _class_names(body) for module, body in linked.items()}
    roots = {module_of[n]: str(loaded[n].get("title", "")) for n in names}
    modules: list[dict[str, Any]] = []
    files: list[GeneratedFile] = []
    for name in names:
        schema = loaded[name]
        schema_file = schemas_dir / name
        raw = raws.get(name) or schema_file.read_bytes()
        document_types = [
            (kind, _class_name(schema, pointer, schema_file))
            for kind, pointer in sorted(schema.get("x-documentTypes", {}).items())
        ]
        module = {
            "name": module_of[name],
            "contract": contract_name(schema_file),
            "source": f"schemas/{name}",
            "source_sha256": hashlib.sha256(raw).hexdigest(),
            "schema_id": schema.get("$id", ""),
            "title": schema.get("title", name),
            "description": schema.get("description", ""),
            "document_types": document_types,
        }
        content = env.get_template("module.py.jinja2").render(
            tool_version=tool_version,
            codegen_version=codegen_version,
            body=linked[module_of[name]],
            reexports=_reexports(module_of[name], imports, classes, roots),
            **module,
        )
        files.append(GeneratedFile(f"{module['name']}.py", content))
        if document_types:
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
