"""mypy on the package as the build maps it: ``python tests/typecheck.py [MYPY OPTIONS]``.

The design's top-level folders (conformance/, generator/, generated/, schemas/) are mapped
into ``session_contracts`` by pyproject.toml's ``[tool.setuptools]`` ``packages`` and
``package-dir``; the checkout holds no symlinks.  ``mypy -p session_contracts`` cannot follow
that map: mypy names a module after the folders that hold its file, and it does not run the
import hook of setuptools' editable install.  setuptools' strict editable mode
(``editable_mode=strict``) would give mypy a tree of links to find, but builds it in the
checkout's build/ folder, and nothing built lands in the source tree.  So this script gives
mypy every module of the map by name and file (the same list ``-p`` gives it when the
folders sit inside the package), with the options of pyproject.toml's ``[tool.mypy]``:
no links, no copies, and findings name the files of the checkout.
"""

from __future__ import annotations

import os
import sys
import time

from mypy import util
from mypy.fscache import FileSystemCache
from mypy.main import process_options, run_build
from mypy.modulefinder import BuildSource
from package_modules import REPO, module_files

TOP = "session_contracts"


def main(argv: list[str]) -> int:
    """mypy's own entry point (mypy.main.main), given the sources by name and file."""
    started = time.time()
    os.chdir(REPO)  # pyproject.toml's [tool.mypy], and file names relative to the checkout
    fscache = FileSystemCache()
    # `-p` only to satisfy the option parser; the sources are the map's.
    _, options = process_options([*argv, "-p", TOP], fscache=fscache)
    sources = [BuildSource(str(path.relative_to(REPO)), module) for module, path in module_files()]
    _, messages, blockers = run_build(sources, options, fscache, started, sys.stdout, sys.stderr)
    errors, notes, files = util.count_stats(messages)
    failed = bool(messages) and notes < len(messages)
    if options.error_summary:
        formatter = util.FancyFormatter(sys.stdout, sys.stderr, options.hide_error_codes)
        color = options.color_output
        print(
            formatter.format_error(errors, files, len(sources), blockers=blockers, use_color=color)
            if failed
            else formatter.format_success(len(sources), color)
        )
    return (2 if blockers else 1) if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
