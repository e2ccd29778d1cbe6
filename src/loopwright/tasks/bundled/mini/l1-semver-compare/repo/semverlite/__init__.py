"""semverlite: Semantic Versioning 2.0.0 versions, parsed and bumped."""

from semverlite.version import Version, parse

__all__ = ["Version", "parse"]
