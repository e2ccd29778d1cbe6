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
    "BREAKING_KINDS",
    "FAILURE_PATTERNS",
    "GOLD",
    "GUIDANCE_KEYWORDS",
    "REVIEW_CUES",
    "TESTS_FIRST_CUES",
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


# A builder-role episode whose prompt asks it to review a change already made (case-insensitive
# substrings). In a landscape whose `review` table is above 0 it may then find and fix its own
# earlier flawed work without failing test output; in the default landscape this does nothing.
REVIEW_CUES: tuple[str, ...] = ("review", "check that change", "check the change")

# A context that puts tests before the code: the prompt or notes ask for the instruction to be
# turned into tests first, or say such tests exist. Scales a fresh attempt's error by
# `tests_first` (1.0 in the default landscape: no effect).
TESTS_FIRST_CUES: tuple[str, ...] = (
    "tests first",
    "test first",
    "into tests",
    "before any code",
    "added new tests",
)


# The kinds of mistake a hurried repair makes in a landscape with `repair_regress` > 0: it
# breaks an import or existing behaviour while fixing what the feedback showed.
BREAKING_KINDS: frozenset[FailureKind] = frozenset(
    {FailureKind.IMPORT_ERROR, FailureKind.BROKEN_REGRESSION}
)


def _frozen(values: Mapping[int, float]) -> Mapping[int, float]:
    return MappingProxyType(dict(values))


def _cued(text: str, cues: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(c in lowered for c in cues)


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

    The rest are a landscape's other sensitivities (models/_sim_landscape.py draws them for
    `sim:SEED`); their defaults change nothing, so `SimParams()` is the plain `sim`:
    - `notes_by_level[level]`: the notes factor on tasks of that level (empty: `notes_factor`).
    - `guidance_by_kind[kind]`: the guidance weight of that failure kind (missing: the
      `guidance_factor`).
    - `review[level]`: probability that a builder-role episode whose prompt asks for a review
      (REVIEW_CUES) finds and fixes its earlier flawed work with no failing feedback.
    - `tests_first`: a fresh attempt's error is multiplied by this when the context puts tests
      first (TESTS_FIRST_CUES); above 1 the model is distracted by them.
    - `context_budget`, `context_penalty`: per 1,000 estimated tokens (characters / 4) of
      context (prompt, notes and files read) beyond the budget, a fresh attempt's error grows
      by `context_penalty` times itself (capped at 1): long contexts hurt.
    - `extra_reads[role]`: extra turns an episode of that role spends re-reading the files it
      has read (tokens only: no decision changes), so each role costs differently.

    Downsides (family `sim-landscapes-2`; their defaults are neutral and draw nothing):
    - `review_break[level]`: probability that a review episode (as for `review`) breaks the
      gold this model wrote earlier in the run, writing a flawed variant instead.
    - `repair_regress[level]`: the share of a failed repair (a relapse) that writes a variant
      of a breaking kind (BREAKING_KINDS: a hurried fix breaks an import or existing
      behaviour) when the task has one.
    - `notes_by_level` and `guidance_by_kind` may exceed 1 (up to 2): notes naming the files,
      or guidance against a kind, then raise the error (notes or lessons that mislead).
    """

    base_error: Mapping[int, float] = field(
        default_factory=lambda: _frozen({1: 0.6, 2: 0.9, 3: 0.95})
    )
    notes_factor: float = 0.7
    guidance_factor: float = 0.7
    repair: Mapping[int, float] = field(default_factory=lambda: _frozen({1: 0.6, 2: 0.4, 3: 0.3}))
    notes_by_level: Mapping[int, float] = field(default_factory=lambda: _frozen({}))
    guidance_by_kind: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    review: Mapping[int, float] = field(default_factory=lambda: _frozen({1: 0.0}))
    tests_first: float = 1.0
    context_budget: int = 0
    context_penalty: float = 0.0
    extra_reads: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    review_break: Mapping[int, float] = field(default_factory=lambda: _frozen({1: 0.0}))
    repair_regress: Mapping[int, float] = field(default_factory=lambda: _frozen({1: 0.0}))

    def __post_init__(self) -> None:
        for name in ("base_error", "repair", "review", "review_break", "repair_regress"):
            table = getattr(self, name)
            if not table or any(not 0.0 <= p <= 1.0 for p in table.values()):
                raise ValueError(f"SimParams.{name} must map levels to probabilities in [0, 1]")
            object.__setattr__(self, name, _frozen(table))
        for name in ("notes_by_level", "guidance_by_kind"):
            table = getattr(self, name)
            if any(not 0.0 <= p <= 2.0 for p in table.values()):
                raise ValueError(f"SimParams.{name} must map to factors in [0, 2]")
            object.__setattr__(self, name, MappingProxyType(dict(table)))
        for name in ("notes_factor", "guidance_factor"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"SimParams.{name} must be in [0, 1]")
        if not (0.0 < self.tests_first <= 2.0 and 0.0 <= self.context_penalty <= 1.0):
            raise ValueError("SimParams.tests_first must be in (0, 2], context_penalty in [0, 1]")
        if self.context_budget < 0 or any(n < 0 for n in self.extra_reads.values()):
            raise ValueError("SimParams.context_budget and extra_reads must be >= 0")
        object.__setattr__(self, "extra_reads", MappingProxyType(dict(self.extra_reads)))

    def notes_for(self, level: int) -> float:
        """The notes factor on tasks of `level`."""
        if not self.notes_by_level:
            return self.notes_factor
        return self.for_level(self.notes_by_level, level)

    def error_scale(self, guidance: str, context_chars: int) -> float:
        """What the tests-first cue and the context's length multiply a fresh error by."""
        scale = self.tests_first if _cued(guidance, TESTS_FIRST_CUES) else 1.0
        excess = max(0, context_chars // 4 - self.context_budget)
        return scale * (1.0 + self.context_penalty * excess / 1000.0)

    def for_level(self, table: Mapping[int, float], level: int) -> float:
        """`table[level]`, or the entry of the nearest level the table has."""
        nearest = min(table, key=lambda known: (abs(known - level), -known))
        return table[nearest]


@dataclass(frozen=True, slots=True)
class Context:
    """What a builder's context holds, as the decision model sees it.

    `guidance`: the prompt plus the notes it read. `notes_coverage`: the fraction of the gold's
    changed files named in that text. `failing_feedback`: the prompt carries failing test output.
    `previous`: the variant this model last wrote for the task in this run (None: nothing).
    `context_chars`: the length of everything in context (prompt, notes, files read);
    `review`: the prompt asks for a review of the change (REVIEW_CUES)."""

    guidance: str
    notes_coverage: float
    failing_feedback: bool
    previous: str | None
    context_chars: int = 0
    review: bool = False


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
    flawed: Sequence[FlawedVariant], guided: frozenset[FailureKind], params: SimParams
) -> list[float]:
    by_kind, g = params.guidance_by_kind, params.guidance_factor
    return [by_kind.get(v.kind.value, g) if v.kind in guided else 1.0 for v in flawed]


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
       that its earlier work is wrong. Except when its prompt asks for a review (`ctx.review`):
       if the earlier work was flawed and `review[level]` > 0 (never in the default
       landscape), it draws twice and writes the gold with probability `review[level]`; if it
       was the gold and `review_break[level]` > 0 (family 2 only), it draws twice and with that
       probability breaks it, writing a flawed variant picked as in 2.
    2. Failing feedback after it wrote a flawed variant: with probability repair[level] the gold,
       else a flawed variant (the same or another) drawn by kind weights (two draws); a share
       `repair_regress[level]` of those relapses (0 by default) picks among the task's
       variants of BREAKING_KINDS instead, when it has any (no extra draw).
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
        return _revisit(level, flawed, ctx, params, rng)
    u, v = rng.random(), rng.random()
    weights = _weights(flawed, guided_kinds(ctx.guidance), params)
    if ctx.failing_feedback and ctx.previous is not None:
        p_fail = 1.0 - params.for_level(params.repair, level)
        if u >= p_fail:
            return Choice(GOLD, GOLD, "repair", p_fail)
        breaking = [i for i, f in enumerate(flawed) if f.kind in BREAKING_KINDS]
        if breaking and u < p_fail * params.for_level(params.repair_regress, level):
            flawed = [flawed[i] for i in breaking]
            weights = [weights[i] for i in breaking]
        chosen = _pick(flawed, weights, v)
        return Choice(chosen.name, chosen.kind.value, "relapse", p_fail)
    p = params.for_level(params.base_error, level)
    p *= 1.0 - (1.0 - params.notes_for(level)) * ctx.notes_coverage
    p = min(1.0, p * params.error_scale(ctx.guidance, ctx.context_chars))
    masses = [p * w / len(flawed) for w in weights]
    p_error = sum(masses)
    if p_error > 1.0:  # guidance weights above 1 (family 2) cannot push the error past 1
        masses, p_error = [m / p_error for m in masses], 1.0
    if u >= p_error:
        return Choice(GOLD, GOLD, "fresh", p_error)
    chosen = _pick(flawed, masses, v)
    return Choice(chosen.name, chosen.kind.value, "fresh", p_error)


def _revisit(
    level: int,
    flawed: Sequence[FlawedVariant],
    ctx: Context,
    params: SimParams,
    rng: random.Random,
) -> Choice:
    """Step 1 of `choose_variant`: keep what it wrote earlier, unless a review fixes a flaw
    (`review`) or breaks the gold (`review_break`)."""
    assert ctx.previous is not None
    kinds = {v.name: v.kind.value for v in flawed}
    keep = Choice(ctx.previous, kinds.get(ctx.previous, GOLD), "keep", 0.0)
    if not ctx.review:
        return keep
    if ctx.previous == GOLD:
        p_break = params.for_level(params.review_break, level)
        if p_break <= 0.0:
            return keep
        u, v = rng.random(), rng.random()
        if u >= p_break:
            return keep
        chosen = _pick(flawed, _weights(flawed, guided_kinds(ctx.guidance), params), v)
        return Choice(chosen.name, chosen.kind.value, "review-break", p_break)
    p_review = params.for_level(params.review, level)
    if p_review <= 0.0:
        return keep
    u, _ = rng.random(), rng.random()
    return Choice(GOLD, GOLD, "review", 1.0 - p_review) if u < p_review else keep
