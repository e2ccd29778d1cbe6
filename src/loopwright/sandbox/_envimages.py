"""A task's Python `[environment]` under the container sandbox: built into a derived image.

The image is made FROM the sandbox's image (LOOPWRIGHT_CONTAINER_IMAGE) with the image's own
Python: a virtualenv at `ENV_PREFIX` (venv with pip; venv without pip plus loopwright's pip where
the image has no ensurepip), the requirements and requirements files installed (pip options such
as `--no-index --find-links wheels` pass through; the task's `environment/` directory and its
requirements files sit at their task-relative paths under `TASK_DIR`, so relative paths in them
resolve), the repo copied at the workspace path (`/testbed`) and the `install` commands run there,
so an editable install of the task's own package imports the workspace mounted over that path at
run time. pytest and pytest-timeout are copied in from loopwright's Python when missing.

Its tag is content-addressed: `localhost/loopwright-env:<key[:16]>`, the key a sha256 over the base
image's id, the workspace path, the image's Python and `environment_inputs` (the table and every
file the build reads). Built once under the file lock of `ImageBuilder`s, reused while the engine
has it; a failed build names the failing step with its output's tail and tags nothing. A host
package index the container cannot reach is named before the build (`_hostindex`).
See docs/sandbox.md, "Task environments in the container sandbox".
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from loopwright.errors import ConfigError, SandboxError
from loopwright.sandbox._base import Sandbox
from loopwright.sandbox._docker import DockerSandbox
from loopwright.sandbox._engine import ENV_PREFIX, Engine
from loopwright.sandbox._envcache import (
    EnvironmentCache,
    build_each,
    default_env_cache,
    environment_inputs,
    needs_environment,
)
from loopwright.sandbox._environment import TaskEnvironment
from loopwright.sandbox._envsetup import (
    PIP_DATE_OPTION,
    RUNNER,
    EnvironmentBuildError,
    copy_distribution,
    copy_distributions,
)
from loopwright.sandbox._hostindex import build_index_variables, say_index_notice
from loopwright.sandbox._images import (
    DEFAULT_BUILD_TIMEOUT_S,
    BuiltImage,
    build_once,
    engine_build,
)
from loopwright.tasks import Task

__all__ = [
    "ENV_IMAGE_REPOSITORY",
    "ENV_PREFIX_INSIDE",
    "EnvImageBuilder",
    "prepare_env_images",
    "task_environment",
]

ENV_IMAGE_REPOSITORY = "localhost/loopwright-env"
ENV_PREFIX_INSIDE = PurePosixPath("/opt/loopwright/env")
"""Where the virtualenv is in a derived image."""
TASK_DIR = PurePosixPath("/opt/loopwright/task")
"""The task's `environment/` directory and requirements files, at their task-relative paths."""
_KIT_DIR = PurePosixPath("/opt/loopwright/kit")  # the build script, pip and the runner to copy in
_KEY_FORMAT = 1
_TAG_CHARS = 16
_STEP = "loopwright-step:"
_FAILED = "loopwright-step-failed:"
_BUILD_VARIABLES = {
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
    "PIP_ROOT_USER_ACTION": "ignore",
    "PYTHONHASHSEED": "0",
}


class EnvImageBuilder:
    """Builds (once) and reuses the derived images of tasks' Python environments: FROM `base`,
    the workspace at `workdir`, the image's Python `python` unless the task names one. Builds
    of one tag are serialised by a file lock under `locks` (default `<env cache>/images`,
    resolved on the machine that builds)."""

    def __init__(
        self,
        engine: Engine,
        *,
        base: str,
        workdir: str = "/testbed",
        python: str = "python3",
        locks: Path | None = None,
        timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    ) -> None:
        self.engine, self.base, self.workdir, self.python = engine, base, workdir, python
        self._locks = locks
        self.timeout_s = timeout_s

    @classmethod
    def for_sandbox(cls, sandbox: DockerSandbox, locks: Path | None = None) -> EnvImageBuilder:
        """A builder on `sandbox`'s engine, image, workspace path and Python."""
        s = sandbox.settings
        return cls(sandbox.engine, base=s.image, workdir=s.workdir, python=s.python, locks=locks)

    @property
    def locks(self) -> Path:
        """The directory of the build lock files (resolved at use, on this machine)."""
        return (self._locks or default_env_cache() / "images").expanduser()

    def key(self, task: Task) -> str:
        """The content address of `task`'s environment image. ConfigError when there is no
        base image, or the engine does not have it."""
        parts = {
            "format": _KEY_FORMAT,
            "base": self._base_id(),
            "workdir": self.workdir,
            "python": self._python(task),
            **environment_inputs(task),
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def tag(self, task: Task) -> str:
        """The tag `task`'s environment image has (or will have) in the engine."""
        return f"{ENV_IMAGE_REPOSITORY}:{self.key(task)[:_TAG_CHARS]}"

    def ensure(self, task: Task) -> BuiltImage:
        """`task`'s environment image, built first when the engine lacks it. ConfigError for a
        task without a Python `[environment]` or without a base image; EnvironmentBuildError
        naming the failing step (nothing is tagged)."""
        if not needs_environment(task):
            raise ConfigError(f"task {task.id} has no Python [environment] to build")
        tag = self.tag(task)
        lock = self.locks / f"env-{tag.rsplit(':', 1)[1]}.lock"
        return build_once(self.engine, tag, lock, lambda: self._build(task, tag))

    def environment(self, task: Task) -> TaskEnvironment:
        """`task`'s environment as commands in its image's containers use it (built first when
        needed; see `ensure`)."""
        table = task.spec.environment
        assert table is not None  # ensure checks
        tag = self.ensure(task).tag
        return TaskEnvironment(
            key=tag.rsplit(":", 1)[1], prefix=Path(str(ENV_PREFIX_INSIDE)), base_prefix=Path("/"),
            variables=tuple(sorted(table.env.items())), image=tag, workdir=self.workdir,
        )  # fmt: skip

    def _base_id(self) -> str:
        if not self.base:
            raise ConfigError(
                "a task's Python [environment] under the container sandbox is built on an image",
                got=f"no {ENV_PREFIX}IMAGE",
                fix=f"build a base image with Python locally and name it in {ENV_PREFIX}IMAGE "
                "(docs/sandbox.md)",
            )
        try:
            return self.engine.call("image", "inspect", "--format", "{{.Id}}", self.base).strip()
        except SandboxError as exc:
            raise ConfigError(
                f"the image {self.base!r} is not present in {self.engine.kind}",
                got=str(exc), fix="build it locally first (nothing is pulled; docs/sandbox.md)",
            ) from exc  # fmt: skip

    def _python(self, task: Task) -> str:
        table = task.spec.environment
        return f"python{table.python}" if table is not None and table.python else self.python

    def _build(self, task: Task, tag: str) -> None:
        notice = say_index_notice(task)  # before a build that would fail on it
        context = Path(tempfile.mkdtemp(prefix="lw-envimage-"))
        try:
            dockerfile = self._write_context(task, context)
            try:
                engine_build(
                    self.engine, tag, dockerfile, timeout_s=self.timeout_s,
                    what=f"task {task.id}: building its environment image",
                    fix="fix the task's [environment] table (docs/task-format.md); the base "
                    f"image {self.base} must have {self._python(task)} with venv",
                )  # fmt: skip
            except EnvironmentBuildError as exc:
                named = _named(task, exc)
                if notice is not None:
                    fix = f"{named.fix}; {notice}"
                    named = EnvironmentBuildError(named.what, got=named.got, fix=fix)
                raise named from None
        finally:
            shutil.rmtree(context, ignore_errors=True)

    def _write_context(self, task: Task, context: Path) -> Path:
        table = task.spec.environment
        assert table is not None
        repo = context / "repo"
        if table.install:
            shutil.copytree(task.repo_dir, repo, symlinks=True)
        else:
            repo.mkdir()
        shown = context / "task"
        shown.mkdir()
        if (task.root / "environment").is_dir():
            shutil.copytree(task.root / "environment", shown / "environment", symlinks=True)
        for rel in table.requirements_files:
            (shown / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(task.root / rel, shown / rel)
        kit = context / "kit"
        for name, names in (("runner", RUNNER), ("pip", ("pip",))):
            (kit / name).mkdir(parents=True)
            copy_distributions(names, kit / name)
        (kit / "timeout").mkdir()  # pytest-timeout alone: beside a pytest the task pins
        copy_distribution("pytest-timeout", kit / "timeout")
        (kit / "build.sh").write_text(self._script(task), encoding="utf-8")
        dockerfile = context / "Dockerfile"
        dockerfile.write_text(
            f"FROM {self.base}\n"
            f"LABEL loopwright.environment={tag_safe(task.id)}\n"
            f"COPY repo {self.workdir}\n"
            f"COPY task {TASK_DIR}\n"
            f"COPY kit {_KIT_DIR}\n"
            f"WORKDIR {self.workdir}\n"
            f'RUN ["sh", "{_KIT_DIR}/build.sh"]\n',
            encoding="utf-8",
        )
        return dockerfile

    def _script(self, task: Task) -> str:
        """The build's shell script: each step announced, the first that fails named."""
        table = task.spec.environment
        assert table is not None
        env, python = str(ENV_PREFIX_INSIDE), self._python(task)
        variables = {**_BUILD_VARIABLES, **build_index_variables(), **table.env}
        steps = []
        if table.requirements:
            steps.append(shlex.join(["python", "-m", "pip", "install", *table.requirements]))
        for rel in table.requirements_files:
            steps.append(shlex.join(["python", "-m", "pip", "install", "-r", f"{TASK_DIR}/{rel}"]))
        steps += table.install
        lines = [
            f"step() {{ echo '{_STEP}' \"$1\"; sh -c \"$1\" || {{ echo '{_FAILED}' \"$1\"; exit 1; }}; }}",
            *(f"export {name}={shlex.quote(value)}" for name, value in variables.items()),
            f"{python} -m venv {env} >/dev/null 2>&1 || step {shlex.quote(f'{python} -m venv --without-pip {env}')}",
            f"SITE=$({env}/bin/python -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))')",
            f'{env}/bin/python -m pip --version >/dev/null 2>&1 || cp -R {_KIT_DIR}/pip/. "$SITE"/',
            f"export PATH={env}/bin:$PATH VIRTUAL_ENV={env}",
            *_date_pin_lines(table.packages_before),
            *(f"step {shlex.quote(command)}" for command in steps),
            # A pytest the task pins is kept: only pytest-timeout is added beside it.
            'python -c "import pytest, pytest_timeout" >/dev/null 2>&1 || '
            'if python -c "import pytest" >/dev/null 2>&1; then '
            f'cp -R {_KIT_DIR}/timeout/. "$SITE"/; else '
            f'cp -R {_KIT_DIR}/runner/. "$SITE"/ && printf \'%s\\n\' '
            f"'#!{env}/bin/python' 'import sys' 'from pytest import console_main' "
            f"'sys.exit(console_main())' > {env}/bin/pytest && chmod 755 {env}/bin/pytest; fi",
            "step 'python -c \"import pytest, pytest_timeout\"'",
            # compiled now: the image is read-only when used
            'python -m compileall -q "$SITE" >/dev/null 2>&1 || true',
        ]  # fmt: skip
        return "set -u\n" + "\n".join(lines) + "\n"


def _date_pin_lines(before: str | None) -> list[str]:
    """packages_before in the image build: pip's PIP_UPLOADED_PRIOR_TO, the venv's pip replaced
    by loopwright's when it lacks the option, and the build failing when neither has it."""
    if before is None:
        return []
    knows = f"python -m pip install --help 2>/dev/null | grep -q -- {PIP_DATE_OPTION}"
    return [
        f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(before)}",
        f'{knows} || {{ rm -rf "$SITE"/pip "$SITE"/pip-*.dist-info; cp -R {_KIT_DIR}/pip/. "$SITE"/; }}',
        f"step {shlex.quote(knows)}",
    ]  # fmt: skip


def tag_safe(text: str) -> str:
    """`text` as a label value that needs no quoting."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "_"


def _named(task: Task, exc: EnvironmentBuildError) -> EnvironmentBuildError:
    """The build's error with the failing step named, when the script got to announce it."""
    output = exc.got or ""
    failed = [line for line in output.splitlines() if _FAILED in line]
    if not failed:
        return exc
    command = failed[-1].split(_FAILED, 1)[1].strip()
    return EnvironmentBuildError(
        f"building the environment image of task {task.id} failed: `{command}` failed "
        "(nothing was cached)",
        got=output,
        fix="fix the task's [environment] table (docs/task-format.md) and run again",
    )


def task_environment(task: Task, sandbox: Sandbox, cache: EnvironmentCache) -> TaskEnvironment:
    """`task`'s Python environment for commands in `sandbox`: under the container sandbox, in
    its derived image (built or reused; locks beside `cache`); else in `cache` on this machine."""
    if isinstance(sandbox, DockerSandbox):
        return EnvImageBuilder.for_sandbox(sandbox, cache.root / "images").environment(task)
    return cache.ensure(task).environment


def prepare_env_images(
    tasks: Sequence[Task],
    builder: EnvImageBuilder,
    *,
    on_built: Callable[[Task, BuiltImage], None] | None = None,
) -> list[tuple[Task, BuiltImage]]:
    """Build, or find already built, the environment image of each task with a Python
    environment, in order. Raises at the first build that fails."""
    return build_each(tasks, needs_environment, builder.ensure, on_built)
