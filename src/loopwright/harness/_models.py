"""Where a cell's model comes from, and how its calls reach the cell's cost tracker.

A recording binds each tier to one provider/model for every loop. `GatewaySource` gives each
cell a fresh `LiteLLMGateway` at the gateway URL writing to the cell's ledger (the gateway is
the cost boundary: every attempt is a ledger record). `OfflineSource` wraps any ChatModel (a
ScriptedModel in the harness's own tests) in `MeteredModel`, which writes the same records, so
the scoreboard reads one ledger format whatever answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from loopwright.harness._manifest import Cell
from loopwright.models import (
    DEFAULT_PRICES,
    CallLabels,
    ChatModel,
    CostLedger,
    GatewaySettings,
    LedgerRecord,
    LiteLLMGateway,
    Message,
    ModelError,
    ModelResponse,
    PriceTable,
    ProviderLimits,
    ToolSpec,
    provider_of,
    redact,
)

OFFLINE_SOURCE = "offline"
"""The ledger `source` of a call metered by MeteredModel (an offline stand-in model)."""

__all__ = [
    "OFFLINE_SOURCE",
    "GatewaySource",
    "MeteredModel",
    "ModelSource",
    "OfflineSource",
    "TeeLedger",
]


class ModelSource(Protocol):
    """Builds the model a cell's native loop talks to, metered into `ledger` with `labels`.
    `simulated` is True when the models are stand-ins (their scoreboard says so)."""

    @property
    def simulated(self) -> bool: ...

    def model(self, cell: Cell, ledger: CostLedger, labels: CallLabels) -> ChatModel: ...


class TeeLedger(CostLedger):
    """A cell's fresh cost tracker that also appends every record to the recording's ledger,
    so one ledger holds every call of the recording and each cell still counts only its own."""

    def __init__(self, path: Path, also: CostLedger | None) -> None:
        super().__init__(path)
        self._also = also

    def record(self, entry: LedgerRecord) -> None:
        super().record(entry)
        if self._also is not None:
            self._also.record(entry)


@dataclass(frozen=True)
class GatewaySource:
    """Every cell's model is a LiteLLMGateway for the tier's provider/model at `base_url`."""

    base_url: str
    prices: PriceTable = DEFAULT_PRICES
    timeout_s: float = 300.0
    limits: ProviderLimits = field(default_factory=ProviderLimits)

    @property
    def simulated(self) -> bool:
        return False

    def model(self, cell: Cell, ledger: CostLedger, labels: CallLabels) -> ChatModel:
        settings = GatewaySettings(api_base=self.base_url, timeout_s=self.timeout_s)
        return LiteLLMGateway(
            cell.model,
            settings,
            ledger=ledger,
            prices=self.prices,
            limits=self.limits,
            labels=labels,
            seed=cell.seed,
        )


@dataclass(frozen=True)
class OfflineSource:
    """Every cell's model is `factory(cell)`, metered by MeteredModel under the tier's bound
    provider/model. For the harness's own tests (a ScriptedModel): no spend."""

    factory: Callable[[Cell], ChatModel]
    prices: PriceTable = DEFAULT_PRICES
    clock: Callable[[], float] = time.monotonic

    @property
    def simulated(self) -> bool:
        return True

    def model(self, cell: Cell, ledger: CostLedger, labels: CallLabels) -> ChatModel:
        return MeteredModel(self.factory(cell), cell.model, ledger, labels, self.prices, self.clock)


class MeteredModel:
    """A ChatModel that records each call of `inner` in `ledger` as the gateway does (one
    LedgerRecord per call, failed calls with `ok=False` and zero tokens), under the bound
    `model` name. Its `name` and `simulated` are the inner model's."""

    def __init__(
        self,
        inner: ChatModel,
        model: str,
        ledger: CostLedger,
        labels: CallLabels,
        prices: PriceTable,
        clock: Callable[[], float],
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.simulated = inner.simulated
        self._model, self._ledger, self._labels = model, ledger, labels
        self._prices, self._clock = prices, clock

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        started = self._clock()
        try:
            response = self.inner.chat(messages, tools)
        except ModelError as exc:
            self._record(self._clock() - started, None, redact(str(exc)))
            raise
        self._record(self._clock() - started, response, None)
        return response

    def _record(self, latency: float, response: ModelResponse | None, error: str | None) -> None:
        usage = response.usage if response is not None else None
        self._ledger.record(
            LedgerRecord(
                source=OFFLINE_SOURCE,
                t=time.time(),
                provider=provider_of(self._model),
                model=self._model,
                attempt=1,
                ok=error is None,
                error=error,
                input_tokens=usage.input_tokens if usage else 0,
                output_tokens=usage.output_tokens if usage else 0,
                cache_read_tokens=usage.cached_tokens if usage else 0,
                cache_write_tokens=0,
                latency_s=max(latency, 0.0),
                cost_usd=self._prices.cost_usd(self._model, usage) if usage else 0.0,
                price_table=self._prices.version,
                labels=self._labels,
            )
        )
