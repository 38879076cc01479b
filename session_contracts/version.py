"""The package version: one place, read by the package and by the reference producer's hello."""

__all__ = ["__version__"]

__version__ = "0.1.0"
