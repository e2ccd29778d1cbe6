"""Run a brief's hidden checks against a workspace: a standalone script, standard library only.

Started by `loopwright.harness._checks` as `python -I -S -c <this file> WORKSPACE SECONDS`
inside the sandbox, with a nonce line and then the source of the brief's checks.py on stdin
(the checks live outside the workspace, so the loop could neither read nor weaken them, and
no path of theirs needs to be visible in the sandbox). It puts WORKSPACE last on sys.path
(after the standard library, so that nothing in the workspace can shadow a module this script
or the checks import from there), runs the checks' source as a module, calls every top-level
`check_*` function in file order with a per-check time limit, and prints one line: the nonce
followed by `{"checks": [{"name", "passed", "error"}]}`. The nonce lets the harness tell its own report from anything the
produced code printed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from types import FrameType, ModuleType

_ERROR_CHARS = 600


class _CheckTimeout(BaseException):
    """Raised by the alarm when one check runs past its limit."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise _CheckTimeout


def _load(source: str) -> ModuleType:
    module = ModuleType("loopwright_hidden_checks")
    module.__file__ = "checks.py"
    exec(compile(source, "checks.py", "exec"), module.__dict__)
    return module


def _run_one(function: object, seconds: float) -> str | None:
    """None when the check passed, else why it failed."""
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        if not callable(function):
            return "not callable"
        function()
    except _CheckTimeout:
        return f"timed out after {seconds:g}s"
    except BaseException as exc:  # noqa: BLE001  produced code may raise anything, even SystemExit
        lines = traceback.format_exception_only(type(exc), exc)
        return "".join(lines).strip()[-_ERROR_CHARS:] or type(exc).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return None


def main(argv: list[str]) -> int:
    nonce = sys.stdin.readline().strip()
    source = sys.stdin.read()
    workspace, seconds = argv[1], float(argv[2])
    sys.dont_write_bytecode = True
    sys.path.append(workspace)
    signal.signal(signal.SIGALRM, _on_alarm)
    module = _load(source)
    results = []
    for name, function in list(vars(module).items()):
        if name.startswith("check_") and callable(function):
            error = _run_one(function, seconds)
            results.append({"name": name, "passed": error is None, "error": error})
    # Produced code may have replaced sys.stdout or registered exit hooks: write to the real
    # descriptor and leave without running them.
    os.write(1, (nonce + json.dumps({"checks": results}) + "\n").encode())
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
