"""Whether calibration kept enough tasks: a warning below 10 training or 3 holdout tasks, and
the `min_train`/`min_holdout` refusal.

The winner's holdout gain is a paired bootstrap over holdout tasks, so its interval is only as
narrow as the number of holdout tasks allows: with n tasks the noise alone spreads it about
z * sqrt(mean 2p(1-p)/reps) / sqrt(n) either side (two independent means of `reps` runs of
pass rate p per task), and with 3 tasks or fewer a 95% interval cannot exclude zero unless every
holdout task improves (a resample drawing the worst task every time, probability (1/n)^n, is
more than 2.5% of them). Training needs about 10 tasks for selection to see past one task's
noise (the v1 post-mortem's fix). Pure and deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean

from loopwright._caller import Caller, caller, spoken
from loopwright.errors import UsageError

__all__ = ["WARN_HOLDOUT", "WARN_TRAIN", "expected_half_width", "require_sizes", "split_warnings"]

WARN_TRAIN = 10
"""Fewer training tasks than this after calibration is warned about."""
WARN_HOLDOUT = 3
"""Fewer holdout tasks than this after calibration is warned about."""

_Z95 = 1.96
_HOW = (
    "to keep more: widen the band (e.g. {band}), add tasks to the benchmark, or run more "
    "calibration repetitions ({reps}) so that more pass rates settle in the band; more holdout "
    "repetitions ({holdout_reps}) narrow the interval; {minimums} refuse a split this small"
)


def _how(who: Caller | None = None) -> str:
    """`_HOW` in the words of `who` (default: the current caller): EvolveConfig fields, or the
    CLI's flags."""
    if (who or caller()) == "cli":
        return _HOW.format(band="--band 0.2,0.8", reps="--calibration-reps",
                           holdout_reps="--holdout-reps", minimums="--min-train/--min-holdout")  # fmt: skip
    return _HOW.format(band="calibration.band_low=0.2, band_high=0.8",
                       reps="calibration.repetitions", holdout_reps="holdout_repetitions",
                       minimums="calibration.min_train/min_holdout")  # fmt: skip


def expected_half_width(holdout_rates: Sequence[float], repetitions: int) -> float | None:
    """About how far either side of the gain a 95% interval reaches from noise alone, given
    the holdout tasks' calibrated pass rates and the holdout repetitions. None without tasks."""
    if not holdout_rates:
        return None
    variance = fmean(2.0 * p * (1.0 - p) / repetitions for p in holdout_rates)
    return _Z95 * math.sqrt(variance) / math.sqrt(len(holdout_rates))


def split_warnings(
    train: int, holdout_rates: Sequence[float], holdout_repetitions: int, who: Caller | None = None
) -> tuple[str, ...]:
    """The warning (none or one) for a split of `train` training tasks and holdout tasks with
    these calibrated pass rates: what is short, the interval width to expect, how to get more,
    in the words of `who` (default: the current caller; a run's files: who started the run)."""
    n_hold = len(holdout_rates)
    if train >= WARN_TRAIN and n_hold >= WARN_HOLDOUT:
        return ()
    short = [
        f"fewer than {WARN_TRAIN} training tasks" if train < WARN_TRAIN else "",
        f"fewer than {WARN_HOLDOUT} holdout tasks" if n_hold < WARN_HOLDOUT else "",
    ]
    text = (
        f"calibration kept only {train} training and {n_hold} holdout task(s) "
        f"({' and '.join(s for s in short if s)}; about {WARN_TRAIN} training and 3-5 holdout "
        "tasks are advised)."
    )
    width = expected_half_width(holdout_rates, holdout_repetitions)
    if width is not None:
        text += (
            f" Expect the holdout gain's 95% interval to reach about +/-{width:.2f} from noise "
            f"alone ({n_hold} task(s) x {holdout_repetitions} repetition(s))."
        )
    if 0 < n_hold <= WARN_HOLDOUT:
        text += (
            f" With {n_hold} holdout task(s) the interval cannot exclude zero unless every "
            "holdout task improves."
        )
    how = _how(who)
    return (f"{text} {how[0].upper()}{how[1:]}.",)


def require_sizes(
    train: int, holdout: int, min_train: int | None, min_holdout: int | None, warning: str
) -> None:
    """UsageError (before any generation is spent) when the split is smaller than the
    minimums asked for; `warning` (the split warning) says how to get more."""
    low = [
        f"{train} training task(s), fewer than {spoken('calibration.min_train', '--min-train')} "
        f"{min_train}"
        if min_train is not None and train < min_train
        else "",
        f"{holdout} holdout task(s), fewer than "
        f"{spoken('calibration.min_holdout', '--min-holdout')} {min_holdout}"
        if min_holdout is not None and holdout < min_holdout
        else "",
    ]
    if any(low):
        raise UsageError(
            "calibration kept too few tasks; nothing is evolved (the table is in calibration.json)",
            got="; ".join(s for s in low if s),
            fix=warning or _how(),
        )
