"""session-contracts: schema-first codegen and conformance for session observability v1.

The public Python API (README, "Python API"): validate, decode and encode,
canonical bytes and content hashes in both forms, hash verification,
redaction, and certification of a producer with typed results. Everything a
user needs is exported here; the modules below are the implementation.
"""

from typing import TYPE_CHECKING, Any

from session_contracts.errors import (
    Finding,
    InvalidDocument,
    SessionContractsError,
    ToolError,
    UsageError,
    json_path,
)
from session_contracts.version import __version__ as __version__

if TYPE_CHECKING:
    from session_contracts.api import (
        Certification,
        RedactionPolicy,
        canonical_bytes,
        certify,
        content_hash,
        default_policy,
        document_types,
        extended_policy,
        harn_canonical_bytes,
        harn_content_hash,
        load_policy,
        redact,
        redact_value,
        validate,
        verify,
    )
    from session_contracts.bindings import decode, encode, encode_json

# Loaded on first use (PEP 562): the CLI imports this package for every
# command, and most commands need neither the validator nor the redaction
# engine nor the bindings.
_LAZY: dict[str, str] = {
    "Certification": "session_contracts.api",
    "RedactionPolicy": "session_contracts.api",
    "canonical_bytes": "session_contracts.api",
    "certify": "session_contracts.api",
    "content_hash": "session_contracts.api",
    "default_policy": "session_contracts.api",
    "document_types": "session_contracts.api",
    "extended_policy": "session_contracts.api",
    "harn_canonical_bytes": "session_contracts.api",
    "harn_content_hash": "session_contracts.api",
    "load_policy": "session_contracts.api",
    "redact": "session_contracts.api",
    "redact_value": "session_contracts.api",
    "validate": "session_contracts.api",
    "verify": "session_contracts.api",
    "decode": "session_contracts.bindings",
    "encode": "session_contracts.bindings",
    "encode_json": "session_contracts.bindings",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'session_contracts' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Certification",
    "Finding",
    "InvalidDocument",
    "RedactionPolicy",
    "SessionContractsError",
    "ToolError",
    "UsageError",
    "canonical_bytes",
    "certify",
    "content_hash",
    "decode",
    "default_policy",
    "document_types",
    "encode",
    "encode_json",
    "extended_policy",
    "harn_canonical_bytes",
    "harn_content_hash",
    "json_path",
    "load_policy",
    "redact",
    "redact_value",
    "validate",
    "verify",
]
