"""The sim as a family of landscapes: `sim:SEED` draws its sensitivities from SEED.

Different real models reward different workflows: one gains much from study notes, another
loses the thread in a long context; one repairs well from failing tests, another barely. A
landscape is one draw of every sensitivity in `SimParams` from fixed ranges (`RANGES` below,
docs/sim-model.md "Landscapes"). The ranges and the draw were fixed and committed before any
search was measured on the family; changing either changes every landscape, so it is versioned
(`LANDSCAPE_FAMILY`) and stated in every bench output.

Deterministic: the same seed gives the same parameters in every process and version of Python
(`random.Random(str)` is seeded from the string's bytes). Plain `sim` (no seed) is `SimParams()`,
not a member of the family.
"""

from __future__ import annotations

import random

from loopwright.models._sim_policy import SimParams
from loopwright.tasks import FailureKind

__all__ = ["LANDSCAPE_FAMILY", "RANGES", "draw_landscape"]

LANDSCAPE_FAMILY = "sim-landscapes-1"

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


def draw_landscape(seed: int) -> SimParams:
    """The parameters of landscape `seed` (an integer >= 0), drawn from RANGES in order."""
    if seed < 0:
        raise ValueError(f"a landscape seed is >= 0, got {seed}")
    rng = random.Random(f"{LANDSCAPE_FAMILY}:{seed}")
    e1 = rng.uniform(0.35, 0.80)
    e2 = min(0.97, e1 + rng.uniform(0.10, 0.35))
    e3 = min(0.98, e2 + rng.uniform(0.0, 0.10))
    notes = {level: rng.uniform(0.35, 1.0) for level in (1, 2, 3)}
    guidance = rng.uniform(0.50, 0.95)
    by_kind = {kind.value: rng.uniform(0.30, 1.0) for kind in FailureKind}
    r1 = rng.uniform(0.10, 0.85)
    r2 = r1 * rng.uniform(0.30, 1.0)
    r3 = r2 * rng.uniform(0.50, 1.0)
    reviews = rng.random() < 0.5
    review = {level: rng.uniform(0.20, 0.70) if reviews else 0.0 for level in (1, 2, 3)}
    tests_first = rng.uniform(0.60, 1.40)
    budget = rng.choice((600, 1200, 2000, 3000))
    penalised = rng.random() < 0.5
    penalty = rng.uniform(0.05, 0.35) if penalised else 0.0
    extra = {role: rng.randint(0, 4) for role in ("builder", "researcher", "reviewer")}
    return SimParams(
        base_error={1: e1, 2: e2, 3: e3},
        notes_factor=notes[1],
        guidance_factor=guidance,
        repair={1: r1, 2: r2, 3: r3},
        notes_by_level=notes,
        guidance_by_kind=by_kind,
        review=review,
        tests_first=tests_first,
        context_budget=budget,
        context_penalty=penalty,
        extra_reads=extra,
    )
