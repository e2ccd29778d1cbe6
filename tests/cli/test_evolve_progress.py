"""evolve's progress display (issue 31): each phase shows done/total, elapsed, ETA, the best
training fitness so far and the spend so far; on a terminal as a rich bar, elsewhere as plain
lines (a quarter of a phase at a time). Fed here with the events of a real run."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopwright
from loopwright.cli._evolve_view import _Display
from loopwright.evaluation import ExecutorSettings
from loopwright.search import (
    Budgets,
    EvaluationFinished,
    EvolveConfig,
    GenerationStarted,
    read_progress,
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("progress") / "run"
    config = EvolveConfig(
        seed_workflow="builder-only", bench="mini", model="sim", seed=0, sandbox="local",
        population=2, elitism=1, train_tasks=("l1-rle-decode", "l1-slugify"),
        holdout_tasks=("l1-semver-compare",), budgets=Budgets(max_generations=2),
    )  # fmt: skip
    loopwright.evolve(config, root, executor=loopwright.Execution(
        settings=ExecutorSettings(kind="serial")))  # fmt: skip
    return root


def test_each_generation_says_at_most_how_many_evaluations_it_runs(run_dir: Path) -> None:
    events = read_progress(run_dir)
    started = [e for e in events if isinstance(e, GenerationStarted)]
    assert [e.generation for e in started] == [0, 1]
    ran = [sum(isinstance(e, EvaluationFinished) and e.generation == gen.generation
               for e in events) for gen in started]  # fmt: skip
    # generation 0: 2 x 2 training runs, 3 holdout repetitions of the leader and of the seed
    assert started[0].planned == ran[0] == 10
    # generation 1: the elite lacks nothing, the child its training runs and (were it to lead)
    # its holdout: an upper bound, met only when the child leads
    assert started[1].planned == 2 + 3 and ran[1] <= 5
    last = [e for e in events if isinstance(e, EvaluationFinished)][-1]
    assert last.spent is not None and last.spent.usd > 0  # the spend so far, in the event


def test_off_a_terminal_a_phase_is_plain_lines_with_total_elapsed_eta_best_and_spend(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _Display(live=False) as display:
        for event in read_progress(run_dir):
            display(event)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("generation ")]
    assert lines, err
    assert any("ETA" in line for line in lines)  # a quarter line before the end
    assert all("elapsed" in line and "spent $" in line for line in lines)
    assert "generation 0: 10/10 evaluations" in err
    assert any("best -" in line for line in lines if line.startswith("generation 0"))
    assert any("best 0." in line or "best 1." in line for line in lines
               if line.startswith("generation 1"))  # fmt: skip


def test_on_a_terminal_the_bar_holds_the_phase_total_and_status(run_dir: Path) -> None:
    display = _Display(live=True)
    events = read_progress(run_dir)
    for event in events[: next(i for i, e in enumerate(events)
                               if isinstance(e, EvaluationFinished)) + 1]:  # fmt: skip
        display(event)
    (task,) = display.progress.tasks
    assert task.description == "generation 0" and task.completed == 1
    assert task.total is not None and task.total == 10
    assert str(task.fields["status"]).startswith("best - · spent $")
