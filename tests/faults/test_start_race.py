"""Two fresh evolve runs started together on one directory: exactly one wins, the other is
refused (exit 2) having written nothing, and the directory is the winner's (20 tries)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from loopwright.search import load_checkpoint

# One interpreter imports loopwright once, then per try forks two racers (seeds 100 and 200)
# that wait for one instant and call `search.start` (what `outer-loop calibrate` runs: the
# directory is created, generation 0 built and checkpointed; with the split given there is no
# calibration, so a try is quick). Prints each try's two exit codes as JSON.
RACERS = """
import json, os, sys, time
from pathlib import Path
from loopwright import search
from loopwright.errors import UserError

def racer(run_dir, seed, at):
    config = search.parse_config({
        "seed_workflow": "builder-only", "bench": "mini", "model": "sim", "sandbox": "local",
        "seed": seed, "population": 2, "elitism": 1,
        "train_tasks": ["l1-roman-numerals"], "holdout_tasks": ["l1-ring-resize"],
        "budgets": {"max_generations": seed // 100}, "strategy": "random",
    })
    time.sleep(max(at - time.time(), 0))
    try:
        search.start(config, run_dir)
    except UserError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    return 0

codes = []
for run_dir in map(Path, sys.argv[1:]):
    at = time.time() + 0.5
    pids = []
    for seed in (100, 200):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = racer(run_dir, seed, at)
            finally:
                os._exit(code)
        pids.append(pid)
    codes.append([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids])
print(json.dumps(codes))
"""
TRIES = 20


@pytest.mark.slow
def test_two_fresh_runs_on_one_directory_exactly_one_wins(tmp_path: Path) -> None:
    run_dirs = [tmp_path / f"try{i}" for i in range(TRIES)]
    out = subprocess.run([sys.executable, "-c", RACERS, *map(str, run_dirs)],
                         capture_output=True, text=True, timeout=900, check=True)  # fmt: skip
    assert "Traceback" not in out.stderr, out.stderr
    codes = json.loads(out.stdout)
    for run_dir, (a, b) in zip(run_dirs, codes, strict=True):
        assert sorted((a, b)) == [0, 2], f"{run_dir.name}: exit codes {a}, {b}\n{out.stderr}"
        winner = 100 if a == 0 else 200
        meta = yaml.safe_load((run_dir / "config.yaml").read_text())
        checkpoint = load_checkpoint(run_dir)
        assert meta["seed"] == winner == checkpoint.config.seed
        assert meta["config"]["budgets"]["max_generations"] == winner // 100
        assert checkpoint.config.budgets.max_generations == winner // 100
