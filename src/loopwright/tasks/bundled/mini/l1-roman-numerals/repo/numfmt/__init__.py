"""numfmt: formatting integers for people."""

__version__ = "1.2.0"
