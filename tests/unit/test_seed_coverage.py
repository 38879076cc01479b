"""docs/seed-coverage.md is generated from the tests' sentence marks (tests/seed_coverage.py);
every mark names sentences of conformance/fixtures/sentences.json."""

from __future__ import annotations

import ast

from seed_coverage import (
    REPO,
    SEEDS,
    SENTENCE_MARK,
    marked_tests,
    marks_named,
    page,
    sentences,
)


def test_the_page_is_generated_from_the_marks() -> None:
    written = (REPO / "docs" / "seed-coverage.md").read_text(encoding="utf-8")
    assert written == page(), "run: python tests/seed_coverage.py > docs/seed-coverage.md"


def test_every_sentence_mark_names_sentences_of_sentences_json() -> None:
    known = {sentence["id"] for sentence in sentences()}
    wrong = []
    for file, line, mark in marks_named(SENTENCE_MARK):
        args = mark.args if isinstance(mark, ast.Call) and not mark.keywords else []
        ids = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not ids or len(ids) != len(args) or set(ids) - known:
            wrong.append(f"{file}:{line}: {ast.unparse(mark)}")
    assert wrong == [], "each mark names one or more ids of conformance/fixtures/sentences.json"


def test_the_page_reads_every_sentence_mark() -> None:
    # A mark on a method, a class or a pytestmark would be missed by the page.
    assert len(list(marked_tests())) == len(list(marks_named(SENTENCE_MARK)))


def test_no_test_carries_a_seed_mark() -> None:
    found = [f"{file}:{line}" for file, line, _ in marks_named("pytest.mark.seed")]
    assert found == [], "mark the sentences a test proves: @pytest.mark.sentence(...)"


def test_every_seed_has_sentences_with_tests() -> None:
    marked = {sentence_id for _, _, ids in marked_tests() for sentence_id in ids}
    seeds = {sentence["seed"] for sentence in sentences()}
    assert seeds == set(SEEDS)
    assert seeds == {sentence["seed"] for sentence in sentences() if sentence["id"] in marked}
