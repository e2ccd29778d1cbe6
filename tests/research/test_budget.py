"""The research run's dollar budget: it stops the run before an iteration once spent, an
iteration during which the gateway began refusing calls is discarded (never committed half-way),
a larger budget continues the run to the records an uninterrupted run makes, a budget never
reached changes nothing, and a budget over a model without a price is refused."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.models import LEDGER_FILE, CostLedger, LiteLLMGateway, Message, ModelsConfig
from loopwright.research import (
    InitOptions,
    ResearchLoop,
    RunModels,
    SimResearcher,
    WorkDir,
    build_bench,
    check_contracts,
    init_workdir,
    open_loop,
    read_run_state,
    research_status,
    run_spend,
)
from loopwright.research._journal import Experience, HypothesisEvent, read_lines
from loopwright.research._knowledge import Knowledge
from tests.research.conftest import TASK, Meta, make_loop, make_workdir

VOLATILE = {"started_at", "committed_at", "wall_s", "duration_s", "latency_s"}
# The meta model on the gateway: 100 input tokens a reply at $10,000 per million: $1 a call.
META = "openai/meta"
PRICED = ModelsConfig.model_validate(
    {"prices": {META: {"input_per_mtok": 10_000, "output_per_mtok": 0}}}
)
CALL_USD = 1.0


def _stable(value: Any) -> Any:
    """A record without its clock readings (the same seed gives the same rest)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def stable_records(wd: WorkDir) -> list[Any]:
    return [
        _stable(json.loads((wd.iter_dir(n) / "record.json").read_text(encoding="utf-8")))
        for n in wd.committed()
    ]


def journals(wd: WorkDir) -> tuple[str, str, str]:
    return (
        wd.experience.read_text(encoding="utf-8"),
        wd.hypotheses.read_text(encoding="utf-8"),
        wd.knowledge.read_text(encoding="utf-8"),
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> WorkDir:
    """Three iterations in one go, no budget."""
    wd = make_workdir(tmp_path_factory.mktemp("reference") / "v1", max_specs=1)
    assert make_loop(wd, Meta()).run(3).committed == (1, 2, 3)
    return wd


def test_a_spent_budget_stops_before_the_next_iteration_and_more_budget_finishes_the_run(
    reference: WorkDir, tmp_path: Path
) -> None:
    costs = [r["offline_cost_usd"] for r in stable_records(reference)]
    assert all(c > 0 for c in costs), "the sim coder's runs are priced (simulated)"
    budget = costs[0] + costs[1] / 2  # reached during iteration 2
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    outcome = make_loop(wd, Meta(), max_usd=budget).run(3)
    assert outcome.status == "budget" and outcome.committed == (1, 2)
    assert outcome.max_usd == budget
    assert outcome.spent_usd == pytest.approx(costs[0] + costs[1])
    assert wd.load_config().max_usd == budget  # recorded in config.yaml
    state = read_run_state(wd)
    assert state.status == "budget" and (state.iteration, state.attempt) == (3, 1)
    assert f"of a ${budget:g} budget" in state.reason and "simulated prices" in state.reason
    assert not wd.staging(3).exists() and wd.committed() == [1, 2]
    status = research_status(wd.root)
    assert (status.status, status.max_usd) == ("budget", budget)
    assert status.spent_usd == status.offline_usd == pytest.approx(costs[0] + costs[1])

    # the same budget again runs nothing, and says so
    idle = Meta()
    again = make_loop(wd, idle).run(1)
    assert again.status == "budget" and again.committed == () and idle.seen == []

    # a larger budget continues from the last commit, to what the uninterrupted run made
    more = make_loop(wd, Meta(), max_usd=1.0).run(1)
    assert more.status == "paused" and more.committed == (3,)
    assert wd.load_config().max_usd == 1.0
    assert stable_records(wd) == stable_records(reference)
    assert journals(wd) == journals(reference)
    assert all(c.ok for c in check_contracts(wd)), [c.detail for c in check_contracts(wd)]


def test_a_budget_never_reached_changes_nothing(reference: WorkDir, tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    outcome = make_loop(wd, Meta(), max_usd=100.0).run(3)
    assert outcome.status == "paused" and outcome.committed == (1, 2, 3)
    assert outcome.spent_usd is not None and 0 < outcome.spent_usd < 100.0
    assert stable_records(wd) == stable_records(reference)
    assert journals(wd) == journals(reference)
    assert read_run_state(wd).status == read_run_state(reference).status == "paused"


class SimCompletion:
    """`litellm.completion` stand-in answering research prompts by the offline sim rules;
    100 input tokens a reply ($1 at the META price). Counts the calls it received."""

    def __init__(self, *, garbled: int = 0) -> None:
        self.sim = SimResearcher()
        self.calls = 0
        self.garbled = garbled  # the first `garbled` replies are not JSON

    def __call__(self, **request: Any) -> Any:
        self.calls += 1
        first = request["messages"][0]
        text = self.sim.chat([Message(first["role"], first["content"])], []).text
        if self.calls <= self.garbled:
            text = "no JSON here"
        message = SimpleNamespace(content=text, tool_calls=None)
        usage = SimpleNamespace(prompt_tokens=100, completion_tokens=0)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=usage)


def gateway_loop(
    wd: WorkDir, completion: SimCompletion, max_usd: float, *, new_budget: bool
) -> ResearchLoop:
    """The loop with its meta model on the gateway, metered in the run's ledger under
    `max_usd` (passed to the loop as a new budget when `new_budget`)."""
    ledger = CostLedger(wd.root / LEDGER_FILE, max_usd=max_usd)
    meta = LiteLLMGateway(META, ledger=ledger, prices=PRICED.price_table(), completion=completion)
    bench = build_bench(wd.load_config(), "test")
    return ResearchLoop(wd.root, meta, bench, max_usd=max_usd if new_budget else None)


def test_an_iteration_the_gateway_refused_calls_in_is_discarded_and_resumed_later(
    tmp_path: Path,
) -> None:
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    first = SimCompletion()
    assert gateway_loop(wd, first, 1000.0, new_budget=False).run(1).committed == (1,)
    paid = first.calls * CALL_USD
    assert run_spend(wd).paid_usd == pytest.approx(paid)
    before = journals(wd)

    # reached after two calls of iteration 2: its later calls are refused
    budget = paid + 1.5 * CALL_USD
    second = SimCompletion()
    outcome = gateway_loop(wd, second, budget, new_budget=True).run(2)
    assert second.calls == 2
    assert outcome.status == "budget" and outcome.committed == ()
    assert "during iteration 2" in outcome.reason and "discarded" in outcome.reason
    # nothing of iteration 2 is committed or left half-way
    assert wd.committed() == [1] and not wd.staging(2).exists()
    assert {e.iter for e in read_lines(wd.experience, Experience)} == {1}
    assert {e.iter for e in read_lines(wd.hypotheses, HypothesisEvent)} <= {1}
    assert wd.experience.read_text(encoding="utf-8") == before[0]
    current = Knowledge(wd.knowledge).current()
    assert not [b for b in current if b.iteration == 2 and "resume" not in b.origin]
    state = read_run_state(wd)
    assert state.status == "budget" and (state.iteration, state.attempt) == (2, 2)
    assert all(c.ok for c in check_contracts(wd)), [c.detail for c in check_contracts(wd)]
    status = research_status(wd.root)
    offline = stable_records(wd)[0]["offline_cost_usd"]  # the sim coder's runs of iteration 1
    assert status.status == "budget" and status.offline_usd == offline > 0
    assert status.spent_usd == pytest.approx(paid + 2 * CALL_USD + offline)

    # a larger budget runs iteration 2 again, as its next attempt
    third = SimCompletion()
    resumed = gateway_loop(wd, third, 1000.0, new_budget=True).run(1)
    assert resumed.status == "paused" and resumed.committed == (2,)
    record = json.loads((wd.iter_dir(2) / "record.json").read_text(encoding="utf-8"))
    assert record["attempt"] == 2 and third.calls > 0
    assert all(c.ok for c in check_contracts(wd)), [c.detail for c in check_contracts(wd)]


def test_a_budget_over_a_model_without_a_price_is_refused(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    config = wd.config.read_bytes()
    unpriced = RunModels(meta="openai/no-price")
    with pytest.raises(ConfigError) as info:
        open_loop(wd.root, models=unpriced, max_usd=1.0)
    message = str(info.value)
    assert "max_usd cannot bound models without a price" in message and "--" not in message
    assert "openai/no-price" in message and "prices:" in message
    assert wd.config.read_bytes() == config and not (wd.root / LEDGER_FILE).exists()
    open_loop(wd.root, models=unpriced)  # no budget: no price needed
    priced = RunModels(meta=META, models=PRICED)
    assert open_loop(wd.root, models=priced, max_usd=1.0).max_usd == 1.0


def test_init_refuses_a_budget_over_a_model_without_a_price(tmp_path: Path) -> None:
    opts = InitOptions(
        dir=tmp_path / "v1", goal="raise the score", workflow="builder-only", bench="mini",
        tasks=(TASK,), sandbox="local", model="openai/no-price", max_usd=1.0,
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"^max_usd cannot bound models without a price"):
        init_workdir(opts)
    assert not opts.dir.exists()
    made = init_workdir(opts.model_copy(update={"model": "sim"}))
    assert made.load_config().max_usd == 1.0


def test_a_budget_stored_in_the_config_binds_a_later_run_without_the_option(
    tmp_path: Path,
) -> None:
    """`research run` with no --max-usd keeps the budget config.yaml holds."""
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    config = wd.load_config()
    wd.write_config(config.model_copy(update={"max_usd": 0.01}))
    outcome = make_loop(wd, Meta()).run(3)
    assert outcome.status == "budget" and outcome.committed == (1,)
    with pytest.raises(ConfigError, match="must be positive"):
        make_loop(wd, Meta(), max_usd=0.0)


def test_a_phase_starved_by_the_budget_stops_the_run_as_budget_not_as_stalled(
    tmp_path: Path,
) -> None:
    """THINK's first reply is unusable and the budget refuses its retries: THINK stays empty,
    which without a budget means `stalled`; here the budget is why, and the attempt is
    discarded."""
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    first = SimCompletion()
    assert gateway_loop(wd, first, 1000.0, new_budget=False).run(1).committed == (1,)
    starved = SimCompletion(garbled=1)
    budget = first.calls * CALL_USD + 0.5  # the first call of iteration 2 reaches it
    outcome = gateway_loop(wd, starved, budget, new_budget=True).run(1)
    assert starved.calls == 1
    assert outcome.status == "budget" and outcome.committed == ()
    state = read_run_state(wd)
    assert (state.status, state.iteration, state.attempt) == ("budget", 2, 2)
    assert wd.committed() == [1] and not wd.staging(2).exists()
