"""session-contracts: schema-first codegen and conformance for session observability v1."""

from session_contracts._errors import (
    Finding,
    InvalidDocument,
    SessionContractsError,
    ToolError,
    UsageError,
    json_path,
)

__all__ = [
    "Finding",
    "InvalidDocument",
    "SessionContractsError",
    "ToolError",
    "UsageError",
    "json_path",
]
__version__ = "0.1.0"
