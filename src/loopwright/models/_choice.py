"""`ModelChoice`: the models of a run as the user chose them (`--model`, `--api-base`, `--tier`,
`--meta-model`, `--config`), the same for `run`, `evolve`, `outer-loop` and `research`, and what
each role of a run will call.

Roles: agent nodes run on their tier's model (`small`, `medium`, `large`; a node naming no
configured tier runs on the default model); every meta role (the outer loop's reflector, prompt
mutator and crossover, an LLM-judge gate, the research loop's THINK, CRITIC, DISTILL and
REFLECT) runs on the `meta` role's model, which defaults to the default model. The designer
applies documented rules and calls no model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.models._gateway import import_litellm
from loopwright.models._ledger import CostLedger
from loopwright.models._pricing import DEFAULT_PRICES, PriceTable
from loopwright.models._registry import gateway_name, model_factory
from loopwright.models._tiers import TIERS, ModelsConfig, load_models_config, resolve_model
from loopwright.models._types import ChatModel

__all__ = [
    "DESIGNER_RULES",
    "OFFLINE_RULES",
    "ModelChoice",
    "is_gateway_spec",
    "is_offline_spec",
    "meta_chat_model",
    "model_choice",
    "require_prices",
]

OFFLINE_RULES = "offline rules"
DESIGNER_RULES = "rules (no model call)"

_META_ROLES = ("reflector", "mutator", "crossover")
_RESEARCH_ROLES = ("research THINK", "research CRITIC", "research DISTILL", "research REFLECT")


class ModelChoice(BaseModel):
    """The models of a run: `model` (the default spec: agents whose tier is not configured, and
    the meta role unless `config` sets it), the tiers and roles of `config`, and `api_base` (an
    OpenAI-compatible server for the LiteLLM specs). Frozen; stored in a run's config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "sim"
    config: ModelsConfig = Field(default_factory=ModelsConfig)
    api_base: str | None = None

    @property
    def prices(self) -> PriceTable:
        """The price table of the run: the built-in one with the config's `prices` added."""
        return self.config.price_table()

    def specs(self) -> list[str]:
        """Every model spec this choice names: the default, each tier and each role."""
        return [self.model, *self.config.tiers.values(), *self.config.roles.values()]

    def preload(self, extra: Sequence[str] = ()) -> None:
        """Import litellm now when any spec (or `extra`) is a LiteLLM one, so that evaluation
        workers forked from this process share the import instead of each paying for it.
        MissingDependencyError when litellm is not installed."""
        if any(is_gateway_spec(s) for s in (*self.specs(), *extra)):
            import_litellm()

    def unpriced(self, extra: Sequence[str] = ()) -> list[str]:
        """The LiteLLM models this choice calls (the default, every tier and role, and
        `extra` specs) that its price table does not know, sorted: their cost is unknown, so a
        dollar budget cannot bound them."""
        names = {gateway_name(s.strip()) for s in (*self.specs(), *extra)} - {None}
        return sorted(n for n in names if n is not None and self.prices.price(n) is None)

    @property
    def meta_spec(self) -> str:
        """The meta role's model spec (the default model when the role is not configured)."""
        return resolve_model("meta", self.config, default=self.model)

    def uses(self) -> dict[str, str]:
        """What each role will call, in display order: the agents by tier, the outer loop's
        meta roles, the designer, the research phases and LLM-judge gates. A meta role on the
        sim (or `offline`) follows the offline rules. Deterministic."""
        out = {"agent (default)": self.model}
        for tier in TIERS:
            out[f"agent tier {tier}"] = resolve_model(tier, self.config, default=self.model)
        meta = OFFLINE_RULES if is_offline_spec(self.meta_spec) else self.meta_spec
        out |= dict.fromkeys(_META_ROLES, meta)
        out["designer"] = DESIGNER_RULES
        out |= dict.fromkeys(_RESEARCH_ROLES, meta)
        out["judge gates"] = self.meta_spec
        return out


def model_choice(
    model: str | None = None,
    *,
    meta_model: str | None = None,
    tiers: Sequence[str] = (),
    config_file: Path | None = None,
    api_base: str | None = None,
    default: str = "sim",
) -> ModelChoice:
    """The ModelChoice of the model options: the config file (if any), then each `--tier
    KEY=MODEL`, then `--meta-model` (= `meta=MODEL`); the default model is `model`, else the
    config's `agent` role, else `default`. Raises ConfigError for a missing or invalid config
    file, a bad override or an empty model name."""
    for given, what in ((model, "model"), (meta_model, "meta model")):
        if given is not None and not given.strip():
            raise ConfigError(
                f"the {what} name is empty",
                got=repr(given),
                fix="name a model (sim, scripted:FILE, PROVIDER/MODEL), or leave it unset "
                "for the config's role, else sim",
            )
    overrides = [*tiers, *([f"meta={meta_model}"] if meta_model else [])]
    config = load_models_config(config_file, overrides)
    chosen = model or resolve_model("agent", config, default=default)
    return ModelChoice(model=chosen, config=config, api_base=api_base)


def require_prices(choice: ModelChoice, extra: Sequence[str] = (), *, option: str) -> None:
    """ConfigError when a dollar budget (`option`, e.g. `--max-usd`) is asked for and a LiteLLM
    model `choice` calls (or an `extra` spec, such as the meta model) has no price: an unpriced
    call's cost is unknown and would never count against the budget. Shared by `evolve` and
    `research`; deterministic."""
    unpriced = choice.unpriced(extra)
    if unpriced:
        raise ConfigError(
            f"{option} cannot bound models without a price",
            got=f"no price for {', '.join(unpriced)}",
            fix="add them under `prices:` in the models config ("
            + spoken("ModelsConfig.prices", "--config")
            + "; docs/models.md), e.g. `prices: {"
            + unpriced[0]
            + ": {input_per_mtok: 3, output_per_mtok: 15}}`",
        )


def is_gateway_spec(spec: str) -> bool:
    """True for a spec the LiteLLM gateway calls (`PROVIDER/MODEL`, `litellm:NAME`)."""
    return gateway_name(spec.strip()) is not None


def is_offline_spec(spec: str) -> bool:
    """True for `offline` and for the sim (`sim`, `sim:7`, `sim?...`): meta roles follow offline
    rules."""
    name = spec.partition("?")[0].strip()
    return spec.strip() == "offline" or name == "sim" or name.startswith("sim:")


def meta_chat_model(
    spec: str,
    *,
    api_base: str | None,
    ledger: CostLedger | None,
    seed: int,
    prices: PriceTable = DEFAULT_PRICES,
) -> ChatModel:
    """The meta model for `spec` (not an offline spec), seeded with `seed`: a gateway spec gets
    `api_base` and writes every call, priced with `prices`, to `ledger`; other specs ignore
    them. ConfigError for an unknown spec."""
    base = api_base if is_gateway_spec(spec) else None
    return model_factory(spec, benchmark=None, api_base=base, ledger=ledger, prices=prices)(seed)
