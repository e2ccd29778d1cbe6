"""What every importer needs: one task folder written from its parts, and the report of what was
converted and what was skipped (with the reason), with the time each task took.

An importer turns one external instance into `TaskParts` (or raises `SkipInstance` saying why
it cannot) and hands the parts to `write_task`, which exports the repository at a commit from a
local clone (a checkout through a private index; nothing is downloaded), checks that the hidden-tests patch and the
gold patch apply, writes `task.toml`, `instruction.md`, `tests.patch`, `solution/` and the
environment files, and loads the result back with the task loader so that every task written
is a valid one. `run_import` drives a list of instances through a converter and collects the
`ImportReport` (written as `import_report.json` next to the tasks). Reading clones and
applying patches is `_gitrepo`'s, writing TOML `_toml`'s.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from loopwright.errors import ConfigError
from loopwright.tasks._hidden import PATCH_FILE, place_hidden
from loopwright.tasks._loader import load_task
from loopwright.tasks._model import TaskSpec
from loopwright.tasks.importers._gitrepo import (
    SkipInstance,
    apply_patch,
    export_repo,
)
from loopwright.tasks.importers._toml import toml_text

__all__ = [
    "REPORT_FILE",
    "REPORT_SCHEMA_VERSION",
    "SOLUTION_DIR",
    "SOLUTION_PATCH",
    "ConvertedTask",
    "ImportProgress",
    "ImportReport",
    "SkippedInstance",
    "TaskParts",
    "run_import",
    "task_id_for",
    "write_task",
]

REPORT_FILE = "import_report.json"
REPORT_SCHEMA_VERSION: Literal[1] = 1
SOLUTION_DIR = "solution"
SOLUTION_PATCH = "solution.patch"
_ID_BAD = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True)
class TaskParts:
    """Everything one task folder is made of. `clone` is a local git repository holding
    `commit`; `tests_patch` (hidden tests, a unified diff against the commit) and `gold_patch`
    (the known-good change) are applied to that commit; `files` are extra task files (task
    directory-relative path -> bytes, e.g. `environment/Dockerfile`). `spec` is the task.toml.
    `start_patch`, when given, is applied to the exported commit first (FeatureBench's
    feature-removal patch): the other two patches are then against that starting state.
    `repo_files`, when given, is the whole starting repository instead of the export (a
    FeatureBench level-2 task starts from an almost empty one); `gold_files`, when given, is the
    gold as files (`solution/`) instead of `gold_patch`."""

    spec: TaskSpec
    instruction: str
    clone: Path
    commit: str
    tests_patch: str
    gold_patch: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    start_patch: str = ""
    repo_files: Mapping[str, bytes] | None = None
    gold_files: Mapping[str, bytes] | None = None
    notes: tuple[str, ...] = ()  # what the user should know: test ids left out, and why


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ConvertedTask(_Strict):
    """One instance written as a task: the source's id, the task's id, the seconds it took."""

    source_id: str
    task_id: str
    seconds: float
    notes: list[str] = Field(default_factory=list)  # e.g. test ids left out, with the reason


class SkippedInstance(_Strict):
    """One instance that could not be converted, and why."""

    source_id: str
    reason: str
    seconds: float = 0.0


class ImportReport(_Strict):
    """What an import did (`import_report.json`): every instance is either converted or skipped
    with its reason; none is dropped silently."""

    schema_version: Literal[1] = REPORT_SCHEMA_VERSION
    format: str
    source: str
    converted: list[ConvertedTask] = Field(default_factory=list)
    skipped: list[SkippedInstance] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def seconds_per_task(self) -> float:
        """Mean wall time per instance handled (converted or skipped); 0.0 for none."""
        handled = len(self.converted) + len(self.skipped)
        return self.seconds / handled if handled else 0.0


def task_id_for(source_id: str) -> str:
    """A valid task id for an instance id: lower case, runs of other characters as `-`
    (`astropy__astropy-12907` stays, `Org__Repo.abc.lv1` -> `org__repo-abc-lv1`)."""
    task_id = _ID_BAD.sub("-", source_id.lower()).strip("-_")
    if not task_id:
        raise SkipInstance(f"instance id {source_id!r} leaves no usable task id")
    return task_id


def write_task(parts: TaskParts, out: Path) -> Path:
    """Write `parts` as the task folder `out/<spec.id>` and return it. The folder is assembled
    beside its final place and renamed in only once it loads as a valid task; nothing is left
    behind when it does not. The gold is written as `solution/` (the files it adds or changes),
    or as `solution.patch` when it deletes or renames a file. Raises SkipInstance saying why
    (an existing folder, a missing commit, a patch that does not apply, an invalid task)."""
    final = out / parts.spec.id
    if final.exists():
        raise SkipInstance(f"{final} already exists (remove it, or import into another --out)")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{parts.spec.id}-", dir=out))
    work = staging / parts.spec.id
    try:
        _assemble(parts, work)
        try:
            load_task(work)
        except ConfigError as exc:
            raise SkipInstance(f"the converted task is not valid: {exc.render()}") from None
        work.rename(final)
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _assemble(parts: TaskParts, work: Path) -> None:
    repo = work / "repo"
    if parts.repo_files is not None:
        _write_files(repo, parts.repo_files)
    else:
        export_repo(parts.clone, parts.commit, repo)
    if parts.start_patch:
        for rel, content in apply_patch(repo, parts.start_patch, "start patch").items():
            if content is None:
                (repo / rel).unlink(missing_ok=True)
            else:
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                (repo / rel).write_bytes(content)
    try:
        place_hidden("patch", parts.spec.test_dir, {PATCH_FILE: parts.tests_patch.encode()}, repo)
    except ValueError as exc:
        raise SkipInstance(f"test patch: {exc}") from None
    if parts.gold_files is not None:
        gold: dict[str, bytes | None] = dict(parts.gold_files)
    else:
        gold = apply_patch(repo, parts.gold_patch, "gold patch")
    if any(content is None for content in gold.values()):
        # An overlay cannot remove a file: a gold that deletes or renames one stays a patch.
        (work / SOLUTION_PATCH).write_text(parts.gold_patch, encoding="utf-8")
        gold = {}
    for rel, content in gold.items():
        target = work / SOLUTION_DIR / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content or b"")
    (work / PATCH_FILE).write_text(parts.tests_patch, encoding="utf-8")
    (work / "instruction.md").write_text(parts.instruction.rstrip() + "\n", encoding="utf-8")
    for rel, content in parts.files.items():
        target = work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    spec = parts.spec.model_dump(mode="json", exclude_defaults=True)
    spec = {"schema_version": parts.spec.schema_version, **spec}
    (work / "task.toml").write_text(toml_text(spec), encoding="utf-8")


def _write_files(root: Path, files: Mapping[str, bytes]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(content)


def run_import(
    instances: Sequence[tuple[str, Callable[[], TaskParts]]],
    out: Path,
    *,
    format: str,
    source: str,
    progress: ImportProgress | None = None,
) -> ImportReport:
    """Convert each `(source_id, make_parts)` into a task under `out`, timing each; a
    `SkipInstance` from `make_parts` or `write_task` is recorded with its reason. Writes the
    report to `out/import_report.json` and returns it. `progress` hears the count, then each
    result as it lands (for a progress bar). Deterministic apart from the timings."""
    started = time.perf_counter()
    if progress is not None:
        progress.start(len(instances))
    converted: list[ConvertedTask] = []
    skipped: list[SkippedInstance] = []
    for source_id, make_parts in instances:
        t0 = time.perf_counter()
        result: ConvertedTask | SkippedInstance
        try:
            parts = make_parts()
            path = write_task(parts, out)
            result = ConvertedTask(
                source_id=source_id, task_id=path.name,
                seconds=round(time.perf_counter() - t0, 4), notes=list(parts.notes),
            )  # fmt: skip
            converted.append(result)
        except SkipInstance as exc:
            result = SkippedInstance(
                source_id=source_id, reason=exc.reason, seconds=round(time.perf_counter() - t0, 4)
            )
            skipped.append(result)
        if progress is not None:
            progress.done(result)
    report = ImportReport(
        format=format,
        source=source,
        converted=converted,
        skipped=skipped,
        seconds=round(time.perf_counter() - started, 4),
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return report


class ImportProgress(Protocol):
    """Told how many instances an import handles, then each one's result as it lands."""

    def start(self, total: int) -> None: ...

    def done(self, result: ConvertedTask | SkippedInstance) -> None: ...
