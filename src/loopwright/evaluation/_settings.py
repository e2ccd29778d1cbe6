"""Settings of an evaluation, and the seed of each run derived from them."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

from loopwright.models import ModelsConfig
from loopwright.runtime import EngineSettings

__all__ = ["EvalSettings", "run_seed"]


class EvalSettings(BaseModel):
    """How candidates are evaluated: the model spec, the sandbox, the base seed, repetitions.

    `model` is a model spec understood by `loopwright.models.model_factory` ("sim",
    "scripted:FILE"). `run_timeout_s` overrides every task's agent timeout when set. `engine`
    picks each agent node's loop (the user's settings file, written by `loopwright ab apply`;
    docs/ab.md); it is part of the settings, so runs under other engine settings never share
    a cache entry. `env_cache` is the directory of built task environments as given (None:
    `LOOPWRIGHT_ENV_CACHE`, else `~/.cache/loopwright/envs`); it is resolved where each run
    happens, so every Ray node builds or reuses environments in its own cache. Where the
    environments are is not part of any cache key. `models` (the tiers and roles the model
    factory routes by) and `api_base` (the OpenAI-compatible server of LiteLLM specs) are
    part of the cache key when set.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "sim"
    sandbox: str = "auto"
    seed: int = 0
    repetitions: int = Field(default=1, ge=1)
    run_timeout_s: float | None = Field(default=None, gt=0)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    env_cache: str | None = None
    models: ModelsConfig | None = None
    api_base: str | None = None


def run_seed(base_seed: int, task_id: str, repetition: int) -> int:
    """The seed of one (task, repetition) run: stable across processes and orderings.

    It does not depend on the workflow, so two workflows evaluated with the same base seed see
    the same random draws on the same task and repetition (common random numbers), which makes
    their difference less noisy.
    """
    digest = hashlib.sha256(f"{base_seed}:{task_id}:{repetition}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
