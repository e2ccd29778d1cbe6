"""Who called (`loopwright._caller`) reaches the threads that do the work: a thread starts in an
empty context, so a CLI command's wave, holdout or grading threads spoke to a Python caller."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import loopwright
from loopwright._caller import Caller, called_from_cli, caller, carried, spoken
from loopwright.cli import main
from loopwright.report import write_report
from loopwright.research import InitOptions, ThreadWave, WaveSubmission, allocate_workers
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


def _python_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> tuple[str, str]:
    """The same bad input given from Python and at the command line: the two messages."""
    from loopwright.errors import UserError

    target = tmp_path / case
    calls: dict[str, tuple[Callable[[], object], list[str]]] = {
        "unknown task": (
            lambda: loopwright.run("builder-only", "mini", tasks=["nope"], run_dir=target),
            ["run", "builder-only", "--bench", "mini", "--tasks", "nope", "--run-dir", str(target)],
        ),
        "no goal": (
            lambda: loopwright.research(target, init=InitOptions(workflow="builder-only", bench="mini")),
            ["research", "init", "--dir", str(target), "--workflow", "builder-only", "--bench", "mini"],
        ),
        "negative budget": (
            lambda: loopwright.research(target, init=InitOptions(
                workflow="builder-only", bench="mini", goal="g", max_usd=-1.0)),
            ["research", "init", "--dir", str(target), "--workflow", "builder-only", "--bench",
             "mini", "--goal", "g", "--max-usd", "-1"],
        ),
        "no run to report": (lambda: write_report(target), ["report", str(target)]),
    }  # fmt: skip
    call, argv = calls[case]
    with pytest.raises(UserError) as refused:
        call()
    assert main(argv) == 2
    assert not target.exists()
    return refused.value.render(), capsys.readouterr().err


@pytest.mark.parametrize(
    ("case", "python", "cli"),
    [
        (
            "unknown task",
            "unknown task id(s) in tasks: nope",
            "unknown task id(s) in --tasks: nope",
        ),
        ("no goal", 'set InitOptions(goal="<one line>")', 'pass --goal "<one line>"'),
        ("negative budget", "max_usd -1", "--max-usd -1"),
        ("no run to report", "(its run_dir)", "(its --run-dir)"),
    ],
)
def test_the_same_bad_input_is_told_in_each_callers_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, python: str, cli: str
) -> None:
    from_python, from_cli = _python_and_cli(tmp_path, capsys, case)
    assert python in from_python and "--" not in from_python, from_python
    assert cli in from_cli and python not in from_cli, from_cli


def test_a_tier_without_a_model_is_told_as_its_caller_sets_one() -> None:
    from loopwright.errors import ConfigError
    from loopwright.models import ModelsConfig, resolve_model

    with pytest.raises(ConfigError) as from_python:
        resolve_model("small", ModelsConfig())
    with called_from_cli(), pytest.raises(ConfigError) as from_cli:
        resolve_model("small", ModelsConfig())
    assert "ModelsConfig(tiers={'small': MODEL})" in (from_python.value.fix or "")
    assert "--" not in (from_python.value.fix or "")
    assert "pass --tier small=MODEL" in (from_cli.value.fix or "")
    assert "ModelsConfig" not in (from_cli.value.fix or "")
