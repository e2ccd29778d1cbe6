"""LocalSandbox: run the command directly, with the shared timeout, output cap and clean env, under
the process reaper so that nothing the command starts outlives it."""

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

    On Linux every command runs under the process reaper (`run_process(reap=True)`): when `run`
    returns, every process the command started is dead, daemons that called `setsid()` or
    double-forked included, whether the command exited (with any code) or was killed at its
    timeout. This costs one extra interpreter start (`python -I -S`, about 15 ms; see
    bench/local_reaper.py). The reaper runs as the same user, so a command that kills it (`kill -9
    $PPID`) falls back to the protection without it: its process group is killed, orphans that
    left it survive. Elsewhere (no prctl, no /proc) the reaper is not used, with that same
    fallback. `reap = False` (a subclass attribute) turns it off, to measure what it costs.
    """

    name = "local"
    isolated = False
    reap: bool = True

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
                reap=self.reap,
            )
        finally:
            if home:
                shutil.rmtree(home, ignore_errors=True)
        return to_result(args, outcome, self.name)
