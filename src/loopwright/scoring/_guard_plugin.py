"""The grader's guard: a pytest plugin that watches the test run for forgery.

Never imported by loopwright itself. The grader copies this file into each grade's private,
read-only kit under a random module name and loads it with `-p` before pytest imports any
workspace code. Its settings are the JSON file beside it (same stem). It records, in a JSON file
the grader reads afterwards:
- that it started (written at import) and that pytest finished (written at unconfigure), with
  pytest's own exit status; or, at a normal exit before that (a usage error), that pytest did
  not finish. A run that ends with neither was cut short by the code under test;
- the outcome of each canary test (defined here under names the agent could not predict, and
  added after every other test): a must-pass canary that fails, or a must-fail canary that
  passes, means outcomes were forged wholesale;
- any pytest or unittest function or class replaced while the tests ran (checked before each
  report reaches the junit writer, and at the end).

The code under test runs in this same process, so a determined attacker can defeat this too;
docs/grading.md says what remains possible.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import unittest.case
from pathlib import Path
from types import ModuleType
from typing import Any

import _pytest.assertion.rewrite
import _pytest.junitxml
import _pytest.outcomes
import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.unittest
import pytest

# Test files are compiled from their source: a rewritten test module's bytecode cached in the
# workspace (which the code under test could forge mid-run) is never read.
_pytest.assertion.rewrite._read_pyc = lambda *args, **kwargs: None

_SETTINGS = json.loads(Path(__file__).with_suffix(".json").read_text(encoding="utf-8"))
_RECORD = Path(os.environ.pop("LOOPWRIGHT_GUARD_RECORD"))  # as the sandbox shows it
_CANARIES: dict[str, str] = _SETTINGS["canaries"]  # test name -> expected outcome
_N: int = _SETTINGS["n"]  # the canaries' arithmetic, so that no answer is a constant
# The workspace's conftest.py files after restore, relative to it (the rootdir, as shown here).
_CONFTESTS_IN_WORKSPACE: list[str] = _SETTINGS["conftests"]
_CONFTESTS: set[str] = set()  # their absolute paths, once the rootdir is known (configure)


def _namespaces() -> list[Any]:
    spaces: list[Any] = [
        pytest,
        _pytest.reports,
        _pytest.reports.TestReport,
        _pytest.reports.BaseReport,
        _pytest.runner,
        _pytest.runner.CallInfo,
        _pytest.junitxml,
        _pytest.junitxml.LogXML,
        _pytest.junitxml._NodeReporter,
        _pytest.outcomes,
        _pytest.python,
        _pytest.python.Function,
        _pytest.skipping,
        _pytest.unittest,
        _pytest.unittest.TestCaseFunction,
        unittest.case.TestCase,
    ]
    raises = sys.modules.get("_pytest.raises") or sys.modules.get("_pytest.python_api")
    if isinstance(raises, ModuleType):
        spaces.append(raises)
    return spaces


def _watched() -> list[tuple[Any, str, object]]:
    """Every function, class and descriptor the outcome of a test depends on: (the namespace's
    live attribute mapping, the name, the object it holds now)."""
    found = []
    for space in _namespaces():
        for name, value in list(vars(space).items()):
            if name.startswith("__") or not (
                callable(value) or isinstance(value, (property, staticmethod, classmethod))
            ):
                continue
            found.append((vars(space), name, value))
    return found


_ENTRIES = _watched()  # as they were when the guard loaded, before any workspace code
_STATE: dict[str, Any] = {
    "exitstatus": None,
    "tamper": [],
    "canaries": {},
    "config": None,
    "plugins": -1,
}
_VETTED: dict[int, object] = {}  # hook implementations already found legitimate, by id
# Where legitimate hook implementations live: the Python environment (read-only in the sandbox)
# and the kit. Not the workspace (but for its conftest.py files), not /tmp.
_TRUSTED = tuple(
    {
        os.path.join(os.path.abspath(place), "")  # noqa: PTH100, PTH118  prefixes as imported
        for base in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
        for place in (base, os.path.realpath(base))
    }
    | {os.path.join(os.path.dirname(os.path.abspath(__file__)), "")}  # noqa: PTH100, PTH118, PTH120
)
_RECORD.with_suffix(".started").write_text("started\n", encoding="utf-8")


def _exited() -> None:
    """At a normal interpreter exit: say so, unless pytest finished (then the record exists). A
    run that ends with neither record was cut short (`os._exit`, a signal)."""
    if not _RECORD.exists():
        _RECORD.write_text(json.dumps({"finished": False}), encoding="utf-8")


atexit.register(_exited)


def _check(where: str, *, full: bool = False) -> None:
    if _STATE["tamper"]:
        return  # the first finding is the evidence; later ones follow from it
    for namespace, name, original in _ENTRIES:
        if namespace.get(name) is not original:
            owner = namespace.get("__qualname__") or namespace.get("__name__")
            _STATE["tamper"].append(f"{owner}.{name} was replaced (noticed {where})")
            return
    config = _STATE["config"]
    plugins = len(config.pluginmanager.get_plugins()) if config is not None else 0
    if not full and plugins == _STATE["plugins"]:
        return  # no plugin registered since the last look: no new hook to vet
    _STATE["plugins"] = plugins
    stranger = _foreign_hook()
    if stranger:
        _STATE["tamper"].append(f"a pytest hook was added from {stranger} (noticed {where})")


def _foreign_hook() -> str | None:
    """Where a hook implementation comes from that is neither the Python environment's (pytest,
    its plugins, installed packages), nor the kit's, nor one of the workspace's conftest.py files
    (a plugin the code under test registered, from the workspace or from a file it wrote
    elsewhere), or None when there is none."""
    config = _STATE["config"]
    if config is None:
        return None
    for caller in list(vars(config.hook).values()):
        for impl in getattr(caller, "get_hookimpls", list)():
            if _VETTED.get(id(impl)) is impl:
                continue
            function = getattr(impl.function, "__func__", impl.function)
            code = getattr(function, "__code__", None)
            if code is None:
                return f"an object without Python code ({type(function).__name__})"
            filename: str = os.path.abspath(code.co_filename)  # noqa: PTH100  the path as imported
            if filename not in _CONFTESTS and not filename.startswith(_TRUSTED):
                return filename
            _VETTED[id(impl)] = impl
    return None


def _canary_pass() -> None:
    """Must pass: and the means by which tests reject wrong code must still reject it."""
    if sum(range(_N)) != _N * (_N - 1) // 2:
        raise AssertionError("arithmetic is broken")
    try:
        with pytest.raises(ZeroDivisionError):
            pass
    except pytest.fail.Exception:
        pass
    else:
        raise AssertionError("pytest.raises accepted a block that raised nothing")
    try:
        unittest.case.TestCase().assertEqual(_N, _N + 1)
    except AssertionError:
        pass
    else:
        raise AssertionError("assertEqual accepted unequal values")


@pytest.mark.xfail(strict=True, reason="loopwright canary: must fail")
def _canary_fail() -> None:
    """Must fail (a strict xfail): a run that reports it passed forged its outcomes. It fails
    through `pytest.fail` without a traceback: formatting an assertion's failure would cost
    more than the rest of the guard."""
    if sum(range(_N)) == _N * (_N - 1) // 2:
        pytest.fail("loopwright canary: must fail", pytrace=False)


for _name, _expected in _CANARIES.items():
    globals()[_name] = _canary_pass if _expected == "passed" else _canary_fail


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """The canaries go last: they run after every test the code under test could touch."""
    module = pytest.Module.from_parent(session, path=Path(__file__))
    items.extend(item for item in module.collect() if isinstance(item, pytest.Item))


def _canary_outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    return str(report.outcome)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _STATE["config"] = config
    root = os.path.abspath(config.rootpath)  # noqa: PTH100  the path as imported
    _CONFTESTS.update(os.path.join(root, rel) for rel in _CONFTESTS_IN_WORKSPACE)  # noqa: PTH118


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or report.outcome != "passed":  # once a test, and at any failure
        _check(f"at {report.nodeid}")
    name = report.nodeid.rsplit("::", 1)[-1]
    if name in _CANARIES and (report.when == "call" or report.outcome != "passed"):
        _STATE["canaries"].setdefault(name, _canary_outcome(report))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _check("at the end of the session", full=True)
    _STATE["exitstatus"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    _check("at unconfigure", full=True)
    record = {"finished": True, "pid": os.getpid(), **_STATE, "config": None}
    del record["plugins"]
    _RECORD.write_text(json.dumps(record), encoding="utf-8")
