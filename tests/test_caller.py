"""Who called (`loopwright._caller`) reaches the threads that do the work: a thread starts in an
empty context, so a CLI command's wave, holdout or grading threads spoke to a Python caller."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from loopwright._caller import Caller, called_from_cli, caller, carried, spoken
from loopwright.research import ThreadWave, WaveSubmission, allocate_workers
from tests.research.test_wave import jobs


class Listening:
    """Stands in for Evaluator.run_one: notes who the caller is in the thread it runs in."""

    def __init__(self) -> None:
        self.heard: list[tuple[Caller, bool]] = []
        self.lock = threading.Lock()

    def run_one(self, workflow: Any, task: Any, repetition: int, root: Path, *, run_id: str) -> Any:
        on_main = threading.current_thread() is threading.main_thread()
        with self.lock:
            self.heard.append((caller(), on_main))
        return task


def test_a_research_wave_speaks_to_the_cli_from_its_worker_threads() -> None:
    wave = jobs({"a": 3, "b": 2})
    allocation = allocate_workers([WaveSubmission(j.key, len(j.tasks), 4) for j in wave], 4)
    for who in ("python", "cli"):
        evaluator = Listening()
        if who == "cli":
            with called_from_cli():
                ThreadWave(evaluator, "t").run(wave, allocation)  # type: ignore[arg-type]
        else:
            ThreadWave(evaluator, "t").run(wave, allocation)  # type: ignore[arg-type]
        assert len(evaluator.heard) == 5
        assert {heard for heard, _ in evaluator.heard} == {who}
        assert not any(on_main for _, on_main in evaluator.heard)  # really other threads


def test_one_carried_function_runs_in_many_threads_at_once_as_its_caller() -> None:
    gate = threading.Barrier(4)

    def words(_: int) -> str:
        gate.wait(timeout=10)  # all four inside at once
        return spoken("population", "--population")

    with called_from_cli():
        said = carried(words)
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(said, range(4))) == ["--population"] * 4
        assert list(pool.map(words, range(4))) == ["population"] * 4  # not carried: a thread's own
    assert caller() == "python"
