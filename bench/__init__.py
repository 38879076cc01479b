"""Benchmarks: `nox -s bench` (or `python -m bench`). Medians of several runs,
printed as ratios against the peer measured in the same run."""
