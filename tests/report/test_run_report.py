"""The run report of real sim runs: the per-task tables, one timeline per task run whose marks
are the run's events, per-test outcomes, gate decisions; partial runs; the report command."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.records import (
    GateDecision,
    ModelCall,
    NodeEnd,
    ToolCallEvent,
    load_record,
    read_events,
)
from loopwright.report import detect_kind, render_report, write_report
from loopwright.report.pages._run import run_page
from loopwright.report.pages._run_data import load_run
from tests.report.conftest import CliRun, run_cli
from tests.report.probe import charts, marks, meta, section, table_rows, text_of

WORKFLOWS = ("builder-only", "research-build-verify")
TASKS = ("l1-slugify", "l2-fsm-guards")


def test_run_writes_the_report_at_the_end_and_prints_its_path(sim_run: CliRun) -> None:
    report = sim_run.run_dir / "report.html"
    assert report.is_file()
    assert f"report written to {report} (run report," in sim_run.out
    assert "SIMULATED" in sim_run.out.splitlines()[-1]


def test_per_task_tables_give_each_workflows_scores(sim_run: CliRun) -> None:
    page = (sim_run.run_dir / "report.html").read_text(encoding="utf-8")
    results = section(page, "results")
    for wf in WORKFLOWS:
        rows = table_rows(results.split(f"<h3>{wf}</h3>", 1)[1])
        assert [r[0] for r in rows] == list(TASKS)
        for row, task in zip(rows, TASKS, strict=True):
            record = load_record(sim_run.run_dir / wf / task / "rep_0")
            assert row[3] == f"{record.score_end:.2f}"
            assert row[5] == str(record.failure_category)
    assert marks(charts(page)["scores"]) == len(WORKFLOWS) * len(TASKS)


def test_each_task_run_has_a_timeline_of_its_exhaust(sim_run: CliRun) -> None:
    page = (sim_run.run_dir / "report.html").read_text(encoding="utf-8")
    found = charts(page)
    for wf in WORKFLOWS:
        for task in TASKS:
            events = read_events(sim_run.run_dir / wf / task / "rep_0" / "events.jsonl")
            svg = found[f"timeline-{wf}-{task}-0"]
            visits = sum(isinstance(e, NodeEnd) for e in events)
            assert svg.count('class="mark span"') == visits
            assert svg.count('class="mark call"') == sum(isinstance(e, ModelCall) for e in events)
            assert svg.count('class="mark tool"') == sum(
                isinstance(e, ToolCallEvent) for e in events
            )
            assert svg.count('class="mark gate"') == sum(
                isinstance(e, GateDecision) for e in events
            )
            assert svg.count('class="mark grade"') == 1


def test_per_test_outcomes_and_gate_decisions_are_listed(sim_run: CliRun) -> None:
    page = (sim_run.run_dir / "report.html").read_text(encoding="utf-8")
    for task in TASKS:
        record = load_record(sim_run.run_dir / "builder-only" / task / "rep_0")
        assert record.grade is not None
        text = text_of(section(page, f"task-{task}"))
        assert f"fail_to_pass {record.grade.f2p_passed}/{record.grade.f2p_total}" in text
        for test in record.grade.tests:
            assert test.id in text
    decisions = [
        e
        for task in TASKS
        for e in read_events(
            sim_run.run_dir / "research-build-verify" / task / "rep_0" / "events.jsonl"
        )
        if isinstance(e, GateDecision)
    ]
    assert decisions
    assert page.count("<p><b>Gate decisions</b></p>") == 2


def test_json_mode_keeps_stdout_json_and_reports_on_stderr(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    argv = ["run", "builder-only", "--bench", "mini", "--tasks", "l1-slugify", "--sandbox", "local"]
    code, out, err = run_cli(*argv, "--json", "--run-dir", str(run_dir))
    assert code == 0
    assert json.loads(out)["simulated"] is True
    assert f"report written to {run_dir / 'report.html'}" in err
    code, out, _ = run_cli(*argv, "--no-report", "--run-dir", str(tmp_path / "quiet"))
    assert code == 0 and "report written" not in out
    assert not (tmp_path / "quiet" / "report.html").exists()


def test_a_run_killed_half_way_still_gives_a_report_marked_partial(killed_run: Path) -> None:
    cut = killed_run / "builder-only" / "l2-fsm-guards" / "rep_0"
    assert not (cut / "record.json").exists(), "the kill came too late to test"
    result = write_report(killed_run)
    page = result.path.read_text(encoding="utf-8")
    assert result.partial and meta(page, "loopwright-report-partial") == "true"
    banner = text_of(page.split('id="partial-banner"', 1)[1].split("</div>", 1)[0])
    assert "no summary.json" in banner and "cut off" in banner
    timeline = charts(page)["timeline-builder-only-l2-fsm-guards-0"]
    assert "unfinished" in timeline  # the visit the kill cut short
    assert "run: interrupted" in text_of(section(page, "task-l2-fsm-guards"))
    assert ">cut</text>" in charts(page)["scores"]  # not graded, not a zero


def test_no_simulated_banner_for_a_real_model(sim_run: CliRun) -> None:
    data = dataclasses.replace(load_run(sim_run.run_dir), simulated=False)
    page = run_page(data)
    assert 'id="sim-banner"' not in page and "(simulated)" not in page


def test_report_command_writes_where_it_is_told(sim_run: CliRun, tmp_path: Path) -> None:
    out_file = tmp_path / "sub" / "r.html"
    code, out, _ = run_cli("report", str(sim_run.run_dir), "-o", str(out_file), "--json")
    assert code == 0
    printed = json.loads(out)
    assert printed["path"] == str(out_file) and printed["kind"] == "run"
    assert printed["bytes"] == out_file.stat().st_size
    assert out_file.read_text(encoding="utf-8") == render_report(sim_run.run_dir).html


def test_a_directory_that_is_no_run_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(UsageError) as info:
        detect_kind(tmp_path)
    assert "notes.txt" in str(info.value) and "loopwright run" in str(info.value)
    (tmp_path / "config.yaml").write_text("kind: orchestra\n")
    with pytest.raises(UsageError, match="kind 'orchestra'"):
        detect_kind(tmp_path)
    code, _, err = run_cli("report", str(tmp_path / "missing"))
    assert code == 2 and "no run directory" in err and "Traceback" not in err


def test_external_agents_that_ran_with_an_open_network_get_a_banner(
    sim_run: CliRun, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(sim_run.run_dir, run_dir)
    assert "network-banner" not in run_page(load_run(run_dir))
    rep = next(run_dir.glob("builder-only/*/rep_0"))
    external = rep / "external"
    external.mkdir()
    record = {"schema_version": 2, "agent": "claude-code", "network": "endpoint-only"}
    (external / "builder.1.json").write_text(json.dumps(record))
    assert "network-banner" not in run_page(load_run(run_dir))  # restricted: no banner
    why = "the local sandbox cannot restrict an agent's network to its endpoint"
    (external / "builder.2.json").write_text(json.dumps({**record, "network": f"open: {why}"}))
    (external / "builder.3.json").write_text("{not json")  # skipped, never fatal
    html = run_page(load_run(run_dir))
    assert 'id="network-banner"' in html
    assert "OPEN NETWORK: 1 visit(s) of external agents (claude-code)" in html
    assert "the local sandbox cannot restrict" in html


def test_a_suspect_grade_shows_the_audit_evidence_on_the_run_page(
    sim_run: CliRun, tmp_path: Path
) -> None:
    """A run the audit flagged: its task section names the file, line, family and construct."""
    run_dir = tmp_path / "run"
    shutil.copytree(sim_run.run_dir, run_dir)
    rep = run_dir / "builder-only" / "l1-slugify" / "rep_0"
    record = load_record(rep)
    assert record.grade is not None
    evidence = "textkit/transform.py:7 frame-inspection (sys._getframe)"
    reason = f"suspect: the change interferes with the test machinery: {evidence}"
    grade = record.grade.model_copy(
        update={"invalid": True, "invalid_reason": reason, "score": 0.0, "resolved": False}
    )
    (rep / "record.json").write_text(
        record.model_copy(update={"grade": grade}).model_dump_json(), encoding="utf-8"
    )
    text = text_of(section(run_page(load_run(run_dir)), "task-l1-slugify"))
    assert f"invalid: {reason}" in text
