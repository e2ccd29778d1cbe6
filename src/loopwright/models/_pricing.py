"""Price tables: named, versioned USD prices per million tokens, and cost from raw usage.

Records store raw token counts; cost is derived from them with a named table version, so a
record can be re-priced when prices change and every cost says which prices made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from loopwright.models._types import Usage

__all__ = ["DEFAULT_PRICES", "Price", "PriceTable", "cost_usd"]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of one model. `simulated` marks a made-up price for an offline
    model: a cost computed with it is a simulated figure, not money anyone spent."""

    input_per_mtok: float
    output_per_mtok: float
    cached_per_mtok: float
    simulated: bool = False
    note: str = ""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """A named, versioned mapping from model name to `Price`. Immutable.

    Cached tokens are counted as a part of `input_tokens` (the OpenAI / LiteLLM convention):
    cost = (input - cached) * input price + cached * cached price + output * output price.
    """

    version: str
    prices: Mapping[str, Price] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))

    def price(self, model: str) -> Price | None:
        """The price of `model`, or None when this table does not know it."""
        return self.prices.get(model)

    def cost_usd(self, model: str, usage: Usage) -> float | None:
        """The cost of `usage` on `model` in USD; None for a model this table does not know
        (never a guess, never an exception). Deterministic."""
        price = self.price(model)
        if price is None:
            return None
        cached = min(max(usage.cached_tokens, 0), max(usage.input_tokens, 0))
        fresh = max(usage.input_tokens, 0) - cached
        total = (
            fresh * price.input_per_mtok
            + cached * price.cached_per_mtok
            + max(usage.output_tokens, 0) * price.output_per_mtok
        )
        return total / 1_000_000


DEFAULT_PRICES = PriceTable(
    version="loopwright-prices-2026-11",
    prices={
        # The offline simulated coder (docs/sim-model.md). The price is made up, set like a
        # mid-tier hosted coding model, so that simulated runs show plausible cost trade-offs.
        "sim-coder-1": Price(
            3.00, 15.00, 0.30, simulated=True, note="SIMULATED: made-up price of the sim model"
        ),
        # The scripted test double costs nothing.
        "scripted": Price(0.0, 0.0, 0.0, simulated=True, note="test double; free"),
        # Real providers' prices arrive with the LiteLLM gateway issue.
    },
)


def cost_usd(model: str, usage: Usage, table: PriceTable = DEFAULT_PRICES) -> float | None:
    """`table.cost_usd(model, usage)`: USD, or None for a model the table does not know."""
    return table.cost_usd(model, usage)
