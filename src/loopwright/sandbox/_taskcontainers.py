"""TaskContainers: what an importer needs of a task's container image, outside any agent run:
build it, copy a directory out of it, and run a script in it on a fresh workspace.

Used by `tasks import harbor` (which cannot import the sandbox: tasks/ sits below it) through
its `Containers` protocol; the CLI passes one of these.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from loopwright.errors import ConfigError, SandboxError
from loopwright.sandbox._base import CommandResult
from loopwright.sandbox._docker import DockerSandbox
from loopwright.sandbox._engine import ContainerSettings, Engine
from loopwright.sandbox._images import ImageBuilder
from loopwright.sandbox._workspace import create_workspace, remove_workspace
from loopwright.tasks import Task

__all__ = ["TaskContainers"]

# Copy the staged scripts to the scratch mount, enter the workdir, run the entry with bash (sh
# when the image has none). $0: staged scripts, $1: mount, $2: workdir, $3: entry.
_RUN_SCRIPT = (
    'cp -R "$0"/. "$1"/ || exit 3; cd "$2" || exit 3; '
    'if command -v bash >/dev/null 2>&1; then bash "$1/$3"; else sh "$1/$3"; fi'
)


class TaskContainers:
    """A task's container image seen from outside a run, on the engine of `settings` (default:
    LOOPWRIGHT_CONTAINER_*). MissingDependencyError at construction when no engine works."""

    def __init__(self, settings: ContainerSettings | None = None) -> None:
        self.settings = settings if settings is not None else ContainerSettings.from_env()
        self.engine = Engine.detect(self.settings)
        self.builder = ImageBuilder(self.engine)

    def image(self, task: Task) -> str:
        """The task's image: its `image`, or its `dockerfile` built (or reused) now.
        EnvironmentBuildError when the build fails."""
        table = task.spec.environment
        if table is None or not table.container:
            raise ConfigError(f"task {task.id} names no container image")
        return table.image or self.builder.ensure(task).tag

    def copy_out(self, task: Task, inside: str, dest: Path) -> bool:
        """Copy the contents of the image's directory `inside` into `dest` (made when missing),
        without any `.git`; False (nothing copied) when the image has no such directory."""
        cid = self.engine.call("create", "--entrypoint", "sh", self.image(task)).strip()
        scratch = Path(tempfile.mkdtemp(prefix="lw-copy-out-"))
        try:
            try:
                self.engine.call("cp", f"{cid}:{inside.rstrip('/')}/.", str(scratch), timeout_s=600)
            except SandboxError:
                return False
            dest.mkdir(parents=True, exist_ok=True)
            for item in scratch.iterdir():
                if item.name != ".git":
                    shutil.move(str(item), str(dest / item.name))
            return True
        finally:
            self.engine.remove(cid)
            shutil.rmtree(scratch, ignore_errors=True)

    def run_script(
        self, task: Task, scripts: Path, entry: str, mount: str, solved: Path
    ) -> CommandResult:
        """Run `scripts/entry` in the task's container (its image, workdir, scratch dirs and
        network) on a fresh workspace of its repo, the folder `scripts` copied to `mount` (an
        extra scratch dir) first; the workspace's files afterwards (no `.git`) go to `solved`.
        The agent timeout bounds it."""
        table = task.spec.environment
        if table is None or not table.container:
            raise ConfigError(f"task {task.id} names no container image")
        image = self.image(task)
        workdir = table.workdir or self.settings.workdir
        sandbox = DockerSandbox(self.settings.model_copy(update={"image": image}))
        parent = Path(tempfile.mkdtemp(prefix="lw-script-"))
        workspace = create_workspace(task.repo_dir, parent)
        try:
            sandbox.attach(
                workspace.path, network=task.spec.allow_internet, image=image, workdir=workdir,
                scratch=(*table.scratch, mount),
            )  # fmt: skip
            result = sandbox.run(
                ["sh", "-c", _RUN_SCRIPT, str(scripts), mount, workdir, entry],
                cwd=workspace.path, timeout_s=task.spec.timeouts.agent, readonly=[scripts],
                network=task.spec.allow_internet,
            )  # fmt: skip
            shutil.copytree(
                workspace.path, solved, symlinks=True, dirs_exist_ok=True,
                ignore=shutil.ignore_patterns(".git"),
            )  # fmt: skip
            return result
        finally:
            sandbox.close()
            remove_workspace(workspace)
            shutil.rmtree(parent, ignore_errors=True)
