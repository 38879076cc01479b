"""Types of the C census and writer (session_contracts_c/_speedups.c)."""

from collections.abc import Callable
from typing import Any

def scan(
    value: Any, jcs: bool, max_levels: int, /
) -> (
    tuple[
        int,
        int,
        int,
        list[dict[str, Any]] | None,
        dict[int, list[tuple[str | int, Any]]] | None,
        int,
    ]
    | None
): ...
def strip_dot_zero(out: bytes, dot_zero: int, negative_zero: int, /) -> bytes | None: ...
def reading_census(value: Any, max_depth: int, /) -> tuple[int, bool, bool] | None: ...
def harn_dumps(
    value: Any, max_levels: int, float_writer: Callable[[list[float]], bytes], /
) -> bytes | None: ...
