"""Worker counts for one parallel wave: a binary-search makespan minimiser under a cap.

A wave is a set of submissions, one per (spec, pass): each has `episodes` task runs to do and
may use at most `max_workers` workers at once. A submission given `w` workers finishes after
ceil(episodes / w) rounds (one round = one episode's time), and the wave after its slowest
submission: the makespan. Every submission runs at the same time, so the counts must sum to at
most the method-wide `cap`. The minimiser finds the least makespan T such that giving each
submission ceil(episodes / T) workers fits the cap, by binary search over T (the sum of
ceil(episodes / T) only falls as T grows). Workers left over are handed out one at a time to
the submission that is slowest so far and can still use one, which shortens it without
changing the makespan. Deterministic.

When there are more submissions than the cap, they cannot all start at once: each gets one
worker and the executor admits at most `cap` at a time (`queued` is True); the makespan
reported is then that of longest-first list scheduling on `cap` lanes.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loopwright.errors import UsageError

__all__ = ["Allocation", "WaveSubmission", "allocate_workers", "makespan"]


@dataclass(frozen=True, slots=True)
class WaveSubmission:
    """One (spec, pass) of a wave: `episodes` runs, at most `max_workers` at a time."""

    key: str
    episodes: int
    max_workers: int

    def limit(self) -> int:
        """The most workers this submission can use: its own cap, never more than its runs."""
        return max(1, min(self.max_workers, self.episodes))


@dataclass(frozen=True, slots=True)
class Allocation:
    """Worker count per submission key, the wave's makespan in rounds, and the cap it met."""

    workers: Mapping[str, int]
    makespan: int
    cap: int
    queued: bool

    def total(self) -> int:
        return sum(self.workers.values())


def makespan(episodes: Sequence[int], workers: Sequence[int]) -> int:
    """Rounds until the slowest submission is done when all run at once (0 for no submission)."""
    return max((math.ceil(e / w) for e, w in zip(episodes, workers, strict=True)), default=0)


def allocate_workers(submissions: Sequence[WaveSubmission], cap: int) -> Allocation:
    """Worker counts minimising the wave's makespan with their sum at most `cap`.

    Each count lies in [1, submission.limit()]. Raises UsageError for a cap below 1, a
    submission with no episode, or a repeated key.
    """
    _check(submissions, cap)
    if not submissions:
        return Allocation({}, 0, cap, queued=False)
    if len(submissions) > cap:
        return Allocation(
            {s.key: 1 for s in submissions},
            _list_schedule([s.episodes for s in submissions], cap),
            cap,
            queued=True,
        )
    eps = [s.episodes for s in submissions]
    low = max(math.ceil(s.episodes / s.limit()) for s in submissions)
    high = max(eps)
    while low < high:  # the least T with sum(ceil(e / T)) <= cap; high is always feasible
        mid = (low + high) // 2
        if sum(math.ceil(e / mid) for e in eps) <= cap:
            high = mid
        else:
            low = mid + 1
    workers = [math.ceil(e / low) for e in eps]
    _spread_leftover(submissions, workers, cap)
    return Allocation(
        {s.key: w for s, w in zip(submissions, workers, strict=True)},
        makespan(eps, workers),
        cap,
        queued=False,
    )


def _spread_leftover(submissions: Sequence[WaveSubmission], workers: list[int], cap: int) -> None:
    spare = cap - sum(workers)
    while spare > 0:
        best: int | None = None
        for i, sub in enumerate(submissions):
            now = math.ceil(sub.episodes / workers[i])
            if workers[i] >= sub.limit() or math.ceil(sub.episodes / (workers[i] + 1)) >= now:
                continue  # one more worker would not shorten it
            if best is None or now > math.ceil(submissions[best].episodes / workers[best]):
                best = i
        if best is None:
            return
        workers[best] += 1
        spare -= 1


def _list_schedule(episodes: Sequence[int], lanes: int) -> int:
    finish = [0] * lanes
    for e in sorted(episodes, reverse=True):
        heapq.heapreplace(finish, finish[0] + e)
    return max(finish)


def _check(submissions: Sequence[WaveSubmission], cap: int) -> None:
    if cap < 1:
        raise UsageError(
            "the wave's worker cap must be at least 1", got=str(cap), fix="use 1 or more"
        )
    keys = [s.key for s in submissions]
    if len(set(keys)) != len(keys):
        raise UsageError("wave submissions must have distinct keys", got=", ".join(keys))
    empty = [s.key for s in submissions if s.episodes < 1 or s.max_workers < 1]
    if empty:
        raise UsageError(
            "every wave submission needs at least one episode and one worker",
            got=", ".join(empty),
            fix="leave submissions with nothing to run out of the wave",
        )
