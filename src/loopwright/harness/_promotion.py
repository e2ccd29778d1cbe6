"""Promotion: the settings values a scoreboard's evidence supports, by the seed's rules.

- Per complexity bucket, the winner is the highest-standing loop that cleared the gate. A
  loop's standing is its mean composite over every (brief, tier) cell of the bucket; a loop
  that failed the gate (or was not measured) on any tier is disqualified for the bucket: the
  setting routes on complexity alone, whatever model the agent is pinned to.
- `engine.default_loop_type` goes to the loop winning the most buckets (ties: the higher
  summed standing over the buckets it won, then the name).
- An override is emitted only for a bucket whose winner differs from the default.
- When no loop clears the gate anywhere, the recommendation is empty, not a least-bad guess.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from loopwright.harness._briefs import COMPLEXITIES

__all__ = ["Bucket", "Promotion", "Standing", "promote", "winner"]


class Standing(BaseModel):
    """A loop in one bucket: its mean composite (None when it has no measured cell), and
    why it is disqualified (None when it cleared the gate in every cell of the bucket)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    loop: str
    standing: float | None
    disqualified: str | None = None


class Bucket(BaseModel):
    """One complexity bucket: its briefs, every loop's standing (best first) and the winner."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    complexity: str
    briefs: list[str]
    standings: list[Standing]
    winner: str | None


class Promotion(BaseModel):
    """The values to apply. Empty (`default_loop_type` None) when no loop cleared the gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_loop_type: str | None
    loop_complexity_overrides: dict[str, str] = Field(default_factory=dict)
    lines: list[str]
    note: str

    @property
    def empty(self) -> bool:
        return self.default_loop_type is None


def winner(standings: Sequence[Standing]) -> str | None:
    """The highest standing among the loops not disqualified (ties: the name); None if none."""
    eligible = [s for s in standings if s.disqualified is None and s.standing is not None]
    if not eligible:
        return None
    return min(eligible, key=lambda s: (-(s.standing or 0.0), s.loop)).loop


def promote(buckets: Sequence[Bucket]) -> Promotion:
    """The promotion lines for these buckets (see the module docstring for the rules)."""
    won = {b.complexity: b.winner for b in buckets if b.winner is not None}
    if not won:
        return Promotion(
            default_loop_type=None,
            lines=[],
            note="no loop cleared the correctness gate in any bucket: nothing to apply",
        )
    counts = Counter(won.values())
    standing = {(b.complexity, s.loop): s.standing or 0.0 for b in buckets for s in b.standings}
    earned = {
        loop: sum(standing[(c, loop)] for c, w in won.items() if w == loop) for loop in counts
    }
    default = min(counts, key=lambda loop: (-counts[loop], -earned[loop], loop))
    overrides = {c: won[c] for c in COMPLEXITIES if c in won and won[c] != default}
    lines = [
        f"engine.default_loop_type = {default}",
        "engine.loop_complexity_overrides = "
        + ",".join(f"{c}:{loop}" for c, loop in overrides.items()),
    ]
    buckets_won = ", ".join(c for c in COMPLEXITIES if won.get(c) == default)
    note = f"{default} wins {counts[default]} of {len(buckets)} buckets ({buckets_won})"
    empty = [b.complexity for b in buckets if b.winner is None]
    if empty:
        note += f"; no loop cleared the gate in {', '.join(empty)} (the default applies there)"
    return Promotion(
        default_loop_type=default,
        loop_complexity_overrides=overrides,
        lines=[line.rstrip() for line in lines],
        note=note,
    )
