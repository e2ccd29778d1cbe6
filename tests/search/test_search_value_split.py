"""bench/search_value.py's split: subsets of training and holdout keep the levels' mix."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from loopwright.tasks import load_benchmark

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "search_value.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("search_value", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    spec = importlib.util.spec_from_file_location(
        "search_value_pair", SCRIPT.with_name("search_value_pair.py")
    )
    assert spec is not None and spec.loader is not None
    pair = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pair)
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
