"""Tiers and roles applied in a run: the ModelRouter hands each agent node the model of its
tier and LLM-judge gates the meta model; `routed_factory` builds one router per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.models import ModelRouter, ModelsConfig, SimModel, routed_factory
from loopwright.records import EventWriter
from loopwright.runtime import Runner
from loopwright.sandbox import LocalSandbox, create_workspace
from loopwright.tasks import load_benchmark
from loopwright.workflow import GateNode
from tests.runtime.conftest import FakeModel, agent, chain, finish, reply
from tests.taskfactory import make_calc_task


def test_the_runner_gives_each_node_its_tier_model_and_the_judge_the_meta_model(
    tmp_path: Path,
) -> None:
    default = FakeModel([finish("built")], name="default-model")
    small = FakeModel([finish("studied")], name="small-model")
    meta = FakeModel([reply(text="PASS: it is done")], name="meta-model")
    built = {"small-model": small, "meta-model": meta}
    config = ModelsConfig(tiers={"small": "small-model"}, roles={"meta": "meta-model"})
    router = ModelRouter(default, config, built.__getitem__)
    judge = GateNode(
        id="gate", judge="Is the task in {instruction_file} done? {notes}", reloop_to="builder"
    )
    workflow = chain(agent("study", model="small"), agent("builder"), judge)
    task = make_calc_task(tmp_path / "bench")
    workspace = create_workspace(task.repo_dir, tmp_path / "ws")
    runner = Runner(router, LocalSandbox(), cost_fn=lambda m, u: None, price_table="t")
    with EventWriter(tmp_path / "run" / "events.jsonl") as writer:
        outcome = runner.run(workflow, task, workspace.path, task.root / "instruction.md", writer)
    assert outcome.node_status == {"study": "ok", "builder": "ok", "gate": "ok"}
    # study (tier small), builder (tier medium: not configured, so the default), the judge (meta)
    assert (len(small.calls), len(default.calls), len(meta.calls)) == (1, 1, 1)


def test_select_resolves_tiers_roles_names_and_the_default_once_each() -> None:
    made: list[str] = []

    def make(name: str) -> FakeModel:
        made.append(name)
        return FakeModel([], name=name)

    default = FakeModel([], name="sim-coder-1")
    config = ModelsConfig(tiers={"large": "openai/big"}, roles={"meta": "large", "agent": "sim"})
    router = ModelRouter(default, config, make, aliases=("sim",))
    assert router.select("medium") is default  # an unconfigured tier: the default
    assert router.select("agent") is default  # "sim" is the default's spec
    assert router.select("meta") is router.select("large") is router.select("openai/big")
    assert made == ["openai/big"]  # built once, kept for the run
    assert (router.name, router.simulated) == ("sim-coder-1", True)


def test_routed_factory_builds_a_router_per_run_only_when_tiers_or_roles_are_set() -> None:
    bench = load_benchmark("mini")
    plain = routed_factory("sim", ModelsConfig(), benchmark=bench)(7)
    assert isinstance(plain, SimModel)
    config = ModelsConfig(tiers={"small": "openai/gpt-4o-mini"})
    router = routed_factory("sim", config, benchmark=bench)(7)
    assert isinstance(router, ModelRouter) and isinstance(router.default, SimModel)
    assert router.select("small").name == "openai/gpt-4o-mini"  # a gateway: nothing imported
    with pytest.raises(ConfigError, match="unknown model"):
        routed_factory("sim", ModelsConfig(tiers={"small": "no-such-model"}), benchmark=bench)
