"""`loopwright outer-loop reflect --generation N`, `status --reflection` and the credit table."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.reflection import load_reflection, reflection_path
from loopwright.search import load_checkpoint

COMMON = ("--bench", "mini", "--seed-workflow", "builder-only", "--model", "sim",
          "--population", "3", "--generations", "3", "--seed", "0", "--holdout-reps", "1",
          "--sandbox", "local", "--train", "l1-slugify,l2-fsm-guards",
          "--holdout", "l1-roman-numerals")  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> str:
    got = main(list(argv))
    out, err = capsys.readouterr()
    assert got == code, out + err
    return out + err


def test_reflect_a_step_at_a_time_then_show_it_and_the_credit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = str(tmp_path / "run")
    run(capsys, "outer-loop", "calibrate", "--run-dir", run_dir, *COMMON)
    early = run(capsys, "outer-loop", "reflect", "--run-dir", run_dir, code=2)
    assert "not evaluated yet" in early and "outer-loop evaluate" in early

    run(capsys, "outer-loop", "evaluate", "--run-dir", run_dir)
    text = run(capsys, "outer-loop", "reflect", "--run-dir", run_dir, "--generation", "0")
    assert "reflection on generation 0: offline_rules" in text and "SIMULATED" in text
    assert "failure patterns" in text and "mutation suggestions" in text
    report = load_reflection(reflection_path(tmp_path / "run", 0))
    assert load_checkpoint(tmp_path / "run").reflected == (0,)

    run(capsys, "outer-loop", "evolve", "--run-dir", run_dir)
    assert load_reflection(reflection_path(tmp_path / "run", 0)) == report  # not redone
    status = run(capsys, "outer-loop", "status", "--run-dir", run_dir, "--reflection")
    assert "credit (children that beat their parents)" in status
    assert "reflection on generation 0" in status  # the latest one
    children = [
        i for i in load_checkpoint(tmp_path / "run").individuals.values() if i.generation == 1
    ]
    assert children and all(c.lineage.guidance is not None for c in children)
    assert any(c.lineage.guidance.kind in status for c in children if c.lineage.guidance)

    future = run(capsys, "outer-loop", "reflect", "--run-dir", run_dir, "--generation", "5", code=2)
    assert "generation 5 is not evaluated yet" in future


def test_a_bad_strategy_or_exploration_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = run(
        capsys, "evolve", *COMMON, "--strategy", "clever", "--run-dir", str(tmp_path / "a"), code=2
    )
    assert "strategy" in text
    text = run(
        capsys, "evolve", *COMMON, "--exploration", "2", "--run-dir", str(tmp_path / "b"), code=2
    )
    assert "exploration must lie in [0, 1]" in text and "fix:" in text
