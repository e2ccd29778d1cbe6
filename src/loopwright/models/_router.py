"""`ModelRouter`: one run's models by tier and role, behind the ChatModel of its default model.

The Runner asks a router for the model of each agent node (`select(node.model)`: a tier, a role
or a model name) and of each LLM-judge gate (`select("meta")`); anything else that only knows
ChatModel sees the default model. Models are built on first use and kept for the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from loopwright.models._ledger import CostLedger
from loopwright.models._pricing import DEFAULT_PRICES, PriceTable
from loopwright.models._registry import ModelFactory, gateway_name, model_factory
from loopwright.models._tiers import ModelsConfig, resolve_model
from loopwright.models._types import ChatModel, Message, ModelResponse, ToolSpec
from loopwright.tasks import Benchmark

__all__ = ["ModelRouter", "routed_factory"]


class ModelRouter:
    """A ChatModel that chats with `default` and hands out other models by tier or role.

    `select(name_or_tier)` resolves with `resolve_model(name_or_tier, config,
    default=default.name)`: a configured tier or role gives its model name, an unconfigured
    one the default model, any other text is a model name. The default's name (and any of
    `aliases`, e.g. the spec "sim" of the model named "sim-coder-1") returns `default` itself;
    another name is built once by `make(name)` and reused. `name` and `simulated` are the
    default model's. Thread-safe; deterministic given `make`.
    """

    def __init__(
        self,
        default: ChatModel,
        config: ModelsConfig,
        make: Callable[[str], ChatModel],
        *,
        aliases: Sequence[str] = (),
    ) -> None:
        self.default = default
        self.config = config
        self.name = default.name
        self.simulated = default.simulated
        self._defaults = frozenset({default.name, *aliases})
        self._make = make
        self._built: dict[str, ChatModel] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ModelRouter(default={self.default!r}, config={self.config!r})"

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """The default model's reply (see ChatModel.chat)."""
        return self.default.chat(messages, tools)

    def select(self, name_or_tier: str) -> ChatModel:
        """The model for an AgentNode's `model` field, or for a role ("agent", "meta").
        Raises what `make` raises for a name it cannot build (a ConfigError for a bad spec)."""
        name = resolve_model(name_or_tier, self.config, default=self.default.name)
        if name in self._defaults:
            return self.default
        with self._lock:
            if name not in self._built:
                self._built[name] = self._make(name)
            return self._built[name]


def routed_factory(
    spec: str,
    config: ModelsConfig,
    *,
    benchmark: Benchmark | None,
    api_base: str | None = None,
    ledger: CostLedger | None = None,
    prices: PriceTable = DEFAULT_PRICES,
) -> ModelFactory:
    """A factory of per-run ModelRouters: the default model from `spec`, the models of `config`'s
    tiers and roles from their names, every one through `model_factory` with the same
    benchmark, ledger and prices, and the run's seed; `api_base` goes to the LiteLLM names
    (a ConfigError when none of them is one). A config without tiers or
    roles gives plain `model_factory(spec, ...)` (no router).

    Every configured name is checked here, so a bad spec in the config is a ConfigError before
    anything runs (building a gateway factory imports nothing and needs no key).
    """

    def factory_of(name: str) -> ModelFactory:
        base = api_base if gateway_name(name.strip()) is not None else None
        return model_factory(name, benchmark=benchmark, api_base=base, ledger=ledger, prices=prices)

    if not config.tiers and not config.roles:
        return model_factory(
            spec, benchmark=benchmark, api_base=api_base, ledger=ledger, prices=prices
        )
    named = [
        spec,
        *(resolve_model(str(k), config, default=spec) for k in (*config.tiers, *config.roles)),
    ]
    if api_base is not None and all(gateway_name(n.strip()) is None for n in named):
        model_factory(
            spec, benchmark=benchmark, api_base=api_base
        )  # raises: nothing to apply it to
    default = factory_of(spec)
    factories = {spec: default}
    for key in (*config.tiers, *config.roles):
        name = resolve_model(str(key), config, default=spec)
        if name not in factories:
            factories[name] = factory_of(name)

    def make(seed: int) -> ChatModel:
        return ModelRouter(
            default(seed),
            config,
            lambda name: (factories.get(name) or factory_of(name))(seed),
            aliases=(spec,),
        )

    return make
