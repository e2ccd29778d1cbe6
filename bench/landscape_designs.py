"""Which built-in hand design is best, landscape by landscape (the sim family, SIMULATED).

For each landscape seed L (`--model sim:L`, docs/sim-model.md "Landscapes") and each built-in
task workflow (every name in the workflow registry that is not the outer loop itself), every
task of the benchmark runs once per evaluation seed; the script prints the mean partial credit
and the mean dollars per task run (at the price table's made-up sim price) per design and
landscape, marks each landscape's best design, and counts how often each design is best.
`--landscapes default` adds the plain `sim` as a row for comparison.

    python bench/landscape_designs.py [--landscapes 0 1 2 3 4 5] [--seeds 2] [--bench mini]
        [--jobs 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.search import hand_designs
from loopwright.tasks import load_benchmark


def spec(landscape: str) -> str:
    return "sim" if landscape == "default" else f"sim:{landscape}"


def run_landscape(landscape: str, seeds: int, bench_name: str) -> dict[str, tuple[float, float]]:
    """design -> (mean partial credit, mean dollars per task run) on one landscape."""
    bench = load_benchmark(bench_name)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, wf in hand_designs().items():
            scores, dollars = [], []
            for seed in range(seeds):
                evaluator = Evaluator(
                    model_factory(spec(landscape), benchmark=bench),
                    default_sandbox("local"),
                    DEFAULT_PRICES,
                    EvalSettings(model=spec(landscape), sandbox="local", seed=seed),
                )
                folder = Path(tmp) / f"{name}-{seed}"
                evaluation = evaluator.evaluate(wf, bench.tasks, folder, run_id="designs")
                scores += [r.score_end for r in evaluation.records]
                dollars += [r.total_cost_usd or 0.0 for r in evaluation.records]
            out[name] = (statistics.fmean(scores), statistics.fmean(dollars))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landscapes", nargs="+", default=[str(i) for i in range(6)])
    parser.add_argument("--seeds", type=int, default=2, help="evaluation seeds per landscape")
    parser.add_argument("--bench", default="mini")
    parser.add_argument("--jobs", type=int, default=2, help="landscapes evaluated at once")
    args = parser.parse_args()
    print("SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md).")
    started = time.monotonic()
    names = list(hand_designs())
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        futures = [pool.submit(run_landscape, ls, args.seeds, args.bench) for ls in args.landscapes]
        results = [f.result() for f in futures]
    print(f"\n{args.bench}, {args.seeds} evaluation seed(s) per landscape; score (mean $/task):")
    print(f"{'landscape':>10}" + "".join(f"{n:>28}" for n in names) + f"{'best':>24}")
    best_counts: Counter[str] = Counter()
    for landscape, table in zip(args.landscapes, results, strict=True):
        best = max(names, key=lambda n: table[n][0])
        best_counts[best] += 1
        cells = "".join(f"{table[n][0]:>18.3f} (${table[n][1]:.4f})" for n in names)
        print(f"{spec(landscape):>10}{cells}{best:>24}")
    print(
        "\nbest design by landscape count: "
        + ", ".join(f"{n} {c}" for n, c in best_counts.most_common())
    )
    print(f"wall {time.monotonic() - started:.0f}s")


if __name__ == "__main__":
    main()
