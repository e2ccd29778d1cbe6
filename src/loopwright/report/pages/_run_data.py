"""Reading a `loopwright run` directory for its report: config, summary, and for every run of a
workflow on a task its events, record (built in memory when the run was cut off before it
wrote one), grade and diff. Reads only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.evaluation import SUMMARY_FILE, RunInputs, RunSummary
from loopwright.records import CycleAnalyzer, CycleRecord, Event, load_record, read_events
from loopwright.store import RunDir, RunMeta

__all__ = ["RunData", "TaskRun", "load_run"]

_DIFF_CAP = 40_000


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One run of one workflow on one task, one repetition, as found on disk."""

    workflow: str
    task_id: str
    repetition: int
    rel: str
    events: tuple[Event, ...]
    record: CycleRecord | None
    problem: str | None
    diff: str | None

    @property
    def finished(self) -> bool:
        return self.record is not None and self.record.run_status != "interrupted"


@dataclass(frozen=True, slots=True)
class RunData:
    """Everything the run page shows."""

    run_dir: Path
    meta: RunMeta | None
    inputs: RunInputs | None
    summary: RunSummary | None
    workflows: tuple[str, ...]
    tasks: tuple[str, ...]
    levels: dict[str, int]
    runs: tuple[TaskRun, ...]
    simulated: bool

    @property
    def expected_runs(self) -> int | None:
        if self.inputs is None:
            return None
        return len(self.workflows) * len(self.tasks) * self.inputs.settings.repetitions

    @property
    def partial_reasons(self) -> list[str]:
        """Why the run is incomplete; [] for a finished one."""
        reasons = []
        if self.summary is None:
            reasons.append("no summary.json: the run did not finish")
        expected = self.expected_runs
        if expected is not None and len(self.runs) < expected:
            reasons.append(f"{len(self.runs)} of {expected} task runs were started")
        cut = [r for r in self.runs if not r.finished]
        if cut:
            reasons.append(f"{len(cut)} task run(s) cut off before they ended")
        return reasons


def load_run(run_dir: Path) -> RunData:
    """Read a run directory written by `loopwright run` (docs/runs.md)."""
    meta = RunDir(run_dir).meta()
    inputs = _inputs(meta)
    workflows = [w.name for w in inputs.workflows] if inputs else []
    workflows = workflows or sorted(p.parent.name for p in run_dir.glob("*/workflow.yaml"))
    tasks = list(inputs.tasks) if inputs else []
    summary = _summary(run_dir)
    runs = []
    for wf in workflows:
        for rep in sorted((run_dir / wf).glob("*/rep_*"), key=_rep_key):
            runs.append(_task_run(run_dir, wf, rep))
    found = {r.task_id for r in runs}
    tasks = tasks or sorted(found)
    order = {t: i for i, t in enumerate(tasks)}
    runs.sort(
        key=lambda r: (
            order.get(r.task_id, len(order)),
            r.task_id,
            workflows.index(r.workflow),
            r.repetition,
        )
    )
    simulated = bool(summary and summary.simulated) or any(
        r.record is not None and r.record.simulated for r in runs
    )
    return RunData(
        run_dir=run_dir,
        meta=meta,
        inputs=inputs,
        summary=summary,
        workflows=tuple(workflows),
        tasks=tuple(tasks),
        levels=_levels(summary),
        runs=tuple(runs),
        simulated=simulated or bool(meta and meta.simulated),
    )


def _rep_key(path: Path) -> tuple[str, int]:
    tail = path.name[4:]
    return path.parent.name, int(tail) if tail.isdigit() else 0


def _inputs(meta: RunMeta | None) -> RunInputs | None:
    """What the run was asked to do (config.yaml's config); None when it is not recorded."""
    if meta is None:
        return None
    try:
        return RunInputs.model_validate(meta.config)
    except ValidationError as exc:
        raise ConfigError(
            "config.yaml of this run is malformed", got=str(exc.errors()[0])[:300]
        ) from None


def _summary(run_dir: Path) -> RunSummary | None:
    path = run_dir / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        return RunSummary.model_validate_json(path.read_bytes())
    except ValidationError:
        return None  # written last, so a cut-off file means the run did not finish


def _levels(summary: RunSummary | None) -> dict[str, int]:
    if summary is None:
        return {}
    return {row.task: row.level for wf in summary.workflows for row in wf.tasks}


def _task_run(run_dir: Path, workflow: str, rep: Path) -> TaskRun:
    problem = None
    events: list[Event] = []
    record = None
    try:
        if (rep / "events.jsonl").is_file():
            events = read_events(rep / "events.jsonl")
        record = (
            load_record(rep) if (rep / "record.json").is_file() else CycleAnalyzer(rep).analyze()
        )
    except ConfigError as exc:
        problem = str(exc)
    diff = None
    if (rep / "diff.patch").is_file():
        diff = (rep / "diff.patch").read_text(encoding="utf-8", errors="replace")
        if len(diff) > _DIFF_CAP:
            diff = (
                diff[:_DIFF_CAP]
                + f"\n... ({len(diff) - _DIFF_CAP:,} more characters in diff.patch)\n"
            )
    return TaskRun(
        workflow=workflow,
        task_id=rep.parent.name,
        repetition=_rep_key(rep)[1],
        rel=rep.relative_to(run_dir).as_posix(),
        events=tuple(events),
        record=record,
        problem=problem,
        diff=diff,
    )
