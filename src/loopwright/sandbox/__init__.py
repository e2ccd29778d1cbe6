"""Workspaces and sandboxed command execution.

`create_workspace` copies a task's repo/ into a fresh one-commit git repository; a `Sandbox` runs
commands in it with a wall-clock timeout (the whole process tree is killed), capped output and a
clean environment. `BubblewrapSandbox` also denies the network and every write outside the
workspace; `DockerSandbox` runs each workspace's commands in its own container (docker or podman
CLI); `LocalSandbox` isolates nothing. `default_sandbox("auto")` picks bubblewrap when it
works here, else warns loudly once and runs unsandboxed. A task with an `[environment]` runs in a
virtualenv built once per content by `EnvironmentCache` (`Sandbox.within`), or under the container
sandbox in a derived image built by `EnvImageBuilder` (`task_environment` picks). See docs/sandbox.md.
"""

from __future__ import annotations

from loopwright.sandbox._base import DEFAULT_OUTPUT_CAP, CommandResult, RunRequest, Sandbox
from loopwright.sandbox._bwrap import BubblewrapSandbox, bubblewrap_available, bubblewrap_problem
from loopwright.sandbox._docker import DockerSandbox
from loopwright.sandbox._engine import ContainerSettings, Engine
from loopwright.sandbox._envcache import (
    ENV_CACHE_VARIABLE,
    ENV_MANIFEST,
    EnvironmentCache,
    EnvManifest,
    Prepared,
    default_env_cache,
    environment_key,
    needs_environment,
    prepare_environments,
)
from loopwright.sandbox._envimages import (
    ENV_IMAGE_REPOSITORY,
    ENV_PREFIX_INSIDE,
    EnvImageBuilder,
    prepare_env_images,
    task_environment,
)
from loopwright.sandbox._environment import WORKDIR, EnvironmentSandbox, TaskEnvironment
from loopwright.sandbox._envsetup import EnvironmentBuildError, find_uv
from loopwright.sandbox._images import (
    IMAGE_REPOSITORY,
    BuiltImage,
    ImageBuilder,
    attach_task_container,
    image_key,
    needs_image_build,
    prepare_images,
)
from loopwright.sandbox._local import LocalSandbox
from loopwright.sandbox._process import CHANNEL_ENV, CHANNEL_OVERFLOW
from loopwright.sandbox._reaper import descendants as process_descendants
from loopwright.sandbox._select import default_sandbox, sandbox_kinds
from loopwright.sandbox._taskcontainers import TaskContainers
from loopwright.sandbox._workspace import (
    BINARY_SIZES,
    NO_DIFF,
    DiffEvidence,
    Workspace,
    create_workspace,
    remove_workspace,
)

__all__ = [
    "BINARY_SIZES",
    "CHANNEL_ENV",
    "CHANNEL_OVERFLOW",
    "DEFAULT_OUTPUT_CAP",
    "ENV_CACHE_VARIABLE",
    "ENV_IMAGE_REPOSITORY",
    "ENV_MANIFEST",
    "ENV_PREFIX_INSIDE",
    "IMAGE_REPOSITORY",
    "NO_DIFF",
    "WORKDIR",
    "BubblewrapSandbox",
    "BuiltImage",
    "CommandResult",
    "ContainerSettings",
    "DiffEvidence",
    "DockerSandbox",
    "Engine",
    "EnvImageBuilder",
    "EnvManifest",
    "EnvironmentBuildError",
    "EnvironmentCache",
    "EnvironmentSandbox",
    "ImageBuilder",
    "LocalSandbox",
    "Prepared",
    "RunRequest",
    "Sandbox",
    "TaskContainers",
    "TaskEnvironment",
    "Workspace",
    "attach_task_container",
    "bubblewrap_available",
    "bubblewrap_problem",
    "create_workspace",
    "default_env_cache",
    "default_sandbox",
    "environment_key",
    "find_uv",
    "image_key",
    "needs_environment",
    "needs_image_build",
    "prepare_env_images",
    "prepare_environments",
    "prepare_images",
    "process_descendants",
    "remove_workspace",
    "sandbox_kinds",
    "task_environment",
]
