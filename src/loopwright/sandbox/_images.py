"""Task container images: a task's `[environment] dockerfile` built once per content by the
container engine, then reused; and `task_image`, the image a task's workspace container runs.

The tag is content-addressed: `localhost/loopwright-task:<key[:16]>`, the key a sha256 over the
Dockerfile's path in its build context and every file of that context (the Dockerfile's
directory). A build runs under an exclusive file lock on `<locks>/<key[:16]>.lock` (a second
process or thread waits, then finds the image and reuses it); nothing is pulled (`--pull=never`
with podman: base images must be present locally). A failed build leaves no tag and raises
`EnvironmentBuildError` naming the command and the tail of its output. See docs/sandbox.md,
"Container images".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.sandbox._docker import DockerSandbox
from loopwright.sandbox._engine import Engine
from loopwright.sandbox._envcache import build_each, default_env_cache, file_lock
from loopwright.sandbox._envsetup import EnvironmentBuildError
from loopwright.tasks import Task, tree_digest

__all__ = [
    "IMAGE_REPOSITORY",
    "BuiltImage",
    "ImageBuilder",
    "attach_task_container",
    "engine_build",
    "image_key",
    "needs_image_build",
    "prepare_images",
]

IMAGE_REPOSITORY = "localhost/loopwright-task"
_KEY_FORMAT = 1  # bump when what goes into the key changes
_TAG_CHARS = 16
_TAIL_CHARS = 3000
DEFAULT_BUILD_TIMEOUT_S = 1800.0


@dataclass(frozen=True, slots=True)
class BuiltImage:
    """A task's image present in the engine: its tag, and whether this call built it (and in how
    many seconds)."""

    tag: str
    built: bool
    build_s: float = 0.0


def needs_image_build(task: Task) -> bool:
    """True when `task` names a `dockerfile` (an image for the container sandbox to build)."""
    table = task.spec.environment
    return table is not None and table.dockerfile is not None


def _dockerfile(task: Task) -> Path:
    table = task.spec.environment
    if table is None or table.dockerfile is None:
        raise ConfigError(f"task {task.id} names no dockerfile", fix="add [environment] dockerfile")
    return task.root / table.dockerfile


def image_key(task: Task) -> str:
    """The content address of `task`'s Dockerfile image: the Dockerfile's name and every file
    of its build context (its directory). Deterministic; an edit to any of them is a new key."""
    dockerfile = _dockerfile(task)
    parts = {
        "format": _KEY_FORMAT,
        "dockerfile": dockerfile.name,
        "context": tree_digest(dockerfile.parent),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class ImageBuilder:
    """Builds task images with `engine` and reuses them; safe across threads and processes
    (builds of one key are serialised by a file lock under `locks`, default
    `<env cache>/images`). `timeout_s` bounds one build."""

    def __init__(
        self,
        engine: Engine,
        *,
        locks: Path | None = None,
        timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
    ) -> None:
        self.engine = engine
        self._locks = locks
        self.timeout_s = timeout_s

    @property
    def locks(self) -> Path:
        """The directory of the build lock files (resolved at use, on this machine)."""
        return (self._locks or default_env_cache() / "images").expanduser()

    def tag(self, task: Task) -> str:
        """The tag `task`'s Dockerfile image has (or will have) in the engine."""
        return f"{IMAGE_REPOSITORY}:{image_key(task)[:_TAG_CHARS]}"

    def ensure(self, task: Task) -> BuiltImage:
        """`task`'s image, built first when the engine does not have it. Raises ConfigError when
        the task has no dockerfile or it is missing, EnvironmentBuildError when the build fails
        (the command and its output's tail; nothing is tagged)."""
        dockerfile = _dockerfile(task)
        if not dockerfile.is_file():
            raise ConfigError(
                f"task {task.id}: its dockerfile is missing", got=str(dockerfile),
                fix="add the file, or fix [environment] dockerfile",
            )  # fmt: skip
        tag = self.tag(task)
        lock = self.locks / f"{tag.rsplit(':', 1)[1]}.lock"
        return build_once(self.engine, tag, lock, lambda: self._build(task, dockerfile, tag))

    def _build(self, task: Task, dockerfile: Path, tag: str) -> None:
        engine_build(
            self.engine, tag, dockerfile, timeout_s=self.timeout_s,
            what=f"task {task.id}: the image build",
            fix="fix the Dockerfile; its base image must be present locally (nothing is "
            "pulled; see docs/sandbox.md)",
        )  # fmt: skip


def build_once(engine: Engine, tag: str, lock: Path, build: Callable[[], None]) -> BuiltImage:
    """Image `tag`, made by `build()` unless the engine has it: under the file lock `lock`, and
    checked again once the lock is held, so concurrent callers build it once and the others
    reuse it. What `build` raises passes through (it must leave no tag behind)."""
    if engine.image_exists(tag):
        return BuiltImage(tag, built=False)
    with file_lock(lock):
        if engine.image_exists(tag):  # built while this one waited
            return BuiltImage(tag, built=False)
        started = time.monotonic()
        build()
        return BuiltImage(tag, built=True, build_s=round(time.monotonic() - started, 3))


def engine_build(
    engine: Engine, tag: str, dockerfile: Path, *, timeout_s: float, what: str, fix: str
) -> str:
    """Build `dockerfile` (its directory the context) as `tag`, pulling nothing; the build's
    output. On failure or timeout nothing stays tagged and EnvironmentBuildError says `what`
    failed, with the command and its output's tail, and `fix`."""
    pull = ["--pull=never"] if engine.kind == "podman" else []
    argv = engine.argv("build", *pull, "-t", tag, "-f", str(dockerfile), str(dockerfile.parent))
    try:
        done = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as exc:
        _forget(engine, tag)
        raise EnvironmentBuildError(
            f"{what} timed out after {timeout_s:.0f}s: " + " ".join(argv),
            got=_tail(exc.output),
            fix="fix the Dockerfile, or build the image by hand and name it in `image`",
        ) from exc
    except OSError as exc:
        raise EnvironmentBuildError(
            f"{what} could not start: {' '.join(argv)}", got=str(exc)
        ) from exc
    output = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:
        _forget(engine, tag)
        raise EnvironmentBuildError(
            f"{what} failed (exit {done.returncode}): " + " ".join(argv),
            got=_tail(output),
            fix=fix,
        )
    return output


def _forget(engine: Engine, tag: str) -> None:
    """A failed build must leave no tag behind (it would be taken as built)."""
    if engine.image_exists(tag):
        with contextlib.suppress(Exception):
            engine.call("rmi", "-f", tag)


def prepare_images(
    tasks: Sequence[Task],
    builder: ImageBuilder,
    *,
    on_built: Callable[[Task, BuiltImage], None] | None = None,
) -> list[tuple[Task, BuiltImage]]:
    """Build, or find already built, the Dockerfile image of each task that has one, in order
    (tasks with the same key share one build). Raises at the first build that fails."""
    return build_each(tasks, needs_image_build, builder.ensure, on_built)


def attach_task_container(
    sandbox: DockerSandbox, task: Task, workspace: Path, builder: ImageBuilder | None = None
) -> str:
    """Start `workspace`'s container from `task`'s image (its `image`, or its `dockerfile` built
    or reused by `builder`, default one on the sandbox's engine), shaped by its `workdir` and
    `scratch`; returns the image. ConfigError for a task without a container environment;
    EnvironmentBuildError when the build fails; SandboxError when the container cannot start."""
    table = task.spec.environment
    if table is None or not table.container:
        raise ConfigError(f"task {task.id} names no container image", fix="add image or dockerfile")
    if table.image is not None:
        image = table.image
    else:
        image = (builder or ImageBuilder(sandbox.engine)).ensure(task).tag
    sandbox.attach(
        workspace, network=task.spec.allow_internet, image=image,
        workdir=table.workdir, scratch=table.scratch,
    )  # fmt: skip
    return image


def _tail(output: bytes | str | None) -> str:
    if output is None:
        return "(no output)"
    text = output.decode("utf-8", errors="replace") if isinstance(output, bytes) else output
    return text.strip()[-_TAIL_CHARS:] or "(no output)"
