"""The rubric: every weight and threshold of the A/B scoreboard, in this one module.

Five dimensions, each scored in [0, 1], higher is better:

- correctness: the median fraction of hidden checks passed. Dominant, and a hard gate: a
  median below CORRECTNESS_GATE_FLOOR makes the loop ineligible in that cell.
- cost: median tokens (input + output; provider-neutral, so re-pricing never moves a
  ranking), scored relative to the best in the same (brief, tier) cell.
- latency: median wall clock, relative to the best in the cell.
- turns: median model calls, relative to the best in the cell.
- rework: median `replans_used` as a cost, 1 / (1 + replans); loops that cannot replan have 0
  replans, exactly like a planning loop that did not need to.

"Relative to the best" is best / value: 1.0 for the best, 0.5 for twice its figure. The best
is taken over the loops that cleared the gate in that cell (over every measured loop when
none did), so a loop that gives up at once cannot set the bar. A value at or below the best
scores 1.0. `RUBRIC` is stamped into every scoreboard; change `RUBRIC_VERSION` with any edit.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CORRECTNESS_GATE_FLOOR",
    "RUBRIC",
    "RUBRIC_VERSION",
    "WEIGHTS",
    "Rubric",
    "composite",
    "relative",
    "rework_score",
]

RUBRIC_VERSION = 2  # 2: a cell that fails the correctness gate has composite 0

WEIGHTS: dict[str, float] = {
    "correctness": 0.55,
    "cost": 0.20,
    "latency": 0.10,
    "turns": 0.10,
    "rework": 0.05,
}
"""The weight of each dimension in the composite score; they sum to 1."""

CORRECTNESS_GATE_FLOOR = 0.9
"""A median correctness below this makes a loop ineligible (its numbers are still shown)."""


class Rubric(BaseModel):
    """The rubric as stamped into a scoreboard."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int
    weights: dict[str, float]
    correctness_gate_floor: float


RUBRIC = Rubric(
    version=RUBRIC_VERSION, weights=dict(WEIGHTS), correctness_gate_floor=CORRECTNESS_GATE_FLOOR
)


def relative(value: float, best: float) -> float:
    """best / value for a lower-is-better figure, capped at 1.0; 1.0 when value is 0."""
    if value <= 0 or value <= best:
        return 1.0
    return max(best, 0.0) / value


def rework_score(replans: float) -> float:
    """1 / (1 + replans): 1.0 for no rework."""
    return 1.0 / (1.0 + max(replans, 0.0))


def composite(scores: dict[str, float], weights: dict[str, float] | None = None) -> float:
    """The weighted sum of the dimension scores (every dimension of `weights` must be given),
    or 0.0 when correctness is below the gate: an ineligible cell earns no standing, however
    cheap or fast it was (its scores are still kept and shown)."""
    w = weights if weights is not None else WEIGHTS
    if scores["correctness"] < CORRECTNESS_GATE_FLOOR:
        return 0.0
    return sum(w[name] * scores[name] for name in w)
