"""Types in TypeScript, Go and Rust from the contract schemas (one model, our jinja2 templates).

Outputs live in generated/typescript/, generated/go/ and generated/rust/; `session-contracts
generate` writes them and `generate --check` reports each stale, missing or orphaned file.
The model the templates read, and its types, are in :mod:`.model`.
"""

from session_contracts.generator.polyglot.files import PolyglotDrift, check, write
from session_contracts.generator.polyglot.model import build_model
from session_contracts.generator.polyglot.render import LANGUAGES, PolyglotFile, render_all

__all__ = [
    "LANGUAGES",
    "PolyglotDrift",
    "PolyglotFile",
    "build_model",
    "check",
    "render_all",
    "write",
]
