"""The environment cache: each task environment built once per content, then reused.

An environment lives in `<cache>/<key[:32]>/`, a virtualenv plus `ENV_MANIFEST`. Its key is a
sha256 over the `[environment]` table, the interpreter it is made from (path and version), the
files it reads (requirements files, the dockerfile, everything under the task's `environment/`
directory, and the repo when it has `install` commands) and the version of the test runner
loopwright supplies. A build happens under an exclusive file lock on `<cache>/<key[:32]>.lock`
(a second process or thread waits, then reuses), into a temporary directory renamed into place
once complete; a failed build leaves nothing behind and raises `EnvironmentBuildError`.
See docs/sandbox.md, "Task environments".
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from loopwright._caller import spoken
from loopwright.errors import ConfigError, MissingDependencyError
from loopwright.sandbox._envfinish import editable_roots, relocate
from loopwright.sandbox._environment import TaskEnvironment
from loopwright.sandbox._envsetup import (
    EnvironmentBuildError,
    Interpreter,
    build_steps,
    find_interpreter,
    find_uv,
    runner_versions,
)
from loopwright.tasks import Task, tree_digest

__all__ = [
    "ENV_CACHE_VARIABLE",
    "ENV_MANIFEST",
    "ENV_SCHEMA_VERSION",
    "EnvManifest",
    "EnvironmentBuildError",
    "EnvironmentCache",
    "Prepared",
    "default_env_cache",
    "environment_inputs",
    "environment_key",
    "needs_environment",
    "prepare_environments",
]

ENV_SCHEMA_VERSION: Literal[1] = 1
ENV_MANIFEST = "loopwright-env.json"
ENV_CACHE_VARIABLE = "LOOPWRIGHT_ENV_CACHE"
_KEY_FORMAT = 1  # bump when what goes into the key, or how an environment is laid out, changes
_DIR_CHARS = 32  # of the key, in directory names: keeps shebang lines short
_KEYS: dict[tuple[Path, str], str] = {}  # (task root, task digest) -> key, in this process
_MEMO_LOCK = threading.Lock()


class EnvManifest(BaseModel):
    """`<env>/loopwright-env.json`: what was built, from what, by which builder. Written last:
    an environment directory without it is not an environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = ENV_SCHEMA_VERSION
    key: str
    task_id: str  # the task whose build made it (others with the same key reuse it)
    python_version: str
    base_prefix: str
    builder: Literal["uv", "pip"]
    runner_supplied: bool  # pytest and pytest-timeout copied from loopwright's own Python
    editable_roots: list[str] = Field(default_factory=list)
    variables: dict[str, str] = Field(default_factory=dict)
    built_at: str
    build_s: float


@dataclass(frozen=True, slots=True)
class Prepared:
    """An environment ready in the cache; `built` is True when this call built it."""

    environment: TaskEnvironment
    manifest: EnvManifest
    built: bool


def default_env_cache() -> Path:
    """`$LOOPWRIGHT_ENV_CACHE`, else `~/.cache/loopwright/envs`, read at call time (so on a Ray
    worker it is the worker's own home directory, never the driver's)."""
    configured = os.environ.get(ENV_CACHE_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    return Path("~/.cache/loopwright/envs").expanduser()


def environment_key(task: Task, interpreter: Interpreter) -> str:
    """The content address of `task`'s environment made from `interpreter`. Deterministic.

    Two tasks with the same table, interpreter and files share one environment; an edit to
    any input (the repo, when the table has `install` commands) gives a new key."""
    parts = {
        "format": _KEY_FORMAT,
        **environment_inputs(task),
        "python": [str(interpreter.path), interpreter.version],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def environment_inputs(task: Task) -> dict[str, object]:
    """What a build of `task`'s environment reads, by digest: the table, the files it names,
    the task's `environment/` directory, the repo (when the table has `install` commands) and
    the test runner loopwright would supply. ConfigError for a task without a table."""
    table = task.spec.environment
    if table is None:
        raise ConfigError(f"task {task.id} has no [environment] table")
    env_dir = task.root / "environment"
    return {
        # packages_before only when set: the keys of the tables without it stay as they were
        "table": table.model_dump(
            mode="json", exclude=set() if table.packages_before else {"packages_before"}
        ),
        "files": {rel: _file_digest(task.root / rel) for rel in table.files},
        "environment_dir": tree_digest(env_dir) if env_dir.is_dir() else None,
        "repo": tree_digest(task.repo_dir) if table.install else None,
        "runner": runner_versions(),
    }


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


Builder = Literal["auto", "uv", "pip"]


class EnvironmentCache:
    """Builds and reuses task environments under `root` (default `default_env_cache()`,
    resolved when first used, so a cache object shipped to another machine uses that machine's
    directory). Safe to share between threads and processes: builds of one key are serialised
    by a file lock, and a finished environment is only ever read.

    `builder` "auto" builds with uv when it is installed, else with venv and pip; "uv" requires
    uv (MissingDependencyError at the first build otherwise); "pip" never uses uv. The builder
    is not part of the key: an environment built either way is reused by both."""

    def __init__(self, root: Path | None = None, *, builder: Builder = "auto") -> None:
        self._root = root
        self.builder = builder

    @property
    def root(self) -> Path:
        """The cache directory (not created until a build): the one given, when it exists here
        or can be made here, else `default_env_cache()`. The given path may be the driver's
        (`--env-cache` on a Ray head), which a worker node may lack: the worker then builds in
        its own default cache instead of failing."""
        if self._root is not None and _can_make(self._root.expanduser()):
            return self._root.expanduser().resolve()
        return default_env_cache().expanduser().resolve()

    def key(self, task: Task) -> str:
        """`environment_key` for `task` with the interpreter it names; memoised per task content
        in this process (the key hashes the repo when the table has install commands)."""
        memo = (task.root, task.digest)
        with _MEMO_LOCK:
            known = _KEYS.get(memo)
        if known is None:
            assert task.spec.environment is not None  # callers check
            known = environment_key(task, find_interpreter(task.spec.environment.python))
            with _MEMO_LOCK:
                _KEYS[memo] = known
        return known

    def path(self, task: Task) -> Path:
        """Where `task`'s environment is (or would be) in this cache."""
        return self.root / self.key(task)[:_DIR_CHARS]

    def lookup(self, task: Task) -> Prepared | None:
        """The environment of `task` when it is already built here, else None. Builds nothing."""
        key = self.key(task)
        manifest = _read_manifest(self.root / key[:_DIR_CHARS], key)
        if manifest is None:
            return None
        return Prepared(_environment(self.root / key[:_DIR_CHARS], manifest), manifest, False)

    def ensure(self, task: Task) -> Prepared:
        """`task`'s environment, built first when this cache does not hold it yet.

        Raises ConfigError when the task has no Python `[environment]` (none, or a container
        image) or names a Python not installed here, and EnvironmentBuildError when a build
        command fails (naming it, with its output's tail)."""
        table = task.spec.environment
        if table is None or table.container:
            raise ConfigError(
                f"task {task.id} has no Python environment to build",
                got="no [environment] table" if table is None else "a container image",
                fix="container images are built by the container sandbox "
                f"({spoken('sandbox=' + repr('docker'), '--sandbox docker')})",
            )
        found = self.lookup(task)
        if found is not None:
            return found
        key = self.key(task)
        final = self.root / key[:_DIR_CHARS]
        with file_lock(self.root / f"{key[:_DIR_CHARS]}.lock"):
            manifest = _read_manifest(final, key)  # built while this one waited
            built = manifest is None
            if manifest is None:
                manifest = _build(task, key, final, self._uv())
        return Prepared(_environment(final, manifest), manifest, built)

    def _uv(self) -> str | None:
        if self.builder == "pip":
            return None
        uv = find_uv()
        if uv is None and self.builder == "uv":
            raise MissingDependencyError(
                "the uv builder was asked for but uv is not installed",
                fix="pip install 'loopwright[uv]' (or install uv), or use the pip builder",
            )
        return uv


def _can_make(directory: Path) -> bool:
    """True when `directory` is a directory here, or its nearest existing ancestor is one this
    process may create entries in. Creates nothing."""
    for path in [directory, *directory.absolute().parents]:
        if path.exists():
            return path.is_dir() and (path == directory or os.access(path, os.W_OK | os.X_OK))
    return False


def needs_environment(task: Task) -> bool:
    """True when `task` has a Python `[environment]` for `EnvironmentCache` to build (a container
    image is the container sandbox's to build)."""
    table = task.spec.environment
    return table is not None and not table.container


def prepare_environments(
    tasks: Sequence[Task],
    cache: EnvironmentCache,
    *,
    on_prepared: Callable[[Task, Prepared], None] | None = None,
) -> list[tuple[Task, Prepared]]:
    """Build, or find already built, the environment of each task that has one, in order; tasks
    with the same key share one build. `on_prepared` is called after each (progress display).
    Raises EnvironmentBuildError at the first build that fails, ConfigError for a missing Python."""
    return build_each(tasks, needs_environment, cache.ensure, on_prepared)


_Built = TypeVar("_Built")


def build_each(
    tasks: Sequence[Task],
    needs: Callable[[Task], bool],
    ensure: Callable[[Task], _Built],
    on_built: Callable[[Task, _Built], None] | None = None,
) -> list[tuple[Task, _Built]]:
    """`ensure(task)` for each task that `needs` it, in order, with `on_built` after each:
    what `bench prepare` does for environments and images alike."""
    done = []
    for task in tasks:
        if needs(task):
            built = ensure(task)
            done.append((task, built))
            if on_built is not None:
                on_built(task, built)
    return done


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive, blocking lock on `path` (created) for this thread and, by flock, other
    processes; the OS drops the flock if the holder dies. What makes one build of a key (an
    environment, an image) happen once."""
    with _THREAD_LOCKS_GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(str(path), threading.Lock())
    with thread_lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _read_manifest(directory: Path, key: str) -> EnvManifest | None:
    try:
        manifest = EnvManifest.model_validate_json((directory / ENV_MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    return manifest if manifest.key == key else None


def _environment(directory: Path, manifest: EnvManifest) -> TaskEnvironment:
    return TaskEnvironment(
        key=manifest.key,
        prefix=directory,
        base_prefix=Path(manifest.base_prefix),
        variables=tuple(sorted(manifest.variables.items())),
        editable_roots=tuple(manifest.editable_roots),
    )


def _build(task: Task, key: str, final: Path, uv: str | None) -> EnvManifest:
    """Build into a fresh temporary directory beside `final`, then rename it into place."""
    table = task.spec.environment
    assert table is not None
    started = time.monotonic()
    interpreter = find_interpreter(table.python)
    for stale in final.parent.glob(f".build-{final.name}-*"):  # a builder killed mid-build
        shutil.rmtree(stale, ignore_errors=True)  # (the key's lock is held: none is running)
    temp = Path(tempfile.mkdtemp(prefix=f".build-{final.name}-", dir=final.parent))
    checkout = Path(tempfile.mkdtemp(prefix="lw-envcheckout-"))
    try:
        env_dir = temp / "env"
        shutil.copytree(task.repo_dir, checkout, symlinks=True, dirs_exist_ok=True)
        outcome = build_steps(task, interpreter, env_dir, checkout, uv)
        manifest = EnvManifest(
            key=key,
            task_id=task.id,
            python_version=interpreter.version,
            base_prefix=str(interpreter.base_prefix),
            builder="uv" if uv is not None else "pip",
            runner_supplied=outcome.runner_supplied,
            editable_roots=editable_roots(env_dir, outcome.checkout_seen),
            variables=dict(table.env),
            built_at=datetime.now(UTC).isoformat(timespec="seconds"),
            build_s=round(time.monotonic() - started, 3),
        )
        relocate(env_dir, final)
        (env_dir / ENV_MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        env_dir.rename(final)
        return manifest
    finally:
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(checkout, ignore_errors=True)
