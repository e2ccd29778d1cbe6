"""The steps of one environment build: find the interpreter and uv, make the virtualenv, pin its
installs to `packages_before`, install requirements, run the task's install commands in a
checkout of its repo, make sure the grader's test runner is there (what editable installs point
at afterwards: `_envfinish`).

Build commands run in a sandbox like an agent's (bubblewrap when it works here, with network, the
checkout bound at `WORKDIR` so editable installs point there; else locally), writable only in the
environment being built. Each failing command raises EnvironmentBuildError naming it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

from loopwright.errors import ConfigError, LoopwrightError, UserError
from loopwright.sandbox._base import Sandbox, host_path
from loopwright.sandbox._bwrap import BubblewrapSandbox, bubblewrap_available
from loopwright.sandbox._environment import WORKDIR, TaskEnvironment
from loopwright.sandbox._local import LocalSandbox
from loopwright.tasks import Task

__all__ = [
    "BUILD_TIMEOUT_S",
    "BuildOutcome",
    "EnvironmentBuildError",
    "Interpreter",
    "build_steps",
    "copy_distribution",
    "copy_distributions",
    "find_interpreter",
    "find_uv",
    "runner_versions",
]

BUILD_TIMEOUT_S = 1800.0
"""Wall-clock limit of one build command (creating the venv, installing, one install command)."""

RUNNER = ("pytest", "pytest-timeout")
"""The distributions the grader needs in every environment (with their requirements)."""

_TAIL_CHARS = 3000
_BUILD_VARIABLES = {
    "LANG": "C.UTF-8",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
    "PYTHONHASHSEED": "0",
}


class EnvironmentBuildError(UserError):
    """A task environment could not be built: `what` names the task and the command that
    failed, `got` is the tail of its output. Nothing of the failed build is cached."""


@dataclass(frozen=True, slots=True)
class Interpreter:
    """A Python installed on this machine: its executable, version (X.Y.Z) and installation."""

    path: Path
    version: str
    base_prefix: Path

    @property
    def minor(self) -> str:
        """X.Y."""
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    """What the steps found: whether the runner was copied in, and where the checkout was seen."""

    runner_supplied: bool
    checkout_seen: str


def find_interpreter(version: str | None) -> Interpreter:
    """The interpreter an environment is made from: the Python running loopwright (its base
    installation, not a virtualenv) when `version` is None or its own X.Y, else `pythonX.Y` on
    PATH (resolved: a link such as `python3.9 -> pypy3` names the real executable, which a
    sandbox shows at its own path). Raises ConfigError when that is not installed. Cached per
    process."""
    own = ".".join(map(str, sys.version_info[:2]))
    if version is None or version == own:
        base = getattr(sys, "_base_executable", None) or sys.executable
        return _describe(str(base))
    found = shutil.which(f"python{version}")
    if found is None:
        raise ConfigError(
            f"the task's environment asks for Python {version}, which is not installed here",
            got=f"no python{version} on PATH",
            fix=f"install Python {version} (e.g. `uv python install {version}`), or change "
            "[environment] python",
        )
    return _describe(str(Path(found).resolve()))


@functools.cache
def _describe(executable: str) -> Interpreter:
    probe = subprocess.run(
        [
            executable,
            "-I",
            "-c",
            "import sys; print(sys.version.split()[0]); print(sys.base_prefix)",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if probe.returncode != 0:
        raise ConfigError(f"{executable} does not run", got=probe.stderr.strip()[-500:])
    version, base_prefix = probe.stdout.split("\n")[:2]
    return Interpreter(Path(executable).absolute(), version.strip(), Path(base_prefix.strip()))


def find_uv() -> str | None:
    """The uv executable: on PATH, else beside this Python (`pip install 'loopwright[uv]'`
    puts it there), else None (environments are then built with venv and pip)."""
    found = shutil.which("uv")
    if found is not None:
        return found
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else None


def runner_versions() -> dict[str, str]:
    """The versions of the test runner loopwright would copy into an environment that lacks one."""
    return {name: importlib.metadata.version(name) for name in RUNNER}


def build_steps(
    task: Task, interpreter: Interpreter, env_dir: Path, checkout: Path, uv: str | None
) -> BuildOutcome:
    """Make the virtualenv at `env_dir` (an empty directory is made there first) and install
    into it. Raises EnvironmentBuildError naming the failing command."""
    table = task.spec.environment
    assert table is not None
    env_dir.mkdir()
    scratch = env_dir.parent
    shim = _pip_shim(scratch, uv)
    placed = TaskEnvironment(
        key="build", prefix=env_dir, base_prefix=interpreter.base_prefix,
        variables=tuple(sorted(table.env.items())),
    )  # fmt: skip
    sandbox, seen = _build_sandbox(placed, checkout)
    shown = [p for p in (task.root / "environment", shim, Path(uv) if uv else None) if p]
    shown += [task.root / rel for rel in table.requirements_files]
    step = _Step(task, sandbox, checkout, env_dir, [p for p in shown if p.exists()], shim)
    python = str(env_dir / "bin" / "python")
    if uv is not None:
        step.run_argv([uv, "venv", "--python", str(interpreter.path), str(env_dir)])
    else:
        step.run_argv([str(interpreter.path), "-m", "venv", str(env_dir)])
    if table.packages_before:
        _pin_to_date(step, env_dir, uv, table.packages_before)
    requirements = [*table.requirements]
    for rel in table.requirements_files:
        requirements += ["-r", str((task.root / rel).resolve())]
    if requirements:
        installer = (
            [uv, "pip", "install", "--python", python] if uv else [python, "-m", "pip", "install"]
        )
        step.run_argv([*installer, *requirements])
    for command in table.install:
        step.run_argv(["sh", "-c", command], shown_as=command)
    supplied = _ensure_runner(step, interpreter, env_dir)
    return BuildOutcome(runner_supplied=supplied, checkout_seen=seen)


PIP_DATE_OPTION = "--uploaded-prior-to"  # pip's option for packages_before (recent pips only)


def _pin_to_date(step: _Step, env_dir: Path, uv: str | None, before: str) -> None:
    """Every later install of the build considers only packages uploaded before `before`: uv
    through UV_EXCLUDE_NEWER (its `pip` shim included), pip through PIP_UPLOADED_PRIOR_TO. A
    venv's pip too old to know the option (Debian's ensurepip gives 23.0) is replaced by
    loopwright's own pip first; where that does not run, the build fails saying so."""
    if uv is not None:
        step.variables["UV_EXCLUDE_NEWER"] = before
        return
    python = str(env_dir / "bin" / "python")
    if not _pip_knows_dates(step, python):
        site = next(env_dir.glob("lib/*/site-packages"))
        for old in [site / "pip", *site.glob("pip-*.dist-info")]:
            shutil.rmtree(old, ignore_errors=True)
        copy_distribution("pip", site)
        if not _pip_knows_dates(step, python):
            raise EnvironmentBuildError(
                f"the environment of task {step.task.id} installs only packages uploaded before "
                f"{before} (packages_before), and neither its pip nor loopwright's "
                f"(pip {importlib.metadata.version('pip')}) has {PIP_DATE_OPTION} for its Python",
                fix="install uv (pip install 'loopwright[uv]'), or remove packages_before from "
                "[environment]",
            )
    step.variables["PIP_UPLOADED_PRIOR_TO"] = before


def _pip_knows_dates(step: _Step, python: str) -> bool:
    try:
        return PIP_DATE_OPTION in step.run_argv([python, "-m", "pip", "install", "--help"])
    except EnvironmentBuildError:
        return False


def _build_sandbox(placed: TaskEnvironment, checkout: Path) -> tuple[Sandbox, str]:
    """Bubblewrap with the checkout at `WORKDIR` when it works here; else local (the editable
    installs then point at the temporary checkout, and only `editable_roots` reach the
    workspace)."""
    if bubblewrap_available():
        return BubblewrapSandbox().within(placed, checkout), str(WORKDIR)
    return LocalSandbox().within(placed, checkout), str(checkout.resolve())


def _pip_shim(scratch: Path, uv: str | None) -> Path:
    """A directory holding `pip` that runs `uv pip` (uv's virtualenvs have no pip), so install
    commands written for pip work with either builder. Put on PATH after the environment's bin/."""
    shim = scratch / "shim"
    shim.mkdir()
    if uv is not None:
        script = shim / "pip"
        script.write_text(f'#!/bin/sh\nexec {shlex.quote(uv)} pip "$@"\n', encoding="utf-8")
        script.chmod(0o755)
    return shim


class _Step:
    """Runs build commands in the build sandbox, raising EnvironmentBuildError on failure."""

    def __init__(
        self, task: Task, sandbox: Sandbox, checkout: Path, env_dir: Path, shown: list[Path],
        shim: Path,
    ) -> None:  # fmt: skip
        self.task, self.sandbox, self.checkout = task, sandbox, checkout
        self.env_dir, self.shown = env_dir, shown
        rest = host_path()
        self.variables = {**_BUILD_VARIABLES, "PATH": os.pathsep.join([str(shim), rest])}

    def run_argv(self, argv: list[str], *, shown_as: str | None = None) -> str:
        """Run `argv`; its output, or EnvironmentBuildError naming `shown_as` (default: argv)."""
        shown_as = shown_as if shown_as is not None else " ".join(argv)
        try:
            result = self.sandbox.run(
                argv, cwd=self.checkout, timeout_s=BUILD_TIMEOUT_S, writable=[self.env_dir],
                readonly=self.shown, env=self.variables, network=True,
            )  # fmt: skip
        except LoopwrightError as exc:
            raise self._error(shown_as, str(exc)) from None
        output = result.stdout + ("\n" + result.stderr if result.stderr else "")
        if not result.ok:
            how = "timed out" if result.timed_out else f"exited {result.exit_code}"
            raise self._error(shown_as, output, how)
        return output

    def _error(
        self, command: str, output: str, how: str = "could not start"
    ) -> EnvironmentBuildError:
        return EnvironmentBuildError(
            f"building the environment of task {self.task.id} failed: `{command}` {how} "
            "(nothing was cached)",
            got="the output's tail:\n" + (output.strip()[-_TAIL_CHARS:] or "(no output)"),
            fix="fix the task's [environment] table (docs/task-format.md) and run again",
        )


def _ensure_runner(step: _Step, interpreter: Interpreter, env_dir: Path) -> bool:
    """True when pytest and pytest-timeout had to be copied in from loopwright's own Python
    (same X.Y only; else the task must list them). A pytest the environment has is never
    replaced: only pytest-timeout (one pure-Python module) is added beside it, and when that
    does not load with the task's pytest the build fails saying so."""
    python = str(env_dir / "bin" / "python")
    check = [python, "-c", "import pytest, pytest_timeout"]
    try:
        step.run_argv(check)
        return False
    except EnvironmentBuildError:
        pass
    if _has_module(step, python, "pytest"):
        _add_timeout_plugin(step, env_dir, python)
        return True
    own = ".".join(map(str, sys.version_info[:2]))
    if interpreter.minor != own:
        raise EnvironmentBuildError(
            f"the environment of task {step.task.id} (Python {interpreter.minor}) has no pytest "
            f"and pytest-timeout, and loopwright (Python {own}) cannot supply its own",
            fix="add pytest and pytest-timeout to [environment] requirements",
        )
    site = next(env_dir.glob("lib/*/site-packages"))
    copy_distributions(RUNNER, site)
    script = env_dir / "bin" / "pytest"
    script.write_text(
        f"#!{env_dir}/bin/python\nimport sys\nfrom pytest import console_main\n"
        "sys.exit(console_main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    # Compiled now: the environment is read-only when used, so bytecode never written here
    # would be compiled again by every run (pytest: about a second each).
    step.run_argv([str(env_dir / "bin" / "python"), "-m", "compileall", "-q", str(site)])
    step.run_argv(check)
    return True


def _has_module(step: _Step, python: str, name: str) -> bool:
    try:
        step.run_argv([python, "-c", f"import {name}"])
    except EnvironmentBuildError:
        return False
    return True


def _add_timeout_plugin(step: _Step, env_dir: Path, python: str) -> None:
    """pytest-timeout alone (not the pytest it requires here) into the environment, whose own
    pytest, pinned by the task, stays as it is."""
    site = next(env_dir.glob("lib/*/site-packages"))
    copy_distribution("pytest-timeout", site)
    try:
        step.run_argv([python, "-c", "import pytest_timeout"])
    except EnvironmentBuildError as exc:
        raise EnvironmentBuildError(
            f"the environment of task {step.task.id} has its own pytest but no pytest-timeout, "
            f"and loopwright's pytest-timeout {runner_versions()['pytest-timeout']} does not "
            "load with that pytest (loopwright never replaces a task's pinned pytest)",
            got=exc.got,
            fix="add a pytest-timeout that works with the task's pytest to [environment] "
            "requirements",
        ) from None


def copy_distributions(names: tuple[str, ...], site: Path) -> None:
    """Copy the installed distributions `names`, with what they require here, into `site`."""
    for name in _closure(names):
        copy_distribution(name, site)


def _closure(names: tuple[str, ...]) -> list[str]:
    """The distributions `names` need here, themselves included (requirements whose markers hold
    for this interpreter, no extras)."""
    found: list[str] = []
    queue = list(names)
    while queue:
        name = queue.pop()
        canonical = re.sub(r"[-_.]+", "-", name).lower()
        if canonical in found:
            continue
        found.append(canonical)
        for spec in importlib.metadata.requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                queue.append(req.name)
    return sorted(found)


def copy_distribution(name: str, site: Path) -> None:
    """Copy an installed distribution's files (those inside site-packages) to `site`."""
    dist = importlib.metadata.distribution(name)
    for file in dist.files or []:
        if file.parts[0] == ".." or "__pycache__" in file.parts:
            continue
        source = Path(str(dist.locate_file(file)))
        if source.is_file():
            target = site / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
