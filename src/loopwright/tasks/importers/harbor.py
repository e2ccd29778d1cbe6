"""`loopwright tasks import harbor`: Harbor / Terminal-Bench 2 task folders as loopwright tasks.

A Harbor task is `instruction.md`, `task.toml` ([metadata], [agent], [verifier], [environment]),
`environment/Dockerfile` (and its build context), `tests/test.sh` (the verifier: it writes a
number in [0, 1] to `/logs/verifier/reward.txt`) and optionally `solution/solve.sh` (a script
that solves the task in the container). Each becomes one loopwright task:

- the Dockerfile environment as is, the workspace mounted at the Dockerfile's last `WORKDIR`
  (default `/app`) with `/tests` and `/logs` as empty writable scratch directories;
- `repo/`: the files the built image holds at that `WORKDIR` (copied out of the image);
- the hidden tests: `tests/` landing at `.harbor-tests/`, graded by the `command` runner,
  which copies them to `/tests`, runs `test.sh` and reads the reward file;
- the gold: `solution/solve.sh` run once at import in the task's container on a fresh
  workspace; the files it changed become the `solution/` overlay (`bench validate` checks it).

A task that cannot be converted is reported with the reason, never silently dropped. The
folder is read, and its task.toml written, by `_harborspec`. The mapping of every field is in
docs/importing.md ("Harbor").
"""

from __future__ import annotations

import filecmp
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from loopwright.errors import ConfigError, LoopwrightError
from loopwright.tasks._loader import load_task
from loopwright.tasks._model import Task
from loopwright.tasks.importers._harborspec import (
    HARBOR_TESTS_DIR,
    Parsed,
    SkipTask,
    grading_command,
    parse_task,
    task_toml,
)
from loopwright.tasks.importers._tb1 import (
    TB1_FILE,
    TB1_NOTE,
    ShapeError,
    harbor_shape,
)

__all__ = [
    "HARBOR_TESTS_DIR",
    "Containers",
    "HarborImport",
    "ImportedTask",
    "SkippedTask",
    "grading_command",
    "import_harbor",
]

_TAIL = 1500


@dataclass(frozen=True, slots=True)
class ImportedTask:
    """A task written: its id, folder, whether it has a gold, and the seconds its import took."""

    task_id: str
    path: Path
    gold: bool
    seconds: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SkippedTask:
    """A Harbor task that could not be converted, why, and the seconds it took to find out."""

    source: Path
    reason: str
    seconds: float = 0.0


@dataclass
class HarborImport:
    """What an import did: the tasks written and the ones skipped (with reasons)."""

    out: Path
    imported: list[ImportedTask] = field(default_factory=list)
    skipped: list[SkippedTask] = field(default_factory=list)


class ScriptOutcome(Protocol):
    """How a script ended (a sandbox `CommandResult` is one)."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...


class Containers(Protocol):
    """What the importer needs of a task's container image (`loopwright.sandbox.TaskContainers`
    is the implementation; tasks/ cannot import the sandbox, which sits above it)."""

    def image(self, task: Task) -> str:
        """Build (or reuse) the task's image; its tag."""
        ...

    def copy_out(self, task: Task, inside: str, dest: Path) -> bool:
        """Copy the image's directory `inside` into `dest`; False when there is none."""
        ...

    def run_script(
        self, task: Task, scripts: Path, entry: str, mount: str, solved: Path
    ) -> ScriptOutcome:
        """Run `scripts/entry` in the task's container on a fresh workspace (`scripts` at
        `mount`); the workspace's files afterwards to `solved`."""
        ...


def harbor_task_dirs(source: Path) -> list[Path]:
    """`source` itself when it is a Harbor task (has task.toml), else its child directories that
    have one or an instruction.md, sorted. ConfigError when there is none."""
    source = source.expanduser().resolve()
    if not source.is_dir():
        raise ConfigError(
            f"no Harbor task folder at {source}", fix="give a task or a folder of tasks"
        )
    if (source / "task.toml").is_file() or (source / TB1_FILE).is_file():
        return [source]
    found = sorted(
        p for p in source.iterdir()
        if p.is_dir() and any((p / f).is_file() for f in ("task.toml", "instruction.md", TB1_FILE))
    )  # fmt: skip
    if not found:
        raise ConfigError(
            f"{source} holds no Harbor task",
            fix="a Harbor task is a folder with task.toml, instruction.md, environment/, tests/; "
            "a Terminal-Bench 1 task one with task.yaml, Dockerfile, run-tests.sh, tests/",
        )
    return found


def import_harbor(
    source: Path,
    out: Path,
    containers: Containers,
    *,
    on_task: Callable[[Path], None] | None = None,
) -> HarborImport:
    """Convert the Harbor task (or folder of tasks) at `source` into task folders under `out`.

    With `containers` (the container engine): builds each task's image, copies its `WORKDIR`
    out as `repo/`, and runs `solve.sh` there to make the gold. A task already in `out` is
    replaced. Never raises for one bad task: it is listed in `skipped` with the reason. Raises
    ConfigError when `source` holds no task."""
    dirs = harbor_task_dirs(source)
    result = HarborImport(out.expanduser().resolve())
    created = not result.out.exists()
    result.out.mkdir(parents=True, exist_ok=True)
    try:
        for task_dir in dirs:
            _import_into(result, task_dir, containers)
            if on_task is not None:
                on_task(task_dir)
    finally:
        if created and not result.imported and not any(result.out.iterdir()):
            result.out.rmdir()  # nothing was written: leave no empty --out behind
    return result


def _import_into(result: HarborImport, task_dir: Path, containers: Containers) -> None:
    started = time.monotonic()
    try:
        task, notes = _import_one(task_dir, result.out, containers)
    except SkipTask as exc:
        took = round(time.monotonic() - started, 2)
        result.skipped.append(SkippedTask(task_dir, str(exc), took))
    except LoopwrightError as exc:
        took = round(time.monotonic() - started, 2)
        result.skipped.append(SkippedTask(task_dir, _one_paragraph(exc), took))
    else:
        took = round(time.monotonic() - started, 2)
        gold = task.solution_dir is not None
        result.imported.append(ImportedTask(task.id, task.root, gold, took, notes))


def _one_paragraph(exc: LoopwrightError) -> str:
    render = getattr(exc, "render", None)
    return " ".join(str(render() if callable(render) else exc).split())


UNVALIDATED_NOTE = (
    "no solution/solve.sh: imported without a gold, unvalidated (bench validate checks only "
    "the untouched repo; a run uses it with a warning)"
)


def _notes(task_dir: Path, parsed: Parsed) -> tuple[str, ...]:
    notes = list(parsed.notes)
    if not (task_dir / "solution" / "solve.sh").is_file():
        notes.append(UNVALIDATED_NOTE)
    return tuple(notes)


def _import_one(task_dir: Path, out: Path, containers: Containers) -> tuple[Task, tuple[str, ...]]:
    if not (task_dir / "task.toml").is_file() and (task_dir / TB1_FILE).is_file():
        with tempfile.TemporaryDirectory(prefix=".tb1-", dir=out) as scratch:
            try:
                shaped = harbor_shape(task_dir, Path(scratch) / task_dir.name)
            except ShapeError as exc:
                raise SkipTask(str(exc)) from None
            task, notes = _import_harbor_task(shaped, out, containers)
            return task, (TB1_NOTE, *notes)
    return _import_harbor_task(task_dir, out, containers)


def _import_harbor_task(
    task_dir: Path, out: Path, containers: Containers
) -> tuple[Task, tuple[str, ...]]:
    parsed = parse_task(task_dir)
    staging = Path(tempfile.mkdtemp(prefix=f".import-{parsed.task_id}-", dir=out))
    try:
        root = staging / parsed.task_id
        _write_static(task_dir, root, parsed)
        (root / "repo").mkdir()
        # The image's key reads environment/ only: it is built before repo/ is filled.
        containers.copy_out(load_task(root), parsed.workdir, root / "repo")
        task = load_task(root)
        if (task_dir / "solution" / "solve.sh").is_file():
            _make_gold(task, task_dir / "solution", containers, staging / "solved")
        final = out / parsed.task_id
        if final.exists():
            shutil.rmtree(final)
        root.rename(final)
        return load_task(final), _notes(task_dir, parsed)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_static(task_dir: Path, root: Path, parsed: Parsed) -> None:
    root.mkdir()
    shutil.copy2(task_dir / "instruction.md", root / "instruction.md")
    shutil.copytree(task_dir / "environment", root / "environment", symlinks=True)
    shutil.copytree(task_dir / "tests", root / "tests", symlinks=True)
    provenance = root / "harbor"
    provenance.mkdir()
    shutil.copy2(task_dir / "task.toml", provenance / "task.toml")
    if (task_dir / "solution").is_dir():
        shutil.copytree(task_dir / "solution", provenance / "solution", symlinks=True)
    (root / "task.toml").write_text(task_toml(parsed), encoding="utf-8")


def _make_gold(task: Task, solution: Path, containers: Containers, solved: Path) -> None:
    """Run solve.sh in the task's container on a fresh workspace; write the files it changed
    as `solution/`. SkipTask when it fails or deletes files (an overlay cannot delete)."""
    result = containers.run_script(task, solution, "solve.sh", "/solution", solved)
    if result.exit_code != 0 or result.timed_out:
        tail = (result.stdout + result.stderr).strip()[-_TAIL:]
        how = "timed out" if result.timed_out else f"failed (exit {result.exit_code})"
        raise SkipTask(f"solution/solve.sh {how} in the task's container: {tail}")
    _write_overlay(task.repo_dir, solved, task.root / "solution")


def _write_overlay(base: Path, solved: Path, dest: Path) -> None:
    changed = [rel for rel in _files(solved) if not _same(base / rel, solved / rel)]
    deleted = [rel for rel in _files(base) if not (solved / rel).exists()]
    if deleted:
        raise SkipTask(f"solution/solve.sh deletes {', '.join(deleted[:5])}: a gold overlay "
                    "cannot delete files")  # fmt: skip
    if not changed:
        raise SkipTask(
            "solution/solve.sh changed no file in the workspace: nothing to grade as gold"
        )
    for rel in changed:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(solved / rel, target)


def _files(root: Path) -> Iterator[str]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" or "__pycache__" in rel.parts or path.is_dir():
            continue
        yield rel.as_posix()


def _same(a: Path, b: Path) -> bool:
    return a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)
