"""Reading a run: ranking on training results only, parents' failures, the final result."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.records import load_record
from loopwright.search._checkpoint import Checkpoint
from loopwright.search._individual import Individual
from loopwright.search._progress import GenerationSummary, Spent
from loopwright.search._selection import selection_key
from loopwright.search._stats import BootstrapCI, paired_bootstrap

__all__ = [
    "EvolveResult",
    "best_of",
    "evolve_result",
    "failures_of",
    "holdout_scores",
    "rank",
    "train_view",
]


def train_view(ind: Individual) -> Individual:
    """`ind` with its training results only: what selection, elitism and the archive see, so
    holdout results (and their cost) can never influence the search."""
    return ind.model_copy(update={"results": tuple(r for r in ind.results if r.split == "train")})


def rank(views: list[Individual]) -> list[Individual]:
    """Best first by the tournament's key (fitness, cost, gate loops, id). Deterministic."""
    return sorted(views, key=selection_key)


def best_of(views: list[Individual]) -> Individual:
    """The best of `views` (training views). ValueError on an empty list."""
    if not views:
        raise ValueError("best_of needs at least one individual")
    return min(views, key=selection_key)


def failures_of(ind: Individual, run_dir: Path) -> dict[str, list[str]]:
    """Node id -> failure messages from `ind`'s training records: each agent step's error, and
    for an unresolved run its failure category on the last agent node that ran."""
    failures: dict[str, list[str]] = defaultdict(list)
    for result in ind.results:
        if result.split != "train" or result.resolved:
            continue
        try:
            record = load_record(run_dir / result.record_path)
        except ConfigError:
            continue  # a record that cannot be read gives no hint; the score is still counted
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
    training), the seed, every summary, the winner's holdout gain over the seed and spend."""

    stop_reason: str | None
    winner: Individual
    seed: Individual
    summaries: tuple[GenerationSummary, ...]
    gain: BootstrapCI | None
    spent: Spent
    generation: int


def evolve_result(checkpoint: Checkpoint) -> EvolveResult:
    """Build the result from a checkpoint. The gain is a paired bootstrap over holdout tasks
    (2,000 resamples, seeded with the run seed)."""
    inds = checkpoint.individuals
    winner_id = checkpoint.winner_id
    if winner_id is None:
        winner_id = best_of([train_view(inds[i]) for i in checkpoint.population]).id
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
    )
