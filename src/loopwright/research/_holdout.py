"""The research loop's holdout: tasks split off at init that the meta model never sees.

THINK, CRITIC, DISTILL and REFLECT read the eval tasks' measurements only; the holdout is
measured by the loop itself, at every adoption (the adopted workflow against the workspace it
replaces) and when a run ends (the workspace against the seed), each side on every holdout
task at repetitions 0..holdout_passes-1. The gain is a paired bootstrap over holdout tasks
(seeded; tasks are the unit); a train gain more than `overfit_gap` above the holdout gain is the
overfit signal (the v1 post-mortem's lesson: 0.785 on training, 0.485 on holdout).

Files under `holdout/` (never read by a meta phase):
- `seed_workflow.yaml`: the workflow the run started from (written at init);
- `scores.jsonl`: one `HoldoutScores` line per measured workflow (by hash, reused);
- `checks.jsonl`: one `HoldoutCheck` line per check;
- `runs/<hash12>/<task>/rep_<k>/`: the runs themselves.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loopwright._caller import carried
from loopwright.records import CycleRecord
from loopwright.research._config import ResearchConfig, WorkDir
from loopwright.research.phases._experiment import EvalBench
from loopwright.runtime import runtime_catalog
from loopwright.search import OverfitDetector
from loopwright.stats import paired_bootstrap
from loopwright.tasks import Task
from loopwright.workflow import Workflow, load_workflow, workflow_hash, workflow_to_yaml

__all__ = ["HOLDOUT_SCHEMA_VERSION", "Holdout", "HoldoutCheck", "HoldoutScores", "read_checks"]

HOLDOUT_SCHEMA_VERSION = 1


class _H(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HoldoutScores(_H):
    """One workflow's holdout runs: task -> partial credit per repetition (invalid grades left
    out; a tampered run is its zero); `simulated` when a run was made with the sim."""

    schema_version: int = HOLDOUT_SCHEMA_VERSION
    workflow_hash: str
    repetitions: int
    scores: dict[str, tuple[float, ...]]
    cost_usd: float
    simulated: bool


class HoldoutCheck(_H):
    """One check: `workflow_hash` against `reference_hash` on the holdout. `kind` is
    "adoption" (iteration `iteration` adopted it; reference: the workspace it replaced) or
    "final" (the workspace when a run ended; reference: the seed). `train_gain` is what the
    loop saw on the eval tasks (the adopted spec's paired delta; for "final" the workspace's
    score minus the seed's on the first adoption's pairs); `holdout_gain`, `low`, `high` the
    paired bootstrap over `n_tasks` holdout tasks (None without a shared task). `overfit` when
    train_gain - holdout_gain > `threshold`."""

    schema_version: int = HOLDOUT_SCHEMA_VERSION
    kind: Literal["adoption", "final"]
    iteration: int
    workflow_hash: str
    reference_hash: str
    train_gain: float | None
    holdout_score: float | None
    reference_score: float | None
    holdout_gain: float | None
    low: float | None
    high: float | None
    n_tasks: int
    repetitions: int
    gap: float | None
    threshold: float
    overfit: bool
    simulated: bool

    def line(self) -> str:
        """One line for the console and `research status`."""
        what = f"iter {self.iteration} adoption" if self.kind == "adoption" else "final vs seed"
        train = "-" if self.train_gain is None else f"{self.train_gain:+.3f}"
        if self.holdout_gain is None or self.low is None or self.high is None:
            hold = "no shared holdout task"
        else:
            hold = (
                f"{self.holdout_gain:+.3f} (95% CI {self.low:+.3f} .. {self.high:+.3f}, "
                f"{self.n_tasks} tasks x {self.repetitions} rep)"
            )
        flag = f" OVERFIT (gap {self.gap:+.3f} > {self.threshold})" if self.overfit else ""
        sim = " [simulated]" if self.simulated else ""
        return f"{what}: train {train}, holdout {hold}{flag}{sim}"


def read_checks(wd: WorkDir) -> list[HoldoutCheck]:
    """Every check of a working directory, in order (none before its first)."""
    return [HoldoutCheck.model_validate_json(x) for x in _lines(wd.holdout / "checks.jsonl")]


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


class Holdout:
    """Measures workflows on a working directory's holdout and appends the checks. No-op
    (`enabled` False) when the config has no holdout tasks."""

    def __init__(self, wd: WorkDir, config: ResearchConfig, bench: EvalBench) -> None:
        self.wd = wd
        self.config = config
        self.bench = bench
        self.tasks: tuple[Task, ...] = bench.holdout
        self.passes = config.eval.holdout_passes

    @property
    def enabled(self) -> bool:
        return bool(self.tasks)

    def seed_workflow(self) -> Workflow | None:
        path = self.wd.holdout / "seed_workflow.yaml"
        return load_workflow(path, catalog=runtime_catalog()) if path.is_file() else None

    def checked(self, workflow: Workflow, reference: Workflow) -> bool:
        """Whether the latest final check already compared these two workflows."""
        checks = [c for c in read_checks(self.wd) if c.kind == "final"]
        return bool(checks) and (checks[-1].workflow_hash, checks[-1].reference_hash) == (
            workflow_hash(workflow),
            workflow_hash(reference),
        )

    def check(
        self,
        kind: Literal["adoption", "final"],
        iteration: int,
        workflow: Workflow,
        reference: Workflow,
        train_gain: float | None,
    ) -> HoldoutCheck:
        """Measure both workflows (or reuse their scores), append the check and return it."""
        mine, theirs = self.scores(workflow), self.scores(reference)
        ci = paired_bootstrap(theirs.scores, mine.scores, seed=self.config.seed)
        gain = ci.gain if ci else None
        signal = OverfitDetector(self.config.eval.overfit_gap).check(train_gain, gain)
        result = HoldoutCheck(
            kind=kind, iteration=iteration, workflow_hash=mine.workflow_hash,
            reference_hash=theirs.workflow_hash, train_gain=train_gain,
            holdout_score=_mean(mine), reference_score=_mean(theirs), holdout_gain=gain,
            low=ci.low if ci else None, high=ci.high if ci else None,
            n_tasks=ci.n_tasks if ci else 0, repetitions=self.passes, gap=signal.gap,
            threshold=signal.threshold, overfit=signal.alarm,
            simulated=mine.simulated or theirs.simulated,
        )  # fmt: skip
        _append(self.wd.holdout / "checks.jsonl", result)
        return result

    def scores(self, workflow: Workflow) -> HoldoutScores:
        """The workflow's holdout scores: from scores.jsonl, else measured now and appended."""
        digest = workflow_hash(workflow)
        for raw in _lines(self.wd.holdout / "scores.jsonl"):
            known = HoldoutScores.model_validate_json(raw)
            if known.workflow_hash == digest and known.repetitions == self.passes:
                return known
        root = self.wd.holdout / "runs" / digest[:12]
        jobs = [(task, rep) for task in self.tasks for rep in range(self.passes)]
        workers = max(1, min(len(jobs), self.config.caps.workers))

        def one(job: tuple[Task, int]) -> CycleRecord:
            return self.bench.evaluator.run_one(
                workflow, job[0], job[1], root, run_id=self.bench.run_id
            )

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="holdout") as pool:
            records = list(pool.map(carried(one), jobs))
        per_task: dict[str, list[float]] = {}
        for record in records:
            if record.scored:
                per_task.setdefault(record.task_id, []).append(record.score_end)
        measured = HoldoutScores(
            workflow_hash=digest,
            repetitions=self.passes,
            scores={t: tuple(v) for t, v in sorted(per_task.items())},
            cost_usd=sum(r.total_cost_usd or 0.0 for r in records),
            simulated=any(r.simulated for r in records),
        )
        _append(self.wd.holdout / "scores.jsonl", measured)
        return measured


def write_seed(wd: WorkDir, workflow: Workflow) -> None:
    """Keep the seed workflow (at init) for the final check against it."""
    wd.holdout.mkdir(parents=True, exist_ok=True)
    (wd.holdout / "seed_workflow.yaml").write_text(workflow_to_yaml(workflow), encoding="utf-8")


def overfit_of(checks: Sequence[HoldoutCheck]) -> bool | None:
    """The run's overfit signal: the latest check's (None before any check)."""
    return checks[-1].overfit if checks else None


def _mean(scores: HoldoutScores) -> float | None:
    values = [v for vs in scores.scores.values() for v in vs]
    return sum(values) / len(values) if values else None


def _append(path: Path, model: BaseModel) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(model.model_dump(mode="json"), sort_keys=True) + "\n")
