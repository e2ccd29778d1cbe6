"""Kill `loopwright evolve` with SIGKILL in the middle of a generation, resume it, and compare
with an uninterrupted run of the same seed: no finished evaluation redone or lost, same result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loopwright.search import load_checkpoint

ARGS = [
    "evolve", "--bench", "mini", "--seed-workflow", "builder-only", "--model", "sim",
    "--train", "l1-roman-numerals,l2-kvstore-json-backend", "--holdout", "l1-ring-resize",
    "--population", "3", "--generations", "2", "--seed", "11", "--sandbox", "local",
]  # fmt: skip
CLI = "import sys; from loopwright.cli import main; sys.exit(main(sys.argv[1:]))"


def evolve(run_dir: Path, *extra: str) -> subprocess.Popen[bytes]:
    """A fresh run in `run_dir`, or with "--resume" a resumed one (which takes no settings:
    the run keeps its own)."""
    args = ["evolve"] if "--resume" in extra else ARGS
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args, "--run-dir", str(run_dir), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def finished(run_dir: Path) -> list[tuple[int, str, str, int]]:
    path = run_dir / "progress.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [
        (r["generation"], r["individual_id"], r["task_id"], r["repetition"])
        for r in rows
        if r["event"] == "evaluation_finished"
    ]


def results(run_dir: Path) -> dict[tuple[str, str, int, str], float]:
    checkpoint = load_checkpoint(run_dir)
    return {
        (ind_id, r.task_id, r.repetition, r.split): r.score
        for ind_id, ind in checkpoint.individuals.items()
        for r in ind.results
    }


@pytest.mark.slow
def test_sigkill_mid_generation_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    whole = evolve(tmp_path / "whole")
    assert whole.wait(timeout=600) == 0, whole.stderr.read() if whole.stderr else ""

    killed_dir = tmp_path / "killed"
    proc = evolve(killed_dir)
    deadline = time.monotonic() + 300
    while len(finished(killed_dir)) < 4 and time.monotonic() < deadline:  # inside generation 0
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    before = finished(killed_dir)
    assert 4 <= len(before) < len(finished(tmp_path / "whole")), "the kill came too late to test"

    resumed = evolve(killed_dir, "--resume")
    assert resumed.wait(timeout=600) == 0, resumed.stderr.read() if resumed.stderr else ""

    after = finished(killed_dir)
    assert len(after) == len(set(after)), "an evaluation was run twice"
    assert set(before) <= set(after), "a finished evaluation was lost"
    assert results(killed_dir) == results(tmp_path / "whole")
    a, b = load_checkpoint(killed_dir), load_checkpoint(tmp_path / "whole")
    assert (a.winner_id, a.stop_reason) == (b.winner_id, b.stop_reason)
    assert [s.train_best for s in a.summaries] == [s.train_best for s in b.summaries]
