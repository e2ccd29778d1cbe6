"""A small evolve run for the fault tests, started in a subprocess: `python _driver.py RUN_DIR`.

Calibration of two tasks x two repetitions, one generation of two. With `LW_FAULT_KILL_AT=N`
the process kills itself with SIGKILL inside its N-th checkpoint write, half of the new file
written to its temporary name (as a kill in the middle of `atomic_write` leaves it)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from loopwright import search
from loopwright.errors import UserError
from loopwright.search import _checkpoint

CONFIG = {
    "seed_workflow": "builder-only", "bench": "mini", "model": "sim", "sandbox": "local",
    "seed": 5, "population": 2, "elitism": 1, "holdout_repetitions": 1,
    "calibration": {"band_low": 0.0, "band_high": 1.0, "repetitions": 2,
                    "tasks": ["l1-roman-numerals", "l1-ring-resize"]},
    "budgets": {"max_generations": 1}, "strategy": "random",
}  # fmt: skip


def _kill_inside_write(at: int) -> None:
    real = _checkpoint.atomic_write
    calls = [0]

    def write(path: Path, data: bytes | str) -> None:
        calls[0] += 1
        if calls[0] < at:
            real(path, data)
            return
        payload = data.encode() if isinstance(data, str) else data
        (path.parent / f".{path.name}.killed.tmp").write_bytes(payload[: len(payload) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

    _checkpoint.atomic_write = write  # type: ignore[assignment]  # the hook of this test


def main(run_dir: Path) -> int:
    """Run the evolve; a user error is printed as the CLI prints it (exit 2)."""
    if os.environ.get("LW_FAULT_KILL_AT"):
        _kill_inside_write(int(os.environ["LW_FAULT_KILL_AT"]))
    try:
        search.evolve(search.parse_config(CONFIG), run_dir)
    except UserError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
