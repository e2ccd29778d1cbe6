"""The fault suite's run (`_driver.py`), its uninterrupted twin (`whole`, one per session) and
how to compare a resumed run with it: no evaluation lost or repeated, the same result."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loopwright.search import load_checkpoint

DRIVER = Path(__file__).with_name("_driver.py")
CLI = "import sys; from loopwright.cli import main; sys.exit(main(sys.argv[1:]))"
Key = tuple[object, ...]


def start(run_dir: Path, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(run_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, **env},
    )


def resume(run_dir: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", CLI, "evolve", "--resume", "--run-dir", str(run_dir),
            "--no-report"]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)


def events(run_dir: Path, kind: str) -> list[Key]:
    path = run_dir / "progress.jsonl"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line the kill cut off (dropped by the resumed run)
    keys = ("generation", "individual_id", "task_id", "repetition", "split")
    return [tuple(r.get(k) for k in keys) for r in rows if r["event"] == kind]


def calibrations(run_dir: Path) -> list[Key]:
    rows = json.loads((run_dir / "calibration_runs.json").read_text())["runs"]
    return [(r["task_id"], r["repetition"]) for r in rows]


def outcome(run_dir: Path) -> dict[str, object]:
    checkpoint = load_checkpoint(run_dir)
    return {
        "calibration": json.loads((run_dir / "calibration.json").read_text()),
        "results": {
            (ind_id, r.task_id, r.repetition, r.split): (r.score, r.resolved)
            for ind_id, ind in checkpoint.individuals.items()
            for r in ind.results
        },
        "winner": (checkpoint.winner_id, checkpoint.stop_reason),
        "best": [s.train_best for s in checkpoint.summaries],
    }


def session_processes(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="package")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    proc = start(run_dir)
    assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""
    return run_dir


def kill_main_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """SIGKILL the main process alone once `ready()`; its workers must die with it."""
    deadline = time.monotonic() + 300
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before the kill"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 60
    while session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = session_processes(proc.pid)
    with_cleanup(proc.pid)
    assert not left, f"processes of the killed run live on: {left}"


def with_cleanup(sid: int) -> None:
    for pid in session_processes(sid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def assert_resumed_equals(run_dir: Path, whole: Path, before: dict[str, list[Key]]) -> None:
    done = resume(run_dir)  # at once: no orphan holds the lock
    assert done.returncode == 0, done.stderr
    for kind, earlier in before.items():
        after = events(run_dir, kind)
        assert len(after) == len(set(after)), f"a {kind} run was repeated"
        assert set(earlier) <= set(after), f"a finished {kind} run was lost"
        assert set(after) == set(events(whole, kind))
    assert calibrations(run_dir) == calibrations(whole)
    assert outcome(run_dir) == outcome(whole)


KINDS = ("calibration_run_finished", "evaluation_finished")
