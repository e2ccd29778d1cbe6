"""Reading a run: ranking on training results only (fully evaluated individuals only), the
individuals tied at the best, parents' failures, the final result."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.records import CycleRecord, load_record
from loopwright.search._checkpoint import Checkpoint
from loopwright.search._hand_designs import DesignScore, best_design, design_scores
from loopwright.search._individual import Individual
from loopwright.search._objective import FrontPoint, choose_winner, run_points
from loopwright.search._progress import GenerationSummary, Spent
from loopwright.search._selection import cost_aware_order
from loopwright.stats import BootstrapCI, paired_bootstrap

__all__ = [
    "EvolveResult",
    "contenders",
    "evolve_result",
    "failures_in",
    "failures_of",
    "fully_evaluated",
    "holdout_scores",
    "leader",
    "rank",
    "tied_best",
    "train_view",
]


def train_view(ind: Individual) -> Individual:
    """`ind` with its training results only: what selection, elitism and the archive see, so
    holdout results (and their cost) can never influence the search."""
    return ind.model_copy(update={"results": tuple(r for r in ind.results if r.split == "train")})


def rank(views: list[Individual], tolerance: float | None = None) -> list[Individual]:
    """Best first by the tournament's key (fitness, cost, gate loops, id); with a `tolerance`
    (`objective: cost-aware`), the near-best cheapest first (`cost_aware_order`).
    Deterministic."""
    return cost_aware_order(views, tolerance)


def fully_evaluated(ind: Individual, train_tasks: Sequence[str], repetitions: int) -> bool:
    """True when `ind` has a training result (valid or not) for every task x repetition."""
    done = {(r.task_id, r.repetition) for r in ind.results if r.split == "train"}
    return all((task, rep) in done for task in train_tasks for rep in range(repetitions))


def contenders(
    population: Iterable[Individual],
    train_tasks: Sequence[str],
    repetitions: int,
    tolerance: float | None = None,
) -> list[Individual]:
    """Training views of the fully evaluated individuals of `population`, best first (`rank`,
    with `tolerance`).

    An individual a budget stopped part-way through its training tasks is left out: its mean
    over the tasks it happened to finish is not comparable with a mean over all of them."""
    done = [i for i in population if fully_evaluated(i, train_tasks, repetitions)]
    return rank([train_view(i) for i in done], tolerance)


def leader(
    population: Iterable[Individual],
    seed: Individual,
    train_tasks: Sequence[str],
    repetitions: int,
    tolerance: float | None = None,
) -> Individual:
    """The training view of the best fully evaluated individual of `population` (`rank`, with
    `tolerance`).

    When none is fully evaluated (a budget stopped generation 0 before the first individual
    finished its training tasks; later generations always hold their fully evaluated elites),
    the seed leads: nothing has been shown to beat it. Deterministic."""
    ranked = contenders(population, train_tasks, repetitions, tolerance)
    return ranked[0] if ranked else train_view(seed)


def tied_best(checkpoint: Checkpoint) -> tuple[Individual, ...]:
    """The individuals of the checkpoint's current population tied at the best training
    fitness (exactly equal means: `fmean` rounds once, so equal scores give equal means),
    fully evaluated only, best first by the tie-breaks of `selection_key` (cost, gate loops,
    id): the first is the `leader`, the winner of a finished run. When none is fully
    evaluated, the seed alone. Whole individuals (holdout results included)."""
    inds = checkpoint.individuals
    ranked = contenders(
        (inds[i] for i in checkpoint.population),
        checkpoint.train_tasks,
        checkpoint.config.repetitions,
    )
    if not ranked:
        return (inds[checkpoint.seed_id],)
    return tuple(inds[i.id] for i in ranked if i.fitness == ranked[0].fitness)


def failures_of(ind: Individual, run_dir: Path) -> dict[str, list[str]]:
    """`failures_in` the records of `ind`'s unresolved training results, read from `run_dir`
    (a record that cannot be read is skipped: it gives no hint, its score still counts)."""
    records = []
    for result in ind.results:
        if result.split != "train" or result.resolved:
            continue
        try:
            records.append(load_record(run_dir / result.record_path))
        except ConfigError:
            continue
    return failures_in(records)


def failures_in(records: Iterable[CycleRecord]) -> dict[str, list[str]]:
    """Node id -> failure messages from in-memory records (what `MutationContext.failures`
    holds): each agent step's error, and for an unresolved run its failure category on the
    last agent node that ran, each prefixed with the task id. Resolved records add nothing.
    Deterministic; reads no files."""
    failures: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if record.resolved:
            continue
        for step in record.steps:
            if step.error:
                failures[step.node_id].append(f"{record.task_id}: {step.error}")
        if record.steps:
            last = record.steps[-1].node_id
            failures[last].append(f"{record.task_id}: {record.failure_category}")
    return dict(failures)


def holdout_scores(ind: Individual) -> dict[str, list[float]]:
    """Task id -> valid holdout scores (every repetition)."""
    out: dict[str, list[float]] = defaultdict(list)
    for r in ind.split_results("holdout"):
        out[r.task_id].append(r.score)
    return dict(out)


@dataclass(frozen=True)
class EvolveResult:
    """The outcome of a run (or of its state so far): why it stopped, the winner (best on
    training), the seed, every summary, the winner's holdout gain over the seed and spend.
    `tied` lists the individuals tied at the best training fitness (`tied_best`). `points` are
    the holdout-evaluated individuals as (holdout, dollars per task) points, cheapest first,
    marked on the front and tying the best (search/_objective.py); `objective` is
    the run's (`holdout` or `cost-aware`), which chose the winner. `stopped` is True when
    `should_stop` stopped the call before the run ended (`stop_reason` is then None and
    `resume` continues the run). `designs` are the built-in hand designs on the same holdout
    runs, each with the winner's paired gain over it (empty unless `compare_designs` was on)."""

    stop_reason: str | None
    winner: Individual
    seed: Individual
    summaries: tuple[GenerationSummary, ...]
    gain: BootstrapCI | None
    spent: Spent
    generation: int
    tied: tuple[Individual, ...] = ()
    points: tuple[FrontPoint, ...] = ()
    objective: str = "holdout"
    stopped: bool = False
    designs: tuple[DesignScore, ...] = ()

    @property
    def best_design(self) -> DesignScore | None:
        """The hand design with the best mean holdout (`best_design`), None without designs."""
        return best_design(self.designs)

    @property
    def design_gain(self) -> BootstrapCI | None:
        """The winner's paired gain over the best hand design (None: no comparison)."""
        best = self.best_design
        return None if best is None else best.winner_gain

    @property
    def made_by_search(self) -> bool:
        """True when the winner is neither the seed nor a design of generation 0: search made
        it (a mutation, crossover or merge)."""
        op = self.winner.lineage.operator
        return op != "seed" and not op.startswith("design:")

    @property
    def winner_origin(self) -> str:
        """Who made the winner, as a phrase ("the winner is ..."): search (the operator and the
        generation), the seed itself, or a design of generation 0."""
        w = self.winner
        if self.made_by_search:
            return f"made by search ({w.lineage.operator}, generation {w.generation})"
        if w.lineage.operator == "seed":
            return "the seed itself: search made nothing better on training"
        return f"a generation-0 design ({w.lineage.operator}), not made by search"

    @property
    def best_score(self) -> float | None:
        """The winner's training fitness (mean partial credit over the training tasks; None
        when it has no valid training result)."""
        return self.winner.fitness

    @property
    def holdout_score(self) -> float | None:
        """The winner's mean holdout score (None when it was not measured on holdout): the
        honest figure; `gain` compares it with the seed's."""
        return self.winner.mean_score("holdout")

    @property
    def seed_holdout_score(self) -> float | None:
        """The seed's mean holdout score, the baseline of `holdout_score`."""
        return self.seed.mean_score("holdout")


def evolve_result(checkpoint: Checkpoint) -> EvolveResult:
    """Build the result from a checkpoint. The winner is the recorded one, else the one the
    run's objective takes now (`choose_winner`: the `leader` of the current population, fully
    evaluated individuals only, or the cost-aware choice). The gain is a paired bootstrap
    over holdout tasks (2,000 resamples, seeded with the run seed)."""
    inds = checkpoint.individuals
    tied = tied_best(checkpoint)
    winner_id = checkpoint.winner_id or choose_winner(checkpoint, tied[0].id)
    winner, seed = inds[winner_id], inds[checkpoint.seed_id]
    gain = paired_bootstrap(
        holdout_scores(seed), holdout_scores(winner), seed=checkpoint.config.seed
    )
    return EvolveResult(
        stop_reason=checkpoint.stop_reason,
        winner=winner,
        seed=seed,
        summaries=checkpoint.summaries,
        gain=gain,
        spent=checkpoint.spent,
        generation=checkpoint.generation,
        tied=tied,
        points=tuple(run_points(checkpoint)),
        objective=checkpoint.config.objective,
        designs=design_scores(checkpoint.hand_designs, winner, seed=checkpoint.config.seed),
    )
