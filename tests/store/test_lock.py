"""DirLock: one holder at a time, the holder's pid in the refusal, free again after release."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.research._state import RunLock as ResearchLock
from loopwright.search import RunLock as EvolveLock
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
    with EvolveLock(tmp_path), pytest.raises(UsageError, match="evolve run"):
        EvolveLock(tmp_path).__enter__()
    lock = tmp_path / ".research.lock"
    with ResearchLock(lock), pytest.raises(UsageError, match="research loop"):
        ResearchLock(lock).__enter__()
