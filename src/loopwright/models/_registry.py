"""Model specs (`--model sim`, `--model scripted:FILE`) to factories of per-run model instances."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.models._types import ChatModel
from loopwright.tasks import Benchmark

__all__ = ["MODEL_SPECS", "ModelFactory", "model_factory"]

ModelFactory = Callable[[int], ChatModel]
"""Builds the model for one run from the run's seed. Called once per run: models with per-run
state (the sim, a list script) must not be shared between runs."""

MODEL_SPECS: tuple[str, ...] = ("sim", "scripted:FILE")
_LATER = "real providers (LiteLLM) arrive with a later issue"


def model_factory(spec: str, *, benchmark: Benchmark | None) -> ModelFactory:
    """The factory for a model spec. Known specs:

    - "sim": `SimModel(benchmark, seed)` per run; needs the benchmark the run is on.
    - "scripted:PATH": a fresh `ScriptedModel` from the script file at PATH per run (the file is
      read and validated once, here).

    Raises ConfigError (listing the known specs) for an unknown spec, "sim" without a benchmark,
    or a missing or malformed script file. The factory itself never raises for a valid spec.
    """
    spec = spec.strip()
    if spec == "sim":
        return _sim_factory(benchmark)
    if spec.startswith("scripted:"):
        return _scripted_factory(spec.removeprefix("scripted:"))
    raise ConfigError(
        f"unknown model {spec!r}",
        got=spec,
        fix=f"use one of: {', '.join(MODEL_SPECS)} ({_LATER})",
    )


def _sim_factory(benchmark: Benchmark | None) -> ModelFactory:
    if benchmark is None:
        raise ConfigError(
            "the sim model needs the benchmark it runs on",
            got="model 'sim' with no benchmark",
            fix="pass benchmark= (the CLI passes the --bench benchmark)",
        )
    from loopwright.models._sim import SimModel

    bench = benchmark

    def make(seed: int) -> ChatModel:
        return SimModel(bench, seed)

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
