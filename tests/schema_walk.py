"""Walks over our JSON Schema documents, for the tests that hold every schema to a rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def object_schemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema in ``node`` (``type: object``, or ``properties`` given), with its
    JSON pointer below ``where``, outermost first."""
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            yield where, node
        for key, value in node.items():
            yield from object_schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from object_schemas(value, f"{where}/{index}")
