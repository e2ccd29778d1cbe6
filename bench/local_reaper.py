"""Process reaper overhead: LocalSandbox.run with and without the reaper, in one process run.

For each command (`true`, and a small Python command), times N runs through `LocalSandbox`
(reaper on, the default) and through a subclass with `reap = False` (the behaviour before the
reaper), interleaved so that machine noise hits both alike. Prints the median and mean wall time
per run of each, the difference (what the reaper adds per command) and the ratio, and for
reference the bare start of the interpreter the reaper runs on (`python -I -S -c pass`).

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


COMMANDS = {
    "true": ["true"],
    "python -c (small)": [sys.executable, "-c", "import json; print(json.dumps({'a': 1}))"],
}


def time_runs(argv: list[str], runs: int, cwd: Path) -> tuple[list[float], list[float]]:
    """Wall seconds per run, reaper on and off, alternating which goes first."""
    reaped, plain = LocalSandbox(), UnreapedSandbox()
    times: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(runs):
        order = [("on", reaped), ("off", plain)]
        for key, sandbox in order if i % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            result = sandbox.run(argv, cwd=cwd, timeout_s=60)
            times[key].append(time.perf_counter() - start)
            assert result.exit_code == 0, result.stderr
    return times["on"], times["off"]


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
        header = f"{'command':<20} {'reaper':>12} {'no reaper':>12} {'added':>10} {'ratio':>6}"
        print(header + "\n" + "-" * len(header))
        for name, argv in COMMANDS.items():
            on, off = time_runs(argv, args.runs, cwd)
            on_ms, off_ms = statistics.median(on) * 1e3, statistics.median(off) * 1e3
            print(
                f"{name:<20} {on_ms:>9.1f} ms {off_ms:>9.1f} ms {on_ms - off_ms:>7.1f} ms "
                f"{on_ms / off_ms:>5.2f}x   (medians; means {statistics.mean(on) * 1e3:.1f} / "
                f"{statistics.mean(off) * 1e3:.1f} ms)"
            )
        start_ms = time_interpreter_start(args.runs) * 1e3
        print(f"for reference: python -I -S -c pass alone takes {start_ms:.1f} ms (median)")


if __name__ == "__main__":
    main()
