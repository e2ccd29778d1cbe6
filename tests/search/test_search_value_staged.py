"""bench/search_value.py's staged + Pareto arm and its reading of target (c)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.benchscripts import load_bench_script


def _script() -> ModuleType:
    return load_bench_script("search_value")


def _arm(trajectory: list[tuple[int, float]], final: float) -> dict[str, Any]:
    return {"trajectory": trajectory, "scores": {"t1": final}, "usd": 0.1, "best_seen": final}


def test_the_staged_pareto_arm_is_stages_and_pareto_parents() -> None:
    assert _script().ARMS["guided+staged+pareto"] == {
        "strategy": "guided", "stages": (3,), "stage_rule": "better", "parents": "pareto"
    }  # fmt: skip


def test_target_c_reads_runs_to_regret_and_holdout_no_worse_per_landscape(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sv = _script()
    design = {"builder-only": {"scores": {"t1": 0.5}, "usd": 0.1, "spent": 1}}
    outcomes = [
        {"landscape": 0, "designs": design, "arms": {
            "guided": _arm([(12, 0.8), (60, 1.0)], 1.0),
            "guided+staged+pareto": _arm([(12, 0.8), (30, 1.0)], 1.0)}},
        {"landscape": 1, "designs": design, "arms": {
            "guided": _arm([(12, 0.8), (40, 1.0)], 1.0),
            "guided+staged+pareto": _arm([(12, 0.8), (36, 0.9)], 0.9)}},
    ]  # fmt: skip
    sv._target_bc(outcomes, ["guided", "guided+staged+pareto"], 0.02)
    out = capsys.readouterr().out
    # L0: 30 runs against 60; L1: only guided reaches the optimum (1.0 within 0.02).
    assert "guided+staged+pareto/guided: median ratio 0.50 over 1 landscapes" in out
    assert "fewer runs on 1, more on 1" in out
    assert "final holdout: L0 +0.000 L1 -0.100; no worse on 1/2" in out


def test_the_designs_arm_starts_from_evolves_default_designs(tmp_path: Path) -> None:
    """The +designs arm is the staged + Pareto arm with evolve's default designer on: its
    generation 0 holds the thorough design (minimal is the seed itself, so the novelty filter
    turns it away), and the arm says where its final workflow came from."""
    import argparse

    sv = _script()
    args = argparse.Namespace(bench="mini", train=2, holdout=2, population=2, family=1, replicas=1)
    arm = sv.run_arm(0, "guided+staged+pareto+designs", 6, args, tmp_path)
    assert arm["designs_in_generation_0"] == ["design:thorough"]
    assert arm["operator"]
    plain = sv.run_arm(0, "guided+staged+pareto", 6, args, tmp_path / "plain")
    assert plain["designs_in_generation_0"] == []
