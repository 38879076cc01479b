"""The one part of the build that is code: the optional C census, built outside the source tree.

Everything else about the package is declared in pyproject.toml.  ``session_contracts_c._speedups``
(session_contracts_c/_speedups.c, docs/hashing.md section 5) is optional: where no C compiler
is present the install still succeeds and ``session_contracts.accel`` runs its Python twin.

It is a module of its own top-level package, not of ``session_contracts``, so that an editable
install finds it without a build product in the checkout: setuptools' editable mode copies
built extensions beside their sources (``build_ext --inplace``), and the import hook of an
editable install searches a package only in its source folder.  Here the editable wheel carries
the built module instead (installed into site-packages, where ``session_contracts_c`` is a
namespace package), as a regular wheel does.  Compiling happens in setuptools' temporary build
folders (the editable and sdist-to-wheel builds use temporary directories).
"""

from __future__ import annotations

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildOutsideTheSourceTree(build_ext):
    """build_ext that never copies a built module into the checkout."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.inplace = False  # what editable mode sets: build into build_lib only

    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            return  # a regular wheel takes the modules from build_lib
        # The editable wheel is assembled from install's folder: put the modules there.
        wheel_root = Path(self.get_finalized_command("install").install_lib)
        for extension in self.extensions:
            built = Path(self.get_ext_fullpath(extension.name))
            if built.exists():  # absent when an optional module failed to build
                target = wheel_root / built.relative_to(self.build_lib)
                self.mkpath(str(target.parent))
                self.copy_file(str(built), str(target))


setup(
    ext_modules=[
        Extension(
            "session_contracts_c._speedups",
            sources=["session_contracts_c/_speedups.c"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": BuildOutsideTheSourceTree},
)
