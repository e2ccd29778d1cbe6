"""The manifest: which loops, tiers, briefs and repetitions an A/B recording measures.

```yaml
schema_version: 1
loops: all                  # every registered loop, or an explicit list of them all
tiers:                      # each tier bound to one explicit provider/model, for every loop
  small: openai/gpt-4o-mini
  medium: anthropic/claude-sonnet-4-5
  large: anthropic/claude-opus-4-1
briefs: all                 # every brief of the suite, or a list of brief ids
repetitions: 3
seed: 0
```

An explicit loop list is checked against the live loop registry in both directions: a name
that is not registered (a typo that would shrink the comparison) and a registered loop left
out (a scoreboard that looks complete while a shipped loop went unmeasured) are both refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright.errors import ConfigError
from loopwright.evaluation import run_seed
from loopwright.harness._briefs import Brief, BriefSuite, Complexity
from loopwright.models import TIERS, check_provider, parse_tier_override, provider_of

__all__ = [
    "BUNDLED_MANIFEST",
    "Cell",
    "Manifest",
    "Plan",
    "load_manifest",
    "make_plan",
]

BUNDLED_MANIFEST = Path(__file__).with_name("manifest.yaml")
_DOC = "docs/ab.md"

Tier = Literal["small", "medium", "large"]


class Manifest(BaseModel):
    """The manifest file as written (before `all` is expanded and overrides applied)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    loops: Literal["all"] | list[str] = "all"
    tiers: dict[Tier, str] = Field(min_length=1)
    briefs: Literal["all"] | list[str] = "all"
    repetitions: int = Field(default=3, ge=1)
    seed: int = 0


@dataclass(frozen=True, slots=True)
class Cell:
    """One run of the matrix: a (loop, tier, brief, repetition), with the tier's bound model
    and the run's seed (shared by every loop on the same brief, tier and repetition)."""

    loop: str
    tier: str
    model: str
    brief: str
    complexity: Complexity
    repetition: int
    seed: int

    @property
    def id(self) -> str:
        """A file-name-safe id, unique in the plan: `brief.tier.loop.rK`."""
        loop = self.loop.replace(":", "-").replace("/", "-")
        return f"{self.brief}.{self.tier}.{loop}.r{self.repetition}"

    @property
    def provider(self) -> str:
        return provider_of(self.model)


@dataclass(frozen=True, slots=True)
class Plan:
    """The resolved manifest: loops, tier bindings and briefs in order, and its digest."""

    loops: tuple[str, ...]
    tiers: tuple[tuple[str, str], ...]
    briefs: tuple[Brief, ...]
    repetitions: int
    seed: int
    source: str

    @property
    def digest(self) -> str:
        """sha256 of the resolved manifest's canonical JSON: what the scoreboard stamps."""
        text = json.dumps(self.describe(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def describe(self) -> dict[str, object]:
        """The resolved manifest as plain data (what the digest covers)."""
        return {
            "schema_version": 1,
            "loops": list(self.loops),
            "tiers": dict(self.tiers),
            "briefs": [b.id for b in self.briefs],
            "repetitions": self.repetitions,
            "seed": self.seed,
        }

    @property
    def run_count(self) -> int:
        return len(self.loops) * len(self.tiers) * len(self.briefs) * self.repetitions

    def cells(self) -> Iterator[Cell]:
        """Every cell, repetition-major, then brief, tier and loop: the loops of one (brief,
        tier, repetition) run back to back, so drift over a long recording hits them alike."""
        for rep in range(self.repetitions):
            for brief in self.briefs:
                for tier, model in self.tiers:
                    seed = run_seed(self.seed, f"{brief.id}/{tier}", rep)
                    for loop in self.loops:
                        yield Cell(loop, tier, model, brief.id, brief.complexity, rep, seed)


def load_manifest(path: Path | None) -> tuple[Manifest, str]:
    """The manifest at `path` (None: the bundled default) and where it came from. Raises
    ConfigError when the file is missing (no silent default), unparsable or invalid."""
    source = path or BUNDLED_MANIFEST
    if not source.is_file():
        raise ConfigError(f"manifest {source} does not exist", fix=f"see {_DOC}")
    try:
        raw = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
        return Manifest.model_validate(raw), str(source if path else "bundled")
    except yaml.YAMLError as exc:
        raise ConfigError(f"manifest {source} cannot be parsed", got=str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError.not_utf8(
            f"manifest {source}", exc, fix=f"pass a YAML manifest saved as UTF-8 (see {_DOC})"
        ) from None
    except ValidationError as exc:
        raise ConfigError.invalid(f"manifest {source}", exc, fix=f"see {_DOC}") from None


def make_plan(
    manifest: Manifest,
    *,
    registered: Sequence[str],
    suite: BriefSuite,
    tier_overrides: Sequence[str] = (),
    source: str = "bundled",
) -> Plan:
    """Resolve `manifest` against the live loop registry (`registered`) and the brief suite.

    Raises ConfigError naming every unknown loop and every registered loop left out (both in
    one message), a duplicate, an unknown brief, or a tier bound to a name without a
    provider prefix. `tier_overrides` are `TIER=provider/model` strings applied first."""
    loops = _loops(manifest, registered)
    tiers = _tiers(manifest, tier_overrides)
    ids = suite.names() if manifest.briefs == "all" else manifest.briefs
    _no_duplicates("briefs", ids)
    briefs = tuple(suite.get(b) for b in ids)
    return Plan(loops, tiers, briefs, manifest.repetitions, manifest.seed, source)


def _loops(manifest: Manifest, registered: Sequence[str]) -> tuple[str, ...]:
    if manifest.loops == "all":
        return tuple(sorted(registered))
    _no_duplicates("loops", manifest.loops)
    unknown = [n for n in manifest.loops if n not in registered]
    omitted = [n for n in sorted(registered) if n not in manifest.loops]
    problems = []
    if unknown:
        problems.append(f"names loops that are not registered: {', '.join(unknown)}")
    if omitted:
        problems.append(f"leaves out registered loops: {', '.join(omitted)}")
    if problems:
        raise ConfigError(
            "the manifest " + "; and ".join(problems),
            got=f"loops: {', '.join(manifest.loops)}",
            fix=f"list exactly the registered loops ({', '.join(sorted(registered))}), or "
            "write `loops: all`: an unknown name would shrink the comparison and a left-out "
            "loop would go unmeasured",
        )
    return tuple(manifest.loops)


def _tiers(manifest: Manifest, overrides: Sequence[str]) -> tuple[tuple[str, str], ...]:
    bound: dict[str, str] = {str(k): v for k, v in manifest.tiers.items()}
    for text in overrides:
        key, name = parse_tier_override(text)
        if key not in TIERS:
            raise ConfigError(f"--tier {text}: {key!r} is a role; the A/B harness binds tiers")
        bound[key] = name
    for tier, name in bound.items():
        provider, sep, model = name.partition("/")
        if not (sep and provider and model) or any(c.isspace() for c in name):
            raise ConfigError(
                f"tier {tier} is bound to {name!r}, which names no provider",
                fix=f"bind each tier to an explicit provider/model, e.g. {tier}: openai/gpt-4o-mini",
            )
        if not name.startswith("litellm:"):
            check_provider(name)  # every call of the tier would fail: refuse before the run
    return tuple((t, bound[t]) for t in TIERS if t in bound)


def _no_duplicates(what: str, names: Sequence[str]) -> None:
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"the manifest lists {what} more than once: {', '.join(dupes)}")
