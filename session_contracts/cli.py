"""The ``session-contracts`` command line.

Exit status: 0 ok, 1 findings or invalid input, 2 usage or tool error.  No
traceback ever reaches a user for something the user did; an internal error
prints one line and asks for a report (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar

import orjson

from session_contracts.ci_annotations import annotations_wanted, finding_annotation
from session_contracts.errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    Finding,
    SessionContractsError,
    UsageError,
)
from session_contracts.jsontext.strict import MAX_DOCUMENT_BYTES, JsonDocument
from session_contracts.jsontext.wire import dumps_wire

__all__ = ["main"]

Handler = Callable[[argparse.Namespace, TextIO], int]


class _Parser(argparse.ArgumentParser):
    """Our usage errors, and a command's options declared on first use.

    ``declare`` (a command's ``add_arguments``) runs only when this parser
    parses or prints its help: building the whole command line then imports
    no command's module, so ``validate`` never loads the certify harness.
    """

    def __init__(
        self,
        *args: Any,
        declare: Callable[[argparse.ArgumentParser], None] | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self._declare = declare

    def _declared(self) -> None:
        declare, self._declare = self._declare, None
        if declare is not None:
            declare(self)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._declared()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._declared()
        return super().format_usage()

    def format_help(self) -> str:
        self._declared()
        return super().format_help()

    def error(self, message: str) -> Any:  # argparse exits 2 by itself; keep our format
        self.print_usage(sys.stderr)
        raise UsageError([Finding("$", "usage", message, f"see `{self.prog} --help`")])


def _documents(args: argparse.Namespace) -> Iterator[JsonDocument]:
    """The documents of ``args.file`` one at a time, in bounded memory (``-`` is stdin).

    A FIFO or device is refused, never waited on; input over
    ``--max-document-bytes`` is refused, never read whole or cut.
    """
    from session_contracts.input_files import iter_input_documents

    return iter_input_documents(
        args.file, jsonl=getattr(args, "jsonl", None), max_bytes=args.max_document_bytes
    )


def _max_document_bytes(text: str) -> int:
    """``--max-document-bytes``: a positive integer, with an optional K, M or G (binary)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    scale = units.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit() or int(digits) * scale < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive number of bytes (e.g. 16777216 or 16M), not {text!r}"
        )
    return int(digits) * scale


def _add_max_document_bytes_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-document-bytes",
        type=_max_document_bytes,
        default=MAX_DOCUMENT_BYTES,
        metavar="N",
        help="refuse a document (or JSON Lines line) over N bytes, K/M/G allowed "
        f"(default {MAX_DOCUMENT_BYTES >> 20}M); larger input is refused, never cut",
    )


def _print_findings(
    findings: Sequence[Finding], out: TextIO, fmt: str, args: argparse.Namespace | None = None
) -> None:
    """Findings as text or JSON Lines; with annotations wanted (``args``), each
    also as a GitHub workflow command, on stderr when stdout carries JSON."""
    annotate = args is not None and annotations_wanted(getattr(args, "annotations", None))
    for finding in findings:
        if fmt == "json":
            out.write(orjson.dumps(finding.to_json()).decode() + "\n")
        else:
            out.write(finding.render() + "\n")
        if annotate:
            (sys.stderr if fmt == "json" else out).write(finding_annotation(finding) + "\n")


def _cmd_doctypes(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.validation.schema_set import default_schema_set

    schema_set = default_schema_set()
    if args.format == "json":
        rows = [
            {"name": d.name, "schema": schema_set.files[d.schema_id], "definition": d.title}
            for d in schema_set.document_types.values()
        ]
        out.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return EXIT_OK
    width = max(len(name) for name in schema_set.document_types)
    for name, document_type in sorted(schema_set.document_types.items()):
        out.write(
            f"{name:<{width}}  {schema_set.files[document_type.schema_id]}"
            f"#/$defs/{document_type.title}\n"
        )
    return EXIT_OK


def _no_documents(message: str) -> Finding:
    """Zero documents never pass: every command that reads documents says so this way."""
    return Finding(
        "$",
        "no_documents",
        message,
        "give at least one JSON document (a JSON Lines file holds one per line)",
    )


def _validated(args: argparse.Namespace) -> Iterator[tuple[JsonDocument, list[Finding]]]:
    """Each document of ``args.file`` with its findings as ``args.doctype``: why it could not
    be read, or what the schema and the x- rules refuse ([] when it is valid)."""
    from session_contracts.validation.validator import default_validator

    validator = default_validator()
    validator.schema_set.document_type(args.doctype)
    for document in _documents(args):
        if document.error is not None:
            yield document, list(document.error.findings)
        else:
            yield document, validator.validate(args.doctype, document.value)


def _cmd_validate(args: argparse.Namespace, out: TextIO) -> int:
    invalid = read = 0
    for document, findings in _validated(args):
        read += 1
        if findings:
            invalid += 1
            _print_findings([f.at(document.source) for f in findings], out, args.format, args)
    if not read:
        _print_findings([_no_documents(f"{args.file} holds no document")], out, args.format, args)
        return EXIT_FINDINGS
    if args.format == "text":
        sys.stderr.write(f"{read - invalid} of {read} document(s) valid as {args.doctype}\n")
    return EXIT_FINDINGS if invalid else EXIT_OK


_Converted = TypeVar("_Converted")


class _Conversion(Generic[_Converted]):
    """``roundtrip``'s and ``canonicalize``'s walk: each document converted, or its
    findings on stderr (a usage error stops the command); zero documents never pass."""

    def __init__(self, convert: Callable[[Any], _Converted]) -> None:
        self._convert = convert
        self._read = 0
        self._failed = False

    def each(self, documents: Iterable[JsonDocument]) -> Iterator[tuple[JsonDocument, _Converted]]:
        for document in documents:
            self._read += 1
            try:
                if document.error is not None:
                    raise document.error
                converted = self._convert(document.value)
            except SessionContractsError as exc:
                if exc.exit_status == EXIT_USAGE:
                    raise
                self._failed = True
                _print_findings([f.at(document.source) for f in exc.findings], sys.stderr, "text")
                continue
            yield document, converted

    def exit_status(self, file: str) -> int:
        if not self._read:
            _print_findings([_no_documents(f"{file} holds no document")], sys.stderr, "text")
        return EXIT_FINDINGS if self._failed or not self._read else EXIT_OK


def _cmd_roundtrip(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.bindings import decode, encode

    conversion = _Conversion(lambda value: encode(decode(args.doctype, value)))
    for _, encoded in conversion.each(_documents(args)):
        out.write(dumps_wire(encoded).decode() + "\n")
    return conversion.exit_status(args.file)


def _cmd_generate(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.checkout import find_checkout
    from session_contracts.generator import (
        Drift,
        check,
        polyglot,  # TypeScript, Go and Rust types
        write,
    )

    root = Path(args.root) if args.root else find_checkout()
    schemas, generated = root / "schemas", root / "generated"
    started = time.perf_counter()
    drifts: list[Drift | polyglot.PolyglotDrift]
    if args.check:
        drifts = [*check(schemas, generated), *polyglot.check(schemas, generated)]
        for drift in drifts:
            out.write(drift.render() + "\n")
        if drifts:
            out.write(
                f"{len(drifts)} generated file(s) out of date: run `session-contracts generate`\n"
            )
            return EXIT_FINDINGS
        out.write("generated/ is current\n")
        return EXIT_OK
    if _breaking_change_gate(args, root, out) != EXIT_OK:
        return EXIT_FINDINGS
    drifts = [*write(schemas, generated), *polyglot.write(schemas, generated)]
    for drift in drifts:
        out.write(f"updated {drift.render()}\n")
    out.write(
        f"generated/ written from schemas/ in {time.perf_counter() - started:.2f} s "
        f"({len(drifts)} file(s) changed)\n"
    )
    return EXIT_OK


def _breaking_change_gate(args: argparse.Namespace, root: Path, out: TextIO) -> int:
    """Refuse a breaking change to a schema whose version did not move (docs/schema-diff.md)."""
    from session_contracts.schema_diff import (
        blocking_changes,
        diff_schema_sets,
        git_toplevel,
        load_schema_set,
        revision_has_schemas,
    )

    baseline = args.baseline
    if baseline is None:
        located = git_toplevel(root)
        if located is None:
            out.write(f"breaking-change gate skipped: {root} is not in a git repository\n")
            return EXIT_OK
        top, prefix = located
        if not revision_has_schemas(top, prefix, "HEAD"):
            out.write("breaking-change gate skipped: HEAD has no schemas/ to compare with\n")
            return EXIT_OK
        baseline = "HEAD"
    base = load_schema_set(baseline, root)
    new = load_schema_set(str(root / "schemas"), root)
    changes = diff_schema_sets(base, new)
    blocked = blocking_changes(base, new, changes)
    if not blocked:
        return EXIT_OK
    if args.allow_breaking:
        out.write(f"{len(blocked)} breaking change(s) against {baseline}, allowed:\n")
        for change in blocked:
            out.write(change.render() + "\n")
        return EXIT_OK
    for change in blocked:
        out.write(change.render() + "\n")
    out.write(
        f"generate refused: {len(blocked)} breaking change(s) against {baseline} to schemas "
        "whose version did not move; bump x-schemaVersion, or pass --allow-breaking\n"
    )
    return EXIT_FINDINGS


def _cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.schema_diff import diff_schema_sets, load_schema_set

    root = Path(args.root) if args.root else Path.cwd()
    base = load_schema_set(args.base, root)
    new = load_schema_set(args.new, root)
    changes = diff_schema_sets(base, new)
    breaking = [c for c in changes if c.breaking]
    if args.format == "json":
        report = {
            "base": args.base,
            "new": args.new,
            "breaking": len(breaking),
            "changes": [c.to_json() for c in changes],
        }
        out.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for change in changes:
            out.write(change.render() + "\n")
        out.write(
            f"{len(changes)} change(s), {len(breaking)} breaking, from {args.base} to {args.new}\n"
        )
    return EXIT_FINDINGS if breaking else EXIT_OK


def _cmd_canonicalize(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.jsontext.canonical import canonical_bytes, hash_bytes
    from session_contracts.jsontext.harn_canonical import harn_canonical_bytes

    to_bytes = harn_canonical_bytes if args.form == "harn" else canonical_bytes
    documents = _documents(args)
    # One document prints bare; several print with their source: look one ahead.
    first = next(documents, None)
    second = next(documents, None) if first is not None else None
    single = second is None
    ahead = [d for d in (first, second) if d is not None]
    conversion = _Conversion(to_bytes)
    for document, data in conversion.each(itertools.chain(ahead, documents)):
        if args.command == "hash":
            out.write(hash_bytes(data) + ("\n" if single else f"  {document.source}\n"))
        else:
            out.flush()
            sys.stdout.buffer.write(data + (b"" if single else b"\n"))
            sys.stdout.buffer.flush()
    return conversion.exit_status(args.file)


def _journal_record_hashes(path: str, document: Any) -> dict[int, str]:
    from session_contracts.journal import SqliteJournal
    from session_contracts.recap.event_facts import StoredFacts

    snapshot = document.get("snapshot", document) if isinstance(document, dict) else {}
    session_id = snapshot.get("sessionId") if isinstance(snapshot, dict) else None
    hashes: dict[int, str] = {}
    if not isinstance(session_id, str):
        return hashes
    with SqliteJournal.open(path) as journal:
        for event in journal.iter_events(session_id=session_id):
            # The source record hash: what a recap lists for the event.
            hashes[StoredFacts.event_id(event)] = StoredFacts.record_hash(event)
    return hashes


def _cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.hashes.snapshot import classify_extensions
    from session_contracts.hashes.verify import HASH_BEARING, verify_document

    failed = read = 0
    for document, invalid in _validated(args):
        read += 1
        findings = invalid
        if document.error is None and not invalid:
            journal = _journal_record_hashes(args.journal, document.value) if args.journal else None
            findings = verify_document(args.doctype, document.value, journal, parsed=True)
        errors = [f for f in findings if f.level == "error"]
        failed += bool(errors)
        _print_findings([f.at(document.source) for f in findings], out, args.format, args)
        if document.error is None and args.format == "text" and args.doctype in HASH_BEARING:
            value = document.value
            snapshot = value.get("snapshot", value) if isinstance(value, dict) else {}
            for binding in classify_extensions(snapshot if isinstance(snapshot, dict) else {}):
                sys.stderr.write(
                    f"{document.source}: extension {binding.name!r} is {binding.state}"
                    + (f" (to {binding.target})" if binding.target else "")
                    + "\n"
                )
    if args.doctype not in HASH_BEARING:
        sys.stderr.write(f"{args.doctype} carries no hashes; checked the schema only\n")
    if not read:
        _print_findings([_no_documents(f"{args.file} holds no document")], out, args.format, args)
        return EXIT_FINDINGS
    sys.stderr.write(f"{read - failed} of {read} document(s) verified\n")
    return EXIT_FINDINGS if failed else EXIT_OK


def _cmd_reference_producer(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.conformance.reference.producer import main as producer_main

    return producer_main()


def _cmd_certify(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.conformance.judge.certify_cli import run

    return run(args, out)


def _cmd_golden(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.conformance.judge.golden_cli import run

    return run(args, out)


def _declare_certify(parser: argparse.ArgumentParser) -> None:
    from session_contracts.conformance.judge.certify_cli import add_arguments

    add_arguments(parser)


def _declare_golden(parser: argparse.ArgumentParser) -> None:
    from session_contracts.conformance.judge.golden_cli import add_arguments

    add_arguments(parser)


def _cmd_checks(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.conformance.judge.certify_cli import list_checks

    return list_checks(out, args.format)


_POLICY_HELP = (
    "a redaction policy file (default: Harn's, schemas/redaction-policy.default.json; "
    "ours: schemas/redaction-policy.extended.json)"
)


def _recap_policy(args: argparse.Namespace) -> Any:
    from session_contracts.redaction.policy import default_policy, load_policy

    return load_policy(args.policy) if args.policy else default_policy()


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.recap import serve_http

    if args.max_concurrent is not None and args.max_concurrent < 1:
        raise UsageError(
            [Finding("$.max_concurrent", "usage", "--max-concurrent must be at least 1", "")]
        )
    serve_http(
        args.journal,
        args.host,
        args.port,
        policy=_recap_policy(args),
        max_concurrent=args.max_concurrent,
    )
    return EXIT_OK


def _cmd_acp(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.recap import RecapService, run_acp

    with RecapService(args.journal, _recap_policy(args)) as service:
        return run_acp(service, sys.stdin.buffer, sys.stdout.buffer)


def _cmd_recap(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.recap import (
        RecapService,
        coerce_params,
        envelope_bytes,
        query_echo,
        recap_of_stored_file,
    )

    for option, text in (
        ("--session", args.session),
        ("--run-id", args.run_id),
        ("--turn-id", args.turn_id),
    ):
        _require_utf8(option, text)
    flags = (
        ("runId", args.run_id),
        ("turnId", args.turn_id),
        ("fromEventId", args.from_event_id),
        ("limit", args.limit),
    )
    # Flags arrive as text and are read like an HTTP query string: strictly,
    # with findings at the query's JSON paths (an invalid query exits 1).
    query = coerce_params([(name, value) for name, value in flags if value is not None])
    query["sessionId"] = args.session
    if args.stored_events is not None:
        outcome = recap_of_stored_file(args.stored_events, query, policy=_recap_policy(args))
    else:
        with RecapService(args.journal, _recap_policy(args)) as service:
            outcome = service.answer(query_echo(query))
    out.flush()
    sys.stdout.buffer.write(envelope_bytes(outcome.envelope) + b"\n")
    sys.stdout.buffer.flush()
    return EXIT_OK if outcome.available else EXIT_FINDINGS


def _require_utf8(option: str, text: str | None) -> None:
    """An argument the system could not decode (it holds surrogate escapes) is a usage error."""
    if text is None:
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            [
                Finding(
                    f"$.{option.lstrip('-').replace('-', '_')}",
                    "argument_not_utf8",
                    f"{option} is not valid UTF-8 text",
                    "pass the value as UTF-8 (check the shell's locale)",
                )
            ]
        ) from None


def _cmd_journal_import(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.journal import import_files

    results = import_files(args.files, args.journal)
    failed = 0
    for result in results:
        if result.findings:
            failed += 1
            for finding in result.findings:
                out.write(finding.render() + "\n")
            out.write(f"{result.path}: nothing imported\n")
        else:
            out.write(f"{result.path}: imported {result.imported} event(s)\n")
    sys.stderr.write(
        f"{len(results) - failed} of {len(results)} file(s) imported into {args.journal}\n"
    )
    return EXIT_FINDINGS if failed else EXIT_OK


def _cmd_journal_export(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.journal import export_tape

    count = export_tape(args.journal, args.tape, session_id=args.session)
    sys.stderr.write(f"{args.tape}: exported {count} event(s) from {args.journal}\n")
    return EXIT_OK


def _cmd_journal_stats(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.journal import journal_stats

    stats = journal_stats(args.journal)
    if args.format == "json":
        out.write(orjson.dumps(stats).decode() + "\n")
        return EXIT_OK
    ids = (
        f"{stats['firstEventId']}..{stats['lastEventId']}"
        if stats["events"]
        else "none (the journal is empty)"
    )
    out.write(
        f"journal   {stats['journal']}\nsessions  {stats['sessions']}\n"
        f"events    {stats['events']}\nids       {ids}\nbytes     {stats['bytes']:,}\n"
    )
    return EXIT_OK


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.conformance.judge.check_cli import CheckStats, check_documents

    for path in args.paths:
        if path != "-" and not Path(path).exists():
            raise UsageError([Finding("$", "input_not_found", f"no such file: {path}", "")])
    if args.doctype:
        from session_contracts.validation.validator import default_validator

        default_validator().schema_set.document_type(args.doctype)
    from session_contracts.conformance.judge.check_report import CheckJunit

    # Bounded statistics: memory does not grow with the input (docs/check.md).
    stats, junit = CheckStats(), CheckJunit()
    started = time.perf_counter()
    for source, doctype, findings in check_documents(args.paths, doctype=args.doctype):
        stats.add(doctype, findings)
        if args.junit:
            junit.add(source, findings)
        _print_findings([f.at(source) for f in findings], out, args.format, args)
    summary = stats.summary()
    if args.junit:
        Path(args.junit).write_bytes(junit.xml(seconds=time.perf_counter() - started))
    if args.format == "json":
        out.write(orjson.dumps({"summary": summary}).decode() + "\n")
    else:
        sys.stderr.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode() + "\n")
    if stats.read == 0:
        _print_findings(
            [_no_documents("no document was read: zero documents never pass")],
            out if args.format != "text" else sys.stderr,
            args.format,
            args,
        )
        return EXIT_FINDINGS
    return EXIT_FINDINGS if stats.with_errors else EXIT_OK


def _cmd_quickstart(args: argparse.Namespace, out: TextIO) -> int:
    from session_contracts.quickstart import run

    return run(out, root=Path(args.root) if args.root else None)


def _add_annotations_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--annotations",
        choices=["github", "none"],
        help="also print GitHub workflow annotations (default: github inside GitHub Actions)",
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="session-contracts",
        description="Schema-first bindings and conformance checks for session observability v1.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    # The extra of pyproject.toml a command needs beyond the default install (set per command).
    parser.set_defaults(extra=None)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    doctypes = commands.add_parser("doctypes", help="list every document type")
    doctypes.add_argument("--format", choices=["text", "json"], default="text")
    doctypes.set_defaults(handler=_cmd_doctypes)

    for name, handler, text in (
        ("validate", _cmd_validate, "check documents against a document type, x- rules included"),
        ("roundtrip", _cmd_roundtrip, "decode with the bindings and print the re-encoded JSON"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("doctype", help="CONTRACT.KIND, see `session-contracts doctypes`")
        command.add_argument("file", help="a JSON or JSON Lines file, or - for stdin")
        mode = command.add_mutually_exclusive_group()
        mode.add_argument(
            "--jsonl",
            dest="jsonl",
            action="store_const",
            const=True,
            default=None,
            help="read one document per line",
        )
        mode.add_argument(
            "--json",
            dest="jsonl",
            action="store_const",
            const=False,
            help="read exactly one document",
        )
        if name == "validate":
            command.add_argument("--format", choices=["text", "json"], default="text")
            _add_annotations_option(command)
        _add_max_document_bytes_option(command)
        command.set_defaults(handler=handler)

    for name, text in (
        ("canonicalize", "write the canonical bytes of a JSON document (RFC 8785 by default)"),
        ("hash", "print sha256:<hex> of a JSON document's canonical bytes"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("file", help="a JSON or JSON Lines file, or - for stdin")
        command.add_argument("--jsonl", action="store_const", const=True, default=None)
        command.add_argument(
            "--form",
            choices=["rfc8785", "harn"],
            default="rfc8785",
            help="rfc8785 (JCS, the default) or harn: Harn's canonical JSON, the form of a "
            "recap's contentHash and projectionHash (docs/hashing.md)",
        )
        _add_max_document_bytes_option(command)
        command.set_defaults(handler=_cmd_canonicalize)

    verify = commands.add_parser(
        "verify", help="recompute every hash a document carries; report each mismatch"
    )
    verify.add_argument("doctype", help="CONTRACT.KIND, see `session-contracts doctypes`")
    verify.add_argument("file", help="a JSON or JSON Lines file, or - for stdin")
    verify.add_argument("--journal", help="an SQLite journal: also check each recordHash")
    verify.add_argument("--jsonl", action="store_const", const=True, default=None)
    verify.add_argument("--format", choices=["text", "json"], default="text")
    _add_annotations_option(verify)
    _add_max_document_bytes_option(verify)
    verify.set_defaults(handler=_cmd_verify)

    generate = commands.add_parser("generate", help="regenerate generated/ from schemas/")
    generate.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 when generated/ is out of date"
    )
    generate.add_argument("--root", help="the checkout (default: found from the working folder)")
    generate.add_argument(
        "--baseline",
        help="git revision whose schemas/ a breaking change is judged against (default: HEAD)",
    )
    generate.add_argument(
        "--allow-breaking",
        action="store_true",
        help="write even when a schema changes incompatibly without a version bump",
    )
    generate.set_defaults(handler=_cmd_generate, extra="codegen")

    diff = commands.add_parser(
        "diff", help="list every change between two schema sets; exit 1 when one is breaking"
    )
    diff.add_argument("base", help="a schemas folder, or a git revision (HEAD~1, origin/main)")
    diff.add_argument("new", help="a schemas folder, or a git revision")
    diff.add_argument("--format", choices=["text", "json"], default="text")
    diff.add_argument("--root", help="the repository revisions are read from (default: here)")
    diff.set_defaults(handler=_cmd_diff)

    check = commands.add_parser(
        "check",
        help="certify captured documents: type detection, schema, hashes, secret scan",
    )
    check.add_argument("paths", nargs="+", help="JSON or JSON Lines files, folders, or -")
    check.add_argument("--doctype", help="check every document as this type (default: detect)")
    check.add_argument("--junit", help="write JUnit XML here: a test case per input file")
    check.add_argument("--format", choices=["text", "json"], default="text")
    _add_annotations_option(check)
    check.set_defaults(handler=_cmd_check)

    producer = commands.add_parser(
        "reference-producer",
        help="run the reference producer: the producer protocol on stdin/stdout",
    )
    producer.set_defaults(handler=_cmd_reference_producer)

    certify = commands.add_parser(
        "certify",
        help="certify a producer (default: the built-in reference producer)",
        declare=_declare_certify,
    )
    certify.set_defaults(handler=_cmd_certify)

    golden = commands.add_parser(
        "golden",
        help="golden fixtures: check a producer against them, or update them",
        declare=_declare_golden,
    )
    golden.set_defaults(handler=_cmd_golden)

    checks = commands.add_parser("checks", help="list the conformance checks")
    checks.add_argument("--format", choices=["text", "json"], default="text")
    checks.set_defaults(handler=_cmd_checks)

    serve = commands.add_parser(
        "serve", help="serve session recaps over HTTP: GET /sessions/{sessionId}/recap"
    )
    serve.add_argument("--journal", required=True, help="the SQLite session journal")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8765, help="port to listen on")
    serve.add_argument("--policy", help=_POLICY_HELP)
    serve.add_argument(
        "--max-concurrent",
        type=int,
        metavar="N",
        help="large projections (limit over 4096) running at once, 4*N in all; more are "
        "answered 503 with Retry-After (default: the number of cores)",
    )
    serve.set_defaults(handler=_cmd_serve, extra="serve")

    acp = commands.add_parser(
        "acp", help="answer harn.session_recap.query over JSON-RPC 2.0 on stdin/stdout"
    )
    acp.add_argument("--journal", required=True, help="the SQLite session journal")
    acp.add_argument("--policy", help=_POLICY_HELP)
    acp.set_defaults(handler=_cmd_acp)

    recap = commands.add_parser(
        "recap", help="print one session recap envelope (exit 1 when unavailable)"
    )
    source = recap.add_mutually_exclusive_group(required=True)
    source.add_argument("--journal", help="the SQLite session journal")
    source.add_argument(
        "--stored-events",
        metavar="FILE",
        help="Harn's stored events instead: JSON Lines in store order, or a .json array "
        "(docs/recap.md section 11)",
    )
    recap.add_argument("--session", required=True, help="the session id")
    recap.add_argument("--run-id", help="keep events of one run")
    recap.add_argument("--turn-id", help="keep events of one prompt turn")
    recap.add_argument("--from-event-id", help="start the bounded read at this event id")
    recap.add_argument("--limit", help="source-event bound (default 4096, clamped to 1..32768)")
    recap.add_argument("--policy", help=_POLICY_HELP)
    recap.set_defaults(handler=_cmd_recap)

    journal = commands.add_parser("journal", help="build and inspect a SQLite session journal")
    journal_commands = journal.add_subparsers(
        dest="journal_command", required=True, parser_class=_Parser
    )
    journal_import = journal_commands.add_parser(
        "import",
        help="append session events from JSON Lines tapes or .json files, atomically per file",
    )
    journal_import.add_argument(
        "files", nargs="+", metavar="FILE", help="a tape (one event a line) or a .json file"
    )
    journal_import.add_argument(
        "--journal", required=True, help="the SQLite journal (created if missing)"
    )
    journal_import.set_defaults(handler=_cmd_journal_import)
    journal_export = journal_commands.add_parser(
        "export", help="write a journal's stored events (or one session's) to a JSON Lines tape"
    )
    journal_export.add_argument("tape", metavar="TAPE", help="the tape to write (replaced whole)")
    journal_export.add_argument("--journal", required=True, help="the SQLite journal")
    journal_export.add_argument("--session", help="only this session's events, in id order")
    journal_export.set_defaults(handler=_cmd_journal_export)
    journal_stats = journal_commands.add_parser(
        "stats", help="sessions, events, the id range and the size of a journal"
    )
    journal_stats.add_argument("--journal", required=True, help="the SQLite journal")
    journal_stats.add_argument("--format", choices=["text", "json"], default="text")
    journal_stats.set_defaults(handler=_cmd_journal_stats)

    quickstart = commands.add_parser(
        "quickstart", help="the main job on built-in defaults: regenerate, validate the examples"
    )
    quickstart.add_argument("--root", help="the checkout (default: found from the working folder)")
    quickstart.set_defaults(handler=_cmd_quickstart)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _build_parser()
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        args = parser.parse_args(argv)
        handler: Handler = args.handler
        if args.extra is not None:
            from session_contracts.extras import require_extra

            require_extra(args.extra, args.command)
        return handler(args, sys.stdout)
    except SessionContractsError as exc:
        for finding in exc.findings:
            sys.stderr.write(f"session-contracts: {finding.render()}\n")
        return exc.exit_status
    except KeyboardInterrupt:
        sys.stderr.write("session-contracts: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # A path the user gave (a report to write, a file to read) that the
        # system refused: their input, not our bug.
        where = f" {exc.filename}" if exc.filename else ""
        finding = Finding(
            "$",
            "io_error",
            f"cannot read or write{where}: {exc.strerror or exc}",
            "check that the path exists, that its folder does, and that you may write there",
        )
        sys.stderr.write(f"session-contracts: {finding.render()}\n")
        return EXIT_USAGE
    except Exception as exc:  # a bug of ours, not the user's: say so, briefly
        if debug:
            raise
        sys.stderr.write(
            f"session-contracts: internal error: {type(exc).__name__}: {exc}\n"
            "  hint: this is a bug in session-contracts; rerun with --debug and report it\n"
        )
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
