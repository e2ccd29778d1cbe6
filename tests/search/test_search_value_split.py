"""bench/search_value.py's split: subsets of training and holdout keep the levels' mix."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from loopwright.tasks import load_benchmark
from tests.benchscripts import load_bench_script


def _script() -> ModuleType:
    return load_bench_script("search_value")


def test_subsets_are_disjoint_and_take_the_levels_in_turn() -> None:
    sv = _script()
    bench = load_benchmark("forge")
    full_train, full_holdout = sv.split(bench)
    assert len(full_train) + len(full_holdout) == len(bench.tasks)
    train, holdout = sv.split(bench, 4, 8)
    assert (len(train), len(holdout)) == (4, 8)
    assert set(train) <= set(full_train) and set(holdout) <= set(full_holdout)
    assert not set(train) & set(holdout)
    level = {t.id: t.level for t in bench.tasks}
    levels = sorted(set(level.values()))
    assert [level[t] for t in holdout[: len(levels)]] == levels  # one of each level first
    assert sv.split(bench, 0, 0) == (full_train, full_holdout)


def test_the_pair_script_scores_both_checkouts_on_the_landscapes_both_finished(
    tmp_path: Path,
) -> None:
    pair = load_bench_script("search_value_pair")
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir(), new.mkdir()
    arm = {"scores": {"t1": 1.0}, "usd": 0.1, "best_seen": 1.0, "trajectory": []}
    design = {"builder-only": {"scores": {"t1": 0.5}, "usd": 0.05, "spent": 1}}
    for folder, n in ((base, 0), (new, 0), (new, 1)):
        outcome = {"landscape": n, "bench": "forge", "designs": design, "arms": {"guided": arm}}
        (folder / f"L{n}.json").write_text(json.dumps(outcome))
    (got,) = pair.merged(base, new)  # L1 has no baseline: left out
    assert got["landscape"] == 0 and set(got["arms"]) == {"guided", "guided-old"}
    assert _script().ARMS["guided+cost"] == {"strategy": "guided", "objective": "cost-aware"}


def test_run_landscape_keeps_what_is_there_and_never_cuts_the_holdout(tmp_path: Path) -> None:
    """An arm already in L{n}.json is not run again; the budget counts training runs only, so
    the final best's holdout covers every holdout task, and holdout runs are counted apart."""
    import argparse

    sv = _script()
    args = argparse.Namespace(
        bench="mini", train=2, holdout=2, population=2, arms=["random", "guided"],
        budget=4, long_budget=0, family=1, replicas=2,
    )  # fmt: skip
    kept = {"trajectory": [], "spent": 0, "scores": {"x": 0.5}, "usd": 0.0, "holdout_runs": 0,
            "nodes": 1, "best_seen": 0.5}  # fmt: skip
    settings = sv.run_settings(args)
    (tmp_path / "L0.json").write_text(
        json.dumps(
            {"landscape": 0, "bench": "mini", "settings": settings, "designs": {},
             "arms": {"random": kept}}
        )
    )  # fmt: skip
    outcome = sv.run_landscape(0, args, tmp_path)
    assert outcome["arms"]["random"] == kept
    guided = outcome["arms"]["guided"]
    assert guided["spent"] <= 4  # training runs only
    assert len(guided["scores"]) == 2  # both holdout tasks, never cut short
    assert guided["holdout_runs"] >= 2
    assert set(outcome["designs"]) == set(sv.hand_designs())
    # --replicas 2: each arm once more with its own search seed, in the same file
    assert {"random#1", "guided#1"} <= set(outcome["arms"])
    assert outcome["arms"]["guided#1"]["spent"] <= 4
    assert (
        json.loads((tmp_path / "L0.json").read_text())["arms"]["guided"]["spent"] == guided["spent"]
    )


def test_run_landscape_never_adds_arms_run_with_other_settings(tmp_path: Path) -> None:
    """A landscape file from a run with another budget (or split, or population), or one that
    does not record its settings, is refused: its arms and the new ones are not comparable."""
    import argparse

    sv = _script()
    args = argparse.Namespace(
        bench="mini",
        train=2,
        holdout=2,
        population=2,
        arms=["guided"],
        budget=4,
        long_budget=0,
        family=1,
        replicas=1,
    )
    other = {**sv.run_settings(args), "budget": 72}
    for recorded in (other, None):
        held = {"landscape": 0, "bench": "mini", "designs": {}, "arms": {}}
        if recorded is not None:
            held["settings"] = recorded
        (tmp_path / "L0.json").write_text(json.dumps(held))
        with pytest.raises(SystemExit, match="use another --out"):
            sv.run_landscape(0, args, tmp_path)
