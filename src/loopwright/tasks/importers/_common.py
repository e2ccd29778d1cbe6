"""What every importer needs: one task folder written from its parts, and the report of what was
converted and what was skipped (with the reason), with the time each task took.

An importer turns one external instance into `TaskParts` (or raises `SkipInstance` saying why
it cannot) and hands the parts to `write_task`, which exports the repository at a commit from a
local clone (a checkout through a private index; nothing is downloaded), checks that the hidden-tests patch and the
gold patch apply, writes `task.toml`, `instruction.md`, `tests.patch`, `solution/` and the
environment files, and loads the result back with the task loader so that every task written
is a valid one. `run_import` drives a list of instances through a converter and collects the
`ImportReport` (written as `import_report.json` next to the tasks).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from loopwright.errors import ConfigError
from loopwright.tasks._hidden import PATCH_FILE, patch_paths, place_hidden
from loopwright.tasks._loader import load_task
from loopwright.tasks._model import TaskSpec

__all__ = [
    "REPORT_FILE",
    "REPORT_SCHEMA_VERSION",
    "SOLUTION_DIR",
    "SOLUTION_PATCH",
    "ConvertedTask",
    "ImportProgress",
    "ImportReport",
    "SkipInstance",
    "SkippedInstance",
    "TaskParts",
    "apply_patch",
    "apply_patch_to",
    "exists_at",
    "export_repo",
    "file_diff",
    "find_clone",
    "read_at",
    "require_commit",
    "run_import",
    "task_id_for",
    "toml_text",
    "write_task",
]

REPORT_FILE = "import_report.json"
REPORT_SCHEMA_VERSION: Literal[1] = 1
SOLUTION_DIR = "solution"
SOLUTION_PATCH = "solution.patch"
_GIT_TIMEOUT_S = 300
_ID_BAD = re.compile(r"[^a-z0-9_-]+")


class SkipInstance(Exception):
    """Raised by a converter for an instance that cannot become a task; `reason` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


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


def find_clone(repos: Path, repo: str) -> Path:
    """The local clone of `repo` (`owner/name`) under `repos`: `owner__name` or `owner/name`.
    Raises SkipInstance when neither is a git repository."""
    candidates = [repos / repo.replace("/", "__"), repos / repo]
    for path in candidates:
        if (path / ".git").exists() or (path / "HEAD").is_file():
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise SkipInstance(f"no local clone of {repo} (looked for {looked})")


def _git(
    clone: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C",
    }
    try:
        return subprocess.run(
            ["git", "-C", str(clone), *args],
            input=stdin, capture_output=True, env={**base, **(env or {})},
            timeout=_GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SkipInstance(f"could not run git in {clone}: {exc}") from None


def export_repo(clone: Path, commit: str, dest: Path) -> None:
    """Write the tree of `commit` in `clone` into `dest` (created; no `.git`): every committed
    file, as a checkout of that commit has it (through a private index, so the clone's own
    index and work tree are untouched; unlike `git archive`, `export-ignore` attributes drop
    nothing). Submodules are not included. Raises SkipInstance when the commit is not in the
    clone or cannot be checked out."""
    require_commit(clone, commit)
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="lw-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        steps = (
            ("read-tree", commit),
            ("-c", "core.autocrlf=false", f"--work-tree={dest}", "checkout-index", "-a", "-f"),
        )
        for step in steps:
            done = _git(clone, *step, env=env)
            if done.returncode != 0:
                tail = done.stderr.decode(errors="replace")[-300:]
                raise SkipInstance(f"could not check out {commit} from {clone}: {tail}")


def require_commit(clone: Path, commit: str) -> None:
    """Raise SkipInstance unless `commit` is a commit of `clone`."""
    known = _git(clone, "cat-file", "-e", f"{commit}^{{commit}}")
    if known.returncode != 0:
        raise SkipInstance(f"commit {commit} is not in the clone {clone} (fetch it there first)")


def exists_at(clone: Path, commit: str, rel: str) -> bool:
    """True when `rel` is a file (or directory) at `commit` in `clone`."""
    return _git(clone, "cat-file", "-e", f"{commit}:{rel}").returncode == 0


def read_at(clone: Path, commit: str, paths: Iterable[str]) -> dict[str, bytes]:
    """The content of each of `paths` at `commit` in `clone`; paths that are not files there
    are left out."""
    found = {}
    for rel in paths:
        shown = _git(clone, "show", f"{commit}:{rel}")
        if shown.returncode == 0:
            found[rel] = shown.stdout
    return found


def apply_patch(repo: Path, patch: str, label: str) -> dict[str, bytes | None]:
    """Apply `patch` to copies of the files it touches in the directory `repo` (not changed);
    return every touched path's content after (None: the patch deletes it). Raises
    SkipInstance, naming `label`, when it does not apply."""
    paths = _patch_paths(patch, label)
    base = {
        rel: (repo / rel).read_bytes()
        for rel in paths
        if (repo / rel).is_file() and not (repo / rel).is_symlink()
    }
    return apply_patch_to(base, patch, label)


def _patch_paths(patch: str, label: str) -> list[str]:
    try:
        return patch_paths(patch.encode())
    except ValueError as exc:
        raise SkipInstance(f"{label}: {exc}".replace(PATCH_FILE, label)) from None


def apply_patch_to(
    base: Mapping[str, bytes], patch: str, label: str, *, reverse: bool = False
) -> dict[str, bytes | None]:
    """`apply_patch` on `base` (repo-relative path -> content before) with `git apply` in a
    scratch directory; `reverse`: the patch undone (`git apply -R`), as FeatureBench's harness
    applies its masking patch and its level-1 test patch."""
    paths = _patch_paths(patch, label)
    with tempfile.TemporaryDirectory(prefix="lw-import-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        for rel in paths:
            if rel in base:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(base[rel])
        (Path(scratch) / "change.patch").write_bytes(patch.encode())
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", *(["-R"] if reverse else []),
             str(Path(scratch) / "change.patch")],
            cwd=root, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1",
                 "GIT_CEILING_DIRECTORIES": scratch, "HOME": scratch, "LANG": "C"},
        )  # fmt: skip
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-400:]
            how = "reversed " if reverse else ""
            raise SkipInstance(f"{label} does not apply {how}at the base commit: {tail}")
        return {rel: (root / rel).read_bytes() if (root / rel).is_file() else None for rel in paths}


def file_diff(rel: str, old: bytes | None, new: bytes | None) -> str:
    """A unified diff (git's header style) turning `old` into `new` at `rel` (None: the file
    is absent on that side), that `git apply` takes; empty when they are equal. Text files
    only: raises SkipInstance for content that is not UTF-8."""
    if old == new:
        return ""
    try:
        before = (old or b"").decode().splitlines(keepends=True)
        after = (new or b"").decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        raise SkipInstance(f"{rel} is not a UTF-8 text file; it cannot be diffed") from None
    head = [f"diff --git a/{rel} b/{rel}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    elif new is None:
        head.append("deleted file mode 100644\n")
    head.append(f"--- {'/dev/null' if old is None else 'a/' + rel}\n")
    head.append(f"+++ {'/dev/null' if new is None else 'b/' + rel}\n")
    body = difflib.unified_diff(before, after, n=3)
    lines = [line for i, line in enumerate(body) if i >= 2]  # difflib's own ---/+++ lines
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(head + out)


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


# --- a small TOML writer for task.toml (the standard library reads TOML but does not write it)


def toml_text(data: Mapping[str, object]) -> str:
    """`data` as TOML: scalars and lists first, then tables, then arrays of tables. Handles
    str, bool, int, float, lists of those, and nested mappings; raises TypeError otherwise."""
    lines: list[str] = []
    _table(lines, (), data)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(lines: list[str], path: tuple[str, ...], data: Mapping[str, object]) -> None:
    tables = {k: v for k, v in data.items() if isinstance(v, Mapping) and not _inline(k, path)}
    arrays = {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and v and all(isinstance(i, Mapping) for i in v)
    }
    if path and any(k not in tables and k not in arrays for k in data):
        lines.append(f"\n[{'.'.join(_key(p) for p in path)}]")
    for key, value in data.items():
        if key not in tables and key not in arrays:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in tables.items():
        assert isinstance(value, Mapping)
        _table(lines, (*path, key), value)
    for key, items in arrays.items():
        assert isinstance(items, list)
        for item in items:
            lines.append(f"\n[[{'.'.join(_key(p) for p in (*path, key))}]]")
            for k, v in item.items():
                lines.append(f"{_key(k)} = {_value(v)}")


def _inline(key: str, path: tuple[str, ...]) -> bool:
    return key == "env" and path == ("environment",)  # env = { NAME = "value" }


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _string(key)


def _string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " or c == "\t" else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"  {_value(v)},\n" for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
