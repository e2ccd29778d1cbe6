"""The hand designs a run compares its winner with (`compare_designs`): what the checkpoint
keeps of each, and the scores the result reports. The evaluation itself is in
search/_compare.py; docs/evolve.md, "The winner against the hand designs"."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean

from pydantic import BaseModel, ConfigDict

from loopwright.errors import ConfigError, UsageError
from loopwright.search._individual import Individual, TaskResult
from loopwright.stats import BootstrapCI, paired_bootstrap
from loopwright.workflow import Workflow, builtin_workflow_names, resolve_task_workflow

__all__ = ["DesignHoldout", "DesignScore", "best_design", "design_scores", "hand_designs"]


def hand_designs() -> dict[str, Workflow]:
    """Every built-in workflow that runs on a task, by name in registry order (the outer
    loop's own graph, which `resolve_task_workflow` refuses, is left out). Deterministic."""
    designs = {}
    for name in builtin_workflow_names():
        try:
            designs[name] = resolve_task_workflow(name)
        except (ConfigError, UsageError):
            continue
    return designs


class DesignHoldout(BaseModel):
    """One hand design's holdout runs in a run (checkpoint.json, `hand_designs`): its name, its
    workflow's hash, every result so far (split `holdout`, the run's holdout tasks and
    repetitions, in that order) and how many of them came from the fitness cache."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    hash: str
    results: tuple[TaskResult, ...] = ()
    cached: int = 0


@dataclass(frozen=True, slots=True)
class DesignScore:
    """A hand design against the run's winner on the same holdout runs: its mean valid
    holdout score, mean dollars per holdout run (None when a cost is unknown), the task runs it
    took (`cached` of them from the fitness cache, so not paid again) and the paired
    bootstrap of (winner - design) over the holdout tasks (None: no task in common)."""

    name: str
    holdout: float | None
    usd_per_task: float | None
    runs: int
    cached: int
    winner_gain: BootstrapCI | None


def _by_task(results: Iterable[TaskResult]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if r.split == "holdout" and not r.invalid:
            out[r.task_id].append(r.score)
    return dict(out)


def design_scores(
    designs: Iterable[DesignHoldout], winner: Individual, *, seed: int = 0
) -> tuple[DesignScore, ...]:
    """Each design scored against `winner`'s holdout results (2,000 resamples seeded with
    `seed`, the run's seed). Deterministic."""
    mine = _by_task(winner.results)
    out = []
    for d in designs:
        valid = [r for r in d.results if not r.invalid]
        costs = [r.cost_usd for r in d.results]
        usd = None if not costs or None in costs else fmean(c for c in costs if c is not None)
        out.append(
            DesignScore(
                name=d.name,
                holdout=fmean(r.score for r in valid) if valid else None,
                usd_per_task=usd,
                runs=len(d.results),
                cached=d.cached,
                winner_gain=paired_bootstrap(_by_task(d.results), mine, seed=seed),
            )
        )
    return tuple(out)


def best_design(scores: Iterable[DesignScore]) -> DesignScore | None:
    """The design with the highest mean holdout (ties: the cheaper, then the name); None when
    no design has a holdout score. Chosen on the very holdout it is compared on, which favours
    the design, never the winner."""
    scored = [s for s in scores if s.holdout is not None]
    if not scored:
        return None
    return min(scored, key=_rank)


def _rank(s: DesignScore) -> tuple[float, float, str]:
    usd = s.usd_per_task if s.usd_per_task is not None else float("inf")
    return (-(s.holdout or 0.0), usd, s.name)
