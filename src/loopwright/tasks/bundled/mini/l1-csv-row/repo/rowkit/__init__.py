"""rowkit: single-line CSV-style rows."""

__version__ = "0.2.0"
