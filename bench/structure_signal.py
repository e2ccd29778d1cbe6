"""Can training tell the structures apart? Structures built by the search's own operators, run
on bench/search_value.py's training and holdout split, landscape by landscape (SIMULATED).

SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md). For each landscape
(`sim:L?family=F`), every structure below runs once on each training and each holdout task of
search_value's split (evaluation seed = the landscape, as search_value evaluates), and the script
prints each structure's training and holdout mean and mean dollars per run, which structure is
best on each split (ties: the cheaper), and whether the holdout's best is also best, or tied
best, on training: where it is not, no search that selects on these training tasks can find it
but by chance or by cost.

Structures (made from `builder-only` with the operators guided search applies, so they are the
workflows a search would build, not the hand designs' nodes): `bv` builder + verify gate
(AddGate, 3 loops), `tbv` a test writer before its builder (InsertAgent test_writer), `brv` a
fixer (an editing reviewer) after it, `tbrv` both; and the hand designs `builder-only`,
`research-build-verify`, `thorough`.

    python bench/structure_signal.py [--landscapes 0 1 2] [--family 2] [--bench forge]
        [--train 12] [--holdout 20] [--structures bv tbv ...] [--holdout-from DIR]
        [--jobs 2] [--out DIR]   (DIR/L{n}.json: per-task scores)

`--holdout-from DIR` takes each structure's holdout runs from an earlier run's DIR/L{n}.json
(same landscapes, family and holdout) instead of running them again: a run is a function of the
landscape, the workflow and the task alone, so only the training set's runs are new.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from loopwright.evaluation import FitnessCache
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search.mutations._guided_ops import AddGate, InsertAgent
from loopwright.stats import paired_bootstrap
from loopwright.tasks import load_benchmark
from loopwright.workflow import Workflow, builtin_workflow

sys.path.insert(0, str(Path(__file__).parent))
from search_value import STRICT, model_spec, sim_evaluator, split, target_a


def structures() -> dict[str, Workflow]:
    """The structures, in a fixed order (the module docstring names them)."""
    ctx = MutationContext(rng=random.Random(0))

    def child(result: MutationResult) -> Workflow:
        assert result.child is not None, result.reason
        return result.child

    bare = builtin_workflow("builder-only")
    bv = child(AddGate("builder", 3).apply(bare, ctx))
    tbv = child(InsertAgent("test_writer", "builder").apply(bv, ctx))
    return {
        "builder-only": bare,
        "bv": bv,
        "tbv": tbv,
        "brv": child(InsertAgent("fixer", "builder").apply(bv, ctx)),
        "tbrv": child(InsertAgent("fixer", "builder").apply(tbv, ctx)),
        "research-build-verify": builtin_workflow("research-build-verify"),
        "thorough": builtin_workflow("thorough"),
    }


def run_landscape(landscape: int, args: argparse.Namespace) -> dict[str, Any]:
    """Per structure and split: task -> [score, dollars]."""
    bench = load_benchmark(args.bench)
    train, holdout = split(bench, args.train, args.holdout)
    by_id = {t.id: t for t in bench.tasks}
    earlier: dict[str, Any] = {}
    if args.holdout_from is not None:
        earlier = json.loads((args.holdout_from / f"L{landscape}.json").read_text())
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = FitnessCache(Path(tmp) / "cache.db")
        ev = sim_evaluator(model_spec(landscape, args.family), bench, landscape, cache)
        for name, wf in structures().items():
            if args.structures and name not in args.structures:
                continue
            row = {}
            if name in earlier:
                if sorted(earlier[name]["holdout"]) != sorted(holdout):
                    raise SystemExit(f"{args.holdout_from}: L{landscape}'s holdout is not this one")
                row["holdout"] = earlier[name]["holdout"]
            for part, ids in (("train", train), ("holdout", holdout)):
                if part in row:
                    continue
                e = ev.evaluate(wf, [by_id[t] for t in ids], Path(tmp) / name / part, run_id=name)
                row[part] = {
                    r.task_id: [r.grade.score if r.grade else 0.0, r.total_cost_usd or 0.0]
                    for r in e.records
                }
            out[name] = {"train": row["train"], "holdout": row["holdout"]}
    return out


def _mean(row: dict[str, list[float]], i: int) -> float:
    return statistics.fmean(v[i] for v in row.values())


def best(result: dict[str, Any], part: str) -> str:
    """The best structure on `part` (ties: the cheaper)."""
    return min(result, key=lambda n: (-_mean(result[n][part], 0), _mean(result[n][part], 1)))


def report(results: dict[int, dict[str, Any]]) -> None:
    print("SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md).")
    names = list(next(iter(results.values())))
    print("train / holdout mean partial credit ($ per run on holdout), per landscape:")
    print(" land " + " ".join(f"{n[:21]:>24}" for n in names))
    found = 0
    for land, res in sorted(results.items()):
        cells = [
            f"{_mean(res[n]['train'], 0):.3f}/{_mean(res[n]['holdout'], 0):.3f} "
            f"(${_mean(res[n]['holdout'], 1):.2f})"
            for n in names
        ]
        print(f" {land:>4} " + " ".join(f"{c:>24}" for c in cells))
    print()
    for land, res in sorted(results.items()):
        top = best(res, "holdout")
        train_top = max(_mean(res[n]["train"], 0) for n in res)
        tied = [n for n in res if _mean(res[n]["train"], 0) == train_top]
        on_train = top in tied
        found += on_train
        print(
            f"L{land}: best on holdout {top}; best on training {', '.join(tied)}"
            f" -> the holdout's best is {'' if on_train else 'NOT '}(tied) best on training"
        )
    print(f"the holdout's best is (tied) best on training on {found} of {len(results)} landscapes")


DESIGNS = ("builder-only", "research-build-verify", "thorough")


def _on(row: dict[str, list[float]], ids: Sequence[str], i: int) -> float:
    return statistics.fmean(row[t][i] for t in ids)


def picks(results: dict[int, dict[str, Any]], train: Sequence[str], tolerance: float) -> None:
    """What selection on the training tasks `train` would pick among the structures run, and
    how that pick fares against the best hand design on holdout, read as search_value reads
    target (a) (strictly): by fitness (the best training mean, ties: the cheaper) and
    cost-aware (the cheapest whose training mean is within `tolerance` of the best's)."""
    print(f"\nselection on the first {len(train)} training tasks (cost-aware: within {tolerance}):")
    met = {"fitness": 0, "cost-aware": 0}
    for land, res in sorted(results.items()):
        means = {n: _on(res[n]["train"], train, 0) for n in res}
        costs = {n: _on(res[n]["train"], train, 1) for n in res}
        top = max(means.values())
        chosen = {
            "fitness": min(res, key=lambda n: (-means[n], costs[n])),
            "cost-aware": min(
                (n for n in res if means[n] >= top - tolerance), key=lambda n: costs[n]
            ),
        }
        design = best({n: res[n] for n in res if n in DESIGNS}, "holdout")
        base = res[design]["holdout"]
        cells = []
        for how, name in chosen.items():
            row = res[name]["holdout"]
            ci = paired_bootstrap(
                {t: [v[0]] for t, v in base.items()}, {t: [v[0]] for t, v in row.items()}, seed=land
            )
            ratio = _mean(row, 1) / _mean(base, 1)
            verdict = target_a(ci, _mean(row, 1), _mean(base, 1))
            verdict = verdict if verdict in STRICT else "no"
            met[how] += verdict != "no"
            gain = f"{ci.gain:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}]" if ci else "-"
            cells.append(f"{how} {name} {gain} {ratio:.2f}x {verdict}")
        print(f"  L{land} (best design {design}): " + "; ".join(cells))
    print("  target (a) met if search found the pick: " + ", ".join(
        f"{how} {n}/{len(results)}" for how, n in met.items()))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landscapes", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--family", type=int, default=2)
    parser.add_argument("--bench", default="forge")
    parser.add_argument("--train", type=int, default=12)
    parser.add_argument("--holdout", type=int, default=20)
    parser.add_argument("--structures", nargs="+", default=[], choices=list(structures()))
    parser.add_argument("--holdout-from", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--prefixes", type=int, nargs="*", default=[],
        help="also read selection on the first N training tasks, for each N (default: --train)",
    )  # fmt: skip
    parser.add_argument("--tolerance", type=float, default=0.03, help="cost-aware tie (evolve's)")
    args = parser.parse_args()
    results: dict[int, dict[str, Any]] = {}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for land in args.landscapes:
            path = args.out / f"L{land}.json"
            if path.exists():
                results[land] = json.loads(path.read_text())
    todo = [] if args.report_only else [x for x in args.landscapes if x not in results]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for land, res in zip(todo, pool.map(run_landscape, todo, [args] * len(todo)), strict=True):
            results[land] = res
            if args.out is not None:
                (args.out / f"L{land}.json").write_text(json.dumps(res, indent=1) + "\n")
    report(results)
    train = split(load_benchmark(args.bench), args.train, args.holdout)[0]
    for n in args.prefixes or [args.train]:
        picks(results, train[:n], args.tolerance)


if __name__ == "__main__":
    main()
