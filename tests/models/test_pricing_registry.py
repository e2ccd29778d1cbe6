from __future__ import annotations

from pathlib import Path

import pytest

import loopwright.models as models
from loopwright.errors import ConfigError
from loopwright.models import (
    DEFAULT_PRICES,
    Price,
    PriceTable,
    ScriptedModel,
    SimModel,
    Usage,
    cost_usd,
    model_factory,
)
from loopwright.tasks import load_benchmark


def test_price_table_is_named_and_prices_the_offline_models() -> None:
    assert DEFAULT_PRICES.version == "loopwright-prices-2026-11"
    sim = DEFAULT_PRICES.price("sim-coder-1")
    assert sim is not None and sim.simulated
    assert cost_usd("sim-coder-1", Usage(1_000_000, 1_000_000)) == pytest.approx(18.0)
    assert cost_usd("scripted", Usage(10**6, 10**6, 10**5)) == 0.0


def test_cached_tokens_are_part_of_input_and_priced_as_cached() -> None:
    table = PriceTable("t", {"m": Price(2.0, 10.0, 0.5)})
    cost = table.cost_usd(
        "m", Usage(input_tokens=1_000_000, output_tokens=0, cached_tokens=400_000)
    )
    assert cost == pytest.approx(0.6 * 2.0 + 0.4 * 0.5)


def test_unknown_model_costs_none_not_a_guess() -> None:
    assert cost_usd("gpt-unknown", Usage(5, 5)) is None


def test_price_table_cannot_be_changed() -> None:
    with pytest.raises(TypeError):
        DEFAULT_PRICES.prices["x"] = Price(1, 1, 1)  # type: ignore[index]  # the mistake under test


def test_sim_spec_makes_a_fresh_sim_per_seed() -> None:
    bench = load_benchmark("mini")
    make = model_factory("sim", benchmark=bench)
    first, second = make(1), make(2)
    assert isinstance(first, SimModel) and isinstance(second, SimModel)
    assert first is not second
    assert (first.seed, second.seed) == (1, 2)
    assert first.name == "sim-coder-1" and first.simulated


def test_sim_spec_without_benchmark_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs the benchmark"):
        model_factory("sim", benchmark=None)


def test_scripted_spec_gives_each_run_its_own_script(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("replies: [only once]\n", encoding="utf-8")
    make = model_factory(f"scripted:{path}", benchmark=None)
    for seed in (0, 1):
        model = make(seed)
        assert isinstance(model, ScriptedModel)
        assert model.chat([], []).text == "only once"


@pytest.mark.parametrize("spec", ["gpt-4o", "scripted:", "Sim"])
def test_unknown_spec_lists_the_known_ones(spec: str) -> None:
    with pytest.raises(ConfigError) as err:
        model_factory(spec, benchmark=None)
    if spec != "scripted:":
        assert all(known in str(err.value) for known in ("sim", "scripted:FILE", "litellm:NAME"))


def test_scripted_spec_with_missing_file_fails_early(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        model_factory(f"scripted:{tmp_path / 'missing.yaml'}", benchmark=None)


def test_public_names_are_pinned() -> None:
    assert set(models.__all__) == {
        "DEFAULT_PRICES",
        "GUIDANCE_KEYWORDS",
        "MODEL_SPECS",
        "SIM_MODEL_NAME",
        "ChatModel",
        "JsonValue",
        "Message",
        "ModelError",
        "ModelFactory",
        "ModelResponse",
        "Price",
        "PriceTable",
        "Reply",
        "ScriptExhaustedError",
        "ScriptFile",
        "ScriptFn",
        "ScriptedModel",
        "SimDecision",
        "SimModel",
        "SimParams",
        "ToolCall",
        "ToolCallError",
        "ToolSpec",
        "Usage",
        "cost_usd",
        "count_tokens",
        "load_script_file",
        "model_factory",
        "response_usage",
        # the LiteLLM gateway, ledger, tiers and redaction (issue 6)
        "LITELLM_PIP_HINT",
        "CompletionFn",
        "GatewayError",
        "GatewaySettings",
        "LiteLLMGateway",
        "ProviderLimits",
        "provider_of",
        "import_litellm",
        "LEDGER_FILE",
        "INTERRUPTED",  # a request sent and never recorded (issue 33)
        "CallLabels",
        "CostLedger",
        "LedgerRecord",
        "LedgerTotals",
        "label_scope",
        "read_ledger",
        "redact",
        "secret_env_names",
        "ROLES",
        "TIERS",
        "ModelsConfig",
        "load_models_config",
        "parse_tier_override",
        "resolve_model",
        "ModelRouter",
        "routed_factory",
        "current_labels",
        # the one structured ask (issue 20)
        "Answer",
        "AskAttempt",
        "ReplyError",
        "ask_structured",
        "extract_json",
        "parse_structured",
        "strip_fence",
        # every role metered, the same model options everywhere (issue 22)
        "DESIGNER_RULES",
        "META_ROLES",
        "OFFLINE_RULES",
        "ROLE_HEADER",
        "ModelChoice",
        "group_totals",
        "is_gateway_spec",
        "is_offline_spec",
        "meta_chat_model",
        "model_choice",
        "require_prices",
        # a bad A/B manifest is refused before the run (issue 31)
        "check_provider",
        "role_kind",
    }
    assert all(hasattr(models, name) for name in models.__all__)
