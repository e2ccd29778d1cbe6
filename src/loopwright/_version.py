"""The package version: a leaf module, so any layer (store, evaluation, search) can record it
without importing the package root. pyproject.toml's `version` is the same string."""

__version__ = "0.1.0"
