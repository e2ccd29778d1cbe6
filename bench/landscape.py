"""The landscape search walks on: hand-built structures, scored task by task on mini with sim.

SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md). For each seed, each
structure below runs once on every task of the bundled `mini` benchmark; the script prints the
mean partial credit per task and structure over the seeds, and over all tasks. It says which
steps the outer loop can find and how much each is worth (docs/reflection.md cites it):

  seed         builder-only
  gate         + a verify gate that RELOOPs to the builder (3 loops)
  study        + a researcher before the builder (node_insert)
  study+gate   both
  lesson       + one prompt lesson against import errors and unverified results

    python bench/landscape.py [--seeds 10] [--jobs 2]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import Operator
from loopwright.search.mutations._guided_ops import AddGate, AddLesson, InsertAgent
from loopwright.tasks import load_benchmark
from loopwright.workflow import Workflow, builtin_workflow

LESSON = "Check for import errors: use the exact module name; verify the expected output."


def _apply(op: Operator, wf: Workflow) -> Workflow:
    result = op.apply(wf, MutationContext(rng=random.Random(0)))
    if result.child is None:
        raise RuntimeError(f"{op.name} did not apply: {result.reason}")
    return result.child


def structures() -> dict[str, Workflow]:
    seed = builtin_workflow("builder-only")
    study = _apply(InsertAgent("researcher", "builder"), seed)
    return {
        "seed": seed,
        "gate": _apply(AddGate("builder", 3), seed),
        "study": study,
        "study+gate": _apply(AddGate("builder", 3), study),
        "lesson": _apply(AddLesson("builder", LESSON), seed),
    }


def run_seed(seed: int) -> list[tuple[str, str, float]]:
    """(structure, task, partial credit) for every structure and task, one run each."""
    bench = load_benchmark("mini")
    evaluator = Evaluator(
        model_factory("sim", benchmark=bench),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(model="sim", sandbox="local", seed=seed),
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, wf in structures().items():
            evaluation = evaluator.evaluate(wf, bench.tasks, Path(tmp) / name, run_id="landscape")
            rows += [(name, r.task_id, r.score_end) for r in evaluation.records]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2, help="seeds evaluated at once")
    args = parser.parse_args()
    print("SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md).")
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        rows = [row for part in pool.map(run_seed, range(args.seeds)) for row in part]
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    for name, task, score in rows:
        scores[(name, task)].append(score)
    names = list(structures())
    tasks = sorted({task for _, task, _ in rows})
    print(f"\nmean partial credit over {args.seeds} seeds, one run per seed:")
    print(f"{'task':>26}" + "".join(f"{n:>12}" for n in names))
    for task in tasks:
        cells = "".join(f"{statistics.fmean(scores[(n, task)]):>12.3f}" for n in names)
        print(f"{task:>26}{cells}")
    overall = "".join(
        f"{statistics.fmean(s for name, _, s in rows if name == n):>12.3f}" for n in names
    )
    print(f"{'all tasks':>26}{overall}")
    print(f"\nwall {time.monotonic() - started:.0f}s")


if __name__ == "__main__":
    main()
