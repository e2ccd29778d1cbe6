"""LocalSandbox: run the command directly, with the shared timeout, output cap and clean env."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from loopwright.sandbox._base import (
    DEFAULT_OUTPUT_CAP,
    CommandResult,
    Sandbox,
    build_env,
    check_command,
    resolve_dir,
    resolve_existing,
)
from loopwright.sandbox._process import run_process, to_result

__all__ = ["LocalSandbox"]


class LocalSandbox(Sandbox):
    """No isolation: the command runs as the current user with the whole filesystem and the
    network reachable. It still gets a clean environment (no parent secrets), a private,
    fresh HOME (removed afterwards), a wall-clock timeout that kills its process group, and
    an output cap. `writable` and `network` are checked but cannot be enforced.
    """

    name = "local"
    isolated = False

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout_s: float,
        writable: Sequence[Path] = (),
        readonly: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        network: bool = False,
        stdin: str | None = None,
    ) -> CommandResult:
        """See `Sandbox.run`. The command runs in the resolved `cwd`."""
        workdir = resolve_dir(cwd, "cwd")
        for path in writable:
            resolve_existing(path, "writable path")
        home = tempfile.mkdtemp(prefix="lw-home-") if env is None or "HOME" not in env else ""
        try:
            full_env = build_env(env, home=home)
            args = check_command(
                argv, cwd=workdir, path=full_env["PATH"], timeout_s=timeout_s, output_cap=output_cap
            )
            outcome = run_process(
                args,
                cwd=workdir,
                env=full_env,
                timeout_s=timeout_s,
                output_cap=output_cap,
                stdin=stdin.encode() if stdin is not None else None,
            )
        finally:
            if home:
                shutil.rmtree(home, ignore_errors=True)
        return to_result(args, outcome, self.name)
