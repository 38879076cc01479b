"""The main job on built-in defaults: regenerate the bindings, then validate
and round-trip every bundled example document through them."""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.table import Table

from session_contracts.errors import EXIT_FINDINGS, EXIT_OK, SessionContractsError
from session_contracts.jsontext.strict import loads_strict
from session_contracts.validation.xkeywords import json_equal

__all__ = ["run"]


def run(out: TextIO, root: Path | None = None) -> int:
    from session_contracts.checkout import find_checkout
    from session_contracts.extras import require_extra
    from session_contracts.validation.validator import default_validator

    console = Console(file=out, highlight=False, soft_wrap=True)
    try:
        checkout = root or find_checkout()
    except SessionContractsError:
        checkout = None
    if checkout is not None:
        # Only a checkout is regenerated; an installed package's bindings are used as they are.
        require_extra("codegen", "quickstart")
        from session_contracts.generator import write

        started = time.perf_counter()
        changed = write(checkout / "schemas", checkout / "generated")
        console.print(
            f"regenerated generated/ from {checkout / 'schemas'} in "
            f"{time.perf_counter() - started:.2f} s ({len(changed)} file(s) changed)"
        )
    else:
        console.print("not in a checkout: using the installed bindings as they are")

    from session_contracts.bindings import decode, encode

    validator = default_validator()
    examples = resources.files("session_contracts.schemas").joinpath("examples")
    table = Table(title="bundled examples")
    for column in ("document type", "schema + x- rules", "bindings round-trip"):
        table.add_column(column)
    failures = 0
    seen = 0
    for entry in sorted(examples.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        doctype = entry.name.removesuffix(".json")
        if doctype not in validator.schema_set.document_types:
            continue
        seen += 1
        value = loads_strict(entry.read_bytes())
        findings = validator.validate(doctype, value)
        valid = "[green]valid[/]" if not findings else f"[red]{len(findings)} finding(s)[/]"
        try:
            same = json_equal(encode(decode(doctype, value)), value)
            trip = "[green]same JSON value[/]" if same else "[red]changed[/]"
        except SessionContractsError as exc:
            same = False
            trip = f"[red]rejected: {exc.findings[0].code}[/]"
        failures += bool(findings) or not same
        table.add_row(doctype, valid, trip)
        for finding in findings:
            console.print(f"[red]{doctype}[/] {finding.render()}")
    console.print(table)
    missing = sorted(
        set(validator.schema_set.document_types)
        - {e.name.removesuffix(".json") for e in examples.iterdir()}
    )
    if missing:
        console.print(f"document types without a bundled example: {', '.join(missing)}")
    console.print(
        f"{seen - failures} of {seen} example(s) valid and round-tripped"
        + ("" if not failures else f"; {failures} failed")
    )
    return EXIT_FINDINGS if failures or not seen else EXIT_OK
