"""The sim as families of landscapes: `sim:SEED` draws its sensitivities from SEED.

Different real models reward different workflows: one gains much from study notes, another
loses the thread in a long context; one repairs well from failing tests, another barely. A
landscape is one draw of every sensitivity in `SimParams` from fixed ranges (`RANGES` below,
docs/sim-model.md "Landscapes"). The ranges and the draw were fixed and committed before any
search was measured on the family; changing either changes every landscape, so it is versioned
(`LANDSCAPE_FAMILY`) and stated in every bench output.

Two families. `sim-landscapes-1` (`sim:SEED`, `sim:SEED?family=1`): every structure only helps
or is neutral, except tests first and long contexts. `sim-landscapes-2` (`sim:SEED?family=2`):
each structure has a drawn upside and a drawn downside (an editing review that breaks a correct
file, notes and lessons that mislead, repairs that break imports or existing behaviour, tests
first that distract, wider per-role token costs), so on some landscapes a structure hurts.
Family 1's ranges and draws are unchanged by family 2 (its own RNG stream and table).

Deterministic: the same seed gives the same parameters in every process and version of Python
(`random.Random(str)` is seeded from the string's bytes). Plain `sim` (no seed) is `SimParams()`,
not a member of the family.
"""

from __future__ import annotations

import random

from loopwright.models._sim_policy import SimParams
from loopwright.tasks import FailureKind

__all__ = [
    "LANDSCAPE_FAMILIES",
    "LANDSCAPE_FAMILY",
    "LANDSCAPE_FAMILY_2",
    "RANGES",
    "RANGES_2",
    "draw_landscape",
]

LANDSCAPE_FAMILY = "sim-landscapes-1"
LANDSCAPE_FAMILY_2 = "sim-landscapes-2"

RANGES: dict[str, str] = {
    "base_error[1]": "U(0.35, 0.80)",
    "base_error[2]": "base_error[1] + U(0.10, 0.35), at most 0.97",
    "base_error[3]": "base_error[2] + U(0.00, 0.10), at most 0.98",
    "notes_by_level[1..3]": "U(0.35, 1.00) each (1.0: notes worth nothing on that level)",
    "guidance_factor": "U(0.50, 0.95)",
    "guidance_by_kind[kind]": "U(0.30, 1.00) for each of the six failure kinds",
    "repair[1]": "U(0.10, 0.85)",
    "repair[2]": "repair[1] * U(0.30, 1.00)",
    "repair[3]": "repair[2] * U(0.50, 1.00)",
    "review[1..3]": "0 with probability 1/2, else U(0.20, 0.70) each",
    "tests_first": "U(0.60, 1.40) (below 1: tests first help; above: they distract)",
    "context_budget": "one of 600, 1200, 2000, 3000 tokens",
    "context_penalty": "0 with probability 1/2, else U(0.05, 0.35) per 1,000 tokens over budget",
    "extra_reads[builder|researcher|reviewer]": "0 to 4 each (token cost only)",
}
"""The range each parameter is drawn from, in the order drawn (the documentation of
`draw_landscape`; docs/sim-model.md prints it)."""


def draw_landscape(seed: int, family: int = 1) -> SimParams:
    """The parameters of landscape `seed` (an integer >= 0) of `family` (a key of LANDSCAPE_FAMILIES),
    drawn from that family's ranges (RANGES, RANGES_2) in order."""
    if seed < 0:
        raise ValueError(f"a landscape seed is >= 0, got {seed}")
    if family not in LANDSCAPE_FAMILIES:
        raise ValueError(f"a landscape family is one of {sorted(LANDSCAPE_FAMILIES)}, got {family}")
    if family == 2:
        return _draw_family_2(seed)
    rng = random.Random(f"{LANDSCAPE_FAMILY}:{seed}")
    base_error = _base_error(rng)
    notes = {level: rng.uniform(0.35, 1.0) for level in (1, 2, 3)}
    guidance = rng.uniform(0.50, 0.95)
    by_kind = {kind.value: rng.uniform(0.30, 1.0) for kind in FailureKind}
    repair = _repair(rng, 0.10)
    reviews = rng.random() < 0.5
    review = {level: rng.uniform(0.20, 0.70) if reviews else 0.0 for level in (1, 2, 3)}
    tests_first = rng.uniform(0.60, 1.40)
    budget = rng.choice((600, 1200, 2000, 3000))
    penalised = rng.random() < 0.5
    penalty = rng.uniform(0.05, 0.35) if penalised else 0.0
    extra = {role: rng.randint(0, 4) for role in ("builder", "researcher", "reviewer")}
    return SimParams(
        base_error=base_error,
        notes_factor=notes[1],
        guidance_factor=guidance,
        repair=repair,
        notes_by_level=notes,
        guidance_by_kind=by_kind,
        review=review,
        tests_first=tests_first,
        context_budget=budget,
        context_penalty=penalty,
        extra_reads=extra,
    )


RANGES_2: dict[str, str] = {
    "base_error[1]": "U(0.35, 0.80)",
    "base_error[2]": "base_error[1] + U(0.10, 0.35), at most 0.97",
    "base_error[3]": "base_error[2] + U(0.00, 0.10), at most 0.98",
    "notes_by_level[1..3]": "U(0.40, 1.50) each (above 1: notes naming the files mislead)",
    "guidance_factor": "U(0.50, 1.00)",
    "guidance_by_kind[kind]": "U(0.30, 1.40) for each of the six kinds (above 1: lessons mislead)",
    "repair[1]": "U(0.05, 0.85)",
    "repair[2]": "repair[1] * U(0.30, 1.00)",
    "repair[3]": "repair[2] * U(0.50, 1.00)",
    "repair_regress[1..3]": "0 with probability 1/3, else U(0.20, 0.90) each",
    "review[1..3]": "0 with probability 1/2, else U(0.20, 0.70) each",
    "review_break[1..3]": "0 with probability 1/3, else U(0.10, 0.60) each",
    "tests_first": "U(0.50, 1.60) (below 1: tests first help; above: they distract)",
    "context_budget": "one of 600, 1200, 2000, 3000 tokens",
    "context_penalty": "0 with probability 1/3, else U(0.05, 0.50) per 1,000 tokens over budget",
    "extra_reads[builder|researcher|reviewer]": "0 to 8 each (token cost only)",
}
"""Family 2's ranges, in the order drawn (docs/sim-model.md, "Family 2")."""


def _base_error(rng: random.Random) -> dict[int, float]:
    """base_error[1..3] as both families draw it (RANGES): each level adds to the one below."""
    e1 = rng.uniform(0.35, 0.80)
    e2 = min(0.97, e1 + rng.uniform(0.10, 0.35))
    return {1: e1, 2: e2, 3: min(0.98, e2 + rng.uniform(0.0, 0.10))}


def _repair(rng: random.Random, low: float) -> dict[int, float]:
    """repair[1..3]: U(low, 0.85), then each level a share of the one below (RANGES)."""
    r1 = rng.uniform(low, 0.85)
    r2 = r1 * rng.uniform(0.30, 1.0)
    return {1: r1, 2: r2, 3: r2 * rng.uniform(0.50, 1.0)}


def _levels(rng: random.Random, p_zero: float, low: float, high: float) -> dict[int, float]:
    """0 on every level with probability `p_zero`, else U(low, high) per level."""
    on = rng.random() >= p_zero
    return {level: rng.uniform(low, high) if on else 0.0 for level in (1, 2, 3)}


def _draw_family_2(seed: int) -> SimParams:
    rng = random.Random(f"{LANDSCAPE_FAMILY_2}:{seed}")
    base_error = _base_error(rng)
    notes = {level: rng.uniform(0.40, 1.50) for level in (1, 2, 3)}
    guidance = rng.uniform(0.50, 1.0)
    by_kind = {kind.value: rng.uniform(0.30, 1.40) for kind in FailureKind}
    repair = _repair(rng, 0.05)
    regress = _levels(rng, 1 / 3, 0.20, 0.90)
    review = _levels(rng, 1 / 2, 0.20, 0.70)
    review_break = _levels(rng, 1 / 3, 0.10, 0.60)
    tests_first = rng.uniform(0.50, 1.60)
    budget = rng.choice((600, 1200, 2000, 3000))
    penalty = rng.uniform(0.05, 0.50) if rng.random() >= 1 / 3 else 0.0
    extra = {role: rng.randint(0, 8) for role in ("builder", "researcher", "reviewer")}
    return SimParams(
        base_error=base_error,
        notes_factor=min(1.0, notes[1]),
        guidance_factor=guidance,
        repair=repair,
        notes_by_level=notes,
        guidance_by_kind=by_kind,
        review=review,
        tests_first=tests_first,
        context_budget=budget,
        context_penalty=penalty,
        extra_reads=extra,
        review_break=review_break,
        repair_regress=regress,
    )


LANDSCAPE_FAMILIES: dict[int, str] = {1: LANDSCAPE_FAMILY, 2: LANDSCAPE_FAMILY_2}
"""The landscape families by number (`sim:SEED?family=N`) and their versioned names."""
