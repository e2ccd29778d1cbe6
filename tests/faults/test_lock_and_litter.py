"""The run lock is never inherited by a forked child; temporary files live in one directory per
process, removed on every exit path, and a dead process's directory is removed at the next
start; Ctrl-C and SIGTERM stop `evolve` with exit 130 and the resume command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from loopwright._scratch import (
    MEMORY_ROOT,
    SCRATCH_PREFIX,
    memory_scratch,
    process_scratch,
    remove_stale,
    scratch_parent,
)
from loopwright.errors import UsageError
from loopwright.store import DirLock
from tests.faults.conftest import CLI

HOLD_AND_FORK = """
import os, sys, time
from pathlib import Path
from loopwright.store import DirLock
lock = DirLock(Path(sys.argv[1]), busy="busy", fix="wait")
lock.__enter__()
child = os.fork()
if child == 0:
    os.close(1), os.close(2)  # the test reads the parent's output to its end: not ours too
    time.sleep(120)  # an orphaned worker: outlives its parent
    os._exit(0)
print(child, flush=True)
os._exit(0)  # the holder dies without releasing (as after SIGKILL)
"""


def lock(path: Path) -> DirLock:
    return DirLock(path, busy="busy", fix="wait")


def test_a_forked_child_does_not_keep_the_lock_after_its_parent_dies(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    out = subprocess.run([sys.executable, "-c", HOLD_AND_FORK, str(path)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    child = int(out.stdout)
    try:
        os.kill(child, 0)  # the child lives on
        with lock(path):  # and the lock is free at once
            pass
    finally:
        os.kill(child, signal.SIGKILL)


def test_the_lock_refuses_a_second_holder_while_held(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    with lock(path):
        out = subprocess.run(
            [sys.executable, "-c", "import sys; from pathlib import Path; "
             "from loopwright.store import DirLock; DirLock(Path(sys.argv[1]), busy='busy', "
             "fix='wait').__enter__()", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert out.returncode != 0 and "busy" in out.stderr
    with lock(path), pytest.raises(UsageError, match="busy"), lock(path):
        pass  # the same process twice: flock on a second description is refused too


def test_temporary_files_go_to_the_process_directory_and_are_removed_on_exit() -> None:
    with process_scratch() as own:
        assert own is not None and own.parent == scratch_parent()
        made = Path(tempfile.mkdtemp(prefix="lw-ws-"))
        assert made.parent == own
        (made / "sub").mkdir()
        (made / "sub" / "f").write_text("x")
        (made / "sub").chmod(0o500)  # an agent took write permission away
    assert not own.exists() and tempfile.tempdir != str(own)


def test_the_memory_directory_is_removed_on_exit_and_a_dead_ones_at_the_next_start() -> None:
    if memory_scratch() is None:
        pytest.skip(f"no memory-backed storage to use here ({MEMORY_ROOT})")
    parent = MEMORY_ROOT / f"{SCRATCH_PREFIX}{os.getuid()}"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    space = Path("/proc/self/ns/pid").stat().st_ino
    stale = parent / f"{dead.pid}-1-{space}"  # a start time no live process has
    (stale / "lw-grade-x").mkdir(parents=True)
    with process_scratch():
        assert not stale.exists()
        own = memory_scratch()
        assert own is not None and own.parent == parent
        (Path(tempfile.mkdtemp(prefix="lw-grade-", dir=own)) / "junit.xml").write_text("x")
    assert not own.exists()


def test_the_memory_directory_of_a_process_outside_any_block_is_removed_at_its_exit() -> None:
    if memory_scratch() is None:
        pytest.skip(f"no memory-backed storage to use here ({MEMORY_ROOT})")
    code = (
        "import tempfile; from loopwright._scratch import memory_scratch; own = memory_scratch(); "
        "tempfile.mkdtemp(prefix='lw-grade-', dir=own); print(own)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    own = Path(out.stdout.strip())
    assert own.parent == MEMORY_ROOT / f"{SCRATCH_PREFIX}{os.getuid()}" and not own.exists()


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_the_process_directory_is_removed_on_an_exception(error: type[BaseException]) -> None:
    with pytest.raises(error), process_scratch() as own:
        assert own is not None
        Path(tempfile.mkdtemp(prefix="lw-pool-"))
        raise error()
    assert not own.exists()


def test_directories_of_dead_processes_are_removed_at_the_next_start() -> None:
    parent = scratch_parent()
    assert parent is not None
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    space = Path("/proc/self/ns/pid").stat().st_ino
    stale = parent / f"{dead.pid}-1-{space}"  # a start time no live process has
    (stale / "lw-ws-x").mkdir(parents=True)
    alive = parent / f"{os.getpid()}-{_start_time_of_self()}-{space}"
    elsewhere = parent / f"{dead.pid}-1-1"  # another pid namespace: cannot be told, kept
    for kept in (alive, elsewhere):
        kept.mkdir(exist_ok=True)
    try:
        assert stale in remove_stale(parent)
        assert not stale.exists() and alive.exists() and elsewhere.exists()
    finally:
        alive.rmdir()
        elsewhere.rmdir()


def _start_time_of_self() -> str:
    stat = Path("/proc/self/stat").read_text()
    return stat[stat.rfind(")") + 2 :].split()[19]


ARGS = [
    "evolve", "--bench", "mini", "--seed-workflow", "builder-only", "--model", "sim",
    "--train", "l1-roman-numerals", "--holdout", "l1-ring-resize", "--population", "2",
    "--elitism", "1", "--generations", "3", "--seed", "4", "--sandbox", "local", "--no-report",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_evolve_says_how_to_resume_and_leaves_no_temporary_files(
    tmp_path: Path, signum: int
) -> None:
    run_dir = tmp_path / "run"
    # As from a terminal: SIGINT at its default, unblocked (a background job of a shell, or a
    # test runner's child, may inherit it ignored or blocked).
    cli = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"signal.pthread_sigmask(signal.SIG_UNBLOCK, {{signal.SIGINT}}); {CLI}"
    )
    proc = subprocess.Popen([sys.executable, "-c", cli, *ARGS, "--run-dir", str(run_dir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    parent = scratch_parent()
    assert parent is not None
    deadline = time.monotonic() + 300
    own = None
    while proc.poll() is None and time.monotonic() < deadline:
        mine = [p for p in parent.glob(f"{proc.pid:010d}-*") if any(p.glob("lw-*"))]
        if mine and (run_dir / "checkpoint.json").is_file():
            own = mine[0]  # a workspace or a worker's log is there: mid-evaluation
            break
        time.sleep(0.02)
    assert own is not None, "the run ended before it could be interrupted"
    proc.send_signal(signum)
    code = proc.wait(timeout=120)
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 130, err
    assert f"loopwright evolve --resume --run-dir {run_dir}" in err and "Traceback" not in err
    assert not own.exists(), f"left behind: {list(own.rglob('*'))[:5]}"
