"""The evolve report of a real sim evolution: every section, numbers that match the run, the
stamp, reflections and suggestions when present, the Graphviz fallback, partial runs."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from loopwright.report import render_report, write_report
from loopwright.report.pages._evolve import holdout_interval
from loopwright.report.pages._evolve_lineage import graphs_section, lineage_of, lineage_section
from loopwright.search import Lineage, evolve_result, evolve_run, load_checkpoint
from loopwright.tasks import load_benchmark
from tests.report.conftest import CliRun
from tests.report.probe import charts, marks, meta, section, table_rows, text_of

EVOLVE_CHARTS = {
    "scores",
    "overfit",
    "outer-loop",
    "graph-seed",
    "graph-winner",
    "lineage",
    "archive",
    "matrix",
    "spend-generation",
    "spend-role",
    "spend-node",
    "spend-curve",
}


def test_evolve_writes_the_report_at_the_end_and_prints_its_path(sim_evolution: CliRun) -> None:
    report = sim_evolution.run_dir / "report.html"
    assert report.is_file()
    assert f"report written to {report} (evolve report," in sim_evolution.out
    assert "SIMULATED" in sim_evolution.out.splitlines()[-1]


def test_every_chart_of_the_evolve_page_is_there_and_drawn(sim_evolution: CliRun) -> None:
    page = (sim_evolution.run_dir / "report.html").read_text(encoding="utf-8")
    found = charts(page)
    assert set(found) == EVOLVE_CHARTS
    empty = [name for name, svg in found.items() if marks(svg) == 0]
    assert not empty, f"charts without data: {empty}"
    assert meta(page, "loopwright-report-kind") == "evolve"
    assert meta(page, "loopwright-report-partial") == "false"
    assert 'id="sim-banner"' in page and 'id="partial-banner"' not in page
    links = re.findall(r'\b(?:src|href)\s*=\s*"([^"]*)"', page)
    assert links and all(link.startswith("#") for link in links)  # nothing to fetch


def test_generation_table_and_matrix_match_the_checkpoint(sim_evolution: CliRun) -> None:
    cp = load_checkpoint(sim_evolution.run_dir)
    page = (sim_evolution.run_dir / "report.html").read_text(encoding="utf-8")
    rows = table_rows(section(page, "scores"))
    assert [r[0] for r in rows] == [str(s.generation) for s in cp.summaries]
    for row, s in zip(rows, cp.summaries, strict=True):
        assert row[2] == f"{s.train_best:.2f}" and row[4] == f"{s.holdout_best:.2f}"
        interval = holdout_interval(cp.individuals[s.best_id], cp.config.seed)
        assert interval is not None and row[5] == f"{interval[0]:.2f} .. {interval[1]:.2f}"
    cells = {(ind, r.task_id, r.split) for ind, i in cp.individuals.items() for r in i.results}
    assert marks(charts(page)["matrix"]) == len(cells)
    archive = json.loads(cp.archive_json or "{}")
    assert marks(charts(page)["archive"]) == len(archive["cells"])


def test_the_stamp_names_version_commit_model_benchmark_digest_and_seed(
    sim_evolution: CliRun,
) -> None:
    page = (sim_evolution.run_dir / "report.html").read_text(encoding="utf-8")
    stamp = text_of(page.split('id="stamp">', 1)[1].split("</div>", 1)[0])
    config = yaml.safe_load((sim_evolution.run_dir / "config.yaml").read_text())
    digest = load_benchmark("mini").digest
    assert config["benchmark_digest"] == digest
    assert f"benchmark digest {digest[:12]}" in stamp
    assert "loopwright 0.1.0" in stamp and "model sim (simulated)" in stamp and "seed 0" in stamp
    if config["git_commit"] is not None:  # None only outside a git checkout
        assert f"commit {config['git_commit'][:12]}" in stamp


def test_why_it_stopped_and_spend_are_explained(sim_evolution: CliRun) -> None:
    page = (sim_evolution.run_dir / "report.html").read_text(encoding="utf-8")
    assert "Stopped with max_generations" in text_of(section(page, "stop"))
    spend = section(page, "spend")
    gens = [r[0] for r in table_rows(spend)]
    assert gens[0] == "gen 0" and "gen 1" in gens
    role_rows = table_rows(spend.split("<h3>By agent role</h3>", 1)[1])
    assert "builder" in [r[0] for r in role_rows]


REFLECTION = {
    "schema_version": 1,
    "generation": 0,
    "source": "offline_rules",
    "simulated": True,
    "failure_patterns": [
        {
            "description": "TypeError <on> accents",
            "kind": "verification",
            "evidence": {"tasks": ["l1-slugify"], "candidates": [], "count": 3},
        }
    ],
    "mutation_suggestions": [
        {
            "id": "S1",
            "operator": "node_insert",
            "target": "builder",
            "role": "researcher",
            "rationale": "study the task first",
            "evidence": {"count": 2},
        }
    ],
}


def test_reflection_reports_render_when_present(sim_evolution: CliRun, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(sim_evolution.run_dir, run_dir)
    (run_dir / "reflection_gen0.json").write_text(json.dumps(REFLECTION))
    (run_dir / "reflection_gen1.json").unlink(missing_ok=True)
    page = render_report(run_dir).html
    text = text_of(section(page, "reflection"))
    assert "TypeError <on> accents" in text and "3x; tasks l1-slugify" in text
    assert "S1 node_insert builder" in text and "study the task first" in text
    assert "generation 1: no reflection" in text
    assert "<on>" not in page  # escaped


def test_a_reflection_report_of_another_shape_is_named_unreadable(
    sim_evolution: CliRun, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(sim_evolution.run_dir, run_dir)
    forged = {**REFLECTION, "future_field": {"shown": "as nested lists"}}
    (run_dir / "reflection_gen0.json").write_text(json.dumps(forged))
    text = text_of(section(render_report(run_dir).html, "reflection"))
    assert "unreadable" in text and "reflection_gen0.json" in text and "future_field" in text
    assert "TypeError <on> accents" not in text  # read through the type, never half-shown


def test_the_lineage_names_the_suggestion_behind_a_guided_child(sim_evolution: CliRun) -> None:
    if "guidance" not in Lineage.model_fields:
        pytest.skip("Lineage has no guidance field yet (reflection, issue 5)")
    cp = load_checkpoint(sim_evolution.run_dir)
    winner = cp.individuals[cp.winner_id or ""]
    chain = lineage_of(cp, winner)
    assert chain[0].id == cp.seed_id and chain[-1].id == winner.id
    guided = {
        "mode": "suggestion",
        "kind": "structure",
        "report_generation": 0,
        "suggestion_id": "S1",
    }
    lineage = Lineage.model_validate({**winner.lineage.model_dump(), "guidance": guided})
    individuals = {**cp.individuals, winner.id: winner.model_copy(update={"lineage": lineage})}
    changed = cp.model_copy(update={"individuals": individuals})
    body = lineage_section(changed, {0: REFLECTION}).body
    text = text_of(body)
    assert "S1 (gen 0): node_insert at builder (researcher): study the task first" in text
    if len(chain) > 1:  # the winner has a parent: its change counts in the payoff table
        assert "How guided mutations paid off" in text and "suggestion: structure" in text


def test_graphs_fall_back_to_the_builtin_layout_without_graphviz(
    sim_evolution: CliRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp = load_checkpoint(sim_evolution.run_dir)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    body = graphs_section(cp).body
    assert "the built-in layout (Graphviz dot not found)" in body
    winner = cp.individuals[cp.winner_id or ""].workflow
    for node in winner.nodes:
        assert f"<title>{node.id}</title>" in body
    assert ("RELOOP ≤" in body) == any(n.kind == "gate" for n in winner.nodes)


def test_an_evolution_killed_half_way_still_gives_a_report_marked_partial(
    killed_evolution: Path,
) -> None:
    cp = load_checkpoint(killed_evolution)
    assert cp.stop_reason is None and not cp.summaries, "the kill came too late to test"
    result = write_report(killed_evolution)
    page = result.path.read_text(encoding="utf-8")
    assert result.partial and meta(page, "loopwright-report-partial") == "true"
    banner = text_of(page.split('id="partial-banner"', 1)[1].split("</div>", 1)[0])
    assert "interrupted" in banner and "generation 0" in banner
    assert "no process holds its lock" in banner  # the killed run's lock went with it
    assert "PARTIAL" in text_of(section(page, "overview"))
    assert marks(charts(page)["spend-generation"]) >= 1  # the finished evaluation is counted


def test_a_report_of_a_run_still_going_says_so_and_names_its_process(
    killed_evolution: Path, tmp_path: Path
) -> None:
    live = tmp_path / "live"
    shutil.copytree(killed_evolution, live)
    with evolve_run(live).lock():  # this process stands for the evolve still running there
        page = write_report(live, tmp_path / "report.html").path.read_text(encoding="utf-8")
    banner = text_of(page.split('id="partial-banner"', 1)[1].split("</div>", 1)[0])
    assert f"is still running (pid {os.getpid()} holds its lock)" in banner
    assert "interrupted" not in banner


def test_an_evolution_killed_before_its_checkpoint_still_gives_a_report(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = {"kind": "evolve", "loopwright_version": "0.1.0", "model": "sim", "seed": 3}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    report = render_report(run_dir)
    assert report.partial and report.simulated
    assert "stopped during calibration" in text_of(section(report.html, "overview"))


def test_the_report_is_the_same_every_time(sim_evolution: CliRun) -> None:
    assert render_report(sim_evolution.run_dir).html == render_report(sim_evolution.run_dir).html


def test_the_stop_reason_names_the_setting_as_the_runs_caller_set_it(
    sim_evolution: CliRun, tmp_path: Path
) -> None:
    """A run started at the command line: its flag; the same run as if started from Python
    (its header's caller): the EvolveConfig field, no flag; a header older than the caller
    field: both. The Python-started case end to end is docs/api.md's example."""
    from loopwright.store import RunDir

    assert RunDir.open(sim_evolution.run_dir).meta().caller == "cli"  # type: ignore[union-attr]
    html = (sim_evolution.run_dir / "report.html").read_text(encoding="utf-8")
    assert "given (--generations 2)." in html and "budgets.max_generations" not in html
    for caller, said in (
        ("python", "given (budgets.max_generations=2)."),
        (None, "given (budgets.max_generations=2; --generations 2 on the command line)."),
    ):
        copy = tmp_path / f"as-{caller}"
        shutil.copytree(sim_evolution.run_dir, copy)
        header = yaml.safe_load((copy / "config.yaml").read_text(encoding="utf-8"))
        header["caller"] = caller
        if caller is None:
            header.pop("caller")
            header["schema_version"] = 2  # written before the caller was recorded
        (copy / "config.yaml").write_text(yaml.safe_dump(header), encoding="utf-8")
        text = write_report(copy).path.read_text(encoding="utf-8")
        assert said in text, caller
        if caller == "python":
            assert "--generations" not in text


def test_the_mermaid_source_names_the_winner_not_its_seeds_name(sim_evolution: CliRun) -> None:
    """An evolved workflow keeps its seed's name, so the winner's Mermaid comment said the
    seed's name (`%% builder-only`) under both graphs; and the console printed it so too."""
    cp = load_checkpoint(sim_evolution.run_dir)
    result = evolve_result(cp)
    page = html.unescape((sim_evolution.run_dir / "report.html").read_text(encoding="utf-8"))
    assert f"%% seed {result.seed.mode} (hash " in page
    assert f"%% winner {result.winner.mode} (hash " in page
    assert f"%% winner {result.winner.mode} (hash " in sim_evolution.out
