"""Choosing a sandbox by name: `default_sandbox("auto" | "bubblewrap" | "local" | "docker")`.

The seam for new sandboxes is `_KINDS`: a name and a zero-argument factory that returns a
Sandbox or raises a UserError saying what to install. "docker" is DockerSandbox with the
settings of the LOOPWRIGHT_CONTAINER_* environment variables.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from rich.console import Console

from loopwright._caller import spoken
from loopwright.errors import ConfigError, MissingDependencyError
from loopwright.sandbox import _bwrap
from loopwright.sandbox._base import Sandbox
from loopwright.sandbox._docker import DockerSandbox
from loopwright.sandbox._local import LocalSandbox

__all__ = ["AUTO", "UNSANDBOXED_WARNING", "default_sandbox", "sandbox_kinds"]

AUTO = "auto"
UNSANDBOXED_WARNING = (
    "warning: bubblewrap is not available ({problem}): commands run UNSANDBOXED "
    "(network and files outside the workspace are reachable). {fix}"
)

_warned = False
_warn_lock = threading.Lock()


def _bubblewrap() -> Sandbox:
    if not _bwrap.bubblewrap_available():
        raise MissingDependencyError(
            "the bubblewrap sandbox was asked for but does not work here",
            got=_bwrap.bubblewrap_problem() or "the probe failed",
            fix=_fix_hint()
            + f"; or pass {spoken(repr('local') + ' as sandbox', '--sandbox local')} to run "
            "unsandboxed",
        )
    return _bwrap.BubblewrapSandbox()


_KINDS: dict[str, Callable[[], Sandbox]] = {
    "bubblewrap": _bubblewrap,
    "local": LocalSandbox,
    "docker": DockerSandbox,
}


def sandbox_kinds() -> list[str]:
    """The names `default_sandbox` accepts, "auto" first."""
    return [AUTO, *sorted(_KINDS)]


def default_sandbox(kind: str = AUTO) -> Sandbox:
    """The sandbox named `kind`.

    "auto": bubblewrap when it works here, else LocalSandbox after ONE loud warning on stderr
    per process saying commands run unsandboxed and how to install bubblewrap. "bubblewrap":
    MissingDependencyError when it does not work. "local": LocalSandbox, no warning. "docker":
    DockerSandbox from the LOOPWRIGHT_CONTAINER_* settings (MissingDependencyError without a
    working engine, ConfigError without a local image). Anything else: ConfigError listing the
    known kinds.
    """
    if kind == AUTO:
        if _bwrap.bubblewrap_available():
            return _bwrap.BubblewrapSandbox()
        _warn_unsandboxed()
        return LocalSandbox()
    factory = _KINDS.get(kind)
    if factory is None:
        raise ConfigError(
            f"unknown sandbox {kind!r}",
            got=kind,
            fix="choose one of: " + ", ".join(sandbox_kinds()),
        )
    return factory()


def _fix_hint() -> str:
    if "not on PATH" in (_bwrap.bubblewrap_problem() or "not on PATH"):
        return f"Install it: {_bwrap.INSTALL_HINT}"
    return (
        "bwrap is installed but cannot create a sandbox: enable unprivileged user namespaces "
        "(e.g. sysctl kernel.apparmor_restrict_unprivileged_userns=0) or run where bwrap works"
    )


def _warn_unsandboxed() -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    message = UNSANDBOXED_WARNING.format(
        problem=_bwrap.bubblewrap_problem() or "probe failed", fix=_fix_hint()
    )
    Console(file=sys.stderr, highlight=False, soft_wrap=True).print(
        message, style="bold red", markup=False
    )
