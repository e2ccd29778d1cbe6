"""Run a brief's hidden checks against a workspace: a standalone script, standard library only.

Started by `loopwright.harness._checks` as `python -I -S -B -c <this file> WORKSPACE SECONDS`
inside the sandbox (isolated: no site, so no sitecustomize or .pth file of anyone's runs), with
three lines and then the source of the brief's checks.py on stdin: a nonce, the check names
(JSON, in file order, read statically by the harness) and the canaries (JSON: name -> "passed"
or "failed", and `n`). The checks live outside the workspace, so the loop could neither read
nor weaken them. WORKSPACE goes last on sys.path (after the standard library, so that nothing
in it can shadow a module this script or the checks import from there); the checks' source
runs as a module; every named check is called in order with a per-check time limit, then the
two canary checks; one line is printed: the nonce followed by
`{"checks": [{"name", "passed", "error"}], "canaries": {name: outcome}, "tamper": [finding]}`.

The produced code runs in this process, so it is watched like the grader's pytest guard does:
- what the report depends on (this script's functions, `os.write`, `json.dumps`...) is bound
  before any workspace code runs, so replacing a module attribute cannot change the report;
- after every check, the functions of this script, of the modules it uses, of `builtins` and
  the checks themselves (and their code objects) are compared with what they were: a
  replacement is a tamper finding;
- a must-pass and a must-fail canary (random names, their own arithmetic) run after the
  checks: outcomes forged wholesale show on them, and a report written by the code under test
  (the nonce stolen from this process) must get them right as well.
The nonce lets the harness tell its own report from anything the produced code printed. A
determined attacker in this process can still defeat all of this; docs/ab.md says what remains.
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import CodeType, FrameType, ModuleType

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


def _canaries(n: int) -> dict[str, Callable[[], None]]:
    """The canary checks by expected outcome. Must pass: arithmetic holds and a false assert
    still fails. Must fail: an assert of a falsehood."""

    def must_pass() -> None:
        if sum(range(n)) != n * (n - 1) // 2:
            raise AssertionError("arithmetic is broken")
        try:
            assert n == n + 1
        except AssertionError:
            return
        raise AssertionError("a false assert passed")

    def must_fail() -> None:
        assert sum(range(n)) != n * (n - 1) // 2, "loopwright canary: must fail"

    return {"passed": must_pass, "failed": must_fail}


_Entry = tuple[dict[str, object], str, object]


def _watched(*spaces: ModuleType) -> list[_Entry]:
    """(namespace, name, value) for every callable a module holds now, dunders aside."""
    found = []
    for space in spaces:
        mapping = vars(space)
        for name, value in list(mapping.items()):
            if not name.startswith("__") and callable(value):
                found.append((mapping, name, value))
    return found


def _replaced(
    entries: list[_Entry], codes: dict[str, tuple[object, CodeType | None]]
) -> str | None:
    """What was replaced since the entries were taken, or None."""
    for mapping, name, value in entries:
        if mapping.get(name) is not value:
            owner = mapping.get("__name__", "?")
            return f"{owner}.{name} was replaced"
    for name, (function, code) in codes.items():
        if getattr(function, "__code__", None) is not code:
            return f"the code of hidden check {name} was replaced"
    return None


def main(argv: list[str]) -> int:
    # Bound before any workspace code runs: what the report depends on.
    write, leave, dumps, loads, run_one = os.write, os._exit, json.dumps, json.loads, _run_one
    read_line, read_rest = sys.stdin.readline, sys.stdin.read
    nonce = read_line().strip()
    names: list[str] = loads(read_line())
    canary_spec = loads(read_line())
    source = read_rest()
    workspace, seconds = argv[1], float(argv[2])
    sys.dont_write_bytecode = True
    entries = _watched(sys.modules[__name__], json, os, signal, traceback, builtins)
    sys.path.append(workspace)
    signal.signal(signal.SIGALRM, _on_alarm)
    module = _load(source)
    checks = {name: vars(module).get(name) for name in names}
    codes = {name: (f, getattr(f, "__code__", None)) for name, f in checks.items()}
    entries += [(vars(module), name, function) for name, function in checks.items()]
    results, tamper = [], []
    for name, function in checks.items():
        error = run_one(function, seconds)
        results.append({"name": name, "passed": error is None, "error": error})
        finding = _replaced(entries, codes)
        if finding is not None:
            tamper.append(f"{finding} (noticed after {name})")
            break
    by_outcome = _canaries(int(canary_spec["n"]))
    seen = {}
    for name, expected in canary_spec["canaries"].items():
        seen[name] = "passed" if run_one(by_outcome[expected], seconds) is None else "failed"
    # Produced code may have replaced sys.stdout or registered exit hooks: write to the real
    # descriptor and leave without running them.
    report = {"checks": results, "canaries": seen, "tamper": tamper}
    write(1, (nonce + dumps(report) + "\n").encode())
    leave(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
