"""The search side of reflection: a generation's individuals as reflection `Candidate`s, the
vocabulary of operators and roles a report may use, and the reflector a config asks for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.models import ChatModel, CostLedger, is_offline_spec, meta_chat_model
from loopwright.records import CycleRecord, load_record
from loopwright.reflection import (
    AgentReflector,
    Candidate,
    ModelReflector,
    OfflineReflector,
    Reflector,
    Vocabulary,
)
from loopwright.search._config import EvolveConfig
from loopwright.search._individual import Individual
from loopwright.search.mutations._core import MUTATIONS
from loopwright.search.mutations._roles import ROLES

__all__ = [
    "OFFLINE_META",
    "is_offline_meta",
    "make_reflector",
    "meta_model",
    "meta_spec",
    "reflection_candidates",
    "vocabulary",
]

OFFLINE_META = "offline"


def vocabulary() -> Vocabulary:
    """Every registered mutation operator plus "crossover", and the role library's roles."""
    return Vocabulary(operators=(*MUTATIONS.names(), "crossover"), roles=tuple(sorted(ROLES)))


def reflection_candidates(
    population: Sequence[Individual], run_dir: Path
) -> tuple[list[Candidate], int]:
    """The population as Candidates with their TRAINING records (holdout never reaches
    reflection), and how many records could not be read (skipped)."""
    out, unreadable = [], 0
    for ind in population:
        records: list[CycleRecord] = []
        dirs: list[Path] = []
        for result in ind.results:
            if result.split != "train":
                continue
            path = run_dir / result.record_path
            try:
                records.append(load_record(path))
            except ConfigError:
                unreadable += 1
                continue
            dirs.append(path if path.is_dir() else path.parent)
        out.append(
            Candidate(
                id=ind.id,
                workflow=ind.workflow,
                records=tuple(records),
                operator=ind.lineage.operator,
                parents=ind.lineage.parents,
                run_dirs=tuple(dirs),
            )
        )
    return out, unreadable


def meta_spec(config: EvolveConfig) -> str:
    """The meta model's spec: `reflection.meta_model`, else the `meta` role of the run's
    models (`--meta-model`), else the run's model."""
    return config.reflection.meta_model or config.choice.meta_spec


def is_offline_meta(spec: str) -> bool:
    """True for `offline` and for the sim (`sim`, `sim?...`): the offline rules reflect."""
    return is_offline_spec(spec)


def meta_model(config: EvolveConfig, ledger: CostLedger | None = None) -> ChatModel | None:
    """The meta model instance (seeded with the run seed, on the run's api_base, its gateway
    calls written to `ledger`), or None for the offline path. ConfigError for an unknown
    spec (from `model_factory`)."""
    spec = meta_spec(config)
    if is_offline_meta(spec):
        return None
    return meta_chat_model(
        spec, api_base=config.api_base, ledger=ledger, seed=config.seed,
        prices=config.models.price_table(),
    )  # fmt: skip


def make_reflector(config: EvolveConfig, ledger: CostLedger | None = None) -> Reflector | None:
    """The reflector `config` asks for: None when it does not reflect (`config.reflects`:
    reflection off, or unset with the random strategy); the offline rules for `sim`/`offline`;
    else the AgentReflector (`reflection.reflector: agent`) or a ModelReflector on the meta
    model."""
    settings = config.reflection
    if not config.reflects:
        return None
    model = meta_model(config, ledger)
    if model is None:
        return OfflineReflector(vocabulary(), digest_max_chars=settings.digest_max_chars)
    if settings.reflector == "agent":
        return AgentReflector(
            model, vocabulary(), max_turns=settings.agent_max_turns,
            max_retries=settings.max_retries, digest_max_chars=settings.digest_max_chars,
        )  # fmt: skip
    return ModelReflector(
        model,
        vocabulary(),
        max_retries=settings.max_retries,
        digest_max_chars=settings.digest_max_chars,
    )
