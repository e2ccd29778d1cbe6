"""Search economy: guided search alone (the baseline) against +staged, +pareto and +both.

On the bundled `mini` benchmark with the offline `sim` model (SIMULATED: the figures say how
the settings fare against the simulator, not against a real model), for each seed every arm
evolves the bare `builder-only` seed with the guided strategy, the same budget in task runs
(`max_evaluations`: training, staged and holdout runs all count), the same split (every mini
task, level by level in id order, alternately to training and holdout: 7 and 6, one repetition
each) and the same settings as bench/search_efficiency.py (population 3, elitism 1, designer
off). The arms:
  baseline   guided search as it is (tournament parents, no stages)
  staged     + `stages: [STAGE]` (a child is tried on STAGE training tasks first)
  pareto     + `parents: pareto` with `merge_rate: MERGE`
  both       + both
It prints, per arm, the task runs spent at the first generation whose best-on-training
individual reaches the holdout target (median [quartiles], runs that reached it; over the seeds
whose bare seed misses the target) and the holdout of the best at the budget (median
[quartiles]), and the ratio of each arm's median to the baseline's. Issue 19's target: `both`
reaches the target with at most 0.7x the baseline's task runs, with holdout at the budget no
worse.

The four runs of one seed share a fitness cache: a run both arms need (the seed's, any workflow
both make) runs once and counts against each arm's budget alike. With --cache-dir the cache is
shared with bench/search_efficiency.py run with the same --cache-dir: its guided arm is this
script's baseline, so one of the two runs it.

    python bench/search_economy.py [--seeds 10] [--budget 150] [--target 0.9 0.92]
        [--stage 3] [--merge 0.2] [--jobs 2] [--out DIR] [--report-only] [--cache-dir DIR]

With --out, each finished seed is kept there, and --report-only reports the seeds found.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from loopwright.evaluation import (
    CachedExecutor,
    EvalSettings,
    Evaluator,
    FitnessCache,
    SerialExecutor,
)
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.search import EvolutionEngine, EvolveConfig, load_checkpoint

sys.path.insert(0, str(Path(__file__).parent))
from search_efficiency import Outcome, _cache_folder, _fmt, _quartiles, outcome, split

from loopwright.tasks import load_benchmark

ARMS = ("baseline", "staged", "pareto", "both")


def arm_settings(arm: str, args: argparse.Namespace) -> dict[str, Any]:
    staged = {"stages": [args.stage]} if arm in ("staged", "both") else {}
    pareto = {"parents": "pareto", "merge_rate": args.merge} if arm in ("pareto", "both") else {}
    return {**staged, **pareto}


def run_seed(seed: int, args: argparse.Namespace, out: Path) -> list[Outcome]:
    """Every arm on one seed, sharing one fitness cache; a seed already finished in `out` is
    read back instead of run again."""
    bench = load_benchmark("mini")
    train, holdout = split(bench)
    folder = out / f"s{seed:03d}"
    folder.mkdir(parents=True, exist_ok=True)
    cache = FitnessCache(_cache_folder(args, folder, seed) / "cache.db")
    results = []
    for arm in ARMS:
        run_dir = folder / arm.ljust(8, "_")  # one name length: the same prompt sizes and costs
        if (run_dir / "checkpoint.json").is_file() and load_checkpoint(run_dir).stop_reason:
            results.append(outcome(seed, arm, run_dir))
            continue
        config = EvolveConfig.model_validate(
            {
                "seed_workflow": "builder-only", "bench": "mini", "sandbox": "local",
                "seed": seed, "population": args.population, "elitism": args.elitism,
                "train_tasks": train, "holdout_tasks": holdout, "holdout_repetitions": 1,
                "strategy": "guided", "exploration": args.exploration, "designs": [],
                "budgets": {"max_generations": 1000, "max_evaluations": args.budget},
                **arm_settings(arm, args),
            }
        )  # fmt: skip
        executor = CachedExecutor(SerialExecutor(), cache)
        evaluator = Evaluator(
            model_factory("sim", benchmark=bench),
            default_sandbox("local"),
            DEFAULT_PRICES,
            EvalSettings(model="sim", sandbox="local", seed=seed),
            executor=executor,
        )
        if run_dir.exists():  # a run cut off by a kill: start it again
            shutil.rmtree(run_dir)
        run_dir.mkdir()
        EvolutionEngine.start(config, run_dir, evaluator).run()
        results.append(outcome(seed, arm, run_dir, executor.hits))
    return results


def _finished(out: Path, seed: int) -> list[Outcome] | None:
    dirs = [out / f"s{seed:03d}" / arm.ljust(8, "_") for arm in ARMS]
    if not all((d / "checkpoint.json").is_file() for d in dirs):
        return None
    if not all(load_checkpoint(d).stop_reason for d in dirs):
        return None
    return [outcome(seed, arm, d) for arm, d in zip(ARMS, dirs, strict=True)]


def stopped_children(out: Path, seeds: range) -> dict[str, int]:
    """Children a stage stopped, per arm, over the finished seeds in `out`."""
    counts = dict.fromkeys(ARMS, 0)
    for seed in seeds:
        for arm in ARMS:
            path = out / f"s{seed:03d}" / arm.ljust(8, "_")
            if (path / "checkpoint.json").is_file():
                counts[arm] += len(load_checkpoint(path).stopped_ids())
    return counts


def report(
    outcomes: list[Outcome], stopped: dict[str, int], args: argparse.Namespace, wall: float | None
) -> None:
    by = {a: sorted((o for o in outcomes if o.strategy == a), key=lambda o: o.seed) for a in ARMS}
    n = len(by["baseline"])
    print(f"\n{n} seeds, budget {args.budget} task runs per arm; stage {args.stage}, "
          f"merge {args.merge}")  # fmt: skip
    print("\nholdout of the best-on-training individual at the budget, median [quartiles]:")
    for arm in ARMS:
        q1, q2, q3 = _quartiles([o.holdout_end or 0.0 for o in by[arm]])
        print(f"  {arm:>8}: {q2:.3f} [{q1:.3f}, {q3:.3f}]")
    for target in args.target:
        hard = [i for i, o in enumerate(by["baseline"]) if o.seed_holdout < target]
        print(f"\ntask runs until the holdout reaches {target} ({len(hard)} seeds whose bare seed"
              " misses it): median [quartiles], reached")  # fmt: skip
        medians = {}
        for arm in ARMS:
            runs = [float(by[arm][i].to_target(target) or math.inf) for i in hard]
            if not runs:
                print(f"  {arm:>8}: -")
                continue
            q1, q2, q3 = _quartiles(runs)
            medians[arm] = q2
            reached = sum(not math.isinf(r) for r in runs)
            ratio = ""
            base = medians.get("baseline")
            if arm != "baseline" and base is not None and not math.isinf(base + q2):
                ratio = f"; {q2 / base:.2f}x the baseline"
            print(f"  {arm:>8}: {_fmt(q2)} [{_fmt(q1)}, {_fmt(q3)}], {reached}/{len(runs)}{ratio}")
    print(f"\nchildren stopped by a stage, all seeds: {stopped}")
    if wall is not None:
        print(f"wall {wall:.0f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=150, help="task runs per run")
    parser.add_argument("--target", type=float, nargs="+", default=[0.90, 0.92])
    parser.add_argument("--stage", type=int, default=3, help="minibatch size of the stage")
    parser.add_argument("--merge", type=float, default=0.2, help="merge rate of pareto arms")
    parser.add_argument("--population", type=int, default=3)
    parser.add_argument("--elitism", type=int, default=1)
    parser.add_argument("--exploration", type=float, default=0.25)
    parser.add_argument("--jobs", type=int, default=2, help="seeds evaluated at once")
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="share each seed's fitness cache here"
    )
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    parser.add_argument("--report-only", action="store_true", help="report the seeds in --out")
    args = parser.parse_args()
    print("SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md).")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    started = time.monotonic()
    if args.report_only:
        if args.out is None:
            parser.error("--report-only needs --out")
        found = [_finished(args.out, s) for s in seeds]
        outcomes = [o for f in found if f is not None for o in f]
        report(outcomes, stopped_children(args.out, seeds), args, None)
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
            futures = [pool.submit(run_seed, s, args, out) for s in seeds]
            outcomes = [o for f in futures for o in f.result()]
        stopped = stopped_children(out, seeds)
    report(outcomes, stopped, args, time.monotonic() - started)


if __name__ == "__main__":
    main()
