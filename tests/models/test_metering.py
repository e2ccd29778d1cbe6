"""Every role metered: the dollar budget the gateway enforces from the ledger file, the role
header, role kinds and totals, user prices, the model options' ModelChoice, and the cache key
and engine settings of evolve runs (what `ab apply` writes)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.evaluation import EvalJob, EvalSettings, Evaluator
from loopwright.evaluation._cache import cache_key
from loopwright.models import (
    DEFAULT_PRICES,
    ROLE_HEADER,
    CallLabels,
    CostLedger,
    GatewayError,
    LedgerRecord,
    LiteLLMGateway,
    Message,
    ModelsConfig,
    group_totals,
    label_scope,
    model_choice,
    role_kind,
)
from loopwright.runtime import EngineSettings
from loopwright.sandbox import LocalSandbox
from loopwright.search import parse_config
from loopwright.search._api import with_engine
from loopwright.tasks import load_benchmark
from loopwright.workflow import GateNode, builtin_workflow

HI = [Message("user", "hi")]
PRICED = ModelsConfig.model_validate(
    {"prices": {"openai/m": {"input_per_mtok": 10, "output_per_mtok": 0}}}
)


class Completion:
    """`litellm.completion` stand-in: 100 input tokens per reply; keeps every request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def __call__(self, **request: Any) -> Any:
        self.requests.append(request)
        message = SimpleNamespace(content="ok", tool_calls=None)
        usage = SimpleNamespace(prompt_tokens=100, completion_tokens=0)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=usage)


def gateway(ledger: CostLedger, completion: Completion) -> LiteLLMGateway:
    return LiteLLMGateway(
        "openai/m", ledger=ledger, prices=PRICED.price_table(), completion=completion
    )


def test_the_gateway_makes_no_call_once_the_ledger_reaches_its_budget(tmp_path: Path) -> None:
    completion = Completion()
    ledger = CostLedger(tmp_path / "ledger.jsonl", max_usd=0.0025)  # $0.001 a call
    model = gateway(ledger, completion)
    for _ in range(3):
        model.chat(HI, [])
    with pytest.raises(GatewayError) as info:
        model.chat(HI, [])
    # A Python caller is told the argument it set, never the CLI's flag.
    message = str(info.value)
    assert info.value.kind == "budget" and "max_usd" in message and "--max-usd" not in message
    assert len(completion.requests) == 3 and len(ledger.records()) == 3


def test_the_budget_counts_calls_other_processes_appended_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    mine = CostLedger(path, max_usd=0.002)
    other = CostLedger(path)  # another worker of the same run
    gateway(other, Completion()).chat(HI, [])
    assert not mine.exhausted() and mine.spent_usd() == pytest.approx(0.001)
    gateway(other, Completion()).chat(HI, [])
    assert mine.exhausted()
    with path.open("a") as fh:  # a line still being written is not read yet
        fh.write('{"partial')
    assert mine.spent_usd() == pytest.approx(0.002)


def test_each_request_carries_its_role_and_the_ledger_splits_agents_from_meta(
    tmp_path: Path,
) -> None:
    completion = Completion()
    ledger = CostLedger(tmp_path / "ledger.jsonl")
    model = gateway(ledger, completion)
    with label_scope(run="r", role="builder"):
        model.chat(HI, [])
    with label_scope(run="r", role="meta:reflector"):
        model.chat(HI, [])
        model.chat(HI, [])
    model.chat(HI, [])  # unlabelled: no header
    headers = [r.get("extra_headers", {}).get(ROLE_HEADER) for r in completion.requests]
    assert headers == ["builder", "meta:reflector", "meta:reflector", None]
    kinds = ledger.totals(by="kind")
    assert (kinds["agents"].calls, kinds["meta"].calls) == (2, 2)
    assert kinds["meta"].cost_usd == pytest.approx(0.002)
    roles = group_totals(ledger.records(), "role")
    assert roles["meta:reflector"].calls == 2 and roles[None].calls == 1
    assert [role_kind(r) for r in ("builder", "meta:judge", None)] == ["agents", "meta", "agents"]


def test_user_prices_extend_the_table_under_a_versioned_name() -> None:
    table = PRICED.price_table()
    assert table.version.startswith(DEFAULT_PRICES.version + "+user-")
    assert table.price("openai/m") is not None and table.price("sim-coder-1") is not None
    assert ModelsConfig().price_table() is DEFAULT_PRICES
    assert PRICED.with_overrides(["small=openai/s"]).prices == PRICED.prices


def test_model_choice_resolves_the_options_and_says_what_each_role_calls(tmp_path: Path) -> None:
    config = tmp_path / "models.yaml"
    config.write_text("roles: {agent: openai/a}\ntiers: {small: openai/s}\n")
    choice = model_choice(None, meta_model="openai/meta", tiers=["large=openai/l"],
                          config_file=config)  # fmt: skip
    assert choice.model == "openai/a" and choice.meta_spec == "openai/meta"
    uses = choice.uses()
    assert uses["agent tier small"] == "openai/s" and uses["agent tier medium"] == "openai/a"
    assert uses["reflector"] == uses["research THINK"] == uses["judge gates"] == "openai/meta"
    assert uses["designer"] == "rules (no model call)"
    assert model_choice("sim").uses()["mutator"] == "offline rules"
    assert choice.unpriced() == ["openai/a", "openai/l", "openai/meta", "openai/s"]
    with pytest.raises(ConfigError, match="does not exist"):
        model_choice(config_file=tmp_path / "missing.yaml")


def test_models_command_shows_each_role(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["models", "--model", "openai/a", "--meta-model", "openai/m", "--json"]
    assert main(argv) == 0
    uses = json.loads(capsys.readouterr().out)["uses"]
    assert uses["agent (default)"] == "openai/a" and uses["crossover"] == "openai/m"


def test_a_judge_gate_is_labelled_as_a_meta_role() -> None:
    from loopwright.runtime._runner import _label_role

    gate = GateNode(id="g", judge="Is it done? {notes}", reloop_to="builder", max_loops=1)
    assert _label_role(gate) == "meta:judge"


def _config(**extra: Any) -> Any:
    return parse_config({"seed_workflow": "builder-only", "bench": "mini", **extra})


def test_evolve_takes_the_engine_settings_ab_apply_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("schema_version: 1\nengine: {default_loop_type: plan_execute}\n")
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(settings))
    config = with_engine(_config())
    assert config.engine is not None and config.engine.default_loop_type == "plan_execute"
    given = _config(engine={"default_loop_type": "react"})
    assert with_engine(given).engine == given.engine  # a stored engine is kept (resume)


def test_engine_tiers_and_api_base_are_part_of_the_cache_key() -> None:
    task = load_benchmark("mini").tasks[0]
    job = EvalJob(builtin_workflow("builder-only"), task, 0, Path("/tmp/x"), run_id="r")

    def key(**settings: Any) -> str:
        evaluator = Evaluator(lambda seed: None, LocalSandbox(), DEFAULT_PRICES,  # type: ignore[arg-type,return-value]
                              EvalSettings(**settings))  # fmt: skip
        return cache_key(evaluator, job)

    base = key()
    assert key(models=ModelsConfig()) == base  # nothing set: existing keys still hold
    variants = {
        key(engine=EngineSettings(default_loop_type="plan_execute")),
        key(models=ModelsConfig(tiers={"small": "openai/s"})),
        key(api_base="http://127.0.0.1:8000/v1"),
    }
    assert len(variants) == 3 and base not in variants


def test_ledger_records_keep_their_labels_through_the_file(tmp_path: Path) -> None:
    ledger = CostLedger(tmp_path / "ledger.jsonl")
    gateway(ledger, Completion())
    record = LedgerRecord(
        t=0.0, provider="openai", model="openai/m", attempt=1, ok=True, input_tokens=1,
        output_tokens=0, cache_read_tokens=0, cache_write_tokens=0, latency_s=0.0,
        cost_usd=None, price_table="x", labels=CallLabels(role="meta:think"),
    )  # fmt: skip
    ledger.record(record)
    assert ledger.spent_usd() == 0.0  # unpriced counts 0 (and --max-usd refuses it up front)


def test_a_gateway_factory_pickles_for_ray_workers(tmp_path: Path) -> None:
    """What an executor ships (the factory: settings, limits, ledger, prices) pickles; the copy
    appends to the same ledger file and keeps its budget."""
    cloudpickle = pytest.importorskip("ray.cloudpickle")  # Ray's pickler

    from loopwright.models import model_factory

    ledger = CostLedger(tmp_path / "ledger.jsonl", max_usd=1.0)
    factory = model_factory("openai/m", benchmark=None, ledger=ledger)
    copy = cloudpickle.loads(cloudpickle.dumps(factory))(0)
    assert isinstance(copy, LiteLLMGateway) and copy.ledger is not None
    assert copy.ledger.path == ledger.path and copy.ledger.max_usd == 1.0
