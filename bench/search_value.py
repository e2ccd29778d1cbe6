"""Search value: does search find better workflows than the hand designs, landscape by landscape?

SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md); each landscape seed L
is `--model sim:L`, one member of the sim's family of landscapes (family `sim-landscapes-1`,
its parameters fixed before this script measured anything); with `--family 2` it is
`--model sim:L?family=2` (family `sim-landscapes-2`, where each structure can also hurt; its
ranges fixed before this script measured search on it). The figures say how the search
strategies fare against that family, not against a real model.

For each landscape, on one benchmark (`--bench`, default mini) with a fixed split (level by
level in id order, alternately to training and to holdout; 1 repetition each):
  arms          random, guided, guided+pareto, guided+staging, guided+merge, guided+cost,
                guided+staged+pareto (stages 3 under stage_rule better, with Pareto parents),
                guided+staged+pareto+designs (the same with evolve's default designer on: its
                minimal and thorough designs in generation 0, a user's run out of the box),
                guided+staged+pareto+cost (staged + Pareto with objective cost-aware: a
                cheaper tie passes a stage, the winner is the cheapest that ties the best) and
                guided+staged+pareto+cost+designs (the same with the designer on):
                `evolve` from
                `builder-only` with the designer off (but in the +designs arm) and `--budget`
                training runs (holdout
                runs do not count: the engine's `max_train_evaluations`, so the final best's
                holdout is never cut short; they are reported apart, `holdout_runs`); the
                holdout of the best-on-training individual after each generation against the
                training runs spent so far; its final workflow is the
                last such best, except for the arms with objective cost-aware, whose final
                workflow is the run's winner: the cheapest that ties the best on holdout
                (within its interval; since 2026-12-07 also within cost_tolerance of its mean)
  hand designs  every built-in task workflow in the registry, evaluated alone on the holdout
                tasks (its task runs: the holdout tasks)
  optimum       the best holdout seen on the landscape: every design, every arm's best-on-
                training of every generation, and a long guided search (`--long-budget`, 0:
                none); the figure for each arm is its regret (optimum - its holdout) at the
                budget. An arm whose budget ran out before any holdout was measured leaves
                the user with the seed: its holdout is then `builder-only`'s (same workflow,
                same runs)
All runs of one landscape share one fitness cache, so a workflow two arms both make runs once
(and is counted against each arm's budget). Landscapes run in `--jobs` processes; each one's
outcome is written to `--out/L{n}.json` after the designs and after each arm, and a later call
with the same `--out` keeps what is there and runs only the arms (and designs) a landscape
lacks (so an arm can be added to landscapes already measured); `--report-only` reports them.

Paired tests across landscapes: the Wilcoxon signed-rank test (exact, two-sided) and the
sign test on the per-landscape differences of regret, and on task runs to reach `--regret`.
The issue's targets (issue 28):
  (a) on >= 7 of 10 landscapes, evolve's winner beats the best hand design on holdout with a
      95% paired-bootstrap interval excluding zero, or ties it (the interval includes zero; the
      strict reading also asks for a high end above zero or an exact tie) at <= 0.6x its
      dollars per task;
  (b) guided reaches the fixed regret in <= 0.6x random's task runs (median, p < 0.05);
  (c) staged + Pareto (guided+staged+pareto; also read for guided+staging, guided+pareto and
      guided+cost alone) reaches it in <= 0.7x guided's runs, holdout no worse (its final
      holdout at least guided's, landscape by landscape).
  For (b) and (c) the median ratio is printed over the landscapes both arms reached, and then
  bounded over every landscape either reached (an arm that did not reach the level counted as
  needing more than its runs spent), since the first leaves out where one arm is fastest.

Replicas (`--replicas R`): every arm also runs with R - 1 more search seeds, `ARM#1` ...
(evolve seed REPLICA_SEED x k + L; the evaluation seed stays L, so replicas share the
landscape's evaluations and differ only in the search's draws), kept in the same L{n}.json.
With R > 1 the report adds the replicated reading of (b) and (c): on each landscape the median
over the R seeds of the training runs to reach the regret level (a seed that did not reach it
counts as never, so the median is never when half or more did not) and the mean of their
regrets at the budget, then the same paired reading across landscapes as for one seed. With one
search seed a landscape's verdict rode on single draws (random reached L2 and L4 of family 2
with its first generation's children); the rule above was written before any replica ran.

    python bench/search_value.py [--landscapes 10] [--first 0] [--budget 60] [--bench mini]
        [--long-budget 0] [--regret 0.02] [--jobs 2] [--out DIR] [--report-only]
        [--train N] [--holdout M]   (subsets of the split, the levels' mix kept; 0: all)
        [--family 1]   (the landscape family: 1 or 2; recorded in each L{n}.json's settings)
        [--replicas 1] (search seeds per arm and landscape)
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
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
from loopwright.search import EvolutionEngine, EvolveConfig, hand_designs, load_checkpoint
from loopwright.stats import BootstrapCI, paired_bootstrap, sign_test, wilcoxon
from loopwright.tasks import Benchmark, load_benchmark

FAMILIES = {1: "sim-landscapes-1", 2: "sim-landscapes-2"}


def model_spec(landscape: int, family: int) -> str:
    """The model spec of landscape `landscape` of `family` (family 1: plain `sim:L`)."""
    return f"sim:{landscape}" if family == 1 else f"sim:{landscape}?family={family}"


ARMS: dict[str, dict[str, Any]] = {
    "random": {"strategy": "random"},
    "guided": {"strategy": "guided"},
    "guided+pareto": {"strategy": "guided", "parents": "pareto"},
    "guided+cost": {"strategy": "guided", "objective": "cost-aware"},
    "guided+staging": {"strategy": "guided", "stages": (3,)},
    "guided+merge": {"strategy": "guided", "parents": "pareto", "merge_rate": 0.5},
    "guided+staged+pareto": {
        "strategy": "guided",
        "stages": (3,),
        "stage_rule": "better",
        "parents": "pareto",
    },
    "guided+staged+pareto+cost": {
        "strategy": "guided",
        "stages": (3,),
        "stage_rule": "better",
        "parents": "pareto",
        "objective": "cost-aware",
    },
    "guided+staged+pareto+designs": {
        "strategy": "guided",
        "stages": (3,),
        "stage_rule": "better",
        "parents": "pareto",
        "designs": ["minimal", "thorough"],
    },
    "guided+staged+pareto+cost+designs": {
        "strategy": "guided",
        "stages": (3,),
        "stage_rule": "better",
        "parents": "pareto",
        "objective": "cost-aware",
        "designs": ["minimal", "thorough"],
    },
}


def split(
    bench: Benchmark, n_train: int = 0, n_holdout: int = 0
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every task, level by level in id order, alternately to training and to holdout; with
    `n_train` / `n_holdout` > 0, that many of each, taken round-robin over the levels (so each
    subset keeps the levels' mix; forge's 120 tasks are more than a bounded run can afford)."""
    train: list[list[str]] = []
    holdout: list[list[str]] = []
    for level in sorted({t.level for t in bench.tasks}):
        ids = sorted(t.id for t in bench.tasks if t.level == level)
        train.append(ids[0::2])
        holdout.append(ids[1::2])
    return _take(train, n_train), _take(holdout, n_holdout)


def _take(by_level: list[list[str]], n: int) -> tuple[str, ...]:
    """All ids (n <= 0), else the first n taken round-robin over the levels."""
    if n <= 0:
        return tuple(i for ids in by_level for i in ids)
    out: list[str] = []
    for row in itertools.zip_longest(*by_level):
        out += [i for i in row if i is not None]
    return tuple(out[:n])


def sim_evaluator(spec: str, bench: Benchmark, seed: int, cache: FitnessCache) -> Evaluator:
    """The evaluator every arm and design runs with: the sim model of `spec` on `bench`, the
    local sandbox, evaluation seed `seed`, results kept in `cache`."""
    return Evaluator(
        model_factory(spec, benchmark=bench),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(model=spec, sandbox="local", seed=seed),
        executor=CachedExecutor(SerialExecutor(), cache),
    )


def _holdout_of(results: Any) -> tuple[dict[str, float], float]:
    """task -> score and mean dollars per run of an individual's holdout results."""
    rows = [r for r in results if r.split == "holdout" and not r.invalid]
    scores = {r.task_id: r.score for r in rows}
    usd = statistics.fmean(r.cost_usd or 0.0 for r in rows) if rows else 0.0
    return scores, usd


REPLICA_SEED = 10_000
"""Replica k >= 1 of an arm on landscape L runs evolve with seed `REPLICA_SEED * k + L` (replica 0
is the arm itself, seed L); the evaluation seed stays L, so replicas share the landscape's
evaluations (common random numbers) and differ only in the search's own draws."""


def replica_names(arm: str, replicas: int) -> list[str]:
    """`arm` and its replicas' names in an L{n}.json: `arm`, `arm#1`, ..., `arm#{replicas-1}`."""
    return [arm] + [f"{arm}#{k}" for k in range(1, replicas)]


def _search_seed(landscape: int, name: str) -> int:
    """The evolve seed of the arm or replica `name` (see REPLICA_SEED)."""
    _, _, k = name.partition("#")
    return REPLICA_SEED * int(k) + landscape if k else landscape


def run_arm(
    landscape: int, arm: str, budget: int, args: argparse.Namespace, folder: Path
) -> dict[str, Any]:
    """One evolve run: its trajectory (runs spent, holdout of the best) and its final best.
    `arm` may name a replica (`guided#2`: the arm `guided` with another search seed)."""
    name, arm = arm, arm.partition("#")[0]
    bench = load_benchmark(args.bench)
    train, holdout = split(bench, args.train, args.holdout)
    spec = model_spec(landscape, args.family)
    config = EvolveConfig.model_validate(
        {
            "seed_workflow": "builder-only", "bench": args.bench, "sandbox": "local",
            "model": spec, "seed": _search_seed(landscape, name), "population": args.population,
            "elitism": 1, "train_tasks": train, "holdout_tasks": holdout,
            "holdout_repetitions": 1, "designs": [], **ARMS[arm],
            "budgets": {"max_generations": 1000, "max_train_evaluations": budget},
        }
    )  # fmt: skip
    cache = FitnessCache(folder / "cache.db")
    run_dir = folder / name
    engine = EvolutionEngine.start(config, run_dir, sim_evaluator(spec, bench, landscape, cache))
    engine.run()
    cp = load_checkpoint(run_dir)
    trajectory = [(_train_runs(cp, s.generation), s.holdout_best) for s in cp.summaries]
    measured = [s for s in cp.summaries if s.holdout_best is not None]
    best_id = measured[-1].best_id if measured else cp.seed_id
    if config.objective == "cost-aware" and cp.winner_id is not None:
        best_id = cp.winner_id  # the cheapest point within the best's holdout interval
    scores, usd = _holdout_of(cp.individuals[best_id].results)
    seen = [i for i in cp.individuals.values() if any(r.split == "holdout" for r in i.results)]
    best_seen = max(
        (statistics.fmean(_holdout_of(i.results)[0].values()) for i in seen), default=0.0
    )
    train_runs = _train_runs(cp, cp.generation)
    return {
        "trajectory": trajectory, "spent": train_runs, "scores": scores, "usd": usd,
        "holdout_runs": cp.spent.evaluations - train_runs,
        "nodes": len(cp.individuals[best_id].workflow.nodes), "best_seen": best_seen,
        "operator": cp.individuals[best_id].lineage.operator, "stop_reason": cp.stop_reason,
        "designs_in_generation_0": sorted(
            i.lineage.operator for i in cp.individuals.values()
            if i.lineage.operator.startswith("design:")
        ),
    }  # fmt: skip


def _train_runs(cp: Any, generation: int) -> int:
    """Training runs committed by the end of `generation`: every training result of the
    individuals made up to it (an individual is trained in the generation that made it)."""
    return sum(
        r.split == "train"
        for i in cp.individuals.values() if i.generation <= generation
        for r in i.results
    )  # fmt: skip


def run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What decides an arm's outcome besides the landscape and the arm: kept in each L{n}.json,
    so that arms run with other settings are never added to it (nor reported as one run)."""
    settings: dict[str, Any] = {
        "bench": args.bench,
        "budget": args.budget,
        "train": args.train,
        "holdout": args.holdout,
        "population": args.population,
    }
    if args.family != 1:  # family 1's files predate the key: absent means family 1
        settings["family"] = FAMILIES[args.family]
    return settings


def run_landscape(landscape: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Every arm and every hand design on one landscape, written to out/L{n}.json after the
    designs and after each arm; what that file already holds is kept and not run again."""
    bench = load_benchmark(args.bench)
    _, holdout = split(bench, args.train, args.holdout)
    spec = model_spec(landscape, args.family)
    path = out / f"L{landscape}.json"
    settings = run_settings(args)
    outcome: dict[str, Any] = (
        json.loads(path.read_text(encoding="utf-8")) if path.is_file()
        else {"landscape": landscape, "bench": args.bench, "model": spec,
              "family": FAMILIES[args.family], "settings": settings, "designs": {}, "arms": {}}
    )  # fmt: skip
    if outcome.get("settings") != settings:  # arms run otherwise are not comparable
        sys.exit(
            f"{path} holds a landscape run with {outcome.get('settings') or 'no recorded settings'}"
            f", not {settings}: use another --out, or the same settings"
        )

    def save() -> None:
        path.write_text(json.dumps(outcome, indent=1), encoding="utf-8")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cache = FitnessCache(folder / "cache.db")
        evaluator = sim_evaluator(spec, bench, landscape, cache)
        designs = outcome["designs"]
        for name, wf in hand_designs().items():
            if name in designs:
                continue
            evaluation = evaluator.evaluate(
                wf, [bench.task(t) for t in holdout], folder / "designs" / name, run_id="designs"
            )
            scores = {r.task_id: r.score_end for r in evaluation.records}
            usd = statistics.fmean(r.total_cost_usd or 0.0 for r in evaluation.records)
            designs[name] = {"scores": scores, "usd": usd, "spent": len(holdout)}
        save()
        wanted = [r for a in args.arms for r in replica_names(a, args.replicas)]
        for name in [a for a in wanted if a not in outcome["arms"]]:
            arm = run_arm(landscape, name, args.budget, args, folder)
            if not arm["scores"]:  # the budget ran out before any holdout: the user has the seed
                arm.update(
                    scores=designs["builder-only"]["scores"], usd=designs["builder-only"]["usd"]
                )
            outcome["arms"][name] = arm
            save()
        if args.long_budget > 0 and "long" not in outcome["arms"]:
            (folder / "long").mkdir()
            outcome["arms"]["long"] = run_arm(
                landscape, "guided", args.long_budget, args, folder / "long"
            )
            save()
    return outcome


# -- the report -------------------------------------------------------------------------------


def _mean(scores: dict[str, float]) -> float:
    return statistics.fmean(scores.values()) if scores else 0.0


def optimum(o: dict[str, Any]) -> float:
    """The best holdout seen on the landscape (designs, every arm's holdout-evaluated
    individuals, the long search)."""
    found = [_mean(d["scores"]) for d in o["designs"].values()]
    found += [a["best_seen"] for a in o["arms"].values()]
    return max(found)


def runs_to(a: dict[str, Any], level: float) -> float:
    """Task runs spent when the best-on-training's holdout first reached `level` (inf: never)."""
    return next(
        (float(n) for n, h in a["trajectory"] if h is not None and h >= level - 1e-9), math.inf
    )


def report(outcomes: list[dict[str, Any]], args: argparse.Namespace) -> None:
    outcomes = sorted(outcomes, key=lambda o: o["landscape"])
    arms = [a for a in args.arms if all(a in o["arms"] for o in outcomes)]
    designs = sorted(outcomes[0]["designs"])
    recorded = {json.dumps(o.get("settings"), sort_keys=True) for o in outcomes}
    budget = outcomes[0].get("settings", {}).get("budget") if len(recorded) == 1 else None
    said = (
        f"budget {budget} training runs per arm" if budget else "budget not recorded in the files"
    )
    families = sorted({o.get("family", FAMILIES[1]) for o in outcomes})
    if families != [FAMILIES[args.family]]:
        print(f"WARNING: these files hold family {', '.join(families)}, not the --family given")
    if len(recorded) > 1:
        print(
            f"WARNING: these files hold runs with different settings: {', '.join(sorted(recorded))}"
        )
    print(f"\n{len(outcomes)} landscapes of {', '.join(families)} on {outcomes[0]['bench']}, {said};"
          f" holdout (regret to the landscape's optimum):")  # fmt: skip
    head = f"{'land':>5}{'optimum':>8}" + "".join(f"{n[:14]:>16}" for n in [*designs, *arms])
    print(head)
    regret: dict[str, list[float]] = {n: [] for n in [*designs, *arms]}
    for o in outcomes:
        best = optimum(o)
        cells = []
        for n in designs:
            h = _mean(o["designs"][n]["scores"])
            regret[n].append(best - h)
            cells.append(f"{h:.3f} ({best - h:.3f})")
        for a in arms:
            h = _mean(o["arms"][a]["scores"])
            regret[a].append(best - h)
            cells.append(f"{h:.3f} ({best - h:.3f})")
        print(f"{o['landscape']:>5}{best:>8.3f}" + "".join(f"{c:>16}" for c in cells))
    print("\nmedian regret at the budget: " + ", ".join(
        f"{n} {statistics.median(v):.3f}" for n, v in regret.items()))  # fmt: skip
    print("holdout runs per arm (apart from the budget), median: " + ", ".join(
        f"{a} {statistics.median(o['arms'][a].get('holdout_runs', 0) for o in outcomes):.0f}"
        for a in arms))  # fmt: skip
    print("best hand design per landscape: " + ", ".join(
        f"L{o['landscape']} {max(designs, key=lambda n: _mean(o['designs'][n]['scores']))}"
        for o in outcomes))  # fmt: skip
    _paired(regret, arms, designs)
    _target_a(outcomes, designs, arms)
    _target_bc(outcomes, arms, args.regret)
    if args.replicas > 1:
        replicated = [a for a in arms
                      if all(n in o["arms"] for o in outcomes for n in replica_names(a, args.replicas))]  # fmt: skip
        if replicated:
            _replicated(outcomes, replicated, args.replicas, args.regret)


def _paired(regret: dict[str, list[float]], arms: list[str], designs: list[str]) -> None:
    print("\npaired over landscapes, regret difference (first - second; negative: first better):")
    pairs = [("guided", "random")] + [(a, "guided") for a in arms if a.startswith("guided+")]
    pairs += [(a, "best design") for a in arms]
    best_design = [min(regret[n][i] for n in designs) for i in range(len(regret[designs[0]]))]
    for first, second in pairs:
        if first not in regret or (second != "best design" and second not in regret):
            continue
        other = best_design if second == "best design" else regret[second]
        diffs = [a - b for a, b in zip(regret[first], other, strict=True)]
        print(f"  {first} vs {second}: median {statistics.median(diffs):+.3f}, "
              f"wins {sum(d < 0 for d in diffs)}/ties {sum(d == 0 for d in diffs)}/"
              f"losses {sum(d > 0 for d in diffs)}, Wilcoxon p {wilcoxon(diffs):.3f}, "
              f"sign p {sign_test(diffs):.3f}")  # fmt: skip


STRICT = ("beats", "ties cheaper")
"""The verdicts of `target_a` that meet target (a) strictly (any but "no" meets it literally)."""


def target_a(ci: BootstrapCI | None, usd: float, design_usd: float) -> str:
    """A workflow against the best hand design, as target (a) reads it: "beats" (the paired
    interval of its gain is above zero); "ties cheaper" (the interval includes zero, it costs
    at most 0.6x the design's dollars, and it is better on some task: the high end above zero,
    or equal on every task); "ties cheaper, never better on a task" (the other cheap ties,
    met only literally); else "no"."""
    if ci is not None and ci.low > 0:
        return "beats"
    if ci is None or not ci.includes_zero or usd > 0.6 * design_usd:
        return "no"
    if ci.high > 0 or ci.gain == 0:
        return "ties cheaper"
    return "ties cheaper, never better on a task"


def _target_a(outcomes: list[dict[str, Any]], designs: list[str], arms: list[str]) -> None:
    """Target (a), read two ways: `literal` counts a tie whenever the interval includes zero
    (its ends included); `strict` also asks the winner to be better on some task (the
    interval's high end above zero) or equal on every task (a gain of exactly 0)."""
    print("\ntarget (a): evolve's winner vs the best hand design on holdout (paired bootstrap):")
    for arm in arms:
        literal = strict = 0
        for o in outcomes:
            best = max(designs, key=lambda n: _mean(o["designs"][n]["scores"]))
            d, w = o["designs"][best], o["arms"][arm]
            ci = paired_bootstrap({t: [s] for t, s in d["scores"].items()},
                                  {t: [s] for t, s in w["scores"].items()}, seed=o["landscape"])  # fmt: skip
            verdict = target_a(ci, w["usd"], d["usd"])
            literal += verdict != "no"
            strict += verdict in STRICT
            gain = ci.describe() if ci else "no shared tasks"
            print(f"  {arm} L{o['landscape']}: vs {best} {gain}; ${w['usd']:.4f} vs "
                  f"${d['usd']:.4f}/task ({w['usd'] / d['usd']:.2f}x) -> {verdict}")  # fmt: skip
        print(f"  {arm}: met on {strict}/{len(outcomes)} landscapes strictly, {literal} with any "
              "interval that includes zero (target: >= 7 of 10)")  # fmt: skip


PAIRS = (
    ("guided", "random", 0.6),
    ("guided+staged+pareto", "guided", 0.7),
    ("guided+staging", "guided", 0.7),
    ("guided+pareto", "guided", 0.7),
    ("guided+cost", "guided", 0.7),
)
"""Targets (b) and (c): (first, second, goal for first's runs over second's)."""


def _target_bc(outcomes: list[dict[str, Any]], arms: list[str], level: float) -> None:
    print(f"\ntargets (b), (c): training runs to reach regret <= {level} (-: not within budget):")
    runs = {a: [runs_to(o["arms"][a], optimum(o) - level) for o in outcomes] for a in arms}
    spent = {a: [_spent(o["arms"][a]) for o in outcomes] for a in arms}
    for a in arms:
        print(f"  {a:>15}: " + " ".join("-" if math.isinf(r) else f"{r:.0f}" for r in runs[a]))
    for first, second, goal in PAIRS:
        if first not in runs or second not in runs:
            continue
        if second == "guided":
            _no_worse(outcomes, first)
        _pair_runs(first, second, goal, runs, spent)


def _pair_runs(
    first: str,
    second: str,
    goal: float,
    runs: dict[str, list[float]],
    spent: dict[str, list[float]],
) -> None:
    """first/second runs-to-regret over the landscapes: the median ratio where both reached the
    level, the sign test over every landscape either reached, and the censored bounds."""
    both = [(f, s) for f, s in zip(runs[first], runs[second], strict=True)
            if not (math.isinf(f) and math.isinf(s))]  # fmt: skip
    ratios = [f / s for f, s in both if not math.isinf(f) and not math.isinf(s)]
    diffs = [(-1.0 if f < s else 1.0 if f > s else 0.0) for f, s in both]
    med = f"{statistics.median(ratios):.2f}" if ratios else "undefined"
    print(f"  {first}/{second}: median ratio {med} over {len(ratios)} landscapes both reached "
          f"({len(both)} reached by either); fewer runs on {sum(d < 0 for d in diffs)}, more on "
          f"{sum(d > 0 for d in diffs)}; sign p {sign_test(diffs):.3f} (goal <= {goal}, p < 0.05)")  # fmt: skip
    low, high = _censored_median(runs[first], runs[second], spent[first], spent[second])
    if low is not None and high is not None:
        print(f"    over the {len(both)} reached by either, an arm that did not reach it counted "
              f"as beyond its runs spent: median ratio between {low:.2f} and {high:.2f}")  # fmt: skip


def _censored_median(
    runs_first: list[float],
    runs_second: list[float],
    spent_first: list[float],
    spent_second: list[float],
) -> tuple[float | None, float | None]:
    """Bounds on the median of first/second runs-to-regret over every landscape either arm
    reached: an arm that did not reach the level within its training runs spent would need
    more than those, so its ratio there is bounded on one side only (first reached at f,
    second not: below f / second's runs spent; the other way round: above first's runs spent
    / s). The median ratio over only the landscapes both reached leaves out exactly those.
    (None, None) when neither arm reached the level anywhere."""
    lows: list[float] = []
    highs: list[float] = []
    for f, s, f_spent, s_spent in zip(
        runs_first, runs_second, spent_first, spent_second, strict=True
    ):
        if math.isinf(f) and math.isinf(s):
            continue
        if math.isinf(s):
            lows.append(0.0)
            highs.append(f / s_spent)
        elif math.isinf(f):
            lows.append(f_spent / s)
            highs.append(math.inf)
        else:
            lows.append(f / s)
            highs.append(f / s)
    if not lows:
        return None, None
    return statistics.median(lows), statistics.median(highs)


def _replicated(
    outcomes: list[dict[str, Any]], arms: list[str], replicas: int, level: float
) -> None:
    """Targets (b) and (c) over replicated arms: on each landscape an arm's runs to reach the
    regret level is the median over its `replicas` search seeds (a seed that did not reach it
    counts as never: the median is then never when half or more did not), its regret at the
    budget the mean over them; then the same paired reading across landscapes as one seed."""
    names = {a: replica_names(a, replicas) for a in arms}
    print(f"\nreplicated: each arm run with {replicas} search seeds per landscape (evolve seeds "
          f"L, {REPLICA_SEED}+L, ...; the same evaluations); per landscape, training runs to "
          f"regret <= {level} of each seed, then their median:")  # fmt: skip
    runs: dict[str, list[float]] = {}
    spent: dict[str, list[float]] = {}
    regret: dict[str, list[float]] = {}
    for a in arms:
        runs[a], spent[a], regret[a], cells = [], [], [], []
        for o in outcomes:
            best = optimum(o)
            each = [runs_to(o["arms"][n], best - level) for n in names[a]]
            runs[a].append(statistics.median(each))
            spent[a].append(min(_spent(o["arms"][n]) for n in names[a]))
            regret[a].append(
                statistics.fmean(best - _mean(o["arms"][n]["scores"]) for n in names[a])
            )
            cells.append("/".join("-" if math.isinf(r) else f"{r:.0f}" for r in each))
        print(f"  {a:>15}: " + " ".join(cells))
        print(
            f"  {'median':>15}: " + " ".join("-" if math.isinf(r) else f"{r:.0f}" for r in runs[a])
        )
    print("  mean regret at the budget over the seeds, median over landscapes: " + ", ".join(
        f"{a} {statistics.median(regret[a]):.3f}" for a in arms))  # fmt: skip
    for first, second, goal in PAIRS:
        if first in runs and second in runs:
            diffs = [f - s for f, s in zip(regret[first], regret[second], strict=True)]
            print(f"  {first} vs {second}, mean regret: median {statistics.median(diffs):+.3f}, "
                  f"wins {sum(d < 0 for d in diffs)}/ties {sum(d == 0 for d in diffs)}/losses "
                  f"{sum(d > 0 for d in diffs)}, Wilcoxon p {wilcoxon(diffs):.3f}")  # fmt: skip
            _pair_runs(first, second, goal, runs, spent)


def _spent(arm: dict[str, Any]) -> float:
    """An arm's training runs spent (its trajectory's last point when the file lacks it)."""
    return float(arm.get("spent", arm["trajectory"][-1][0]))


def _no_worse(outcomes: list[dict[str, Any]], arm: str) -> None:
    """Target (c)'s second half: the arm's final holdout against guided's, landscape by
    landscape (no worse: at least guided's mean holdout over the same tasks)."""
    diffs = [_mean(o["arms"][arm]["scores"]) - _mean(o["arms"]["guided"]["scores"])
             for o in outcomes]  # fmt: skip
    cells = " ".join(f"L{o['landscape']} {d:+.3f}" for o, d in zip(outcomes, diffs, strict=True))
    print(f"  {arm} - guided final holdout: {cells}; no worse on "
          f"{sum(d >= -1e-9 for d in diffs)}/{len(diffs)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landscapes", type=int, default=10)
    parser.add_argument("--first", type=int, default=0, help="first landscape seed")
    parser.add_argument("--budget", type=int, default=60, help="training runs per arm")
    parser.add_argument("--long-budget", type=int, default=0, help="a long guided search (0: none)")
    parser.add_argument("--population", type=int, default=3)
    parser.add_argument("--bench", default="mini")
    parser.add_argument("--train", type=int, default=0, help="training tasks (0: half of all)")
    parser.add_argument("--holdout", type=int, default=0, help="holdout tasks (0: the other half)")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--regret", type=float, default=0.02)
    parser.add_argument("--jobs", type=int, default=2, help="landscapes at once")
    parser.add_argument("--out", type=Path, default=Path("search_value_out"))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--family", type=int, default=1, choices=sorted(FAMILIES))
    parser.add_argument(
        "--replicas", type=int, default=1, help="search seeds per arm and landscape (>= 1)"
    )
    args = parser.parse_args()
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    print("SIMULATED: the offline sim model stands in for an LLM (docs/sim-model.md); "
          f"landscape family {FAMILIES[args.family]}.")  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    seeds = range(args.first, args.first + args.landscapes)
    started = time.monotonic()
    if not args.report_only:
        with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
            futures = [pool.submit(run_landscape, s, args, args.out) for s in seeds]
            for f in futures:
                f.result()
    found = [json.loads(p.read_text()) for s in seeds if (p := args.out / f"L{s}.json").is_file()]
    outcomes = [o for o in found if all(a in o["arms"] for a in args.arms)]
    if len(outcomes) < len(found):
        print(f"{len(found) - len(outcomes)} landscape(s) left out: not every arm finished there")
    if not outcomes:
        sys.exit(f"no finished landscape in {args.out}")
    report(outcomes, args)
    print(f"\nwall {time.monotonic() - started:.0f}s")


if __name__ == "__main__":
    main()
