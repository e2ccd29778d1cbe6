"""The wave's worker allocation: the binary-search minimiser against brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from loopwright.errors import UsageError
from loopwright.research import WaveSubmission, allocate_workers, makespan


def brute_force(subs: list[WaveSubmission], cap: int) -> int:
    """The least makespan over every worker vector with each count in [1, limit], sum <= cap."""
    ranges = [range(1, s.limit() + 1) for s in subs]
    best = math.inf
    for counts in itertools.product(*ranges):
        if sum(counts) <= cap:
            best = min(best, makespan([s.episodes for s in subs], counts))
    return int(best)


def cases() -> list[tuple[list[WaveSubmission], int]]:
    rng = random.Random(9)
    out = []
    for _ in range(300):
        n = rng.randint(1, 4)
        subs = [WaveSubmission(f"s{i}", rng.randint(1, 9), rng.randint(1, 5)) for i in range(n)]
        out.append((subs, rng.randint(n, 10)))
    return out


def test_minimiser_matches_brute_force_on_300_small_waves() -> None:
    for subs, cap in cases():
        got = allocate_workers(subs, cap)
        counts = [got.workers[s.key] for s in subs]
        case = f"{[(s.episodes, s.max_workers) for s in subs]} cap {cap} -> {counts}"
        assert got.makespan == brute_force(subs, cap), case
        assert got.makespan == makespan([s.episodes for s in subs], counts), case
        assert sum(counts) <= cap and not got.queued, case
        assert all(1 <= c <= s.limit() for c, s in zip(counts, subs, strict=True)), case


def test_leftover_workers_shorten_the_slowest_without_exceeding_the_cap() -> None:
    subs = [WaveSubmission("a", 8, 8), WaveSubmission("b", 3, 8)]
    got = allocate_workers(subs, 6)
    assert got.makespan == 2 and got.total() == 6
    assert got.workers == {"a": 4, "b": 2}


def test_more_submissions_than_the_cap_are_queued() -> None:
    subs = [WaveSubmission(f"s{i}", e, 4) for i, e in enumerate([5, 3, 3, 2])]
    got = allocate_workers(subs, 2)
    assert got.queued and set(got.workers.values()) == {1}
    assert got.makespan == 7  # longest-first on two lanes: 5+2, 3+3


def test_bad_waves_are_refused() -> None:
    with pytest.raises(UsageError):
        allocate_workers([WaveSubmission("a", 1, 1)], 0)
    with pytest.raises(UsageError):
        allocate_workers([WaveSubmission("a", 1, 1), WaveSubmission("a", 2, 1)], 4)
    with pytest.raises(UsageError):
        allocate_workers([WaveSubmission("a", 0, 1)], 4)
    assert allocate_workers([], 3).makespan == 0
