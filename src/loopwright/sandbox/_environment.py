"""A task's built environment as commands use it, and the generic way a sandbox runs in one.

`TaskEnvironment` is what a build left in the cache (sandbox/_envcache.py), seen from the run:
the virtualenv's prefix, the Python installation it was made from, the task's variables and the
workspace directories its editable installs map. `Sandbox.within(environment, workspace)` gives a
sandbox whose commands run in it: the environment's `bin/` first on PATH, `VIRTUAL_ENV` set, the
task's variables, the environment shown read-only. `EnvironmentSandbox` does that for any
sandbox that takes an environment mapping (the local one); bubblewrap also binds the workspace at
the fixed path `WORKDIR` (see `BubblewrapSandbox.within`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from loopwright.sandbox._base import (
    FALLBACK_PATH,
    CommandResult,
    RunRequest,
    Sandbox,
    host_path,
    with_defaults,
)

__all__ = ["WORKDIR", "EnvironmentSandbox", "TaskEnvironment", "environment_variables"]

WORKDIR = PurePosixPath("/testbed")
"""Where the workspace appears to commands that run in a task environment under bubblewrap, in
every run (as SWE-bench's `/testbed`); the environment's editable installs were made there."""


@dataclass(frozen=True, slots=True)
class TaskEnvironment:
    """A built task environment: a virtualenv at `prefix` made from the Python installed at
    `base_prefix`. `variables` are the task's `[environment] env`; `editable_roots` are the
    workspace directories (relative, "" for the root) its editable installs import from, put on
    `sys.path` in every run so that the workspace's code is imported even where the workspace
    cannot sit at `WORKDIR`. `key` is the cache key it was built under. Read-only once built.

    `image` set: the environment was built into that container image (sandbox/_envimages.py);
    `prefix` and `base_prefix` are paths inside it, and its containers mount the workspace at
    `workdir`, where the image's editable installs were made."""

    key: str
    prefix: Path
    base_prefix: Path
    variables: tuple[tuple[str, str], ...] = ()
    editable_roots: tuple[str, ...] = ()
    image: str | None = None
    workdir: str | None = None

    @property
    def python(self) -> str:
        """The environment's interpreter (`<prefix>/bin/python`)."""
        return str(self.prefix / "bin" / "python")

    @property
    def shown(self) -> list[Path]:
        """The host directories a sandbox must show read-only for the environment to work (none
        for an environment inside an image)."""
        if self.image is not None:
            return []
        found = [self.prefix]
        if self.base_prefix != Path("/") and not self.base_prefix.is_relative_to(self.prefix):
            found.append(self.base_prefix)
        return found

    def import_paths(self, workspace: str) -> list[str]:
        """The workspace (as a command sees it) and its editable roots, in that order."""
        roots = [f"{workspace}/{root}" for root in self.editable_roots if root]
        return [workspace, *roots]


def environment_variables(
    environment: TaskEnvironment,
    env: Mapping[str, str] | None,
    *,
    workspace: str,
    home: str | None,
) -> dict[str, str]:
    """The variables of a command run in `environment`. Deterministic given the parent's PATH.

    `env` None: LANG, PYTHONDONTWRITEBYTECODE, PYTHONHASHSEED as in a plain sandbox; a mapping:
    its items. Then the task's variables (never overriding the caller's), `VIRTUAL_ENV`, PATH
    with the environment's `bin/` first (then the caller's PATH, else the parent's, never
    loopwright's own interpreter; in an image, the caller's or a standard one), PYTHONPATH with the editable roots under `workspace` (unless
    the caller set one; the grader runs `python -I`, which ignores it), and HOME=`home` when given
    and the caller named none (None leaves it to the sandbox)."""
    built = with_defaults(env, {})
    for name, value in environment.variables:
        built.setdefault(name, value)
    host = host_path() if environment.image is None else FALLBACK_PATH  # not the image's
    rest = built.get("PATH") or host
    built["PATH"] = os.pathsep.join([str(environment.prefix / "bin"), rest])
    built["VIRTUAL_ENV"] = str(environment.prefix)
    roots = environment.import_paths(workspace)[1:]
    if roots:
        built.setdefault("PYTHONPATH", os.pathsep.join(roots))
    if home is not None:
        built.setdefault("HOME", home)
    return built


class EnvironmentSandbox(Sandbox):
    """`inner` with every command run in `environment` (see `environment_variables`), the
    environment's directories passed as read-only paths. The workspace stays at its own path,
    so editable installs reach it through `editable_roots` on PYTHONPATH and the grader's
    `sys.path` (docs/sandbox.md, "Task environments"). Name and isolation are `inner`'s."""

    def __init__(self, inner: Sandbox, environment: TaskEnvironment, workspace: Path) -> None:
        self.inner = inner
        self.environment = self._placed = environment
        self.workspace = workspace
        self.name = inner.name
        self.isolated = inner.isolated
        self.channels = inner.channels

    def _execute(self, request: RunRequest) -> CommandResult:
        """The command runs in the environment, through `inner.run` (which checks it again)."""
        variables = environment_variables(
            self._placed, request.env, workspace=str(self.workspace), home=None
        )
        return self.inner.run(
            request.argv,
            cwd=request.cwd,
            timeout_s=request.timeout_s,
            writable=request.writable,
            readonly=[*request.readonly, *self._placed.shown],
            env=variables,
            output_cap=request.output_cap,
            network=request.network,
            stdin=request.stdin,
            channel=request.channel,
        )

    def relay_dir(self, workspace: Path) -> tuple[Path, str] | None:
        """`inner`'s (the environment does not change where sockets are seen)."""
        return self.inner.relay_dir(workspace)

    def close(self) -> None:
        """Nothing to release: `inner` belongs to the caller."""
