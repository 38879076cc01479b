"""The doubles of docs/vectors/number-spellings.json, each with its spelling in RFC 8785 and
in Harn's canonical JSON: the tests of both forms read the one table producers check
themselves against."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import NamedTuple

VECTORS = Path(__file__).resolve().parents[1] / "docs" / "vectors" / "number-spellings.json"


class NumberSpelling(NamedTuple):
    number: float
    rfc8785: str
    harn: str


def number_spellings() -> list[NumberSpelling]:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
    return [
        NumberSpelling(struct.unpack(">d", bytes.fromhex(v["bits"]))[0], v["rfc8785"], v["harn"])
        for v in vectors
    ]
