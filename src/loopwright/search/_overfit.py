"""The overfit alarm: the best's training score pulling away from its holdout score."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["OverfitDetector", "OverfitSignal"]


class OverfitSignal(BaseModel):
    """One generation's check: the train - holdout gap of the best and whether it alarms."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gap: float | None
    threshold: float
    alarm: bool


class OverfitDetector:
    """Alarm when best train - best holdout exceeds `threshold`. Checked every generation.

    Stateless and deterministic; a missing score (no holdout yet) gives no alarm.
    """

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def check(self, train: float | None, holdout: float | None) -> OverfitSignal:
        if train is None or holdout is None:
            return OverfitSignal(gap=None, threshold=self.threshold, alarm=False)
        gap = train - holdout
        return OverfitSignal(gap=gap, threshold=self.threshold, alarm=gap > self.threshold)
