"""`loopwright models`: the configured tiers and roles, what each role of a run calls, which
provider keys are set, and which external agent CLIs (`loop: external:NAME`) are installed.

Key values are never printed, logged or returned: only the names of the variables and whether
each is set.
"""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from loopwright.cli._app import app
from loopwright.cli._model_options import ApiBase, MetaModel, Model, ModelsFile, Tiers, choice_of
from loopwright.models import ROLES, TIERS, ModelsConfig, resolve_model
from loopwright.runtime import EXTERNAL_AGENTS, ExternalSettings, resolve_executable

__all__ = ["PROVIDER_KEYS", "models"]

console = Console(highlight=False)

# The key variable LiteLLM reads for each common provider (names only).
PROVIDER_KEYS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "xai": "XAI_API_KEY",
    "azure": "AZURE_API_KEY",
}


@app.command("models")
def models(
    model: Model = None,
    meta_model: MetaModel = None,
    tier: Tiers = None,
    config: ModelsFile = None,
    api_base: ApiBase = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the configured model tiers and roles, what each role of a run will call with these
    model options (the same as `run`, `evolve` and `research run` take), which provider keys
    are set (names only), and which external agents are installed."""
    choice = choice_of(model, meta_model, tier, config, api_base)
    summary = _summary(choice.config)
    uses: dict[str, str | bool | None] = dict(choice.uses())
    summary["uses"] = uses
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    console.print(_mapping_table("tiers and roles", summary["models"]))
    where = f" (LiteLLM specs at {choice.api_base})" if choice.api_base else ""
    console.print(_uses_table(f"what each role calls{where}", uses))
    keys = summary["keys"]
    table = Table(title="provider keys (values never shown)", title_justify="left", box=None)
    for column in ("provider", "variable", "set"):
        table.add_column(column)
    for provider, variable in PROVIDER_KEYS.items():
        table.add_row(provider, variable, "yes" if keys[variable] else "no")
    console.print(table)
    console.print(_external_table(summary["external"]))


def _summary(config: ModelsConfig) -> dict[str, dict[str, str | bool | None]]:
    """Tiers and roles, key names with whether each is set, and each external agent's
    executable path (None when it is not installed)."""
    names: dict[str, str | bool | None] = {
        key: resolve_model(key, config, default="") or None for key in (*TIERS, *ROLES)
    }
    keys: dict[str, str | bool | None] = {
        variable: bool(os.environ.get(variable)) for variable in PROVIDER_KEYS.values()
    }
    environ = dict(os.environ)
    external: dict[str, str | bool | None] = {
        name: resolve_executable(EXTERNAL_AGENTS.get(name), ExternalSettings(), environ)[1]
        for name in EXTERNAL_AGENTS.names()
    }
    return {"models": names, "keys": keys, "external": external}


def _external_table(found: dict[str, str | bool | None]) -> Table:
    table = Table(title="external agents (loop: external:NAME)", title_justify="left", box=None)
    for column in ("agent", "executable", "install"):
        table.add_column(column)
    for name, path in found.items():
        adapter = EXTERNAL_AGENTS.get(name)
        table.add_row(name, str(path) if path else "- (not found)", adapter.install_hint)
    return table


def _uses_table(title: str, rows: dict[str, str | bool | None]) -> Table:
    table = Table(title=title, title_justify="left", box=None)
    table.add_column("role")
    table.add_column("model")
    for key, value in rows.items():
        table.add_row(key, str(value))
    return table


def _mapping_table(title: str, rows: dict[str, str | bool | None]) -> Table:
    table = Table(title=title, title_justify="left", box=None)
    table.add_column("tier/role")
    table.add_column("model")
    for key, value in rows.items():
        table.add_row(key, str(value) if value else "- (not configured)")
    return table
