"""The one run lifecycle (store.RunLifecycle): claim, lock, resume, state, scratch, full disk;
and evolve, research and the A/B harness each going through it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from loopwright._caller import called_from_cli, caller
from loopwright.errors import UsageError
from loopwright.harness import AB_RUN
from loopwright.research import RESEARCH_RUN
from loopwright.search import EVOLVE_RUN
from loopwright.store import DiskFullError, RunSpec

SPEC = RunSpec(kind="run", header="head.yaml", lock=".test.lock", flag="--dir", noun="test run",
               resume="loopwright test --dir {path}", param="where",
               api_resume="tests.resume({path})", finished="done.json")  # fmt: skip


def test_create_claims_locks_and_leaves_the_header_to_the_caller(tmp_path: Path) -> None:
    run = SPEC.at(tmp_path / "r")
    assert run.state() == "new"
    with run.create() as made:
        assert made.path == run.path and run.holder() == os.getpid()
        with pytest.raises(UsageError, match="another process is running this test run") as busy:
            run.lock().__enter__()
        assert busy.value.got == f"lock held by pid {os.getpid()}"
        made.write("head.yaml", "x: 1\n")
    assert run.holder() is None and run.state() == "partial"
    (run.path / "done.json").write_text("{}")
    assert run.state() == "finished"


def test_a_directory_holding_a_run_or_anything_else_is_refused_and_left_alone(
    tmp_path: Path,
) -> None:
    held = tmp_path / "held"
    held.mkdir()
    (held / "head.yaml").write_text("x: 1\n")
    with pytest.raises(UsageError, match="already holds a run") as refused:
        SPEC.at(held).check_new()
    assert f"tests.resume({str(held)!r})" in (refused.value.fix or "")  # a Python caller's
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"), SPEC.at(other).create():
        pass
    assert [p.name for p in other.iterdir()] == ["notes.txt"]  # no lock file left either


def test_the_loser_of_a_start_race_is_refused_under_the_lock(tmp_path: Path) -> None:
    run = SPEC.at(tmp_path / "r")
    with run.create() as made:
        made.write("head.yaml", "x: 1\n")
    # a second process that passed its first check before the winner wrote: refused under lock
    with pytest.raises(UsageError, match="already holds a run"), run.create():
        pass


def test_reopen_refuses_a_directory_without_a_run_and_creates_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="holds no test run"), SPEC.at(empty).reopen():
        pass
    assert list(empty.iterdir()) == []
    with pytest.raises(UsageError, match="no run directory"), SPEC.at(tmp_path / "x").reopen():
        pass
    assert not (tmp_path / "x").exists()


def test_reopen_holds_the_lock_while_the_run_goes_on(tmp_path: Path) -> None:
    run = SPEC.at(tmp_path)
    (tmp_path / "head.yaml").write_text("x: 1\n")
    with run.reopen():
        assert run.holder() == os.getpid()
        with pytest.raises(UsageError, match="another process"), run.reopen():
            pass
    assert run.holder() is None


def test_a_full_disk_in_the_run_is_one_error_naming_the_resume_command(tmp_path: Path) -> None:
    run = SPEC.at(tmp_path / "r")
    with pytest.raises(DiskFullError) as full, run.create():
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "r" / "f"))
    assert f"tests.resume({str(tmp_path / 'r')!r})" in (full.value.fix or "")


def test_sweep_removes_scratch_inside_the_run_only(tmp_path: Path) -> None:
    run = SPEC.at(tmp_path / "r")
    scratch = run.path / ".staging" / "iter_2"
    scratch.mkdir(parents=True)
    (scratch / "half.json").write_text("{")
    assert run.sweep([scratch, run.path / "absent"]) == [scratch]
    assert not scratch.exists()
    with pytest.raises(ValueError, match="not inside"):
        run.sweep([tmp_path / "elsewhere"])


@pytest.mark.parametrize("spec", [EVOLVE_RUN, RESEARCH_RUN, AB_RUN], ids=lambda s: s.kind)
def test_each_loop_describes_its_directory_to_the_one_lifecycle(spec: RunSpec) -> None:
    assert spec.header and spec.lock.startswith(".") and "{path}" in spec.resume
    assert "{path}" in spec.api_resume and spec.param and not spec.param.startswith("-")
    assert len({EVOLVE_RUN.lock, RESEARCH_RUN.lock, AB_RUN.lock}) == 3


def test_a_refusal_speaks_the_callers_language(tmp_path: Path) -> None:
    """Python callers get the parameter and the call; the command line the flag and command."""
    held = tmp_path / "held"
    held.mkdir()
    (held / "head.yaml").write_text("x: 1\n")
    with pytest.raises(UsageError) as from_python:
        SPEC.at(held).check_new()
    fix = from_python.value.fix or ""
    assert fix == f"continue it (tests.resume({str(held)!r})), or pass another where"
    assert "--" not in fix
    with called_from_cli(), pytest.raises(UsageError) as from_cli:
        SPEC.at(held).check_new()
    assert (
        from_cli.value.fix == f"continue it (loopwright test --dir {held}), or pass another --dir"
    )
    assert caller() == "python"  # the command is over
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError) as missing:
        SPEC.at(tmp_path / "empty").require()
    assert "(where)" in (missing.value.fix or "") and "--dir" not in (missing.value.fix or "")
    with called_from_cli(), pytest.raises(UsageError) as busy, SPEC.at(held).reopen():
        SPEC.at(held).lock().__enter__()
    assert "--" not in str(from_python.value) and busy.value.fix == SPEC.busy_fix


@pytest.mark.parametrize("spec", [EVOLVE_RUN, RESEARCH_RUN, AB_RUN], ids=lambda s: s.kind)
def test_each_loops_refusal_names_no_flag_to_a_python_caller(tmp_path: Path, spec: RunSpec) -> None:
    (tmp_path / spec.header).write_text("x: 1\n")
    with pytest.raises(UsageError) as refused:
        spec.at(tmp_path).check_new()
    assert "--" not in str(refused.value), str(refused.value)
    with called_from_cli(), pytest.raises(UsageError) as at_cli:
        spec.at(tmp_path).check_new()
    assert spec.flag in str(at_cli.value)
