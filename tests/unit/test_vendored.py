"""The vendored copies in tests/vectors/ still equal ../shared, when it is beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
VENDORED = REPO / "tests" / "vectors"

PAIRS = [("vectors/jcs", "jcs"), ("seeds", "seeds")]


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize(("upstream", "copy"), PAIRS)
def test_vendored_copy_is_current(upstream: str, copy: str) -> None:
    if not (SHARED / upstream).is_dir():
        pytest.skip(f"{SHARED / upstream} is not beside the checkout: nothing to compare with")
    assert _files(VENDORED / copy) == _files(SHARED / upstream)


def test_the_vendored_data_is_there_and_keeps_its_notice() -> None:
    assert (VENDORED / "jcs" / "LICENSE-Apache-2.0.txt").is_file()
    assert (VENDORED / "jcs" / "es6-numbers-10k.txt").stat().st_size > 100_000
    assert len(list((VENDORED / "seeds").glob("00[0-3]_*.txt"))) == 4
