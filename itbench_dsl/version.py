"""The package's version: one home, read by the build (pyproject.toml), the face and every output that names it."""

__version__ = "0.1.0"
