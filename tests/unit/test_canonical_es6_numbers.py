"""100,000 doubles in ECMAScript ``Number.prototype.toString`` form, on both paths.

The doubles come from a deterministic generator written twice: in Python here
(``generated_doubles``) and in JavaScript (``GENERATOR_JS``), which prints
``HEX,TEXT`` lines with ``String(x)`` as Node.js computes it.  The SHA-256 of
Node's 100,000 lines is pinned below (``NODE_LINES_SHA256``); the test writes
the same lines with ``canonical_bytes`` and compares digests, both for the bare
number (the root-float path) and for the number inside an array (the orjson
path with its notation rewrite).  The generator leans on the places where
notations differ: integral values, 1e16..1e21, 1e-6..1e-5, neighbours of the
thresholds a few units in the last place away, subnormals and short decimals.

With Node.js on the path, ``test_node_agrees_today`` re-runs the JavaScript and
compares line by line, so the pinned digest can be re-derived.
"""

from __future__ import annotations

import hashlib
import shutil
import struct
import subprocess
from collections.abc import Iterator

import pytest
import rfc8785

from session_contracts.jsontext.canonical import canonical_bytes, exact_bytes

COUNT = 100_000
NODE_LINES_SHA256 = "5cee13fb2f5e181c939f169437ac357a2bdef407a9dfecc8b749f54e0e3c5b55"
_BASES = (
    1e21, 1e-6, 1e-7, 1e16, 1e-5, 2.0**53, 1e15, 1e20, 1e-4, 1.0, 0.1, 5e-324,
    2.2250738585072014e-308, 1.7976931348623157e308,
)  # fmt: skip
_MASK_64 = (1 << 64) - 1

GENERATOR_JS = r"""
const crypto = require("crypto");
const count = Number(process.argv[2] || 100000);
const BASES = [1e21, 1e-6, 1e-7, 1e16, 1e-5, 2 ** 53, 1e15, 1e20, 1e-4, 1, 0.1, 5e-324,
  2.2250738585072014e-308, 1.7976931348623157e308];
const view = new DataView(new ArrayBuffer(8));
const bitsOf = (x) => { view.setFloat64(0, x); return view.getBigUint64(0); };
const fromBits = (b) => { view.setBigUint64(0, b); return view.getFloat64(0); };
const M64 = (1n << 64n) - 1n;
const lines = [];
for (let i = 0; i < count; i++) {
  const digest = crypto.createHash("sha256").update("session-contracts es6 numbers " + i).digest();
  const bits = digest.readBigUInt64BE(0);
  const sign = (digest[8] & 1) ? (1n << 63n) : 0n;
  let pattern;
  switch (i % 8) {
    case 4: pattern = bitsOf(Number(bits >> 11n)) | sign; break;
    case 5: {
      const base = bitsOf(BASES[Number(bits % BigInt(BASES.length))]);
      let b = base + ((bits >> 8n) % 129n) - 64n;
      if (b < 0n) b = -b;
      if ((b >> 52n) >= 0x7ffn) b = base;
      pattern = b | sign; break;
    }
    case 6: pattern = (bits & ((1n << 52n) - 1n)) | sign; break;
    case 7: {
      const digits = 1n + (bits >> 60n) % 17n;
      const mantissa = bits % (10n ** digits);
      const exponent = Number((bits >> 40n) % 61n) - 30;
      pattern = bitsOf(Number(mantissa.toString() + "e" + exponent)) | sign; break;
    }
    default: {
      pattern = bits;
      if (((pattern >> 52n) & 0x7ffn) === 0x7ffn) pattern &= ~(1n << 62n);
    }
  }
  pattern &= M64;
  lines.push(pattern.toString(16) + "," + String(fromBits(pattern)));
}
process.stdout.write(lines.join("\n") + "\n");
"""


def _bits_of(number: float) -> int:
    bits: int = struct.unpack(">Q", struct.pack(">d", number))[0]
    return bits


def _from_bits(bits: int) -> float:
    number: float = struct.unpack(">d", struct.pack(">Q", bits))[0]
    return number


def generated_doubles(count: int = COUNT) -> list[int]:
    """The bit patterns of GENERATOR_JS, in order."""
    patterns = []
    for index in range(count):
        digest = hashlib.sha256(f"session-contracts es6 numbers {index}".encode()).digest()
        bits = int.from_bytes(digest[:8], "big")
        sign = 1 << 63 if digest[8] & 1 else 0
        kind = index % 8
        if kind == 4:
            pattern = _bits_of(float(bits >> 11)) | sign
        elif kind == 5:
            base = _bits_of(_BASES[bits % len(_BASES)])
            shifted = abs(base + (bits >> 8) % 129 - 64)
            pattern = (base if shifted >> 52 >= 0x7FF else shifted) | sign
        elif kind == 6:
            pattern = (bits & ((1 << 52) - 1)) | sign
        elif kind == 7:
            digits = 1 + (bits >> 60) % 17
            mantissa = bits % 10**digits
            exponent = (bits >> 40) % 61 - 30
            pattern = _bits_of(float(f"{mantissa}e{exponent}")) | sign
        else:
            pattern = bits
            if (pattern >> 52) & 0x7FF == 0x7FF:
                pattern &= ~(1 << 62)
        patterns.append(pattern & _MASK_64)
    return patterns


def _lines(texts: list[str], patterns: list[int]) -> bytes:
    return "".join(
        f"{pattern:x},{text}\n" for pattern, text in zip(patterns, texts, strict=True)
    ).encode("ascii")


def _first_wrong(patterns: list[int], texts: list[str]) -> list[tuple[str, str, str]]:
    """Where the lines differ from rfc8785 (an independent ES6 formatter), to show why."""
    wrong = []
    for pattern, text in zip(patterns, texts, strict=True):
        expected = rfc8785.dumps(_from_bits(pattern)).decode("ascii")
        if text != expected:
            wrong.append((f"{pattern:x}", expected, text))
    return wrong[:5]


@pytest.fixture(scope="module")
def patterns() -> list[int]:
    return generated_doubles()


def test_the_generator_covers_every_notation(patterns: list[int]) -> None:
    numbers = [_from_bits(pattern) for pattern in patterns]
    assert sum(1 for n in numbers if n.is_integer() and abs(n) < 1e16) > 10_000
    assert sum(1 for n in numbers if 1e16 <= abs(n) < 1e21) > 500
    assert sum(1 for n in numbers if 1e-6 <= abs(n) < 1e-5) > 100
    assert sum(1 for n in numbers if 0 < abs(n) < 2.2250738585072014e-308) > 10_000
    assert any(n == 0 and str(n) == "-0.0" for n in numbers)


def _chunks(patterns: list[int]) -> Iterator[list[float]]:
    """The patterns' numbers, a thousand at a time."""
    for start in range(0, len(patterns), 1000):
        yield [_from_bits(pattern) for pattern in patterns[start : start + 1000]]


def _assert_node_wrote(texts: list[str], patterns: list[int]) -> None:
    digest = hashlib.sha256(_lines(texts, patterns)).hexdigest()
    assert digest == NODE_LINES_SHA256, _first_wrong(patterns, texts)


def test_bare_numbers_match_node(patterns: list[int]) -> None:
    texts = [canonical_bytes(_from_bits(pattern)).decode("ascii") for pattern in patterns]
    _assert_node_wrote(texts, patterns)


def test_numbers_in_documents_match_node(patterns: list[int]) -> None:
    # A thousand numbers a document: the fast path rewrites each float token of
    # orjson's output; the result must be the same texts, comma-separated.
    texts: list[str] = []
    for chunk in _chunks(patterns):
        written = canonical_bytes({"n": chunk}).decode("ascii")
        assert written.startswith('{"n":[')
        assert written.endswith("]}")
        texts += written[6:-2].split(",")
    _assert_node_wrote(texts, patterns)


def test_the_exact_path_matches_node_too(patterns: list[int]) -> None:
    texts: list[str] = []
    for chunk in _chunks(patterns):
        texts += exact_bytes(chunk).decode("ascii")[1:-1].split(",")
    _assert_node_wrote(texts, patterns)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_node_agrees_today(patterns: list[int]) -> None:
    node = shutil.which("node")
    assert node is not None
    result = subprocess.run(
        [node, "-e", GENERATOR_JS, "--", str(COUNT)],
        capture_output=True,
        check=True,
        timeout=300,
    )
    assert hashlib.sha256(result.stdout).hexdigest() == NODE_LINES_SHA256
    first = [line.split(b",")[0] for line in result.stdout.splitlines()[:1000]]
    assert first == [f"{pattern:x}".encode() for pattern in patterns[:1000]]
