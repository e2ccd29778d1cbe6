"""bench/search_value.py's reading of targets (b) and (c) when an arm does not reach the regret
level within its budget: the median ratio over only the landscapes both arms reached leaves out
the landscapes where one arm is fastest, so the script also bounds the median over every
landscape either arm reached."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from tests.benchscripts import load_bench_script


def _script() -> ModuleType:
    return load_bench_script("search_value")


def _arm(trajectory: list[tuple[int, float]]) -> dict[str, Any]:
    final = trajectory[-1][1]
    return {"trajectory": trajectory, "scores": {"t1": final}, "usd": 0.1, "best_seen": final,
            "spent": 72}  # fmt: skip


def _landscape(n: int, guided: dict[str, Any], random: dict[str, Any]) -> dict[str, Any]:
    design = {"builder-only": {"scores": {"t1": 0.5}, "usd": 0.1, "spent": 1}}
    return {"landscape": n, "designs": design, "arms": {"guided": guided, "random": random}}


REACH_36 = _arm([(12, 0.8), (36, 1.0), (72, 1.0)])
REACH_72 = _arm([(12, 0.8), (72, 1.0)])
NEVER = _arm([(12, 0.8), (72, 0.9)])  # 0.9: regret 0.1 to the optimum 1.0 seen by the other


def test_target_b_bounds_the_median_over_landscapes_only_one_arm_reached(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sv = _script()
    outcomes = [
        _landscape(0, REACH_72, REACH_36),  # both: 2.0
        _landscape(1, REACH_36, NEVER),  # guided only: below 36/72
        _landscape(2, REACH_36, NEVER),
        _landscape(3, NEVER, REACH_36),  # random only: above 72/36
    ]
    sv._target_bc(outcomes, ["guided", "random"], 0.02)
    out = capsys.readouterr().out
    assert (
        "guided/random: median ratio 2.00 over 1 landscapes both reached (4 reached by either)"
        in out
    )
    # bounds per landscape: [2, 2], [0, 0.5], [0, 0.5], [2, inf] -> median in [1.00, 1.25]
    assert "over the 4 reached by either" in out
    assert "median ratio between 1.00 and 1.25" in out


def test_censored_median_is_exact_when_both_arms_reach_everywhere() -> None:
    sv = _script()
    spent = [72.0, 72.0]
    assert sv._censored_median([24.0, 24.0], [48.0, 48.0], spent, spent) == (0.5, 0.5)


def test_replicas_have_their_own_search_seed_and_name() -> None:
    sv = _script()
    assert sv.replica_names("guided", 3) == ["guided", "guided#1", "guided#2"]
    assert sv.replica_names("guided", 1) == ["guided"]
    assert sv._search_seed(4, "guided") == 4  # the arm itself keeps the landscape's seed
    assert sv._search_seed(4, "guided#2") == 2 * sv.REPLICA_SEED + 4
    seeds = {sv._search_seed(n, r) for n in range(10) for r in sv.replica_names("random", 3)}
    assert len(seeds) == 30


def test_replicated_reading_takes_each_landscapes_median_over_the_seeds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sv = _script()

    def landscape(n: int, guided: list[Any], random: list[Any]) -> dict[str, Any]:
        o = _landscape(n, guided[0], random[0])
        o["arms"] |= {"guided#1": guided[1], "guided#2": guided[2]}
        o["arms"] |= {"random#1": random[1], "random#2": random[2]}
        return o

    outcomes = [
        # guided 36, 36, never -> median 36; random 72, never, never -> median never
        landscape(0, [REACH_36, REACH_36, NEVER], [REACH_72, NEVER, NEVER]),
        # guided 72, 36, 72 -> 72; random 36, 36, 72 -> 36
        landscape(1, [REACH_72, REACH_36, REACH_72], [REACH_36, REACH_36, REACH_72]),
    ]
    sv._replicated(outcomes, ["guided", "random"], 3, 0.02)
    out = capsys.readouterr().out
    assert "36/36/- 72/36/72" in out
    assert "72/-/- 36/36/72" in out
    assert "median ratio 2.00 over 1 landscapes both reached (2 reached by either)" in out
    assert "fewer runs on 1, more on 1" in out
