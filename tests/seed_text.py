"""Reading the seed documents' text, for the tests that hold the seeds' examples to our
schemas and fixtures."""

from __future__ import annotations

import json
import re
from typing import Any


def json_examples(text: str) -> list[Any]:
    """Every JSON object of a seed text: fenced ```json blocks, and bare objects that start
    on a line of their own with ``{`` and end on one with ``}`` (seed 001 writes them
    unfenced)."""
    fenced = re.findall(r"```json\n(.*?)```", text, re.S)
    if fenced:
        return [json.loads(block) for block in fenced]
    examples: list[Any] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() == "{":
            end = next(e for e in range(index + 1, len(lines)) if lines[e].strip() == "}")
            examples.append(json.loads("\n".join(lines[index : end + 1])))
            index = end
        index += 1
    return examples
