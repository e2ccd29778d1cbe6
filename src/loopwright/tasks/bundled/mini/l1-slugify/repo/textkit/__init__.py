"""textkit: small, dependency-free text utilities."""

__version__ = "0.4.1"
