"""Types of the C census (session_contracts/_speedups.c)."""

from typing import Any

def scan(
    value: Any, jcs: bool, max_levels: int, /
) -> tuple[int, int, int, list[dict[str, Any]] | None, set[int] | None] | None: ...
def strip_dot_zero(out: bytes, dot_zero: int, negative_zero: int, /) -> bytes | None: ...
