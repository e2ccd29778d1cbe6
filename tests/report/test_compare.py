"""`loopwright report RUN1 RUN2 ...`: one page comparing evolve runs (curves on one chart,
spend against task runs, the winners' graphs side by side, holdout per task), and the inputs
it refuses in one paragraph."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from statistics import fmean

import pytest

from loopwright.errors import UsageError
from loopwright.report import render_comparison, write_comparison
from loopwright.report.pages._evolve_data import winner_of
from loopwright.search import load_checkpoint
from tests.report.conftest import CliRun, run_cli
from tests.report.probe import charts, marks, meta, section, table_rows, text_of


def _page(*runs: Path) -> str:
    html, _ = render_comparison(list(runs))
    return html


def test_the_comparison_draws_both_runs_curves_on_one_chart(
    sim_evolution: CliRun, sim_evolution_seed1: CliRun
) -> None:
    a, b = sim_evolution.run_dir, sim_evolution_seed1.run_dir
    page = _page(a, b)
    found = charts(page)
    assert {"compare-scores", "compare-spend", "compare-graph-0", "compare-graph-1"} <= set(found)
    gens = [len(load_checkpoint(p).summaries) for p in (a, b)]
    assert gens[0] != gens[1]  # 2 and 3 generations: the chart must hold both lengths
    holdout_points = sum(
        1 for p in (a, b) for s in load_checkpoint(p).summaries if s.holdout_best is not None
    )
    assert marks(found["compare-scores"]) == sum(gens) + holdout_points
    assert meta(page, "loopwright-report-kind") == "compare"
    assert 'id="sim-banner"' in page


def test_the_holdout_table_is_each_winners_mean_per_task(
    sim_evolution: CliRun, sim_evolution_seed1: CliRun
) -> None:
    a, b = sim_evolution.run_dir, sim_evolution_seed1.run_dir
    rows = table_rows(section(_page(a, b), "holdout"))
    expected: dict[str, list[str]] = {}
    for p in (a, b):
        winner = winner_of(load_checkpoint(p))
        assert winner is not None
        per_task: dict[str, list[float]] = {}
        for r in winner.split_results("holdout"):
            per_task.setdefault(r.task_id, []).append(r.score)
        for task, scores in per_task.items():
            expected.setdefault(task, []).append(f"{fmean(scores):.3f}")
    assert {r[0]: r[1:] for r in rows if r[0] != "mean"} == expected
    runs = text_of(section(_page(a, b), "runs"))
    assert "run" in runs and a.name in runs and b.name in runs


def test_the_cli_writes_the_comparison_and_says_where(
    sim_evolution: CliRun, sim_evolution_seed1: CliRun, tmp_path: Path
) -> None:
    out = tmp_path / "cmp.html"
    argv = ["report", str(sim_evolution.run_dir), str(sim_evolution_seed1.run_dir)]
    code, stdout, err = run_cli(*argv, "-o", str(out), "--json")
    assert code == 0, err
    said = json.loads(stdout)
    assert said["path"] == str(out) and said["kind"] == "compare" and said["simulated"] is True
    assert out.stat().st_size == said["bytes"] > 10_000


def test_two_runs_with_the_same_name_are_labelled_by_their_path(
    sim_evolution: CliRun, tmp_path: Path
) -> None:
    twin = tmp_path / sim_evolution.run_dir.name
    shutil.copytree(sim_evolution.run_dir, twin)
    result = write_comparison([sim_evolution.run_dir, twin], tmp_path / "c.html")
    assert result.runs == (str(sim_evolution.run_dir), str(twin))


def test_mixing_an_evolve_and_a_research_run_is_refused(
    sim_evolution: CliRun, sim_research: CliRun
) -> None:
    with pytest.raises(UsageError) as err:
        render_comparison([sim_evolution.run_dir, sim_research.run_dir])
    text = str(err.value)
    assert "cannot mix kinds" in text and "is research" in text and "is evolve" in text


def test_a_run_with_no_progress_is_refused_naming_it(sim_evolution: CliRun, tmp_path: Path) -> None:
    young = tmp_path / "young"
    young.mkdir()
    shutil.copy(sim_evolution.run_dir / "config.yaml", young / "config.yaml")
    with pytest.raises(UsageError) as err:
        render_comparison([sim_evolution.run_dir, young])
    assert f"{young} has no progress to compare yet" in str(err.value)
    assert "--watch" in str(err.value)


def test_a_directory_that_is_not_a_run_is_refused(sim_evolution: CliRun, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a loopwright run directory"):
        render_comparison([sim_evolution.run_dir, tmp_path])
    with pytest.raises(UsageError, match="two or more"):
        render_comparison([sim_evolution.run_dir])
