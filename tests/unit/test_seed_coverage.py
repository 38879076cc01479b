"""docs/seed-coverage.md is generated from the tests' seed marks (tests/seed_coverage.py)."""

from __future__ import annotations

from seed_coverage import REPO, SEEDS, marked_tests, page


def test_the_page_is_generated_from_the_marks() -> None:
    written = (REPO / "docs" / "seed-coverage.md").read_text(encoding="utf-8")
    assert written == page(), "run: python tests/seed_coverage.py > docs/seed-coverage.md"


def test_every_seed_has_marked_tests_and_every_mark_names_a_seed() -> None:
    marked = list(marked_tests())
    assert {seed for _, _, seeds in marked for seed in seeds} == set(SEEDS)
