"""The Python API takes what a Python user passes (issue 31): `str` or `os.PathLike` wherever
a path goes in, one workflow name or a list of them (a bare string is one name, never a list of
letters), and `loopwright.research` describes its call to `inspect` and `help`."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import loopwright
from loopwright.errors import UsageError
from loopwright.research import InitOptions
from loopwright.search import Budgets, EvolveConfig


def test_run_takes_one_workflow_name_and_string_paths(tmp_path: Path) -> None:
    result = loopwright.run(
        "builder-only", "mini", tasks="l1-slugify", run_dir=str(tmp_path / "r"), sandbox="local"
    )
    assert [w.workflow for w in result.summary.workflows] == ["builder-only"]
    assert [t.id for t in result.tasks] == ["l1-slugify"]
    assert result.run_dir == tmp_path / "r" and (tmp_path / "r" / "summary.json").is_file()


def test_evolve_and_resume_take_a_string_run_dir(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    config = EvolveConfig(seed_workflow="builder-only", bench="mini",
                          budgets=Budgets(max_generations=1))  # fmt: skip
    with pytest.raises(UsageError, match="is a file"):  # not a TypeError on str / str
        loopwright.evolve(config, str(tmp_path / "afile"))
    with pytest.raises(loopwright.UserError, match="no run directory"):
        loopwright.resume(str(tmp_path / "nothing-here"))


def test_research_describes_its_call_and_takes_the_directory_once(tmp_path: Path) -> None:
    signature = inspect.signature(loopwright.research)
    assert list(signature.parameters)[:2] == ["dir", "init"]
    assert "Run (or resume) the research loop" in (loopwright.research.__doc__ or "")
    opts = InitOptions(workflow="builder-only", bench="mini", tasks=("l1-slugify",), goal="g")
    outcome = loopwright.research(str(tmp_path / "v1"), init=opts, iterations=0)
    assert (tmp_path / "v1" / "goal.md").is_file()
    assert outcome is not None


def test_the_run_directory_helpers_take_string_paths(tmp_path: Path) -> None:
    """`write_report`, `finalize_run`, `promote_winner` and `read_progress` said `TypeError:
    unsupported operand type(s) for /: 'str' and 'str'` to a `str` path (issue 31)."""
    from loopwright.report import write_report
    from loopwright.search import finalize_run, promote_winner, read_progress

    nothing = str(tmp_path / "nothing")
    for call in (
        lambda: write_report(nothing),
        lambda: write_report(nothing, output=str(tmp_path / "r.html")),
        lambda: finalize_run(nothing),
        lambda: promote_winner(nothing, "mine", library_dir=str(tmp_path / "lib")),
    ):
        with pytest.raises(loopwright.UserError):  # a user error naming the path, no TypeError
            call()
    assert read_progress(nothing) == []


def test_a_comparison_refuses_one_path_where_a_list_is_meant(tmp_path: Path) -> None:
    """`write_comparison("runs/a")` passes mypy (a str is a Sequence[str]) and read each letter
    as a run directory ("the same run directory is given twice: r, u, n...")."""
    from loopwright.report import render_comparison, write_comparison

    for one in ("runs/a", tmp_path / "a"):
        with pytest.raises(UsageError, match="a list of run directories, not one path"):
            write_comparison(one)  # type: ignore[arg-type]  (a Path is no Sequence; a str is)
        with pytest.raises(UsageError, match="a list of run directories, not one path"):
            render_comparison(one)  # type: ignore[arg-type]
    assert not (tmp_path / "compare.html").exists()
