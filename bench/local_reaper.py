"""Process reaper overhead: LocalSandbox.run with and without the reaper, in one process run.

For each command (`true`, and a small Python command), times N runs through `LocalSandbox`
(reaper on and the host adopting, the default: host-reaped, a marked shell under this process,
where `setpriv` exists), through a subclass with `adopt = False` (the Python reaper alone, as
before adoption) and through one with `reap = False` (the behaviour before the
reaper), interleaved so that machine noise hits all alike. Prints the median wall time per run of
each, the difference (what the reaper and adoption add per command) and the ratio to no reaper,
and for reference the bare start of the interpreter the reaper runs on (`python -I -S -c pass`).

    python bench/local_reaper.py [--runs 50]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loopwright.sandbox import LocalSandbox
from loopwright.sandbox._process import reaper_supported


class UnreapedSandbox(LocalSandbox):
    reap = False


class UnadoptingSandbox(LocalSandbox):
    adopt = False


COMMANDS = {
    "true": ["true"],
    "python -c (small)": [sys.executable, "-c", "import json; print(json.dumps({'a': 1}))"],
}


def time_runs(argv: list[str], runs: int, cwd: Path) -> dict[str, list[float]]:
    """Wall seconds per run, by arm, rotating which goes first."""
    arms = [
        ("on", LocalSandbox()),
        ("reaper only", UnadoptingSandbox()),
        ("off", UnreapedSandbox()),
    ]
    times: dict[str, list[float]] = {key: [] for key, _ in arms}
    for i in range(runs):
        for key, sandbox in arms[i % 3 :] + arms[: i % 3]:
            start = time.perf_counter()
            result = sandbox.run(argv, cwd=cwd, timeout_s=60)
            times[key].append(time.perf_counter() - start)
            assert result.exit_code == 0, result.stderr
    return times


def time_interpreter_start(runs: int) -> float:
    """Median wall seconds of `python -I -S -c pass` through a bare subprocess.run."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    if not reaper_supported():
        sys.exit("the process reaper is not used on this platform: nothing to measure")
    with tempfile.TemporaryDirectory(prefix="lw-bench-reaper-") as tmp:
        cwd = Path(tmp)
        for argv in COMMANDS.values():  # warm-up: page cache, first interpreter start
            time_runs(argv, 2, cwd)
        print(f"{args.runs} runs each, Python {sys.version.split()[0]}, {sys.platform}")
        header = (
            f"{'command':<20} {'adopting':>11} {'reaper only':>11} {'no reaper':>11} "
            f"{'added':>9} {'ratio':>6} {'adoption':>9}"
        )
        print(header + "\n" + "-" * len(header))
        for name, argv in COMMANDS.items():
            times = time_runs(argv, args.runs, cwd)
            on, only, off = (
                statistics.median(times[k]) * 1e3 for k in ("on", "reaper only", "off")
            )
            print(
                f"{name:<20} {on:>8.1f} ms {only:>8.1f} ms {off:>8.1f} ms {on - off:>6.1f} ms "
                f"{on / off:>5.2f}x {on / only:>8.2f}x   (medians)"
            )
        start_ms = time_interpreter_start(args.runs) * 1e3
        print(f"for reference: python -I -S -c pass alone takes {start_ms:.1f} ms (median)")


if __name__ == "__main__":
    main()
