"""Two fresh evolve runs started together on one directory: exactly one wins, the other is
refused (exit 2) having written nothing, and the directory is the winner's (20 tries)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from loopwright.search import load_checkpoint

# `search.start` (what `outer-loop calibrate` runs): the run directory is created, generation 0
# built and checkpointed; with the split given there is no calibration, so a try is quick.
RACER = """
import sys, time
from pathlib import Path
from loopwright import search
from loopwright.errors import UserError
config = search.parse_config({
    "seed_workflow": "builder-only", "bench": "mini", "model": "sim", "sandbox": "local",
    "seed": int(sys.argv[2]), "population": 2, "elitism": 1,
    "train_tasks": ["l1-roman-numerals"], "holdout_tasks": ["l1-ring-resize"],
    "budgets": {"max_generations": int(sys.argv[2]) // 100},
})
time.sleep(max(float(sys.argv[3]) - time.time(), 0))
try:
    search.start(config, Path(sys.argv[1]))
except UserError as exc:
    print(exc.render(), file=sys.stderr)
    sys.exit(2)
"""
TRIES = 20
AT_ONCE = 5


def race(run_dirs: list[Path]) -> list[tuple[int, int]]:
    """Start two racers (seeds 100 and 200) on each directory at one instant; their exit codes."""
    at = time.time() + 4.0  # every interpreter has imported loopwright by then
    procs = [
        [
            subprocess.Popen(
                [sys.executable, "-c", RACER, str(d), seed, str(at)], stderr=subprocess.PIPE
            )
            for seed in ("100", "200")
        ]
        for d in run_dirs
    ]
    codes = []
    for pair in procs:
        a, b = (p.wait(timeout=300) for p in pair)
        for p in pair:
            err = p.stderr.read().decode() if p.stderr else ""
            assert p.returncode in (0, 2) and "Traceback" not in err, err
        codes.append((a, b))
    return codes


@pytest.mark.slow
def test_two_fresh_runs_on_one_directory_exactly_one_wins(tmp_path: Path) -> None:
    run_dirs = [tmp_path / f"try{i}" for i in range(TRIES)]
    codes = []
    for first in range(0, TRIES, AT_ONCE):
        codes += race(run_dirs[first : first + AT_ONCE])
    for run_dir, (a, b) in zip(run_dirs, codes, strict=True):
        assert sorted((a, b)) == [0, 2], f"{run_dir.name}: exit codes {a}, {b}"
        winner = 100 if a == 0 else 200
        meta = yaml.safe_load((run_dir / "config.yaml").read_text())
        checkpoint = load_checkpoint(run_dir)
        assert meta["seed"] == winner == checkpoint.config.seed
        assert meta["config"]["budgets"]["max_generations"] == winner // 100
        assert checkpoint.config.budgets.max_generations == winner // 100
