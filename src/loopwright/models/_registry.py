"""Model specs (`--model sim`, `scripted:FILE`, `PROVIDER/MODEL`, `litellm:NAME`) to factories of
per-run model instances."""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Callable
from pathlib import Path

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.models._ledger import CostLedger
from loopwright.models._pricing import DEFAULT_PRICES, PriceTable
from loopwright.models._sim import SimOptions, parse_sim_spec
from loopwright.models._types import ChatModel
from loopwright.tasks import Benchmark

__all__ = ["MODEL_SPECS", "ModelFactory", "gateway_name", "model_factory"]

ModelFactory = Callable[[int], ChatModel]
"""Builds the model for one run from the run's seed. Called once per run: models with per-run
state (the sim, a list script) must not be shared between runs."""

MODEL_SPECS: tuple[str, ...] = (
    "sim",
    "sim:LANDSCAPE",
    "sim:LANDSCAPE?family=2",
    "sim?latency=SECONDS",
    "scripted:FILE",
    "PROVIDER/MODEL (e.g. anthropic/claude-sonnet-4-5 or openai/gpt-4o-mini)",
    "litellm:NAME",
)


def model_factory(
    spec: str,
    *,
    benchmark: Benchmark | None,
    api_base: str | None = None,
    ledger: CostLedger | None = None,
    prices: PriceTable = DEFAULT_PRICES,
) -> ModelFactory:
    """The factory for a model spec. Known specs:

    - "sim": `SimModel(benchmark, seed)` per run; needs the benchmark the run is on.
      "sim:7": landscape 7 of the sim's family (docs/sim-model.md, "Landscapes");
      "sim:7?family=2": landscape 7 of family 2 (each structure can also hurt).
      "sim?latency=0.05" (or "sim:7?latency=0.05"): each call sleeping that long first.
    - "scripted:PATH": a fresh `ScriptedModel` from the script file at PATH per run (the file is
      read and validated once, here).
    - "PROVIDER/MODEL" (any LiteLLM name with a provider prefix) or "litellm:NAME" (any LiteLLM
      name as is): a `LiteLLMGateway` per run, all sharing one per-provider concurrency limit,
      `ledger` (when given) and `prices`; `api_base` points it at an OpenAI-compatible server.
      Building it imports nothing and needs no key; the key is read at the first call.

    Raises ConfigError (listing the known specs) for an unknown spec, "sim" without a benchmark,
    or a missing or malformed script file. The factory itself never raises for a valid spec.
    """
    spec = spec.strip()
    name = gateway_name(spec)
    if api_base is not None and name is None:
        raise ConfigError(
            f"{spoken('api_base', '--api-base')} only applies to a LiteLLM model",
            got=f"model {spec!r} with api_base {api_base!r}",
            fix=spoken(
                "use model='openai/NAME' with api_base, or drop api_base",
                "use --model openai/NAME with --api-base, or drop --api-base",
            ),
        )
    sim_options = parse_sim_spec(spec)
    if sim_options is not None:
        return _sim_factory(benchmark, sim_options)
    if spec.startswith("scripted:"):
        return _scripted_factory(spec.removeprefix("scripted:"))
    if name is not None:
        if not spec.startswith("litellm:"):
            check_provider(name)
        return _gateway_factory(name, api_base, ledger, prices)
    raise ConfigError(
        f"unknown model {spec!r}",
        got=spec,
        fix=f"use one of: {', '.join(MODEL_SPECS)}",
    )


def check_provider(name: str) -> None:
    """The provider prefix of `name` ("PROVIDER/MODEL") is one LiteLLM knows. ConfigError
    naming common providers otherwise: every call to an unknown provider would fail, and a run
    of nothing but failed calls is not a measurement. `litellm:NAME` skips this check.

    The list is read from the installed litellm's source (its `LlmProviders` enum), without
    importing litellm; when it cannot be read (litellm absent or laid out otherwise) the check
    is skipped and the first calls say what is wrong (evaluation's dead-model watch)."""
    from loopwright.models._gateway import provider_of

    known = litellm_providers()
    provider = provider_of(name)
    if known is None or provider in known:
        return
    common = [p for p in _COMMON_PROVIDERS if p in known]
    raise ConfigError(
        f"unknown model provider {provider!r}",
        got=name,
        fix=f"use PROVIDER/MODEL with one of LiteLLM's {len(known)} providers (e.g. "
        f"{', '.join(common)}; https://docs.litellm.ai/docs/providers), or litellm:NAME "
        "to pass a name to LiteLLM as is",
    )


@functools.cache
def litellm_providers() -> frozenset[str] | None:
    """The provider names of the installed litellm (`litellm.types.utils.LlmProviders`), read
    from its source with `ast` (importing litellm takes seconds); None when unreadable."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "types" / "utils.py"
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "LlmProviders":
            names = {
                stmt.value.value
                for stmt in node.body
                if isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            }
            return frozenset(names) or None
    return None


_COMMON_PROVIDERS = ("anthropic", "openai", "gemini", "vertex_ai", "bedrock", "azure",
                     "mistral", "groq", "ollama", "hosted_vllm", "openrouter", "together_ai")  # fmt: skip


def gateway_name(spec: str) -> str | None:
    """The LiteLLM model name of a gateway spec (`PROVIDER/MODEL`, `litellm:NAME`), else None."""
    if spec.startswith("litellm:"):
        return spec.removeprefix("litellm:").strip() or None
    provider, sep, model = spec.partition("/")
    if sep and provider and model and ":" not in provider and " " not in spec:
        return spec
    return None


def _gateway_factory(
    name: str, api_base: str | None, ledger: CostLedger | None, prices: PriceTable
) -> ModelFactory:
    from loopwright.models._gateway import GatewaySettings, LiteLLMGateway, ProviderLimits

    settings = GatewaySettings(api_base=api_base)
    limits = ProviderLimits(settings.max_concurrency)

    def make(seed: int) -> ChatModel:
        return LiteLLMGateway(
            name, settings, ledger=ledger, prices=prices, limits=limits, seed=seed
        )

    return make


def _sim_factory(benchmark: Benchmark | None, options: SimOptions) -> ModelFactory:
    if benchmark is None:
        raise ConfigError(
            "the sim model needs the benchmark it runs on",
            got="model 'sim' with no benchmark",
            fix="pass benchmark= (the benchmark the model runs on)",
        )
    from loopwright.models._sim import SimModel

    bench = benchmark
    params = options.params()

    def make(seed: int) -> ChatModel:
        return SimModel(bench, seed, params, latency_s=options.latency_s)

    return make


def _scripted_factory(path: str) -> ModelFactory:
    if not path:
        raise ConfigError(
            "the scripted model needs a script file",
            got="scripted:",
            fix="write scripted:PATH, e.g. scripted:tests/script.yaml",
        )
    from loopwright.models._script_file import load_script_file

    script = load_script_file(Path(path))

    def make(seed: int) -> ChatModel:
        del seed  # a script is deterministic; every run replays it from the start
        return script.model()

    return make
