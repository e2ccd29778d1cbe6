"""DirLock: one holder at a time, the holder's pid in the refusal, free again after release."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.research import RESEARCH_RUN
from loopwright.search import EVOLVE_RUN
from loopwright.store import DirLock


def test_a_second_holder_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    path = tmp_path / "sub" / ".lock"
    with DirLock(path, busy="busy here", fix="wait"):
        with pytest.raises(UsageError) as refused:
            DirLock(path, busy="busy here", fix="wait").__enter__()
        assert refused.value.got == f"lock held by pid {os.getpid()}"
        assert refused.value.fix == "wait" and "busy here" in str(refused.value)
    with DirLock(path, busy="busy here", fix="wait"):  # released: free again
        assert path.read_text(encoding="utf-8") == str(os.getpid())


def test_the_evolve_and_research_locks_say_which_loop_holds_the_directory(tmp_path: Path) -> None:
    evolve, research = EVOLVE_RUN.at(tmp_path), RESEARCH_RUN.at(tmp_path)
    with evolve.lock(), pytest.raises(UsageError, match="evolve run"):
        evolve.lock().__enter__()
    assert research.lock_path == tmp_path / ".research.lock"
    with research.lock(), pytest.raises(UsageError, match="research loop"):
        research.lock().__enter__()


def test_lock_holder_tells_a_live_holder_from_none(tmp_path: Path) -> None:
    from loopwright.store import lock_holder

    path = tmp_path / ".lock"
    assert lock_holder(path) is None  # no file
    with DirLock(path, busy="busy", fix="wait"):
        assert lock_holder(path) == os.getpid()
        with pytest.raises(UsageError):  # looking did not take the lock from its holder
            DirLock(path, busy="busy", fix="wait").__enter__()
    assert path.is_file() and lock_holder(path) is None  # released: the file stays, unheld
