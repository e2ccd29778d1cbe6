"""The exception tree of loopwright.

    LoopwrightError                 root of every error loopwright raises on purpose
    ├── UserError                   the user can fix it; the CLI prints it without a traceback, exit 2
    │   ├── ConfigError             a config, workflow, task or benchmark is malformed or unknown
    │   ├── UsageError              a command was called in a way that cannot work
    │   └── MissingDependencyError  an optional package or system tool is not installed
    ├── RunAbortedError             the run cannot go on (its Ray cluster is gone); the CLI prints it and how
    │                               to resume, without a traceback, exit 1
    ├── SandboxError                a command could not be started in the sandbox (not a failing command)
    ├── ModelUnavailableError       no call to the run's model succeeded: the run stops, exit 1
    └── ModelError                  a model call failed (loopwright.models; recorded, never fatal to a run)
        └── ScriptExhaustedError    a ScriptedModel was called beyond its script

A failing task run is data (a record with an error and a score), never one of these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "ConfigError",
    "LoopwrightError",
    "MissingDependencyError",
    "ModelUnavailableError",
    "RunAbortedError",
    "SandboxError",
    "UsageError",
    "UserError",
    "validation_problems",
]


class LoopwrightError(Exception):
    """Root of every error loopwright raises on purpose."""


class UserError(LoopwrightError):
    """An error the user can fix. Its message says what was wrong, what was got, and how to fix it."""

    def __init__(self, what: str, *, got: str | None = None, fix: str | None = None) -> None:
        self.what = what
        self.got = got
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        """The message as printed to a person: what, then what was got, then how to fix it."""
        lines = [self.what]
        if self.got:
            lines.append(f"  got: {self.got}")
        if self.fix:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


class ConfigError(UserError):
    """A config, workflow, task or benchmark is malformed, or names something unknown."""

    @classmethod
    def not_utf8(cls, what: str, exc: UnicodeDecodeError, *, fix: str) -> ConfigError:
        """`what` (the file as the user named it, e.g. "script file PATH") is not UTF-8 text
        (binary): the error, with the first byte that does not decode and its offset."""
        byte = exc.object[exc.start : exc.start + 1]
        return cls(f"{what} is not UTF-8 text", got=f"byte {byte!r} at offset {exc.start}", fix=fix)

    @classmethod
    def invalid(cls, what: str, exc: ValidationError, *, fix: str | None = None) -> ConfigError:
        """`what` (a file as the user named it, e.g. "manifest PATH") does not validate: the
        error, with every problem `validation_problems` lists."""
        return cls(f"{what} is invalid", got=validation_problems(exc), fix=fix)


class UsageError(UserError):
    """A command or function was called in a way that cannot work."""


class MissingDependencyError(UserError):
    """An optional Python package or a system tool that this feature needs is not installed."""


class RunAbortedError(LoopwrightError):
    """The run cannot go on through no fault of its input (the Ray cluster's head node is
    gone). What was finished is kept; `resume` is the command that continues the run (the
    CLI fills it in)."""

    def __init__(self, what: str, *, resume: str | None = None) -> None:
        self.what = what
        self.resume = resume
        super().__init__(self.render())

    def render(self) -> str:
        """The message as printed to a person: what happened, then how to resume."""
        return self.what + (f"\n  resume: {self.resume}" if self.resume else "")


class SandboxError(LoopwrightError):
    """A command could not be started in the sandbox at all (as opposed to a command that failed)."""


class ModelUnavailableError(LoopwrightError):
    """No call to the run's model succeeded in the first runs (a bad key, an unknown model, a
    server that is down): the run stops instead of recording a landscape of zeros. The message
    carries the first error (redacted); the CLI prints it and exits 1."""


def validation_problems(exc: ValidationError) -> str:
    """Every problem of a pydantic validation error as `field.path: message`, joined by "; "."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
