"""loopwright: find better LLM agent workflows by measurement instead of judgement."""

from __future__ import annotations

from loopwright.errors import (
    ConfigError,
    LoopwrightError,
    MissingDependencyError,
    SandboxError,
    UsageError,
    UserError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "LoopwrightError",
    "MissingDependencyError",
    "SandboxError",
    "UsageError",
    "UserError",
    "__version__",
]
