"""The task model: `task.toml` as a validated pydantic model, and the loaded `Task`."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "ENV_DIR",
    "SCHEMA_VERSION",
    "Benchmark",
    "Environment",
    "FailureKind",
    "FlawedVariant",
    "GradingTable",
    "Task",
    "TaskSpec",
    "Timeouts",
    "node_id_file",
    "tree_digest",
]

SCHEMA_VERSION: Literal[1] = 1
TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
ENV_DIR = "environment"
"""The folder of an environment spec's files (requirements, wheels), beside the spec or in a task."""


class FailureKind(StrEnum):
    """The kind of failure a flawed variant shows (docs/task-format.md, "Failure kinds")."""

    IMPORT_ERROR = "import_error"
    MISSED_EDGE_CASE = "missed_edge_case"
    WRONG_SIGNATURE = "wrong_signature"
    PARTIAL_FEATURE = "partial_feature"
    BROKEN_REGRESSION = "broken_regression"
    WRONG_LOGIC = "wrong_logic"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Timeouts(_Strict):
    """Wall-clock limits in seconds: the agent run, the whole grading run, and one test."""

    agent: float = Field(default=900, gt=0)
    grade: float = Field(default=180, gt=0)
    per_test: float = Field(default=30, gt=0)


class FlawedVariant(_Strict):
    """A known-bad solution, stored as an overlay in `flawed/<name>/`, tagged with its failure kind."""

    name: str = Field(pattern=TASK_ID_PATTERN)
    kind: FailureKind
    description: str = Field(min_length=1)


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Set by loopwright for every command in an environment (docs/task-format.md, "[environment]").
RESERVED_VARIABLES = frozenset({"PATH", "HOME", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH"})


def _relative_file(value: str) -> str:
    path = Path(value)
    if not path.parts or path.is_absolute() or ".." in path.parts:
        raise ValueError(
            f"{value!r} must be a path relative to the task directory, like 'environment/x'"
        )
    return value


def _container_dir(value: str) -> str:
    path = Path(value)
    if not path.is_absolute() or ".." in path.parts or path == Path("/"):
        raise ValueError(f"{value!r} must be an absolute directory in the container, like '/app'")
    return path.as_posix()


class Environment(_Strict):
    """The `[environment]` table of task.toml: what the task's code needs to run.

    A Python environment (`python`, `requirements`, `requirements_files`, `install`, `env`) is
    built by loopwright once per content (sandbox/_environment.py); `image` / `dockerfile` name
    a container image for the container sandbox (built from the dockerfile by
    sandbox/_images.py), whose containers mount the workspace at `workdir` (default: the
    sandbox's, /testbed) and give each absolute directory in `scratch` as an empty writable
    tmpfs. `packages_before` (a UTC time, `YYYY-MM-DDTHH:MM:SSZ`) makes the build install only
    packages uploaded before it (the era of the task's commit: uv's `--exclude-newer`, pip's
    `--uploaded-prior-to`). Other paths are relative to the task directory. Field-level checks
    only; the loader checks that the files exist.
    """

    python: str | None = Field(default=None, pattern=r"^3\.\d+$")
    requirements: list[str] = Field(default_factory=list)
    requirements_files: list[str] = Field(default_factory=list)
    install: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    image: str | None = Field(default=None, min_length=1)
    dockerfile: str | None = None
    workdir: str | None = None
    scratch: list[str] = Field(default_factory=list)
    packages_before: str | None = Field(
        default=None, pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"
    )

    @field_validator("requirements", "install")
    @classmethod
    def _non_empty_items(cls, items: list[str]) -> list[str]:
        if any(not item.strip() for item in items):
            raise ValueError("entries must not be empty")
        return items

    @field_validator("requirements_files")
    @classmethod
    def _relative_files(cls, items: list[str]) -> list[str]:
        return [_relative_file(item) for item in items]

    @field_validator("dockerfile")
    @classmethod
    def _relative_dockerfile(cls, value: str | None) -> str | None:
        return None if value is None else _relative_file(value)

    @field_validator("workdir")
    @classmethod
    def _absolute_workdir(cls, value: str | None) -> str | None:
        return None if value is None else _container_dir(value)

    @field_validator("scratch")
    @classmethod
    def _absolute_scratch(cls, items: list[str]) -> list[str]:
        return [_container_dir(item) for item in items]

    @field_validator("env")
    @classmethod
    def _variables(cls, env: dict[str, str]) -> dict[str, str]:
        for name in env:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name")
            if name in RESERVED_VARIABLES or name.startswith("LOOPWRIGHT_"):
                raise ValueError(
                    f"{name} is set by loopwright in an environment; choose another variable "
                    f"(reserved: {', '.join(sorted(RESERVED_VARIABLES))}, LOOPWRIGHT_*)"
                )
        return env

    @model_validator(mode="after")
    def _one_image_source(self) -> Environment:
        if self.image is not None and self.dockerfile is not None:
            raise ValueError("give image or dockerfile, not both")
        if (self.workdir is not None or self.scratch) and not self.container:
            raise ValueError("workdir and scratch are for a container image (image or dockerfile)")
        return self

    @property
    def container(self) -> bool:
        """True when the environment is a container image (`image` or `dockerfile`)."""
        return self.image is not None or self.dockerfile is not None

    @property
    def files(self) -> list[str]:
        """The task files the environment reads (relative paths): requirements files, dockerfile."""
        return [*self.requirements_files, *([self.dockerfile] if self.dockerfile else [])]


Runner = Literal["pytest", "unittest", "command", "function"]
AuditFamily = Literal[
    "import-system",
    "code-objects",
    "atexit",
    "hard-exit",
    "ctypes",
    "gc-referrers",
    "test-internals",
    "frame-inspection",
    "dynamic-code",
    "always-equal",
]
"""The construct families the audit of an agent's change reports (scoring/_audit.py), by the
names `[grading] allow` takes."""
_UNITTEST_ID = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*){2,}$")


class GradingTable(_Strict):
    """The `[grading]` table of task.toml: which test runner grades the task
    (docs/task-format.md, "[grading]"). `pytest` (the default) runs the hidden tests by node id;
    `unittest` runs `python -m unittest -v` on the test ids' modules; `command` runs `command`
    (with `sh -c`, in the workspace) and reads per-test outcomes from the junit XML file
    `junit`, or a score in [0, 1] from the file `reward`, or with neither the exit code alone.
    `junit` and `reward` are relative to the private output directory the grader makes
    (`$LOOPWRIGHT_OUTPUT`), never to the workspace. `function` calls the Python function
    registered under `evaluator` (`scoring.register_evaluator`) in the loopwright process; it
    gives the score, named checks and feedback (no test ids; `tests/` may be absent). `rules` picks how outcomes count:
    `loopwright` (passed and xfailed pass; anything else fails) or `swebench` (the same, except
    that a skipped pass_to_pass test counts as kept, as the SWE-bench harness counts it).
    `allow` lists the audit families (`AuditFamily`) the task's solution legitimately needs:
    a change using them is not `suspect:` (docs/grading.md, "The audit")."""

    runner: Runner = "pytest"
    rules: Literal["loopwright", "swebench"] = "loopwright"
    command: str | None = Field(default=None, min_length=1)
    junit: str | None = None
    reward: str | None = None
    evaluator: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.:-]+$")
    allow: tuple[AuditFamily, ...] = ()

    @field_validator("junit", "reward")
    @classmethod
    def _relative_output(cls, value: str | None) -> str | None:
        return None if value is None else _relative_file(value)

    @model_validator(mode="after")
    def _fields_of_runner(self) -> GradingTable:
        if self.runner == "command":
            if self.command is None:
                raise ValueError("runner 'command' needs command = \"...\"")
            if self.junit is not None and self.reward is not None:
                raise ValueError("give junit or reward, not both")
        elif self.command or self.junit or self.reward:
            raise ValueError(
                f"command, junit and reward are for runner 'command', not {self.runner!r}"
            )
        if (self.runner == "function") != (self.evaluator is not None):
            raise ValueError(
                "runner 'function' needs evaluator = \"NAME\" (a name given to "
                "loopwright.scoring.register_evaluator), and evaluator is for runner 'function' only"
            )
        return self

    @property
    def per_test(self) -> bool:
        """True when the runner reports per-test outcomes on listed test ids (all but a command
        without junit and a function, whose checks it names itself)."""
        if self.runner == "function":
            return False
        return self.runner != "command" or self.junit is not None


def node_id_file(test_id: str) -> str:
    """The file part of a pytest node id (`tests/test_x.py::T::t[a]` -> `tests/test_x.py`)."""
    return test_id.split("::", 1)[0]


class TaskSpec(_Strict):
    """The contents of `task.toml`. Field-level checks only; cross-file checks live in the loader."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str = Field(pattern=TASK_ID_PATTERN)
    level: int = Field(ge=1, le=3)
    summary: str = ""
    test_dir: str = "tests"
    hidden_tests_layout: Literal["test_dir", "tree", "patch"] = "test_dir"
    test_cmd: str = "python -m pytest"
    allow_internet: bool = False
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    flawed: list[FlawedVariant] = Field(default_factory=list)
    environment: Environment | None = None
    grading: GradingTable = Field(default_factory=GradingTable)
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Free-form facts about the task (`[metadata]`: e.g. a generated benchmark's axes, such as
    forge's `files` or `locate`); loopwright only stores and reports them (docs/task-format.md)."""

    @field_validator("fail_to_pass", "pass_to_pass")
    @classmethod
    def _distinct(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"duplicate test ids: {dupes}")
        return ids

    @model_validator(mode="after")
    def _ids_of_runner(self) -> TaskSpec:
        runner = self.grading.runner
        if self.grading.per_test and not self.fail_to_pass:
            raise ValueError("fail_to_pass: list at least one test id")
        if not self.grading.per_test and (self.fail_to_pass or self.pass_to_pass):
            raise ValueError(
                f"a task graded by {self.grading.runner!r} without per-test ids has no test ids: "
                "leave fail_to_pass and pass_to_pass out"
            )
        for test_id in (*self.fail_to_pass, *self.pass_to_pass):
            if runner == "pytest":
                _check_node_id(test_id)
            elif runner == "unittest" and not _UNITTEST_ID.match(test_id):
                raise ValueError(
                    f"{test_id!r} is not a unittest id (expected 'package.module.Class.test_name')"
                )
        if runner == "pytest" and not re.match(r"^python3? -m pytest(\s|$)", self.test_cmd):
            raise ValueError(
                f"{self.test_cmd!r}: the grader runs pytest itself; test_cmd must start with "
                "'python -m pytest'"
            )
        return self

    @field_validator("test_dir")
    @classmethod
    def _relative_dir(cls, value: str) -> str:
        parts = Path(value).parts
        if not parts or Path(value).is_absolute() or ".." in parts:
            raise ValueError(
                f"{value!r} must be a relative directory inside the repo, like 'tests'"
            )
        return value


def _check_node_id(test_id: str) -> None:
    path, sep, rest = test_id.partition("::")
    if not sep or not rest or not path.endswith(".py") or path.startswith("/"):
        raise ValueError(
            f"{test_id!r} is not a pytest node id relative to the workspace "
            "(expected 'tests/test_file.py::test_name')"
        )


@dataclass(frozen=True)
class Task:
    """A loaded, validated task directory. Paths are absolute; nothing here is ever written."""

    spec: TaskSpec
    root: Path
    instruction: str

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def level(self) -> int:
        return self.spec.level

    @property
    def repo_dir(self) -> Path:
        """The starting repository: copied into each workspace."""
        return self.root / "repo"

    @property
    def hidden_tests_dir(self) -> Path:
        """Hidden tests (layouts `test_dir` and `tree`), placed in the workspace only at grading."""
        return self.root / "tests"

    @property
    def hidden_tests_patch(self) -> Path:
        """The hidden tests as a unified diff (layout `patch`), applied only at grading."""
        return self.root / "tests.patch"

    @property
    def solution_dir(self) -> Path | None:
        """The gold overlay, or None when the task ships without one."""
        path = self.root / "solution"
        return path if path.is_dir() else None

    @property
    def solution_patch(self) -> Path | None:
        """The gold as a unified diff of repo/ (`solution.patch`: a gold that deletes or renames
        files), or None when the task has no such file."""
        path = self.root / "solution.patch"
        return path if path.is_file() else None

    @property
    def gold(self) -> Path | None:
        """The gold change, whichever form it takes: `solution/` (an overlay) or
        `solution.patch`; None when the task ships without one. `apply_overlay` takes both."""
        return self.solution_dir or self.solution_patch

    def flawed_dir(self, name: str) -> Path:
        """The overlay of the flawed variant `name` (must be one of `spec.flawed`)."""
        if name not in {v.name for v in self.spec.flawed}:
            known = ", ".join(v.name for v in self.spec.flawed) or "none"
            raise KeyError(f"task {self.id} has no flawed variant {name!r} (known: {known})")
        return self.root / "flawed" / name

    @property
    def test_ids(self) -> list[str]:
        """fail_to_pass then pass_to_pass, in file order."""
        return [*self.spec.fail_to_pass, *self.spec.pass_to_pass]

    @cached_property
    def digest(self) -> str:
        """sha256 over every file of the task (relative path and bytes), in sorted order.

        Identity of the task's content for caching: any edit to the instruction, repo, tests,
        gold or flawed variants changes it. Deterministic.
        """
        return tree_digest(self.root)


@dataclass(frozen=True)
class Benchmark:
    """A named, ordered collection of tasks loaded from one folder."""

    name: str
    root: Path
    tasks: tuple[Task, ...]
    description: str = ""
    _by_id: dict[str, Task] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id.update({t.id: t for t in self.tasks})

    def task(self, task_id: str) -> Task:
        """The task with this id; KeyError listing the known ids otherwise."""
        try:
            return self._by_id[task_id]
        except KeyError:
            known = ", ".join(self._by_id)
            raise KeyError(
                f"benchmark {self.name} has no task {task_id!r} (known: {known})"
            ) from None

    @property
    def digest(self) -> str:
        """sha256 over the task digests in id order: the identity of the benchmark's content."""
        h = hashlib.sha256()
        for task in sorted(self.tasks, key=lambda t: t.id):
            h.update(f"{task.id}\0{task.digest}\n".encode())
        return h.hexdigest()


def tree_digest(root: Path) -> str:
    """sha256 over every file under `root` (relative path and bytes, sorted), bytecode left
    out. Deterministic."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or rel.suffix == ".pyc":
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
