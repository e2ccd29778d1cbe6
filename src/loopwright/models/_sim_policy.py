"""The sim's decision model: what a builder writes, given what its context holds.

Pure functions of (task facts, context, parameters, RNG); docs/sim-model.md explains every
number. Nothing here sees the workflow, a node id or the workspace: only text the model was
given (its prompt, the notes it read) and what it remembers writing earlier in the same run.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from loopwright.tasks import FailureKind, FlawedVariant

__all__ = [
    "FAILURE_PATTERNS",
    "GOLD",
    "GUIDANCE_KEYWORDS",
    "Choice",
    "Context",
    "SimParams",
    "choose_variant",
    "guided_kinds",
    "has_failing_feedback",
]

GOLD = "gold"

# Prompt guidance aimed at a failure kind: any of these phrases (case-insensitive substring) in
# the prompt or the notes the model read down-weights that kind's flawed variants.
GUIDANCE_KEYWORDS: Mapping[FailureKind, tuple[str, ...]] = MappingProxyType(
    {
        FailureKind.MISSED_EDGE_CASE: ("edge case", "boundary", "corner case", "empty input"),
        FailureKind.IMPORT_ERROR: ("import", "module name", "syntax error"),
        FailureKind.WRONG_SIGNATURE: ("exact name", "signature", "parameter name"),
        FailureKind.PARTIAL_FEATURE: ("every part", "complete", "all of the feature"),
        FailureKind.BROKEN_REGRESSION: (
            "existing behaviour",
            "existing behavior",
            "regression",
            "do not break",
        ),
        FailureKind.WRONG_LOGIC: ("verify", "check the result", "expected output"),
    }
)

# Evidence of failing test output (real feedback), not the prompt's "Feedback ..." heading:
# pytest's summary words and the run_tests tool's "exit code N" with N > 0. Case-sensitive.
FAILURE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bFAILED\b"),
    re.compile(r"\bERROR\b"),
    re.compile(r"\b\d+ (?:failed|errors?)\b"),
    re.compile(r"\bexit code [1-9]\d*\b"),
    re.compile(r"Traceback \(most recent call last\)"),
)


def _frozen(values: Mapping[int, float]) -> Mapping[int, float]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True, slots=True)
class SimParams:
    """The sim's parameters (defaults tuned on mini; see docs/sim-model.md).

    - `base_error[level]`: probability that a first attempt, with no notes and no guidance,
      writes a flawed variant.
    - `notes_factor`: the error probability is multiplied by this when the notes the builder
      has in context name every file the gold changes (linearly less for fewer files).
    - `guidance_factor`: the weight of a flawed variant whose failure kind the prompt or notes
      guide against (1.0 otherwise).
    - `repair[level]`: probability that a builder given failing-test feedback, after writing a
      flawed variant earlier in the run, writes the gold.
    """

    base_error: Mapping[int, float] = field(
        default_factory=lambda: _frozen({1: 0.6, 2: 0.9, 3: 0.95})
    )
    notes_factor: float = 0.7
    guidance_factor: float = 0.7
    repair: Mapping[int, float] = field(default_factory=lambda: _frozen({1: 0.6, 2: 0.4, 3: 0.3}))

    def __post_init__(self) -> None:
        for name in ("base_error", "repair"):
            table = getattr(self, name)
            if not table or any(not 0.0 <= p <= 1.0 for p in table.values()):
                raise ValueError(f"SimParams.{name} must map levels to probabilities in [0, 1]")
            object.__setattr__(self, name, _frozen(table))
        for name in ("notes_factor", "guidance_factor"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"SimParams.{name} must be in [0, 1]")

    def for_level(self, table: Mapping[int, float], level: int) -> float:
        """`table[level]`, or the entry of the nearest level the table has."""
        nearest = min(table, key=lambda known: (abs(known - level), -known))
        return table[nearest]


@dataclass(frozen=True, slots=True)
class Context:
    """What a builder's context holds, as the decision model sees it.

    `guidance`: the prompt plus the notes it read. `notes_coverage`: the fraction of the gold's
    changed files named in that text. `failing_feedback`: the prompt carries failing test output.
    `previous`: the variant this model last wrote for the task in this run (None: nothing)."""

    guidance: str
    notes_coverage: float
    failing_feedback: bool
    previous: str | None


@dataclass(frozen=True, slots=True)
class Choice:
    """A builder's decision: the variant to write ("gold" or a flawed name) and why."""

    variant: str
    kind: str  # "gold" or the flawed variant's failure kind
    reason: str  # "fresh", "repair", "relapse" or "keep"
    p_error: float  # the probability of writing a flawed variant that this decision faced


def has_failing_feedback(prompt: str) -> bool:
    """True when the prompt carries failing test output (see FAILURE_PATTERNS)."""
    return any(p.search(prompt) for p in FAILURE_PATTERNS)


def guided_kinds(text: str) -> frozenset[FailureKind]:
    """The failure kinds the text guides against (GUIDANCE_KEYWORDS, case-insensitive)."""
    lowered = text.lower()
    return frozenset(
        kind for kind, words in GUIDANCE_KEYWORDS.items() if any(w in lowered for w in words)
    )


def _weights(
    flawed: Sequence[FlawedVariant], guided: frozenset[FailureKind], g: float
) -> list[float]:
    return [g if v.kind in guided else 1.0 for v in flawed]


def _pick(flawed: Sequence[FlawedVariant], weights: Sequence[float], v: float) -> FlawedVariant:
    """The flawed variant an exponential race seeded by `v` picks: variant i draws an arrival
    time Exp(weights[i]) and the earliest wins, so i is picked with probability proportional to
    its weight. Lowering one variant's weight changes the pick only when that variant was the
    winner, which keeps workflows with different guidance on the same mistakes elsewhere."""
    race = random.Random(v)  # a float seed hashes the same in every process
    times = [-math.log(1.0 - race.random()) / w if w > 0 else math.inf for w in weights]
    return flawed[times.index(min(times))]


def choose_variant(
    level: int,
    flawed: Sequence[FlawedVariant],
    ctx: Context,
    params: SimParams,
    rng: random.Random,
) -> Choice:
    """Decide what a builder writes. Deterministic given the RNG state.

    1. It wrote something earlier in this run and the prompt carries no failing feedback, or
       what it wrote was the gold: it keeps it, writing nothing (no draw). Nothing tells it
       that its earlier work is wrong.
    2. Failing feedback after it wrote a flawed variant: with probability repair[level] the gold,
       else a flawed variant (the same or another) drawn by kind weights (two draws).
    3. Otherwise a fresh attempt (two draws): each flawed variant v has probability
       p * w(v) / n, where p = base_error[level] * (1 - (1 - notes_factor) * notes_coverage),
       n the number of flawed variants and w(v) = guidance_factor if the context guides against
       v's kind, else 1; the gold takes the rest. The first draw decides gold or flawed, the
       second seeds the race that picks the flawed variant (see `_pick`), so a better context
       that still errs makes the same mistake unless its guidance was aimed at that mistake.
    The draws come first and always in the same number, so runs with the same seed share their
    random numbers across workflows (common random numbers).
    """
    if not flawed:
        return Choice(GOLD, GOLD, "fresh", 0.0)
    if ctx.previous is not None and (ctx.previous == GOLD or not ctx.failing_feedback):
        kinds = {v.name: v.kind.value for v in flawed}
        return Choice(ctx.previous, kinds.get(ctx.previous, GOLD), "keep", 0.0)
    u, v = rng.random(), rng.random()
    weights = _weights(flawed, guided_kinds(ctx.guidance), params.guidance_factor)
    if ctx.failing_feedback and ctx.previous is not None:
        p_fail = 1.0 - params.for_level(params.repair, level)
        if u >= p_fail:
            return Choice(GOLD, GOLD, "repair", p_fail)
        chosen = _pick(flawed, weights, v)
        return Choice(chosen.name, chosen.kind.value, "relapse", p_fail)
    p = params.for_level(params.base_error, level)
    p *= 1.0 - (1.0 - params.notes_factor) * ctx.notes_coverage
    masses = [p * w / len(flawed) for w in weights]
    p_error = sum(masses)
    if u >= p_error:
        return Choice(GOLD, GOLD, "fresh", p_error)
    chosen = _pick(flawed, masses, v)
    return Choice(chosen.name, chosen.kind.value, "fresh", p_error)
