"""The research page of real `loopwright research` runs with the sim models: the goal, the
trajectory with the adoption marked, every spec's axis, CRITIC, EXPERIMENT and DISTILL as the
records say, REFLECT and the axes, knowledge (superseded bullets struck), hypotheses and the
hard contracts; a fresh and a killed working directory are marked partial."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from loopwright.report import detect_kind, render_report
from loopwright.report.pages._research import knowledge_section
from loopwright.report.pages._research_charts import trajectory_chart
from loopwright.report.pages._research_data import read_knowledge
from loopwright.report.pages._research_iter import iteration_block
from loopwright.research import Knowledge, WorkDir, load_iter_record
from tests.report.conftest import RESEARCH_GOAL, RESEARCH_INIT, CliRun, kill_when, run_cli
from tests.report.probe import charts, marks, meta, section, table_rows, text_of

RESEARCH_CHARTS = {
    "research-trajectory",
    "research-deltas",
    "research-coverage",
    "research-workflow",
}
SECTIONS = ("overview", "goal", "trajectory", "iterations", "search-space", "workflow",
            "knowledge", "hypotheses", "contracts")  # fmt: skip


def _squash(text: str) -> str:
    """Text without whitespace (`text_of` puts a space where an inline tag was)."""
    return re.sub(r"\s+", "", text)


def _banner(page: str, kind: str) -> str:
    found = re.search(rf'id="{kind}-banner"[^>]*>(.*?)</div>', page)
    assert found is not None, f"no {kind} banner"
    return text_of(found.group(1))


def _page(run: CliRun) -> str:
    return (run.run_dir / "report.html").read_text(encoding="utf-8")


def test_research_run_writes_the_report_at_the_end(sim_research: CliRun) -> None:
    report = sim_research.run_dir / "report.html"
    assert f"report written to {report} (research report," in sim_research.out
    assert "SIMULATED" in sim_research.out.splitlines()[-1]
    assert detect_kind(sim_research.run_dir) == "research"
    assert _page(sim_research) == render_report(sim_research.run_dir).html  # deterministic


def test_the_page_has_its_sections_banner_stamp_and_no_script(sim_research: CliRun) -> None:
    page = _page(sim_research)
    assert meta(page, "loopwright-report-kind") == "research"
    assert meta(page, "loopwright-report-partial") == "false"  # goal.md terminated it
    assert 'id="partial-banner"' not in page
    banner = _banner(page, "sim")
    assert banner.startswith("SIMULATED RESULTS") and "sim-model.md" in banner
    for anchor in SECTIONS:
        section(page, anchor)
    stamp = text_of(section_of_stamp(page))
    assert "meta sim (sim-researcher-1), agents sim (simulated)" in stamp
    assert "benchmark mini" in stamp and "seed 0" in stamp and "tasks l2-fsm-guards" in stamp
    assert "<script" not in page.lower() and "Content-Security-Policy" in page
    assert not re.search(r"""(?:src|href)=["']https?:""", page)


def section_of_stamp(page: str) -> str:
    found = re.search(r'<div class="stamp" id="stamp">(.*?)</div>', page, re.DOTALL)
    assert found is not None
    return found.group(1)


def test_goal_and_the_rule_that_stopped_the_run(sim_research: CliRun) -> None:
    goal = text_of(section(_page(sim_research), "goal"))
    assert "raise mean partial credit on mini level 2" in goal
    assert "iterations >= 2 ← held: stopped the run" in goal
    assert "perf_passes 1" in goal


def test_every_chart_is_drawn_and_the_adoption_is_ringed(sim_research: CliRun) -> None:
    found = charts(_page(sim_research))
    assert set(found) == RESEARCH_CHARTS
    for name, svg in found.items():
        assert marks(svg) > 0, name
    wd = WorkDir(sim_research.run_dir)
    records = [load_iter_record(wd.iter_dir(n) / "record.json") for n in wd.committed()]
    measured = [s for r in records for s in r.specs if s.experiment.score is not None]
    trajectory = found["research-trajectory"]
    # a dot per measured spec, a square per workspace score (the seed and each iteration)
    assert trajectory.count('<circle class="mark"') == len(measured)
    assert trajectory.count('<rect class="mark"') == len(records) + 1
    adopted = [(r.iter, r.summary.adopted) for r in records if r.summary.adopted]
    assert adopted, "the fixture's second iteration adopts a spec"
    assert trajectory.count('class="mark adopted"') == len(adopted)
    for it, spec_id in adopted:
        assert f"adopted: iter {it} {spec_id} (" in trajectory
    assert marks(found["research-deltas"]) == len(measured)


def test_each_iteration_shows_axis_critic_experiment_and_distill(sim_research: CliRun) -> None:
    page = _page(sim_research)
    iterations = section(page, "iterations")
    wd = WorkDir(sim_research.run_dir)
    for n in wd.committed():
        record = load_iter_record(wd.iter_dir(n) / "record.json")
        block = iterations.split(f'id="iter-{n}"', 1)[1].split('class="runcard"', 1)[0]
        rows = table_rows(block)
        assert [r[0] for r in rows] == [s.spec.spec_id for s in record.specs]
        for row, s in zip(rows, record.specs, strict=True):
            e = s.experiment
            assert row[1] == s.spec.intervention_axis and row[2] == s.spec.scale
            critic = _squash(row[4])
            assert all(_squash(f"R{c.round} {c.verdict}: {c.reason}") in critic for c in s.critic)
            shown = f"{e.score:.3f} vs {e.baseline:.3f} ({e.delta:+.3f})"  # type: ignore[operator]
            assert _squash(shown) in _squash(row[5])
            passed = sum(a.passed for a in e.smoke)
            assert row[6].startswith(f"{passed}/{len(e.smoke)} passed")
            assert row[7] == s.distill.verdict
        assert record.distill.milestone in text_of(block)
    fired = "REFLECT fired before THINK of iteration 2: heartbeat → FRONTIER"
    assert fired in text_of(iterations)


def test_search_space_shows_axis_statuses_reflect_and_coverage(sim_research: CliRun) -> None:
    space = section(_page(sim_research), "search-space")
    statuses = {row[0]: row[1] for row in table_rows(space)}
    assert statuses["topology"] == statuses["agent_loop"] == statuses["model_tier"] == "closed"
    assert statuses["prompt"] == statuses["verification"] == "open"
    reflect = table_rows(space.split("REFLECT firings", 1)[1])
    assert [(r[0], r[1], r[2]) for r in reflect] == [("2", "heartbeat", "FRONTIER")]
    coverage = charts(space)["research-coverage"]
    assert "topology</text>" in coverage and "untried" in coverage


def test_knowledge_hypotheses_and_contracts(sim_research: CliRun) -> None:
    page = _page(sim_research)
    bullets = Knowledge(sim_research.run_dir / "knowledge.md").bullets()
    learned = text_of(section(page, "knowledge"))
    for b in bullets:
        assert f"{b.id} {b.origin} " in learned and b.text in learned
    events = [
        json.loads(line)
        for line in (sim_research.run_dir / "hypotheses.jsonl").read_text().splitlines()
    ]
    hyp = section(page, "hypotheses")
    for e in (e for e in events if e["op"] == "remove"):
        assert f"<td>{e['id']}</td>" in hyp and f'data-verdict="{e["reason"]}"' in hyp
    assert "6 of 6 hard contracts hold" in text_of(section(page, "contracts"))


def test_superseded_knowledge_is_struck_through(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.md"
    path.write_text("# Knowledge\n\nAppend-only.\n\n", encoding="utf-8")
    book = Knowledge(path)
    book.append("A gate after the builder helps.", origin="iter 1, distill")
    book.append("Prompts matter.", origin="iter 1, distill")
    book.append("The gate's gain did not hold.", origin="iter 2, distill", supersedes=("K1",))
    lines, header = read_knowledge(path)
    assert [k.superseded_by for k in lines] == ["K3", None, None]
    html = knowledge_section(lines, header).body
    assert "3 bullet(s), 2 current, 1 superseded" in text_of(html)
    k1 = re.search(r"<li id='kb-K1'[^>]*>(.*?)</li>", html)
    assert k1 is not None and "superseded" in k1.group(0)
    assert "<s>A gate after the builder helps.</s>" in k1.group(1)
    assert "superseded by <a href='#kb-K3'>K3</a>" in k1.group(1)
    k3 = re.search(r"<li id='kb-K3'[^>]*>(.*?)</li>", html)
    assert k3 is not None and "supersedes <a href='#kb-K1'>K1</a>" in k3.group(1)
    assert "<s>" not in k3.group(1)


def test_a_spec_that_did_not_run_is_a_cross_and_says_why(sim_research: CliRun) -> None:
    """The loop commits implementer_skip and critic_block specs as experiments without a score
    (the sim rules rarely produce one on a short run, so one real spec is turned into a skip)."""
    record = load_iter_record(WorkDir(sim_research.run_dir).iter_dir(1) / "record.json")
    real = record.specs[0]
    failed = tuple(
        a.model_copy(update={"passed": False, "error": "smoke run: did_not_read_task"})
        for a in real.experiment.smoke
    )
    skipped = real.model_copy(
        update={
            "experiment": real.experiment.model_copy(
                update={
                    "outcome_class": "implementer_skip",
                    "score": None,
                    "baseline": None,
                    "delta": None,
                    "runs": 0,
                    "pairs": 0,
                    "smoke": failed,
                    "note": "no smoke run passed",
                }
            ),
            "distill": real.distill.model_copy(update={"verdict": "implementer_skip"}),
        }
    )
    changed = record.model_copy(update={"specs": (skipped, *record.specs[1:])})
    svg = trajectory_chart([changed])
    assert svg.count('<path class="mark"') == 1 and ">not run</text>" in svg
    assert svg.count('<circle class="mark"') == len(record.specs) - 1
    block = iteration_block(changed, ())
    row = table_rows(block)[0]
    assert row[5] == "implementer_skip no smoke run passed" and row[7] == "implementer_skip"
    assert row[6].startswith(f"0/{len(failed)} passed") and "did_not_read_task" in row[6]
    assert "<details open><summary>smoke attempts" in block


def test_no_report_and_json_modes_of_research_run(sim_research: CliRun) -> None:
    report = sim_research.run_dir / "report.html"
    report.unlink()
    # terminated: `run` polls goal.md again and stops at once, then writes no report
    code, out, err = run_cli("research", "run", "--dir", str(sim_research.run_dir), "--no-report")
    assert code == 0 and "terminated" in out and "report written" not in out + err
    assert not report.exists()
    code, out, err = run_cli("research", "run", "--dir", str(sim_research.run_dir), "--json")
    assert code == 0 and json.loads(out)["status"] == "terminated"  # stdout stays JSON
    assert "report written to" in err and report.is_file()


@pytest.fixture(scope="module")
def fresh_and_killed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A working directory just initialised (its page made then), then killed with SIGKILL
    in iteration 1 once THINK has written its specs."""
    root = tmp_path_factory.mktemp("research-killed")
    goal = root / "goal.md"
    goal.write_text(RESEARCH_GOAL, encoding="utf-8")
    work = root / "v1"
    code, _, err = run_cli(*RESEARCH_INIT, "--dir", str(work), "--goal-file", str(goal))
    assert code == 0, err
    fresh = render_report(work).html
    spec = work / ".staging" / "iter_1" / "spec.json"
    kill_when(["research", "run", "--dir", str(work), "--no-report"], spec.is_file)
    return fresh, work


def test_a_fresh_working_directory_is_partial(fresh_and_killed: tuple[str, Path]) -> None:
    page = fresh_and_killed[0]
    assert meta(page, "loopwright-report-partial") == "true"
    assert "not started: no iteration has run" in text_of(page)
    assert 'id="sim-banner"' in page and charts(page).keys() == {"research-workflow"}
    assert "No spec adopted yet" in text_of(section(page, "workflow"))


def test_a_killed_research_run_is_partial_with_its_staging(
    fresh_and_killed: tuple[str, Path],
) -> None:
    work = fresh_and_killed[1]
    code, out, _ = run_cli("report", str(work), "--json")
    assert code == 0
    printed = json.loads(out)
    assert printed["kind"] == "research" and printed["partial"] and printed["simulated"]
    page = (work / "report.html").read_text(encoding="utf-8")
    banner = _banner(page, "partial")
    assert "iteration 1 (attempt 1) was running" in banner
    assert ".staging/iter_1/ is left" in banner
    staged = text_of(section(page, "in-progress"))
    assert "spec.json" in staged and "Phases that wrote a file so far: THINK" in staged
    assert "iterations" not in charts(page) and 'id="iterations"' not in page
