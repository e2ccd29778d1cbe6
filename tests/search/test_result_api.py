"""What the result of `evolve` offers a Python user (issue 31, item 7): the winner's training
and holdout scores by name, and per-generation evaluation counts that add up to the spend."""

from __future__ import annotations

import json
from pathlib import Path

import loopwright
from loopwright.evaluation import ExecutorSettings
from loopwright.search import Budgets, EvolveConfig


def test_the_result_names_its_scores_and_its_generations_add_up_to_the_spend(
    tmp_path: Path,
) -> None:
    config = EvolveConfig(
        seed_workflow="builder-only", bench="mini", model="sim", seed=0, sandbox="local",
        population=3, elitism=1, train_tasks=("l1-rle-decode", "l1-slugify"),
        holdout_tasks=("l1-semver-compare",), budgets=Budgets(max_generations=2),
    )  # fmt: skip
    serial = loopwright.Execution(settings=ExecutorSettings(kind="serial"))
    result = loopwright.evolve(config, tmp_path / "run", executor=serial)
    written = json.loads((tmp_path / "run" / "result.json").read_text(encoding="utf-8"))
    assert result.best_score == written["winner"]["train"] is not None
    assert result.holdout_score == written["winner"]["holdout"] is not None
    assert result.seed_holdout_score == written["seed"]["holdout"]
    assert len(result.summaries) == 2
    assert sum(s.evaluations for s in result.summaries) == result.spent.evaluations
    assert result.summaries[-1].spent.evaluations == result.spent.evaluations
