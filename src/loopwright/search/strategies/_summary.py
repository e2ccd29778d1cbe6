"""A generation's summary: the archive takes its fully evaluated individuals, and the leader,
the training mean, the holdout score and the spend go into a `GenerationSummary`."""

from __future__ import annotations

from loopwright.search._config import EvolveConfig
from loopwright.search._overfit import OverfitDetector
from loopwright.search._progress import GenerationSummary, HyperparameterRecord
from loopwright.search._report import train_view
from loopwright.search.strategies._state import RunState

__all__ = ["summarise"]


def summarise(state: RunState, overfit: OverfitDetector) -> GenerationSummary:
    """The generation's summary; the archive takes its fully evaluated individuals. Best and
    mean are over fully evaluated individuals only (a budget may stop a generation part-way):
    the best is the `leader`."""
    pop = state.population()
    complete = {v.id for v in state.contenders()}
    # In population order: among equals the archive keeps the first, and the mean sums in a
    # fixed order.
    views = [train_view(i) for i in pop if i.id in complete]
    for view in views:
        state.archive.add(view)
    best = state.individuals[state.leader().id]
    spent, earlier = state.spend.spent(state.checkpoint.spent), state.checkpoint.summaries
    fits = [v.fitness for v in views if v.fitness is not None]
    holdout = best.mean_score("holdout")
    return GenerationSummary(
        generation=state.checkpoint.generation,
        best_id=best.id,
        best_hash=best.hash,
        train_best=best.fitness,
        train_mean=sum(fits) / len(fits) if fits else None,
        holdout_best=holdout,
        overfit=overfit.check(best.fitness, holdout),
        diversity=len({i.hash for i in pop}),
        population_size=len(pop),
        stopped=len(state.checkpoint.stopped_ids() & {i.id for i in pop}),
        archive_coverage=state.archive.coverage(),
        evaluations=spent.evaluations - (earlier[-1].spent.evaluations if earlier else 0),
        spent=spent,
        hyperparameters=hyperparameters(state.config),
    )


def hyperparameters(config: EvolveConfig) -> HyperparameterRecord:
    return HyperparameterRecord(
        population=config.population,
        tournament_k=config.tournament_k,
        elitism=config.elitism,
        repetitions=config.repetitions,
        novelty_threshold=config.novelty_threshold,
        mutation_max_tries=config.mutation_max_tries,
        operators=config.operators,
        strategy=config.strategy,
        exploration=config.exploration if config.strategy == "guided" else None,
        parents=config.parents,
        stages=config.stages,
        merge_rate=config.merge_rate,
    )
