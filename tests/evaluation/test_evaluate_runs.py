"""`Evaluator.evaluate_runs`: chosen (task, repetition) pairs, records in the order asked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from loopwright.evaluation import (
    EvalJob,
    EvalSettings,
    Evaluator,
    Executor,
    JobStream,
    SerialExecutor,
)
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.tasks import load_benchmark
from loopwright.workflow import builtin_workflow

BENCH = load_benchmark("mini")
TASKS = {t.id: t for t in BENCH.tasks}


class Reversed:
    """An executor that hands results back in the reverse of the job order (as a parallel
    pool may), so the caller must restore the order itself."""

    name = "reversed"
    workers = 2

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        done = list(SerialExecutor().run(evaluator, jobs))
        yield from reversed(done)

    def close(self) -> None:
        return None


def evaluator(executor: Executor | None) -> Evaluator:
    return Evaluator(
        model_factory("sim", benchmark=BENCH), default_sandbox("local"), DEFAULT_PRICES,
        EvalSettings(seed=3, sandbox="local"), executor=executor,
    )  # fmt: skip


@pytest.mark.parametrize("executor", [None, Reversed()], ids=["in-process", "executor"])
def test_chosen_runs_come_back_in_the_order_asked(
    tmp_path: Path, executor: Executor | None
) -> None:
    runs = [(TASKS["l1-slugify"], 2), (TASKS["l1-rle-decode"], 0)]
    seen: list[str] = []
    records = evaluator(executor).evaluate_runs(
        builtin_workflow("builder-only"), runs, tmp_path, run_id="pick",
        on_record=lambda r: seen.append(r.task_id),
    )  # fmt: skip
    assert [(r.task_id, r.repetition) for r in records] == [("l1-slugify", 2), ("l1-rle-decode", 0)]
    assert sorted(seen) == ["l1-rle-decode", "l1-slugify"]
    assert (tmp_path / "l1-slugify" / "rep_2").is_dir()
    assert not (tmp_path / "l1-slugify" / "rep_0").exists()  # only what was asked ran
    # the same run `run_one` makes for that pair: the seed comes from task and repetition
    again = evaluator(None).run_one(
        builtin_workflow("builder-only"), TASKS["l1-slugify"], 2, tmp_path / "again", run_id="x"
    )
    assert (again.seed, again.score_end) == (records[0].seed, records[0].score_end)
