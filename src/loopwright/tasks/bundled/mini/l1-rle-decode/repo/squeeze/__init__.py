"""squeeze: run-length encoding for text."""

__version__ = "0.3.0"
