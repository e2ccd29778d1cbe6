"""SIGKILL of the main process alone (as the OOM killer does) during calibration, in the middle
of a generation and inside the checkpoint write, then `loopwright evolve --resume` at once:
compared with an uninterrupted run of the same seed, no evaluation is lost or repeated and the
result is identical; the killed process's workers die with it and never keep the run lock."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.search import load_checkpoint
from tests.faults.conftest import (
    KINDS,
    assert_resumed_equals,
    events,
    kill_main_when,
    start,
    with_cleanup,
)


@pytest.fixture
def run_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "run"


@pytest.mark.slow
def test_sigkill_during_calibration_resumes_without_losing_a_calibration_run(
    whole: Path, run_dir: Path
) -> None:
    proc = start(run_dir)
    kill_main_when(proc, lambda: len(events(run_dir, KINDS[0])) >= 2)
    before = {kind: events(run_dir, kind) for kind in KINDS}
    assert 2 <= len(before[KINDS[0]]) < 4 and not before[KINDS[1]], "killed too late to test"
    assert not (run_dir / "checkpoint.json").exists()
    assert_resumed_equals(run_dir, whole, before)


@pytest.mark.slow
def test_sigkill_mid_generation_resumes_exactly(whole: Path, run_dir: Path) -> None:
    proc = start(run_dir)
    kill_main_when(proc, lambda: len(events(run_dir, KINDS[1])) >= 1)
    before = {kind: events(run_dir, kind) for kind in KINDS}
    total = len(events(whole, KINDS[1]))
    assert 1 <= len(before[KINDS[1]]) < total, "killed too late to test"
    assert_resumed_equals(run_dir, whole, before)


@pytest.mark.slow
def test_sigkill_inside_the_checkpoint_write_resumes_exactly(whole: Path, run_dir: Path) -> None:
    proc = start(run_dir, LW_FAULT_KILL_AT="3")  # the third checkpoint: in generation 0
    assert proc.wait(timeout=600) == -signal.SIGKILL
    with_cleanup(proc.pid)
    assert (run_dir / ".checkpoint.json.killed.tmp").is_file()
    load_checkpoint(run_dir)  # the previous checkpoint is whole
    before = {kind: events(run_dir, kind) for kind in KINDS}
    assert_resumed_equals(run_dir, whole, before)
