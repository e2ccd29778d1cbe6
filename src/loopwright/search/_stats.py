"""Paired bootstrap confidence interval of a holdout gain over tasks. Seeded, deterministic."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

__all__ = ["BootstrapCI", "paired_bootstrap"]


@dataclass(frozen=True, slots=True)
class BootstrapCI:
    """The mean per-task gain (candidate - baseline) and its percentile interval."""

    gain: float
    low: float
    high: float
    n_tasks: int
    resamples: int
    level: float

    @property
    def includes_zero(self) -> bool:
        return self.low <= 0.0 <= self.high

    def describe(self) -> str:
        pct = round(self.level * 100)
        return f"{self.gain:+.3f} ({pct}% CI {self.low:+.3f} .. {self.high:+.3f}, {self.n_tasks} tasks)"


def paired_bootstrap(
    baseline: Mapping[str, Sequence[float]],
    candidate: Mapping[str, Sequence[float]],
    *,
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> BootstrapCI | None:
    """Bootstrap the mean gain over the tasks both were scored on, resampling TASKS.

    Each mapping is task id -> that candidate's scores on it (every repetition); a task's gain is
    the difference of its means, so repetitions are averaged before resampling (tasks are the
    unit). Returns None when no task is shared. Deterministic for a given seed.
    """
    shared = sorted(t for t in baseline if t in candidate and baseline[t] and candidate[t])
    if not shared:
        return None
    gains = [fmean(candidate[t]) - fmean(baseline[t]) for t in shared]
    rng = random.Random(seed)
    n = len(gains)
    means = sorted(fmean(rng.choices(gains, k=n)) for _ in range(resamples))
    tail = (1.0 - level) / 2.0
    low = means[int(tail * (resamples - 1))]
    high = means[round((1.0 - tail) * (resamples - 1))]
    return BootstrapCI(fmean(gains), low, high, n, resamples, level)
