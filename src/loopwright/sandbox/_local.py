"""LocalSandbox: run the command directly, with the shared timeout, output cap and clean env, under
the process reaper so that nothing the command starts outlives it."""

from __future__ import annotations

import shutil
import tempfile

from loopwright.sandbox._base import CommandResult, RunRequest, Sandbox, build_env, check_binary
from loopwright.sandbox._process import run_process, to_result

__all__ = ["LocalSandbox"]


class LocalSandbox(Sandbox):
    """No isolation: the command runs as the current user with the whole filesystem and the
    network reachable. It still gets a clean environment (no parent secrets), a private,
    fresh HOME (removed afterwards), a wall-clock timeout that kills its process group, and
    an output cap. `writable`, `readonly` and `network` are checked but cannot be enforced.

    On Linux every command runs under the process reaper (`run_process(reap=True)`): when `run`
    returns, every process the command started is dead, daemons that called `setsid()` or
    double-forked included, whether the command exited (with any code) or was killed at its
    timeout. Where the host adopts (below) and `setpriv` exists, the reaper is a shell and this
    process (`run_process`, host-reaped: about 4 ms of CPU for a `true`); else one extra
    interpreter start (`python -I -S`, about 10-15 ms; see bench/local_reaper.py). The reaper
    runs as the same user, so a command can kill it (`kill -9 $PPID`). For that case this process is a child subreaper itself while a command runs, and
    the command runs with no_new_privs (setuid programs gain nothing): what the command orphaned
    is adopted by this process, known by that flag, and killed before `run` returns, whatever it
    dropped; and every process still holding the command's output pipes or its private HOME is
    killed too (sandbox/_strays.py). Where this process cannot adopt (it has no_new_privs
    already), a daemon that closed its pipes and replaced its environment survives. Elsewhere (no
    prctl, no /proc) the reaper is not used: its process group is killed, orphans that left it
    survive. Subclass attributes: `reap = False` turns the reaper off (to measure what it costs),
    `adopt = False` only the adoption (the command then keeps setuid).
    """

    name = "local"
    isolated = False
    reap: bool = True
    adopt: bool = True

    def _execute(self, request: RunRequest) -> CommandResult:
        """The command runs in the resolved `cwd`, with a fresh HOME unless `env` names one."""
        env = request.env
        home = tempfile.mkdtemp(prefix="lw-home-") if env is None or "HOME" not in env else ""
        try:
            full_env = build_env(env, home=home)
            check_binary(request.argv, cwd=request.cwd, path=full_env["PATH"])
            outcome = run_process(
                request.argv,
                cwd=request.cwd,
                env=full_env,
                timeout_s=request.timeout_s,
                output_cap=request.output_cap,
                stdin=request.stdin_bytes,
                reap=self.reap,
                adopt=self.adopt,
                channel=request.channel,
                marker=f"HOME={home}" if home else None,
            )
        finally:
            if home:
                shutil.rmtree(home, ignore_errors=True)
        return to_result(request.argv, outcome, self.name)
