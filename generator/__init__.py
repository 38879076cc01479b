"""Turn the contract schemas into Python bindings (datamodel-code-generator + our templates)."""

from session_contracts.generator.codegen import CODEGEN_ARGUMENTS, GeneratedFile, render_all
from session_contracts.generator.files import Drift, check, write

__all__ = ["CODEGEN_ARGUMENTS", "Drift", "GeneratedFile", "check", "render_all", "write"]
