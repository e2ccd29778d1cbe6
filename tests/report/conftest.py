"""Real run directories for the report tests, made once per session with the offline sim model:
a small evolution, a run of two workflows, and both kinds killed with SIGKILL half-way."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright.cli import main

EVOLVE_ARGS = [
    "evolve",
    "--bench",
    "mini",
    "--seed-workflow",
    "builder-only",
    "--model",
    "sim",
    "--train",
    "l1-slugify,l1-rle-decode",
    "--holdout",
    "l1-roman-numerals",
    "--holdout-reps",
    "1",
    "--population",
    "3",
    "--generations",
    "2",
    "--seed",
    "0",
    "--sandbox",
    "local",
]
RUN_ARGS = [
    "run",
    "builder-only",
    "research-build-verify",
    "--bench",
    "mini",
    "--tasks",
    "l1-slugify,l2-fsm-guards",
    "--sandbox",
    "local",
]
CLI = "import sys; from loopwright.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class CliRun:
    """A run directory made through the CLI, with what the command printed."""

    run_dir: Path
    code: int
    out: str
    err: str


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="session")
def sim_evolution(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """`loopwright evolve` (2 generations of 3, 2 training and 1 holdout task), report on."""
    run_dir = tmp_path_factory.mktemp("evolve") / "run"
    code, out, err = run_cli(*EVOLVE_ARGS, "--run-dir", str(run_dir))
    assert code == 0, err
    return CliRun(run_dir, code, out, err)


@pytest.fixture(scope="session")
def sim_evolution_seed1(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """The same evolution as `sim_evolution` at seed 1 with 3 generations, no report (a second
    run for comparison pages)."""
    run_dir = tmp_path_factory.mktemp("evolve-seed1") / "seed1"
    argv = [*EVOLVE_ARGS, "--run-dir", str(run_dir), "--no-report"]
    argv[argv.index("--seed") + 1] = "1"
    argv[argv.index("--generations") + 1] = "3"
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return CliRun(run_dir, code, out, err)


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """`loopwright run` of builder-only and research-build-verify on two tasks, report on."""
    run_dir = tmp_path_factory.mktemp("run") / "run"
    code, out, err = run_cli(*RUN_ARGS, "--run-dir", str(run_dir))
    assert code == 0, err
    return CliRun(run_dir, code, out, err)


def kill_when(argv: list[str], ready: Callable[[], bool], timeout_s: float = 120) -> None:
    """Start the CLI in a subprocess and SIGKILL its process group once `ready()` holds."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    try:
        while not ready() and time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail("the process ended before it could be killed half-way")
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@pytest.fixture(scope="session")
def killed_evolution(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An evolve run killed in generation 0, after its first finished evaluation."""
    run_dir = tmp_path_factory.mktemp("killed-evolve") / "run"

    def one_evaluation_done() -> bool:
        path = run_dir / "progress.jsonl"
        return path.is_file() and "evaluation_finished" in path.read_text(encoding="utf-8")

    kill_when([*EVOLVE_ARGS, "--run-dir", str(run_dir)], one_evaluation_done)
    return run_dir


@pytest.fixture(scope="session")
def killed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run killed in the middle of its second task run (the first one has its record)."""
    run_dir = tmp_path_factory.mktemp("killed-run") / "run"
    second = run_dir / "builder-only" / "l2-fsm-guards" / "rep_0" / "events.jsonl"

    def second_started() -> bool:
        return second.is_file() and "model_call" in second.read_text(encoding="utf-8")

    kill_when([*RUN_ARGS, "--run-dir", str(run_dir), "--no-report"], second_started)
    return run_dir


RESEARCH_GOAL = """# Goal

## Ultimate
raise mean partial credit on mini level 2

## Escalation
A probe is measured with as many passes as a perf run, so a probe that beats the workspace is
adopted at once (keeps the test to two iterations).
- probe_passes: 1
- perf_passes: 1
- escalate_gain: 0.02
- adopt_gain: 0.0

## Termination
- iterations >= 2
"""
RESEARCH_INIT = [
    "research", "init", "--workflow", "builder-only", "--bench", "mini",
    "--tasks", "l2-fsm-guards", "--max-specs", "2", "--heartbeat", "1", "--sandbox", "local",
    "--constraints",
    "- forbid-axis: topology\n- forbid-axis: agent_loop\n- forbid-axis: model_tier",
]  # fmt: skip


@pytest.fixture(scope="session")
def sim_research(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """`loopwright research` with the sim models on one task: two specs an iteration on the
    prompt and verification axes (the others forbidden), REFLECT on every heartbeat, probes
    adopted at once; goal.md terminates it after two iterations; the report written at the end
    of `research run`."""
    root = tmp_path_factory.mktemp("research")
    goal = root / "goal.md"
    goal.write_text(RESEARCH_GOAL, encoding="utf-8")
    work = root / "v1"
    code, _, err = run_cli(*RESEARCH_INIT, "--dir", str(work), "--goal-file", str(goal))
    assert code == 0, err
    code, out, err = run_cli("research", "run", "--dir", str(work), "--iterations", "3")
    assert code == 0, err
    return CliRun(work, code, out, err)
