"""The research loop's holdout: split at init, never shown to the meta model, checked at every
adoption and when a run ends, with an overfit signal; confirmations on their own repetitions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from loopwright.cli import main
from loopwright.report import render_report
from loopwright.research import InitOptions, WorkDir, init_workdir, research_status
from loopwright.research._holdout import read_checks
from loopwright.runtime import runtime_catalog
from loopwright.tasks import load_benchmark
from loopwright.workflow import resolve_workflow, workflow_to_yaml
from tests.research.conftest import GOAL, TASK, Meta, envelope, make_loop, records, spec

HOLDOUT = "l1-rle-decode"
TOOLS = ("read_file", "write_file", "list_files", "run_tests")


def _blind_seed(tmp_path: Path) -> tuple[Path, list[str]]:
    """builder-only with a builder that cannot read files (scores low on the sim), and the
    tools that restore it."""
    workflow = resolve_workflow("builder-only", catalog=runtime_catalog())
    builder = next(n for n in workflow.nodes if n.id == "builder")
    tools = list(builder.tools)
    blind = [t for t in tools if "read" not in t and "list" not in t]
    data = yaml.safe_load(workflow_to_yaml(workflow))
    for node in data["nodes"]:
        if node["id"] == "builder":
            node["tools"] = blind
    path = tmp_path / "blind.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path, tools


def _workdir(tmp_path: Path, workflow: str, goal: str = GOAL, **kw: Any) -> WorkDir:
    tmp_path.mkdir(parents=True, exist_ok=True)
    goal_file = tmp_path / "goal.md"
    goal_file.write_text(goal, encoding="utf-8")
    return init_workdir(
        InitOptions(
            dir=tmp_path / "v1", goal_file=goal_file, workflow=workflow, bench="mini",
            tasks=(TASK,), sandbox="local", **kw,
        )
    )  # fmt: skip


def test_init_splits_a_seeded_holdout_off_the_eval_tasks(tmp_path: Path) -> None:
    a = _workdir(tmp_path / "a", "builder-only").load_config().eval
    b = _workdir(tmp_path / "b", "builder-only").load_config().eval
    c = _workdir(tmp_path / "c", "builder-only", seed=7).load_config().eval
    levels = {t.id: t.level for t in load_benchmark("mini").tasks}
    assert len(a.holdout) == 3 and TASK not in a.holdout
    assert {levels[t] for t in a.holdout} == {levels[TASK]}
    assert a.holdout == b.holdout  # seeded
    assert c.holdout != a.holdout or len(set(levels) - {TASK}) <= 3
    none = _workdir(tmp_path / "d", "builder-only", holdout_tasks=0).load_config().eval
    assert none.holdout == ()


def test_a_config_made_before_holdouts_still_loads(tmp_path: Path) -> None:
    wd = _workdir(tmp_path, "builder-only")
    data = yaml.safe_load(wd.config.read_text(encoding="utf-8"))
    data["schema_version"] = 1
    for key in ("holdout", "holdout_passes", "overfit_gap"):
        del data["eval"][key]
    wd.config.write_text(yaml.safe_dump(data), encoding="utf-8")
    config = WorkDir(wd.root).load_config()
    assert config.eval.holdout == () and config.schema_version == 2
    assert research_status(wd.root).holdout == ()


def _mentions(text: str, ids: tuple[str, ...], instructions: list[str]) -> list[str]:
    hits = [i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text)]
    return hits + [s[:40] for s in instructions if s in text]


def test_holdout_is_checked_at_adoption_and_never_reaches_the_meta_model(tmp_path: Path) -> None:
    seed, tools = _blind_seed(tmp_path)
    wd = _workdir(tmp_path, str(seed), holdout=(HOLDOUT, "l1-semver-compare"))
    held = wd.load_config().eval.holdout
    tasks = {t.id: t for t in load_benchmark("mini").tasks}
    instructions = [tasks[t].instruction.strip() for t in held]
    prompts: list[str] = []

    def think(ctx: dict[str, Any], number: int) -> Any:
        fix = [{"op": "set_node", "node": "builder", "fields": {"tools": tools}}]
        return envelope(spec("s1", "agent_loop", fix))

    def distill(ctx: dict[str, Any], number: int) -> Any:
        return {
            "specs": [{"spec_id": "s1", "verdict": "adopted", "lesson": "reading helps"}],
            "cross_spec_lesson": "tools matter",
            "milestone": "adopted s1",
            "adopt": "s1",
        }

    meta = Meta(think=think, distill=distill)
    original = meta.model.chat

    def recording(messages: Any, *args: Any, **kwargs: Any) -> Any:
        prompts.extend(str(m.content) for m in messages)
        return original(messages, *args, **kwargs)

    meta.model.chat = recording  # type: ignore[method-assign]
    outcome = make_loop(wd, meta).run(2)
    assert outcome.committed, outcome
    assert records(wd)[0]["summary"]["adopted"] == "s1"
    assert prompts, "the meta model was never asked"
    leaks = [hit for p in prompts for hit in _mentions(p, held, instructions)]
    assert leaks == []
    assert _mentions(f"runs: {held[0]}, rep 0", held, [])  # the detector does see an id
    assert _mentions(f"task says: {instructions[0]}", held, instructions)
    checks = read_checks(wd)
    assert [c.kind for c in checks] == ["adoption", "final"]
    adoption = checks[0]
    assert adoption.iteration == 1 and adoption.n_tasks == 2 and adoption.simulated
    assert adoption.train_gain is not None and adoption.train_gain > 0
    assert adoption.holdout_gain is not None and adoption.low is not None
    assert adoption.low <= adoption.holdout_gain <= (adoption.high or 0.0)
    runs = sorted(p.parent.parent.name for p in (wd.holdout / "runs").rglob("events.jsonl"))
    assert set(runs) == set(held)  # both workflows ran only on the holdout tasks
    status = research_status(wd.root)
    assert status.holdout == held and status.overfit == checks[-1].overfit
    assert json.loads(status.model_dump_json())["holdout_checks"][0]["kind"] == "adoption"
    html = render_report(wd.root).html
    assert 'id="holdout"' in html and "iter 1 adoption" in html


def test_status_raises_the_overfit_signal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wd = _workdir(tmp_path, "builder-only")
    wd.holdout.mkdir(exist_ok=True)
    line = {
        "schema_version": 1, "kind": "adoption", "iteration": 3, "workflow_hash": "a" * 16,
        "reference_hash": "b" * 16, "train_gain": 0.3, "holdout_score": 0.4,
        "reference_score": 0.45, "holdout_gain": -0.05, "low": -0.2, "high": 0.1, "n_tasks": 3,
        "repetitions": 1, "gap": 0.35, "threshold": 0.2, "overfit": True, "simulated": True,
    }  # fmt: skip
    (wd.holdout / "checks.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    status = research_status(wd.root)
    assert status.overfit is True
    assert "OVERFIT" in status.holdout_checks[0].line()
    # `research status` shows the holdout and the signal; `--json` carries them.
    capsys.readouterr()
    assert main(["research", "status", "--dir", str(wd.root)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"holdout \(\d+ tasks, never shown to the meta model\): OVERFIT", out), out
    assert main(["research", "status", "--dir", str(wd.root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overfit"] is True and report["holdout"] == list(status.holdout)


CONFIRM_GOAL = GOAL.replace("- perf_passes: 1", "- perf_passes: 2")


def test_a_confirmation_runs_on_repetitions_after_the_probes(tmp_path: Path) -> None:
    wd = _workdir(tmp_path, "builder-only", goal=CONFIRM_GOAL, holdout_tasks=0)
    probe = [{"op": "set_node", "node": "builder", "fields": {"model": "large"}}]

    def think(ctx: dict[str, Any], number: int) -> Any:
        if number == 0:
            return envelope(spec("s1", "model_tier", probe))
        confirm = spec(
            "s1", "model_tier", probe, scale="perf", confirms={"iter": 1, "spec_id": "s1"}
        )
        return envelope(confirm)

    make_loop(wd, Meta(think=think)).run(2)
    metas = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(wd.iterations.glob("iter_*/eval_metadata_s1.json"))
    ]
    assert len(metas) == 2
    probe_reps = {r["rep"] for r in metas[0]["runs"]}
    confirm_reps = {r["rep"] for r in metas[1]["runs"]}
    assert probe_reps == {0} and confirm_reps == {1, 2}
    assert metas[1]["paired_with_baseline"] == 2  # the workspace was measured on them too
