"""Which workflow is best, landscape by landscape (the sim's families, SIMULATED).

For each landscape seed L (`--model sim:L`, or `sim:L?family=N` with `--family N`;
docs/sim-model.md "Landscapes") and each built-in task workflow (every name in the workflow
registry that is not the outer loop itself), every task of the benchmark (or, with `--holdout
M`, the first M holdout tasks of bench/search_value.py's split) runs once per evaluation seed;
the script prints the mean partial credit and the mean dollars per task run (at the price
table's made-up sim price) per workflow and landscape, marks each landscape's best hand design,
and counts how often each design is best. `--landscapes default` adds the plain `sim` as a row.

`--structures` also evaluates simple non-hand structures named in advance (STRUCTURES below,
cut from the hand designs' own nodes: no new prompt text), and counts the landscapes on which
one of them beats all the hand designs: the design-level check that a family leaves search
something to find (docs/sim-model.md, "Family 2"). With `--search-seeds`, evaluation seed s is
the landscape's own seed, as bench/search_value.py evaluates its designs.

    python bench/landscape_designs.py [--landscapes 0 1 2 3 4 5] [--seeds 2] [--bench mini]
        [--family 1] [--structures] [--holdout 0] [--search-seeds] [--jobs 2]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
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
from loopwright.workflow import Edge, Workflow

sys.path.insert(0, str(Path(__file__).parent))
from search_value import split

STRUCTURES: dict[str, tuple[str, ...]] = {
    "build-verify": ("builder", "gate_verify"),
    "study-build": ("study", "builder"),
    "tests-build-verify": ("test_writer", "builder*", "gate_verify"),
    "build-review-verify": ("builder", "reviewer", "gate_verify"),
}
"""Non-hand structures, named before any measurement: a chain of nodes, in order. `builder`
is research-build-verify's builder (its prompt mentions no test writer), `builder*` is
thorough's (it does); study, test_writer, reviewer and gate_verify are thorough's nodes."""


def spec(landscape: str, family: int = 1) -> str:
    if landscape == "default":
        return "sim"
    return f"sim:{landscape}" if family == 1 else f"sim:{landscape}?family={family}"


def structures() -> dict[str, Workflow]:
    """STRUCTURES as workflows: each a chain of the hand designs' nodes."""
    designs = hand_designs()
    thorough = {n.id: n for n in designs["thorough"].nodes}
    nodes = dict(thorough) | {
        "builder": next(n for n in designs["research-build-verify"].nodes if n.id == "builder"),
        "builder*": thorough["builder"],
    }
    out = {}
    for name, chain in STRUCTURES.items():
        chosen = [nodes[c] for c in chain]
        ids = [n.id for n in chosen]
        edges = tuple(Edge(source=a, target=b) for a, b in itertools.pairwise(ids))
        out[name] = Workflow(name=name, description=name, nodes=tuple(chosen), edges=edges)
    return out


def run_landscape(landscape: str, args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """workflow -> (mean partial credit, mean dollars per task run) on one landscape."""
    bench = load_benchmark(args.bench)
    tasks = bench.tasks
    if args.holdout > 0:
        _, holdout = split(bench, 0, args.holdout)
        tasks = tuple(bench.task(t) for t in holdout)
    workflows = hand_designs() | (structures() if args.structures else {})
    model = spec(landscape, args.family)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, wf in workflows.items():
            scores, dollars = [], []
            for seed in range(args.seeds):
                if args.search_seeds and landscape != "default":
                    seed = int(landscape) + seed
                evaluator = Evaluator(
                    model_factory(model, benchmark=bench),
                    default_sandbox("local"),
                    DEFAULT_PRICES,
                    EvalSettings(model=model, sandbox="local", seed=seed),
                )
                folder = Path(tmp) / f"{name}-{seed}"
                evaluation = evaluator.evaluate(wf, tasks, folder, run_id="designs")
                scores += [r.score_end for r in evaluation.records]
                dollars += [r.total_cost_usd or 0.0 for r in evaluation.records]
            out[name] = (statistics.fmean(scores), statistics.fmean(dollars))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landscapes", nargs="+", default=[str(i) for i in range(6)])
    parser.add_argument("--seeds", type=int, default=2, help="evaluation seeds per landscape")
    parser.add_argument("--bench", default="mini")
    parser.add_argument("--family", type=int, default=1, help="landscape family (1 or 2)")
    parser.add_argument("--structures", action="store_true", help="also the STRUCTURES")
    parser.add_argument("--holdout", type=int, default=0, help="first M holdout tasks (0: all)")
    parser.add_argument("--search-seeds", action="store_true", help="seed = landscape + s")
    parser.add_argument("--jobs", type=int, default=2, help="landscapes evaluated at once")
    args = parser.parse_args()
    print("SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md); "
          f"landscape family {args.family}.")  # fmt: skip
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        futures = [pool.submit(run_landscape, ls, args) for ls in args.landscapes]
        results = [f.result() for f in futures]
    report(args, results)
    print(f"wall {time.monotonic() - started:.0f}s")


def report(args: argparse.Namespace, results: list[dict[str, tuple[float, float]]]) -> None:
    hand = list(hand_designs())
    names = list(results[0])
    print(f"\n{args.bench}, {args.seeds} evaluation seed(s) per landscape; score (mean $/task):")
    print(f"{'landscape':>18}" + "".join(f"{n[:20]:>22}" for n in names) + f"{'best hand':>24}")
    best_counts: Counter[str] = Counter()
    beaten = 0
    for landscape, table in zip(args.landscapes, results, strict=True):
        best = max(hand, key=lambda n: table[n][0])
        best_counts[best] += 1
        others = [n for n in names if n not in hand and table[n][0] > table[best][0]]
        beaten += bool(others)
        cells = "".join(f"{table[n][0]:>12.3f} (${table[n][1]:.3f})" for n in names)
        tail = f"{best:>24}" + (f"  beaten by {', '.join(others)}" if others else "")
        print(f"{spec(landscape, args.family):>18}{cells}{tail}")
    print(
        "\nbest hand design by landscape count: "
        + ", ".join(f"{n} {c}" for n, c in best_counts.most_common())
    )
    if len(names) > len(hand):
        print(f"a non-hand structure beats every hand design on {beaten}/{len(results)}")


if __name__ == "__main__":
    main()
