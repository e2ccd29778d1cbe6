"""The hard contracts on one real iteration with three sibling specs: one measured (after a
CRITIC REVISE), one whose patch never realises (implementer_skip), one CRITIC blocks twice
(critic_block). Measurement is real (sim coder, one task)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.research import LoopEvent, WorkDir, check_contracts
from loopwright.research._journal import Experience, read_lines
from loopwright.research._knowledge import KnowledgeDigest, check_append_only
from loopwright.research._workspace import tree_digest
from loopwright.workflow import builtin_workflow, workflow_to_yaml
from tests.research.conftest import Meta, envelope, make_loop, make_workdir, records, spec

GATE = [{"op": "mutation", "operator": "gate_add", "seed": 1}]
GATE_2 = [{"op": "mutation", "operator": "gate_add", "seed": 2}]
BROKEN = [{"op": "set_node", "node": "ghost", "fields": {"model": "large"}}]
INSERT = [{"op": "mutation", "operator": "node_insert", "seed": 3}]
BLIND = [{"op": "set_node", "node": "builder", "fields": {"tools": ["write_file", "list_files"]}}]


def think(ctx: dict[str, Any], number: int) -> dict[str, Any]:
    if ctx["iteration"] == 2:  # re-measure iteration 1's s1 (the same patch) at perf scale
        confirm = {"scale": "perf", "confirms": {"iter": 1, "spec_id": "s1"}}
        return envelope(spec("s1", "verification", GATE_2, **confirm))
    if ctx["revise"] is not None:
        old = ctx["revise"]["spec"]
        if old["spec_id"] == "s1":
            return envelope({**old, "patch": GATE_2, "title": "revised gate"})
        return envelope(old)  # s3: no answer to the critique, no rebuttal
    return envelope(
        spec("s1", "verification", GATE),
        spec("s2", "prompt", BROKEN),
        spec("s3", "topology", INSERT),
        spec("s4", "agent_loop", BLIND),
        hypotheses_add=[{"text": "a gate helps", "axis": "verification", "spec_id": "s1"}],
        knowledge_add=[{"text": "THINK noted that the seed has one agent."}],
        experiment_design="three mechanisms side by side",
    )


def critic(ctx: dict[str, Any], number: int) -> dict[str, Any]:
    sid, rnd = ctx["spec"]["spec_id"], ctx["round"]
    if ctx["iteration"] == 2:
        return {"verdict": "OK", "reason": "a confirmation"}
    if sid == "s3":
        return {"verdict": "BLOCK", "reason": "an inserted step was refuted before"}
    if sid == "s1" and rnd == 1:
        return {"verdict": "REVISE", "reason": "try another gate setting"}
    return {"verdict": "OK", "reason": "nothing refuted matches"}


def repair(ctx: dict[str, Any], number: int) -> dict[str, Any]:
    if ctx["spec"]["spec_id"] == "s4":
        return {"patch": None, "note": "no idea how to fix a blind builder"}
    return {"patch": ctx["patch"], "note": "same patch again"}


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[WorkDir, Meta, list[LoopEvent], list[str]]:
    wd = make_workdir(tmp_path_factory.mktemp("contracts") / "v1", max_specs=4)
    meta = Meta(think=think, critic=critic, repair=repair)
    events: list[LoopEvent] = []
    digests: list[str] = []

    def listen(event: LoopEvent) -> None:
        events.append(event)
        if event.kind in ("iteration_started", "phase", "run_done", "commit_ready"):
            digests.append(tree_digest(wd.workspace))

    outcome = make_loop(wd, meta, listener=listen).run(1)
    assert outcome.committed == (1,)
    assert make_loop(wd, meta).run(1).committed == (2,)
    return wd, meta, events, digests


def test_every_contract_holds(run: Any) -> None:
    wd = run[0]
    results = check_contracts(wd)
    assert [r.ok for r in results] == [True] * 6, [r.detail for r in results if not r.ok]


def test_every_spec_has_an_experiment_block_and_a_distill_verdict(run: Any) -> None:
    wd = run[0]
    record = records(wd)[0]
    blocks = {s["spec"]["spec_id"]: s for s in record["specs"]}
    assert {k: b["experiment"]["outcome_class"] for k, b in blocks.items()} == {
        "s1": "measured",
        "s2": "implementer_skip",
        "s3": "critic_block",
        "s4": "implementer_skip",
    }
    assert record["think"]["calls"] >= 1 and record["distill"]["status"] == "OK"
    assert blocks["s1"]["experiment"]["runs"] == 1
    for sid in blocks:
        assert (wd.iter_dir(1) / f"distill_{sid}.json").is_file()
    assert (wd.iter_dir(1) / "eval_metadata_s1.json").is_file()
    assert (wd.iter_dir(1) / "distill_summary.json").is_file()


def test_skip_and_block_are_refuted_experiments(run: Any) -> None:
    wd = run[0]
    record = records(wd)[0]
    blocks = {s["spec"]["spec_id"]: s for s in record["specs"]}
    skip = blocks["s2"]["experiment"]["smoke"]
    assert len(skip) == 3 and not any(a["passed"] for a in skip)
    assert all("ghost" in a["error"] for a in skip)
    assert [r["verdict"] for r in blocks["s3"]["critic"]] == ["BLOCK", "BLOCK"]
    lines = {e.spec_id: e for e in read_lines(wd.experience, Experience)}
    assert lines["s2"].verdict == "implementer_skip" and lines["s3"].verdict == "critic_block"


def test_the_smoke_run_gates_a_patch_that_realises(run: Any) -> None:
    wd = run[0]
    record = records(wd)[0]
    s4 = record["specs"][3]["experiment"]
    (attempt,) = s4["smoke"]  # the editor gave up before attempt 2
    assert attempt["failure_category"] == "did_not_read_task" and not attempt["passed"]
    assert (wd.iter_dir(1) / attempt["run_dir"] / "record.json").is_file()
    assert "editor gave up" in s4["note"]
    s1 = record["specs"][0]["experiment"]["smoke"]
    assert [a["passed"] for a in s1] == [True]


def test_revise_goes_back_to_think_for_that_spec_alone(run: Any) -> None:
    wd, meta = run[0], run[1]
    revisions = [
        c["revise"]["spec"]["spec_id"] for p, c in meta.seen if p == "think" and c["revise"]
    ]
    assert revisions == ["s1", "s3"]
    record = records(wd)[0]
    s1 = record["specs"][0]
    assert s1["revised"] is True and s1["spec"]["patch"] == GATE_2
    assert [r["verdict"] for r in s1["critic"]] == ["REVISE", "OK"]


def test_workspace_is_untouched_during_the_iteration(run: Any) -> None:
    wd, _, _, digests = run
    assert len(digests) > 5 and len(set(digests)) == 1
    record = records(wd)[0]
    assert record["workspace_digest_start"] == record["workspace_digest_precommit"] == digests[0]
    overlay = (wd.iter_dir(1) / "active_workspace_s1" / "workflow.yaml").read_text()
    assert overlay != workflow_to_yaml(builtin_workflow("builder-only"))  # the seed
    assert "gate_verify" in overlay


def test_eager_writes_and_knowledge_prefix(run: Any) -> None:
    wd = run[0]
    record = records(wd)[0]
    assert check_append_only(wd.knowledge, KnowledgeDigest(**record["knowledge"])) is None
    assert "THINK noted that the seed has one agent." in wd.knowledge.read_text()
    assert "three mechanisms side by side" in wd.experiment_design.read_text()
    assert "a gate helps" in wd.hypotheses.read_text()


def test_editing_knowledge_breaks_contract_4_and_stops_the_loop(tmp_path: Path, run: Any) -> None:
    import shutil

    wd = WorkDir(tmp_path / "copy")
    shutil.copytree(run[0].root, wd.root)
    text = wd.knowledge.read_text()
    wd.knowledge.write_text(text.replace("partial credit", "full credit", 1))
    broken = [r for r in check_contracts(wd) if not r.ok]
    assert [r.number for r in broken] == [4]
    with pytest.raises(ConfigError, match="append-only"):
        make_loop(wd, Meta()).run(1)


def test_record_is_valid_json_with_schema_version(run: Any) -> None:
    wd = run[0]
    data = json.loads((wd.iter_dir(1) / "record.json").read_text())
    assert data["schema_version"] == 1 and data["iter"] == 1 and data["attempt"] == 1


def test_an_identical_workflow_is_not_smoke_run_twice(run: Any) -> None:
    wd = run[0]
    second = records(wd)[1]
    (attempt,) = second["specs"][0]["experiment"]["smoke"]
    assert attempt["passed"] and attempt["reused"] == "iter_1/s1" and attempt["run_dir"] is None
    assert not (wd.iter_dir(2) / "active_workspace_s1" / "smoke").exists()
    assert second["specs"][0]["experiment"]["runs"] == 1


def test_knowledge_experience_and_hypotheses_name_their_model(run: Any) -> None:
    wd, name = run[0], run[1].model.name
    bullets = [b for b in wd.knowledge.read_text().splitlines() if "iter 1, think" in b]
    assert bullets and all(f"model {name}" in b for b in bullets)
    added = [json.loads(line) for line in wd.hypotheses.read_text().splitlines()]
    assert added and all(h["meta_model"] == name for h in added)
    lines = [json.loads(line) for line in wd.experience.read_text().splitlines()]
    assert lines and all(e["meta_model"] == name and e["eval_model"] == "sim" for e in lines)
    assert all(e["simulated"] is True for e in lines)  # the agents ran on the sim coder
