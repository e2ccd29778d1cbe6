"""EXPERIMENT: per spec an overlay and a smoke-gated apply step; then one parallel wave.

Per spec (not blocked by CRITIC): `.staging/iter_N/active_workspace_<spec_id>/` is seeded with
a copy of workspace/workflow.yaml, the patch is realised onto the workspace workflow (never
onto another spec's result: no stacking), and the result must pass a smoke run (one run on
the smoke task that completes, reads the task and gets a valid grade). Up to `smoke_attempts`
attempts; from the second on, the meta model's editor is asked for a repaired patch. No pass:
the spec commits as `implementer_skip`. Then every surviving (spec, pass) is one submission of
a single wave, together with the workspace's own missing passes (the paired baseline), with
worker counts from the makespan minimiser under the method-wide cap.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from loopwright._caller import carried
from loopwright.evaluation import Evaluator, aggregate
from loopwright.records import CycleRecord, FailureCategory
from loopwright.research._allocate import WaveSubmission, allocate_workers
from loopwright.research._context import RepairContext
from loopwright.research._patch import patch_summary, realise
from loopwright.research._record import (
    EvalMetadata,
    ExperimentBlock,
    RunRow,
    SmokeAttempt,
    SubmissionMeta,
    WaveBlock,
    write_json,
)
from loopwright.research._schemas import PatchOp, Repair, Spec
from loopwright.research._scope import LoopEvent, Scope
from loopwright.research._wave import WaveExecutor, WaveJob, WaveResult
from loopwright.research._workspace import PairScore, pair_of, paired_delta
from loopwright.research.phases._critic import Vetted
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_hash, workflow_to_json, workflow_to_yaml

__all__ = ["EvalBench", "ExperimentOutcome", "run_experiment"]

BASELINE = "baseline"
NotRun = Literal["implementer_skip", "critic_block"]
_SMOKE_FAILS = {
    FailureCategory.AGENT_ERROR,
    FailureCategory.DID_NOT_READ_TASK,
    FailureCategory.RUN_TIMEOUT,
    FailureCategory.INTERRUPTED,
    FailureCategory.INVALID_GRADE,
}


@dataclass(frozen=True)
class EvalBench:
    """How experiments are measured: the evaluator of the wave, the smoke evaluator (its own
    seed), the eval tasks, the smoke task, the wave executor, and the holdout tasks (measured
    by the loop, never in a wave)."""

    evaluator: Evaluator
    smoke: Evaluator
    tasks: tuple[Task, ...]
    smoke_task: Task
    executor: WaveExecutor
    run_id: str
    holdout: tuple[Task, ...] = ()


@dataclass
class _Ready:
    spec: Spec
    overlay: Path
    workflow: Workflow
    passes: int
    smoke: list[SmokeAttempt]
    first_rep: int = 0

    @property
    def reps(self) -> range:
        return range(self.first_rep, self.first_rep + self.passes)


@dataclass
class ExperimentOutcome:
    """Per spec its experiment block, pairs and records; the workspace's new baseline pairs;
    the wave; the cost of every run made (smoke included, unknown costs as 0), and the part of
    it made on offline models (sim's made-up price; the cost ledger holds no such call)."""

    blocks: dict[str, ExperimentBlock] = field(default_factory=dict)
    pairs: dict[str, tuple[PairScore, ...]] = field(default_factory=dict)
    records: dict[str, list[CycleRecord]] = field(default_factory=dict)
    workflows: dict[str, Workflow] = field(default_factory=dict)
    baseline_pairs: tuple[PairScore, ...] = ()
    baseline_records: tuple[CycleRecord, ...] = ()
    wave: WaveBlock | None = None
    cost_usd: float = 0.0
    offline_cost_usd: float = 0.0

    def add_costs(self, records: Sequence[CycleRecord]) -> None:
        """Count the cost of `records` (unknown costs as 0); a simulated run's is offline."""
        self.cost_usd += sum(r.total_cost_usd or 0.0 for r in records)
        self.offline_cost_usd += sum(r.total_cost_usd or 0.0 for r in records if r.simulated)


def run_experiment(scope: Scope, bench: EvalBench, vetted: list[Vetted]) -> ExperimentOutcome:
    """Run EXPERIMENT for every vetted spec (see the module docstring)."""
    out = ExperimentOutcome()
    trials: list[_Trial] = []
    for v in vetted:
        if v.blocked:
            out.blocks[v.spec.spec_id] = _not_run(
                "critic_block", v, (), f"CRITIC blocked it twice: {v.rounds[-1].reason}"
            )
        else:
            trials.append(_seed_overlay(scope, v))
    _apply_rounds(scope, bench, trials, out)
    ready = []
    for t in trials:
        if t.child is None:
            _write_attempts(t.overlay, t.attempts, None)
            note = f"no smoke pass in {len(t.attempts)} attempt(s): {t.error}"
            out.blocks[t.vetted.spec.spec_id] = _not_run(
                "implementer_skip", t.vetted, tuple(t.attempts), note
            )
        else:
            spec = t.vetted.spec
            ready.append(
                _Ready(
                    spec, t.overlay, t.child, _passes(scope, spec), t.attempts,
                    _first_rep(scope, spec),
                )
            )  # fmt: skip
    if ready:
        _wave(scope, bench, ready, vetted, out)
    return out


def _passes(scope: Scope, spec: Spec) -> int:
    e = scope.goal.escalation
    return e.perf_passes if spec.scale == "perf" else e.probe_passes


def _first_rep(scope: Scope, spec: Spec) -> int:
    """The first repetition a spec runs: a confirmation of a probe runs on the repetitions after
    the probe's (an independent measurement, other seeds); everything else from 0."""
    if spec.scale == "perf" and spec.confirms is not None:
        return scope.goal.escalation.probe_passes
    return 0


def _not_run(
    kind: NotRun, v: Vetted, smoke: tuple[SmokeAttempt, ...], note: str
) -> ExperimentBlock:
    """The block of a spec that was not measured; its workflow_hash is what its patch would
    have produced (the last attempt's, else CRITIC's preview), so THINK does not retry it."""
    tried = [a.workflow_hash for a in smoke if a.workflow_hash]
    return ExperimentBlock(
        outcome_class=kind,
        overlay=None, workflow_hash=tried[-1] if tried else v.preview_hash, pattern=v.pattern,
        smoke=smoke, passes=0, runs=0,
        score=None, baseline=None, delta=None, pairs=0, eval_metadata=None, note=note,
    )  # fmt: skip


@dataclass
class _Trial:
    """One spec's apply step in progress: its overlay, current patch and attempts so far."""

    vetted: Vetted
    overlay: Path
    patch: tuple[PatchOp, ...] | None
    attempts: list[SmokeAttempt] = field(default_factory=list)
    error: str = ""
    child: Workflow | None = None
    done: bool = False


def _seed_overlay(scope: Scope, v: Vetted) -> _Trial:
    overlay = scope.staging / f"active_workspace_{v.spec.spec_id}"
    overlay.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(scope.wd.workspace / "workflow.yaml", overlay / "workflow.yaml")
    trial = _Trial(v, overlay, v.spec.patch)
    if v.spec.patch is None:  # measure the workspace itself: nothing to apply or smoke
        trial.child, trial.done = scope.base, True
    return trial


def _apply_rounds(
    scope: Scope, bench: EvalBench, trials: list[_Trial], out: ExperimentOutcome
) -> None:
    """Attempt k of every spec still trying: repairs and realisations one spec after the
    other (the meta model is called in a fixed order), then their smoke runs in parallel. A
    workflow identical to one a committed spec measured (so it passed its smoke run) is not
    smoke-run again."""
    smoked = {
        e.workflow_hash: f"iter_{e.iter}/{e.spec_id}"
        for e in scope.memory.experience()
        if e.outcome_class == "measured" and e.workflow_hash
    }
    for k in range(1, scope.config.caps.smoke_attempts + 1):
        live = [t for t in trials if not t.done]
        if not live:
            return
        scope.phase(
            f"EXPERIMENT: apply + smoke, attempt {k} ({', '.join(t.vetted.spec.spec_id for t in live)})"
        )
        runs: list[tuple[_Trial, Workflow, Path]] = []
        for t in live:
            if k > 1:
                t.patch = _repair(scope, t.vetted.spec, t.patch or (), t.error, k)
                if t.patch is None:
                    t.error, t.done = f"the editor gave up after: {t.error}", True
                    continue
            realised = realise(
                scope.base, t.patch or (), rules=scope.rules, failures=scope.state.failures
            )
            if realised.child is None:
                t.error = realised.error or "the patch could not be realised"
                t.attempts.append(_attempt_row(k, t.patch or (), t.error))
                continue
            earlier = smoked.get(workflow_hash(realised.child))
            if earlier is not None:  # this exact workflow passed its smoke run before
                t.attempts.append(_reused_row(k, t.patch or (), realised.child, earlier))
                t.child, t.done = realised.child, True
                _write_overlay(t)
                continue
            runs.append((t, realised.child, t.overlay / "smoke" / f"attempt_{k}"))
        records = _smoke_runs(scope, bench, runs)
        for (t, child, root), record in zip(runs, records, strict=True):
            out.add_costs([record])
            passed = _smoke_ok(record)
            t.error = "" if passed else f"smoke run {record.run_status}, {record.failure_category}"
            run_dir = str((root / bench.smoke_task.id / "rep_0").relative_to(scope.staging))
            t.attempts.append(_smoke_row(k, t.patch or (), child, record, run_dir, t.error))
            if passed:
                t.child, t.done = child, True
                _write_overlay(t)


def _smoke_runs(
    scope: Scope, bench: EvalBench, runs: list[tuple[_Trial, Workflow, Path]]
) -> list[CycleRecord]:
    if not runs:
        return []
    workers = min(len(runs), scope.config.caps.workers)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="smoke") as pool:
        return list(pool.map(carried(_smoke_run(bench)), runs))


def _smoke_run(bench: EvalBench) -> Callable[[tuple[_Trial, Workflow, Path]], CycleRecord]:
    def one(run: tuple[_Trial, Workflow, Path]) -> CycleRecord:
        return bench.smoke.run_one(run[1], bench.smoke_task, 0, run[2], run_id=bench.run_id)

    return one


def _smoke_ok(record: CycleRecord) -> bool:
    return (
        record.run_status == "completed"
        and record.grade is not None
        and not record.grade.invalid
        and record.failure_category not in _SMOKE_FAILS
    )


def _attempt_row(k: int, patch: tuple[PatchOp, ...], error: str) -> SmokeAttempt:
    """An attempt whose patch did not realise (no smoke run)."""
    return SmokeAttempt(
        attempt=k, patch=patch_summary(patch), error=error, workflow_hash=None, run_dir=None,
        run_status=None, failure_category=None, score=None, passed=False,
    )  # fmt: skip


def _write_overlay(t: _Trial) -> None:
    assert t.child is not None
    (t.overlay / "workflow.yaml").write_text(workflow_to_yaml(t.child), encoding="utf-8")
    _write_attempts(t.overlay, t.attempts, t.patch)


def _reused_row(k: int, patch: tuple[PatchOp, ...], child: Workflow, earlier: str) -> SmokeAttempt:
    """An attempt whose workflow already passed its smoke run in `earlier`."""
    return SmokeAttempt(
        attempt=k, patch=patch_summary(patch), error=None, workflow_hash=workflow_hash(child),
        run_dir=None, run_status=None, failure_category=None, score=None, passed=True,
        reused=earlier,
    )  # fmt: skip


def _smoke_row(
    k: int,
    patch: tuple[PatchOp, ...],
    child: Workflow,
    record: CycleRecord,
    run_dir: str,
    error: str,
) -> SmokeAttempt:
    """An attempt that reached its smoke run (passed when `error` is empty)."""
    return SmokeAttempt(
        attempt=k, patch=patch_summary(patch), error=error or None,
        workflow_hash=workflow_hash(child), run_dir=run_dir, run_status=record.run_status,
        failure_category=str(record.failure_category), score=record.score_end,
        passed=not error,
    )  # fmt: skip


def _repair(
    scope: Scope, spec: Spec, patch: tuple[PatchOp, ...], error: str, k: int
) -> tuple[PatchOp, ...] | None:
    ctx = RepairContext(
        iteration=scope.n, attempt=k, spec=spec, patch=patch, error=error,
        workflow=json.loads(workflow_to_json(scope.base)),
    )  # fmt: skip
    reply = scope.meta.ask("repair", ctx, Repair, subject=spec.spec_id)
    return None if reply is None or not reply.patch else reply.patch


def _write_attempts(
    overlay: Path, attempts: list[SmokeAttempt], patch: tuple[PatchOp, ...] | None
) -> None:
    data = {
        "schema_version": 1,
        "attempts": [a.model_dump(mode="json") for a in attempts],
        "patch": [op.model_dump(mode="json") for op in patch] if patch else None,
    }
    (overlay / "realise.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _jobs(scope: Scope, bench: EvalBench, ready: list[_Ready]) -> list[WaveJob]:
    jobs = [
        WaveJob(
            f"{r.spec.spec_id}/pass_{p}",
            r.spec.spec_id,
            p,
            r.workflow,
            bench.tasks,
            r.overlay / "eval",
        )
        for r in ready
        for p in r.reps
    ]
    have = {(p.task, p.rep) for p in scope.state.pairs}
    wanted = sorted({rep for r in ready for rep in r.reps})
    for rep in scope.state.missing_reps([t.id for t in bench.tasks], wanted):
        missing = tuple(t for t in bench.tasks if (t.id, rep) not in have)
        jobs.append(
            WaveJob(
                f"{BASELINE}/pass_{rep}",
                BASELINE,
                rep,
                scope.base,
                missing,
                scope.staging / BASELINE,
            )
        )
    return jobs


def _wave(
    scope: Scope,
    bench: EvalBench,
    ready: list[_Ready],
    vetted: list[Vetted],
    out: ExperimentOutcome,
) -> None:
    jobs = _jobs(scope, bench, ready)
    caps = scope.config.caps
    allocation = allocate_workers(
        [WaveSubmission(j.key, len(j.tasks), caps.submission_workers) for j in jobs], caps.workers
    )
    total = sum(len(j.tasks) for j in jobs)
    scope.phase(
        f"EXPERIMENT: wave of {len(jobs)} submissions, {total} runs, makespan {allocation.makespan}"
    )
    done = [0]

    def progress(job: WaveJob, record: CycleRecord) -> None:
        done[0] += 1
        scope.emit(
            LoopEvent(
                "run_done",
                scope.n,
                f"{job.key} {record.task_id} {record.score_end:.2f}",
                done[0],
                total,
            )
        )

    started = time.monotonic()
    results = bench.executor.run(jobs, allocation, progress)
    wall = time.monotonic() - started
    out.wave = WaveBlock(
        executor=bench.executor.name, cap=allocation.cap, queued=allocation.queued,
        makespan_rounds=allocation.makespan, workers=dict(allocation.workers),
        episodes={j.key: len(j.tasks) for j in jobs}, wall_s=wall,
    )  # fmt: skip
    for result in results:
        out.add_costs(result.records)
    base_records = tuple(r for res in results if res.job.owner == BASELINE for r in res.records)
    out.baseline_records = base_records
    out.baseline_pairs = tuple(pair_of(r) for r in base_records)
    baseline = scope.state.with_pairs(out.baseline_pairs)
    patterns = {v.spec.spec_id: v.pattern for v in vetted}
    for r in ready:
        mine = [res for res in results if res.job.owner == r.spec.spec_id]
        _record_spec(scope, r, mine, baseline, patterns[r.spec.spec_id], out)


def _record_spec(
    scope: Scope,
    r: _Ready,
    results: list[WaveResult],
    baseline: tuple[PairScore, ...],
    pattern: tuple[str, ...],
    out: ExperimentOutcome,
) -> None:
    spec_id = r.spec.spec_id
    records = [rec for res in results for rec in res.records]
    pairs = tuple(pair_of(rec) for rec in records)
    score, base, delta, n = paired_delta(pairs, baseline)
    wave = out.wave
    assert wave is not None
    meta = EvalMetadata(
        iteration=scope.n, spec_id=spec_id, workflow_hash=workflow_hash(r.workflow), passes=r.passes,
        executor=wave.executor, wave_cap=wave.cap, wave_makespan_rounds=wave.makespan_rounds,
        wave_queued=wave.queued,
        submissions=tuple(
            SubmissionMeta(key=res.job.key, pass_idx=res.job.repetition, episodes=len(res.job.tasks),
                           workers=res.workers, wall_s=res.wall_s)
            for res in results
        ),
        runs=tuple(_row(scope, res.job, rec) for res in results for rec in res.records),
        aggregate=aggregate(records), pairs=pairs, paired_with_baseline=n,
        score=score, baseline=base, delta=delta, simulated=any(rec.simulated for rec in records),
    )  # fmt: skip
    name = f"eval_metadata_{spec_id}.json"
    write_json(scope.staging / name, meta)
    out.pairs[spec_id] = pairs
    out.records[spec_id] = records
    out.workflows[spec_id] = r.workflow
    out.blocks[spec_id] = ExperimentBlock(
        outcome_class="measured", overlay=r.overlay.name, workflow_hash=workflow_hash(r.workflow),
        pattern=pattern, smoke=tuple(r.smoke), passes=r.passes, runs=len(records), score=score,
        baseline=base, delta=delta, pairs=n, eval_metadata=name,
        note=f"{len(records)} runs over {r.passes} pass(es); {n} pairs with the workspace",
    )  # fmt: skip


def _row(scope: Scope, job: WaveJob, rec: CycleRecord) -> RunRow:
    run_dir = job.root / rec.task_id / f"rep_{rec.repetition}"
    return RunRow(
        task=rec.task_id, rep=rec.repetition, score=rec.score_end,
        resolved=rec.resolved,
        valid=rec.scored,  # a tampered run counts: as the zero it is
        failure_category=str(rec.failure_category), duration_s=rec.duration_s,
        tokens=rec.input_tokens + rec.output_tokens, cost_usd=rec.total_cost_usd,
        run_dir=str(run_dir.relative_to(scope.staging)),
    )  # fmt: skip
