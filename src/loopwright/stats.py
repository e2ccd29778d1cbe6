"""Statistics shared by search, the A/B harness, research, the report and bench/: the paired
bootstrap interval of a gain over tasks (seeded, deterministic) and two exact paired tests (sign
test, Wilcoxon signed-rank). A leaf module at the root: it imports nothing from loopwright, so
every package may use it."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

__all__ = ["BootstrapCI", "paired_bootstrap", "sign_test", "wilcoxon"]


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


def sign_test(diffs: Sequence[float]) -> float:
    """Two-sided exact sign test p-value of the nonzero differences (1.0 when none)."""
    nonzero = [d for d in diffs if d != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    k = min(sum(d > 0 for d in nonzero), sum(d < 0 for d in nonzero))
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def wilcoxon(diffs: Sequence[float]) -> float:
    """Two-sided exact Wilcoxon signed-rank p-value (zeros dropped, average ranks for ties,
    every sign pattern enumerated; n <= 20)."""
    nonzero = [d for d in diffs if d != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    order = sorted(range(n), key=lambda i: abs(nonzero[i]))
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(nonzero[order[j + 1]]) == abs(nonzero[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    observed = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    centre = sum(ranks) / 2
    extreme = sum(
        1
        for signs in itertools.product((0, 1), repeat=n)
        if abs(sum(r for r, s in zip(ranks, signs, strict=True) if s) - centre)
        >= abs(observed - centre) - 1e-12
    )
    return extreme / (1 << n)
