"""`loopwright tasks mine`: a local git repository's own history as a validated benchmark.

The orchestration, as a sequence of named steps per commit of the window: extract the candidate
(_mine_extract.py), stage its task folder, build its environment, run its test files at base
and with the gold (twice each) to find FAIL_TO_PASS and PASS_TO_PASS, grade the flawed variants,
and keep it or drop it saying why. All of mining lives in scoring because it runs tests; the
history walk beside it (_mine_extract.py, _mine_git.py, _mine_spec.py) runs none. See
docs/importing.md, "Mining a repository".
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright._caller import carried
from loopwright.errors import LoopwrightError, UsageError, UserError
from loopwright.sandbox import (
    DockerSandbox,
    EnvironmentCache,
    Sandbox,
    TaskEnvironment,
)
from loopwright.scoring._grader import PytestGrader
from loopwright.scoring._mine_extract import (
    Candidate,
    Skip,
    extract_candidate,
    flawed_drafts,
    infer_environment,
    instruction_draft,
    task_id_for,
    task_toml,
    write_task,
)
from loopwright.scoring._mine_git import GitRepo
from loopwright.scoring._mine_runs import Split, TestRun, run_test_files, split_outcomes
from loopwright.scoring._mine_spec import ENV_DIR, MineEnvSpec, load_mine_env_spec
from loopwright.scoring._validate import build_environment, grade_variant
from loopwright.tasks import (
    Environment,
    FailureKind,
    FlawedVariant,
    Task,
    TaskSpec,
    load_benchmark_dir,
)

__all__ = [
    "MINE_REPORT_FILE",
    "MINE_SCHEMA_VERSION",
    "MineOptions",
    "MineReport",
    "MinedCommit",
    "Rewrite",
    "mine_repository",
]

MINE_SCHEMA_VERSION: Literal[1] = 1
MINE_REPORT_FILE = "mine.json"
_WORK = ".mining"

Rewrite = Callable[[str], str]
"""Turns an instruction draft into the instruction (a model's problem statement)."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MineOptions(_Strict):
    """What to mine: `repo`'s first-parent history after `since`, the newest `max_commits`
    commits touching `paths` (a glob), into `out` (absent or empty). `runs`: how many runs of
    each state a FAIL_TO_PASS test must be stable over. `jobs`: commits mined at once (threads;
    each waits on its test runs, so up to the cores helps); the result does not depend on it.
    `env_spec`: a TOML file whose `[environment]` table every task gets instead of the inferred
    one (_mine_spec.py; docs/importing.md, "Your own environment: --env-spec")."""

    repo: Path
    out: Path
    max_commits: int | None = Field(default=None, ge=1)
    since: str | None = None
    paths: str | None = None
    runs: int = Field(default=2, ge=1, le=5)
    jobs: int = Field(default=1, ge=1, le=64)
    env_spec: Path | None = None


class MinedCommit(_Strict):
    """One commit of the window: kept as task `task_id`, or dropped with `reason`."""

    commit: str
    subject: str
    kept: bool
    reason: str
    task_id: str | None = None
    level: int | None = None
    environment: str | None = None  # how the [environment] was chosen (inferred, or --env-spec)
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: int = 0
    unstable: list[str] = Field(default_factory=list)
    flawed: list[str] = Field(default_factory=list)
    dropped_variants: list[str] = Field(default_factory=list)  # "name: why"
    seconds: float = 0.0


class MineReport(_Strict):
    """`<out>/mine.json`: what was mined from where, and every commit's verdict."""

    schema_version: Literal[1] = MINE_SCHEMA_VERSION
    repo: str
    head: str
    since: str | None
    max_commits: int | None
    paths: str | None
    instruction_source: str
    commits: list[MinedCommit]
    env_spec: str | None = None  # the --env-spec file every task's [environment] came from
    total_s: float

    @property
    def kept(self) -> list[MinedCommit]:
        return [c for c in self.commits if c.kept]


@dataclass(frozen=True)
class _Context:
    git: GitRepo
    out: Path
    work: Path
    grader: PytestGrader
    cache: EnvironmentCache
    rewrite: Rewrite | None
    runs: int
    env_spec: MineEnvSpec | None
    rewrite_lock: threading.Lock = field(default_factory=threading.Lock)  # one model call at a time


def mine_repository(
    options: MineOptions,
    grader: PytestGrader,
    *,
    environments: EnvironmentCache | None = None,
    rewrite: Rewrite | None = None,
    instruction_source: str = "the commit message, as is",
    on_window: Callable[[int], None] | None = None,
    on_commit: Callable[[MinedCommit], None] | None = None,
) -> MineReport:
    """Mine `options.repo` into `options.out` and return (and write as mine.json) the report.

    Each kept commit is a task folder that `bench validate` accepts; `on_window` gets the
    number of commits to examine, `on_commit` each verdict as it is made (progress display).
    Raises UsageError when `out` is a non-empty directory or the `env_spec` table names a
    container image and the grader's sandbox is not the container one, ConfigError for a path
    that is not a git repository, a `since` that names no commit or an `env_spec` file that is
    not right (load_mine_env_spec). All are raised before anything is written. A commit that
    cannot be mined is a dropped row, never an exception."""
    started = time.perf_counter()
    out = _check_out(options.out)
    spec = load_mine_env_spec(options.env_spec) if options.env_spec is not None else None
    if spec is not None:
        _check_sandbox(spec, grader.sandbox)
    git = GitRepo(options.repo)
    shas = git.window(since=options.since, max_commits=options.max_commits, paths=options.paths)
    out.mkdir(parents=True, exist_ok=True)
    if on_window is not None:
        on_window(len(shas))
    work = Path(tempfile.mkdtemp(prefix=_WORK, dir=out))
    ctx = _Context(
        git, out, work, grader, environments or EnvironmentCache(), rewrite, options.runs, spec
    )
    try:
        rows = _mine_window(ctx, shas, options.jobs, on_commit)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = MineReport(
        repo=str(git.root), head=git.resolve("HEAD"), since=options.since,
        max_commits=options.max_commits, paths=options.paths,
        instruction_source=instruction_source, commits=rows,
        total_s=round(time.perf_counter() - started, 3),
        env_spec=str(spec.path) if spec is not None else None,
    )  # fmt: skip
    _write_index(out, report)
    return report


def _mine_window(
    ctx: _Context, shas: list[str], jobs: int, on_commit: Callable[[MinedCommit], None] | None
) -> list[MinedCommit]:
    """Every commit's verdict, in window order, mined `jobs` at a time (`on_commit` as each
    finishes)."""
    if jobs == 1:
        rows = []
        for sha in shas:
            rows.append(_mine_commit(ctx, sha))
            if on_commit is not None:
                on_commit(rows[-1])
        return rows
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="mine") as pool:
        futures = {pool.submit(carried(_mine_commit), ctx, sha): sha for sha in shas}
        done: dict[str, MinedCommit] = {}
        for future in as_completed(futures):
            done[futures[future]] = row = future.result()
            if on_commit is not None:
                on_commit(row)
    return [done[sha] for sha in shas]


def _check_out(out: Path) -> Path:
    """`out` resolved; UsageError (before anything is created) when it is not new or empty."""
    out = out.expanduser().resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(
            f"--out {out} already exists and is not an empty directory",
            fix="give a new directory (mining never overwrites a benchmark)",
        )
    return out


def _check_sandbox(spec: MineEnvSpec, sandbox: Sandbox) -> None:
    """A container image (`image` / `dockerfile`) runs only in the container sandbox: elsewhere
    the tests would run without it, and FAIL_TO_PASS would be measured in another environment."""
    if spec.environment.container and not isinstance(sandbox, DockerSandbox):
        raise UsageError(
            f"--env-spec {spec.path} names a container image, which only the container "
            "sandbox runs",
            got=f"--sandbox {sandbox.name}",
            fix="mine with --sandbox docker, or give a Python environment (requirements, "
            "requirements_files, install) instead of image/dockerfile",
        )


def _write_index(out: Path, report: MineReport) -> None:
    (out / MINE_REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    description = f"mined from {report.repo} at {report.head[:12]}: {len(report.kept)} task(s)"
    (out / "benchmark.toml").write_text(f"description = {json.dumps(description)}\n", "utf-8")
    if report.kept:
        load_benchmark_dir(out)  # what `bench validate` loads: a mined task must load


def _mine_commit(ctx: _Context, sha: str) -> MinedCommit:
    """One commit's verdict; the task folder is in `ctx.out` when it is kept. A commit whose
    files cannot be read or written (an unsafe path in its tree, a git failure) is dropped
    saying why."""
    started = time.perf_counter()
    try:
        return _verdict(ctx, sha, started)
    except (LoopwrightError, OSError, ValueError, tarfile.TarError) as exc:
        return MinedCommit(
            commit=sha, subject="", kept=False,
            reason=f"could not be mined: {type(exc).__name__}: {str(exc).splitlines()[0]}",
            seconds=round(time.perf_counter() - started, 3),
        )  # fmt: skip


def _verdict(ctx: _Context, sha: str, started: float) -> MinedCommit:
    found = extract_candidate(ctx.git, sha)
    if isinstance(found, Skip):
        row = MinedCommit(commit=sha, subject=found.subject, kept=False, reason=found.reason)
    else:
        row = _mine_candidate(ctx, found)
    return row.model_copy(update={"seconds": round(time.perf_counter() - started, 3)})


def _mine_candidate(ctx: _Context, cand: Candidate) -> MinedCommit:
    task_id = task_id_for(cand)
    base = MinedCommit(
        commit=cand.sha, subject=cand.subject, kept=False, reason="", task_id=task_id
    )
    task, env_note = _stage(ctx, cand, task_id)
    base = base.model_copy(update={"level": cand.level, "environment": env_note})
    environment, problem = _environment(ctx, task)
    if problem is not None:
        return base.model_copy(update={"reason": problem})
    split = _measure(ctx, task, environment)
    if not split.fail_to_pass:
        return base.model_copy(update={"reason": split.reason, "unstable": split.unstable})
    spec = task.spec.model_copy(
        update={"fail_to_pass": split.fail_to_pass, "pass_to_pass": split.pass_to_pass}
    )
    final = _restage(task, spec)
    kept, dropped = _variants(ctx, cand, final, environment)
    instruction = _instruction(ctx, final.instruction)
    spec = spec.model_copy(update={"flawed": [v for v, _ in kept]})
    done = ctx.work / f"{task_id}.done"  # written whole, then moved into the benchmark
    write_task(done, spec, instruction, final.repo_dir, _patch(final), cand.gold,
               {v.name: files for v, files in kept})  # fmt: skip
    if (final.root / ENV_DIR).is_dir():  # the --env-spec files the environment was built from
        shutil.move(final.root / ENV_DIR, done / ENV_DIR)
    done.rename(ctx.out / task_id)
    return base.model_copy(
        update={
            "kept": True, "reason": f"{len(split.fail_to_pass)} fail-to-pass test(s)",
            "fail_to_pass": split.fail_to_pass, "pass_to_pass": len(split.pass_to_pass),
            "unstable": split.unstable, "flawed": [v.name for v, _ in kept],
            "dropped_variants": dropped,
        }
    )  # fmt: skip


def _instruction(ctx: _Context, draft: str) -> str:
    if ctx.rewrite is None:
        return draft
    with ctx.rewrite_lock:  # a model instance answers one call at a time (models.ChatModel)
        return ctx.rewrite(draft)


def _stage(ctx: _Context, cand: Candidate, task_id: str) -> tuple[Task, str]:
    """The candidate's task folder in the work directory, its test ids not known yet: each test
    file stands for all its tests (the grader runs whole files). Its `[environment]` is the
    `--env-spec` one (its environment/ directory copied in) when given, else the inferred one."""
    stage = ctx.work / task_id
    export = ctx.work / f"{task_id}.repo"
    ctx.git.export(cand.base, export)
    environment, note = infer_environment(export)
    if ctx.env_spec is not None:
        note = (
            f"--env-spec {ctx.env_spec.path} (replaces the inferred [environment] "
            f"{_inline(environment)}; inferred from: {note})"
        )
        environment = ctx.env_spec.environment
    spec = TaskSpec(
        id=task_id, level=cand.level, summary=cand.subject[:120], test_dir=cand.test_dir,
        hidden_tests_layout="patch", environment=environment,
        fail_to_pass=[f"{path}::lw_mine_probe" for path in cand.test_files],
    )  # fmt: skip
    instruction = instruction_draft(cand)
    write_task(stage, spec, instruction, export, cand.test_patch, cand.gold, {})
    if ctx.env_spec is not None:
        ctx.env_spec.copy_into(stage)
    return Task(spec=spec, root=stage, instruction=instruction), note


def _inline(environment: Environment | None) -> str:
    """An `[environment]` table on one line (its values as JSON), as the report shows the
    inferred one; "none" for no table."""
    if environment is None:
        return "none"
    fields = environment.model_dump(mode="json", exclude_defaults=True)
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in fields.items()) + " }"


def _restage(task: Task, spec: TaskSpec) -> Task:
    (task.root / "task.toml").write_text(task_toml(spec), encoding="utf-8")
    return Task(spec=spec, root=task.root, instruction=task.instruction)


def _patch(task: Task) -> bytes:
    return task.hidden_tests_patch.read_bytes()


def _environment(ctx: _Context, task: Task) -> tuple[TaskEnvironment | None, str | None]:
    """The task's built environment (`build_environment`: under `--sandbox docker` a
    `dockerfile` image is built, and each test run's container starts from the task's image,
    `run_test_files`), or why it could not be built, in one line."""
    try:
        return build_environment(task, ctx.cache, ctx.grader.sandbox), None
    except LoopwrightError as exc:
        what = exc.render() if isinstance(exc, UserError) else str(exc)
        return None, "environment: " + what.strip().splitlines()[0]


def _measure(ctx: _Context, task: Task, environment: TaskEnvironment | None) -> Split:
    """Runs at base and with the gold: one pair first (most candidates are decided by it),
    then the others for stability."""

    def run(overlay: Path | None) -> TestRun:
        return run_test_files(task, overlay, ctx.grader, ctx.work, environment)

    before, after = [run(None)], [run(task.solution_dir)]
    first = split_outcomes(before, after)
    if not first.fail_to_pass or ctx.runs == 1:
        return first
    for _ in range(ctx.runs - 1):
        before.append(run(None))
        after.append(run(task.solution_dir))
    return split_outcomes(before, after)


def _variants(
    ctx: _Context, cand: Candidate, task: Task, environment: TaskEnvironment | None
) -> tuple[list[tuple[FlawedVariant, dict[str, bytes]]], list[str]]:
    """The flawed drafts that fail at least one FAIL_TO_PASS (graded as `bench validate` does),
    and why the others were dropped."""
    kept, dropped = [], []
    for draft in flawed_drafts(cand):
        overlay = ctx.work / f"{task.id}.flawed-{draft.name}"
        for rel, content in draft.files.items():
            (overlay / rel).parent.mkdir(parents=True, exist_ok=True)
            (overlay / rel).write_bytes(content)
        grade = grade_variant(task, overlay, ctx.grader, ctx.work, environment)
        shutil.rmtree(overlay, ignore_errors=True)
        if grade.invalid:
            dropped.append(f"{draft.name}: invalid grade ({grade.invalid_reason})")
        elif grade.score >= 1.0:
            dropped.append(f"{draft.name}: passes every fail-to-pass test")
        else:
            kind = FailureKind.PARTIAL_FEATURE
            kept.append(
                (
                    FlawedVariant(name=draft.name, kind=kind, description=draft.description),
                    draft.files,
                )
            )
    return kept, dropped
