"""evolve (start, resume) goes through the one run lifecycle (store.RunLifecycle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopwright import search
from loopwright.errors import UsageError
from loopwright.search import EVOLVE_RUN
from loopwright.store import RunLifecycle


def _config() -> search.EvolveConfig:
    return search.parse_config({
        "seed_workflow": "builder-only", "bench": "mini", "model": "sim", "sandbox": "local",
        "population": 2, "elitism": 1, "strategy": "random", "holdout_repetitions": 1,
        "train_tasks": ["l1-slugify"], "holdout_tasks": ["l1-rle-decode"],
        "budgets": {"max_generations": 1, "max_evaluations": 1},
    })  # fmt: skip


def test_evolve_start_and_resume_go_through_the_run_lifecycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = tmp_path / "run"
    busy = pytest.raises(UsageError, match="another process is running this evolve run")
    with EVOLVE_RUN.at(run_dir).lock(), busy:  # another process holds the directory: refused
        search.start(_config(), run_dir)
    assert not (run_dir / "config.yaml").exists()
    used: list[tuple[str, str]] = []
    for step in ("create", "reopen"):
        real = getattr(RunLifecycle, step)

        def spy(self: RunLifecycle, _real: Any = real, _step: str = step) -> Any:
            used.append((self.spec.kind, _step))
            return _real(self)

        monkeypatch.setattr(RunLifecycle, step, spy)
    search.start(_config(), run_dir)
    assert EVOLVE_RUN.at(run_dir).state() == "partial"
    search.resume(run_dir)
    assert used == [("evolve", "create"), ("evolve", "reopen")]
    assert EVOLVE_RUN.at(run_dir).state() == "finished"  # result.json written
