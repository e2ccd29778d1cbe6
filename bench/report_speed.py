"""Report speed and size: the HTML report of a 10-generation, population-8 sim evolution.

Builds the run with `loopwright evolve` on the bundled `mini` benchmark and the offline `sim`
model (calibration included, fitness cache off, no report), unless --run-dir already holds a
finished run, then writes its report --repeat times and prints the size and the seconds
(fastest and median) against the targets of issue 10: under 10 MB, written in under 5 s.
Building the run takes minutes; pass the same --run-dir again to time the report alone.
Results are SIMULATED (the sim model), which changes nothing about the report's cost.

    python bench/report_speed.py [--run-dir DIR] [--generations 10] [--population 8]
                                 [--seed 0] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from loopwright.cli import main
from loopwright.report import write_report
from loopwright.search import load_checkpoint

TARGET_BYTES = 10 * 1024 * 1024
TARGET_SECONDS = 5.0


def build(run_dir: Path, generations: int, population: int, seed: int) -> float:
    """Run the evolution (no report) and return its wall time in seconds."""
    argv = [
        "evolve",
        "--bench",
        "mini",
        "--seed-workflow",
        "builder-only",
        "--model",
        "sim",
        "--generations",
        str(generations),
        "--population",
        str(population),
        "--seed",
        str(seed),
        "--run-dir",
        str(run_dir),
        "--no-report",
        "--no-cache",
        "--sandbox",
        "local",
    ]
    start = time.perf_counter()
    code = main(argv)
    if code != 0:
        sys.exit(f"loopwright evolve failed with exit code {code}")
    return time.perf_counter() - start


def describe(run_dir: Path) -> str:
    cp = load_checkpoint(run_dir)
    records = sum(1 for _ in run_dir.glob("**/record.json"))
    return (
        f"{len(cp.summaries)} generations, population {cp.config.population}, "
        f"{len(cp.individuals)} individuals, {records} task runs on disk "
        f"(stop: {cp.stop_reason})"
    )


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=None)
    parser.add_argument("--generations", type=int, default=10)
    parser.add_argument("--population", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="report-speed-")) / "run"
    if (run_dir / "checkpoint.json").is_file():
        print(f"reusing {run_dir}")
    else:
        seconds = build(run_dir, args.generations, args.population, args.seed)
        print(f"built {run_dir} in {seconds:.0f} s (SIMULATED: sim model)")
    print(describe(run_dir))
    times, size = [], 0
    for _ in range(args.repeat):
        result = write_report(run_dir)
        times.append(result.seconds)
        size = result.size
    best, median = min(times), statistics.median(times)
    print(f"report: {result.path}")
    print(
        f"size: {size / 1024 / 1024:.2f} MB ({size:,} bytes; "
        f"{size / TARGET_BYTES:.1%} of the 10 MB target)"
    )
    print(
        f"seconds: fastest {best:.3f}, median {median:.3f} over {args.repeat} writes "
        f"({median / TARGET_SECONDS:.1%} of the 5 s target)"
    )


if __name__ == "__main__":
    main_bench()
