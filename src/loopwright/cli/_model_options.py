"""The model options every command that runs models takes (`run`, `evolve`, `outer-loop
calibrate`, `research run`, `models`): `--model`, `--meta-model`, `--tier`, `--config` and
`--api-base`, declared once here and turned into a `ModelChoice` by `choice_of`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loopwright.models import ModelChoice, model_choice

__all__ = ["ApiBase", "MetaModel", "Model", "ModelsFile", "Tiers", "choice_of"]

Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="sim (offline simulated model), scripted:FILE, or a LiteLLM model name "
        "(anthropic/claude-sonnet-4-5, openai/NAME, litellm:NAME); see docs/models.md. "
        "Default: the config's agent role, else sim.",
    ),
]
MetaModel = Annotated[
    str | None,
    typer.Option(
        "--meta-model",
        help="The model of the meta roles (role meta): reflection, prompt mutation, crossover, "
        "research phases, LLM-judge gates. Default: the config's meta role, else --model.",
    ),
]
Tiers = Annotated[
    list[str] | None,
    typer.Option("--tier", help="Map a tier or role to a model: small=MODEL (repeatable)."),
]
ModelsFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="A models config file (YAML): tiers and roles; for evolve, its evolve: section "
        "holds the run's settings, flags override them (docs/evolve.md, The settings file).",
    ),
]
ApiBase = Annotated[
    str | None,
    typer.Option(
        "--api-base",
        help="Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp), "
        "e.g. http://localhost:8000/v1; use with --model openai/NAME.",
    ),
]


def choice_of(
    model: str | None,
    meta_model: str | None,
    tiers: list[str] | None,
    models_file: Path | None,
    api_base: str | None,
) -> ModelChoice:
    """The ModelChoice of the options (see `models.model_choice`); ConfigError when bad."""
    return model_choice(
        model, meta_model=meta_model, tiers=tiers or [], config_file=models_file, api_base=api_base
    )
