"""Parallel efficiency of the executors: one generation's jobs with 1 and 2 workers, local and Ray.

The jobs are those of one generation: every workflow of a population (default: builder-only,
research-build-verify) on every chosen mini task, one repetition, the same seed throughout.
The model is the simulated one with a per-call latency (`sim?latency=L`, default 0.5 s), so a
job spends most of its time waiting the way a real model call makes it wait, not starting up.
For each executor and worker count, the wall time of running all the jobs is measured after
an untimed warm-up batch (so that Ray's worker processes have imported loopwright; cluster
start-up is reported apart), `--repeat` times with the executors interleaved, and the
fastest try is kept (the machine may be shared: the minimum is the least disturbed). Printed:

  speed-up   = T(1 worker) / T(w workers), same executor
  efficiency = T(1 worker) / (w x T(w workers))          (target, local, 2 workers: >= 0.85)
  overhead/job = mean over jobs of (time the executor saw the job take - the run's own
                 duration, record.duration_s): forking or scheduling, shipping, collecting
  Ray overhead per job beyond local = overhead/job(ray) - overhead/job(local)  (target: < 50 ms),
                 and, noisier, (T_ray(w) - T_local(w)) x w / jobs

and whether every executor and worker count produced the same scores (they must).

    python bench/parallel_efficiency.py [--latency 0.5] [--tasks ID,ID] [--workers 1,2]
        [--executors local,ray] [--ray-address HOST:PORT] [--sandbox local] [--repeat 2]

Without --ray-address, Ray runs as a local instance started here with as many CPUs as workers.
Results are SIMULATED (the offline sim model), and timings depend on how busy the machine is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from loopwright.evaluation import (
    EvalJob,
    EvalSettings,
    Evaluator,
    Executor,
    LocalExecutor,
)
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.tasks import load_benchmark
from loopwright.workflow import builtin_workflow

DEFAULT_TASKS = "l1-slugify,l1-rle-decode,l1-roman-numerals,l1-ring-resize"
DEFAULT_WORKFLOWS = "builder-only,research-build-verify"


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--latency", type=float, default=0.5, help="seconds per sim model call")
    p.add_argument("--tasks", default=DEFAULT_TASKS)
    p.add_argument("--workflows", default=DEFAULT_WORKFLOWS)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--executors", default="local,ray")
    p.add_argument("--ray-address", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sandbox", default="local")
    p.add_argument("--repeat", type=int, default=2, help="timed tries per setting (min kept)")
    return p.parse_args()


def make(kind: str, workers: int, address: str | None) -> tuple[Executor, float]:
    """The executor, and the seconds it took to get ready (Ray: connecting or starting)."""
    started = time.monotonic()
    if kind == "local":
        return LocalExecutor(workers), 0.0
    from loopwright.evaluation._executor_ray import RayExecutor

    executor = RayExecutor(address, workers=workers)
    executor.connect()
    return executor, time.monotonic() - started


def jobs_for(root: Path, args: argparse.Namespace, rep: int) -> list[EvalJob]:
    bench = load_benchmark("mini")
    tasks = [bench.task(t.strip()) for t in args.tasks.split(",")]
    workflows = [builtin_workflow(w.strip()) for w in args.workflows.split(",")]
    return [EvalJob(wf, t, rep, root / wf.name, root.name) for wf in workflows for t in tasks]


def timed(
    executor: Executor, evaluator: Evaluator, jobs: list[EvalJob]
) -> tuple[float, list[float], float]:
    """Wall time of the batch, the scores in job order, and the executor's mean overhead per
    job: the time it saw the job take minus the time the run itself took (record.duration_s)."""
    started = time.monotonic()
    results = sorted(executor.run(evaluator, jobs), key=lambda r: r.index)
    elapsed = time.monotonic() - started
    bad = [r for r in results if r.status != "ok"]
    if bad:
        raise SystemExit(f"{len(bad)} job(s) did not finish: {bad[0].record.run_error}")
    overhead = statistics.fmean(r.wall_s - r.record.duration_s for r in results)
    return elapsed, [r.record.score_end for r in results], overhead


def main() -> None:
    args = parse()
    scratch = Path(tempfile.mkdtemp(prefix="lwb-", dir="/tmp"))  # short: Ray's socket paths
    # A local Ray started here keeps its session under the scratch directory and does not
    # create ~/.ray/auth_token (token auth on by default for local clusters since Ray 2.5x).
    os.environ.setdefault("RAY_TMPDIR", str(scratch))
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    spec = f"sim?latency={args.latency}"
    bench = load_benchmark("mini")
    evaluator = Evaluator(
        model_factory(spec, benchmark=bench),
        default_sandbox(args.sandbox),
        DEFAULT_PRICES,
        EvalSettings(model=spec, sandbox=args.sandbox, seed=args.seed),
    )
    workers = [int(w) for w in args.workers.split(",")]
    kinds = args.executors.split(",")
    times: dict[tuple[str, int], float] = {}
    scores: dict[tuple[str, int], list[float]] = {}
    overheads: dict[tuple[str, int], list[float]] = {}
    n_jobs = 0
    try:
        for w in workers:
            executors = {kind: make(kind, w, args.ray_address) for kind in kinds}
            try:
                for kind, (executor, ready_s) in executors.items():
                    warm = jobs_for(scratch / f"{kind}-{w}" / "warm-up", args, rep=100)[:w]
                    timed(executor, evaluator, warm)
                    if ready_s:
                        print(f"{kind} with {w} worker(s) ready in {ready_s:.1f}s (untimed)")
                for attempt in range(args.repeat):  # interleaved, so load changes hit both
                    for kind, (executor, _) in executors.items():
                        jobs = jobs_for(scratch / f"{kind}-{w}" / f"run{attempt}", args, rep=0)
                        n_jobs = len(jobs)
                        elapsed, scores[kind, w], extra = timed(executor, evaluator, jobs)
                        overheads.setdefault((kind, w), []).append(extra)
                        times[kind, w] = min(times.get((kind, w), elapsed), elapsed)
                        print(f"{kind:5s} {w} worker(s), try {attempt + 1}: {elapsed:7.2f}s "
                              f"for {n_jobs} jobs", flush=True)  # fmt: skip
            finally:
                for executor, _ in executors.values():
                    executor.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report(times, scores, overheads, workers, n_jobs, args)


def report(
    times: dict[tuple[str, int], float],
    scores: dict[tuple[str, int], list[float]],
    overheads: dict[tuple[str, int], list[float]],
    workers: list[int],
    n_jobs: int,
    args: argparse.Namespace,
) -> None:
    print(f"\nSIMULATED: sim model, latency {args.latency}s per call; {n_jobs} jobs "
          f"({args.workflows} x {args.tasks}), seed {args.seed}; fastest of {args.repeat}")  # fmt: skip
    print(f"{'executor':8s} {'workers':>7s} {'wall s':>8s} {'speed-up':>8s} {'efficiency':>10s}"
          f" {'overhead/job':>12s}")  # fmt: skip
    for (kind, w), t in times.items():
        base = times.get((kind, 1))
        speedup = f"{base / t:8.2f}" if base else f"{'-':>8s}"
        eff = f"{base / (w * t):10.2f}" if base else f"{'-':>10s}"
        extra = statistics.fmean(overheads[kind, w]) * 1000
        print(f"{kind:8s} {w:7d} {t:8.2f} {speedup} {eff} {extra:9.0f} ms")
    for w in workers:
        if ("ray", w) in times and ("local", w) in times:
            by_wall = (times["ray", w] - times["local", w]) * w / n_jobs
            by_job = statistics.fmean(overheads["ray", w]) - statistics.fmean(overheads["local", w])
            print(f"Ray overhead per job beyond local, {w} worker(s): {by_job * 1000:+.0f} ms "
                  f"(per-job executor overhead); {by_wall * 1000:+.0f} ms (from wall times)")  # fmt: skip
    same = len({tuple(s) for s in scores.values()}) == 1
    print(f"same scores for every executor and worker count: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
