"""The audit of an agent's change (scoring/_audit.py): its false positives and its cost.

For every task of the bundled benchmarks, applies the gold and each flawed variant (what the
sim writes) to a copy of the task's repo and runs `audit_change` on it, as grading does. Prints
how many variants were audited, how many were flagged (each one a false positive: none may be),
and the audit's wall time per variant (median and max, milliseconds), which every grade pays.

    python bench/audit_cost.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from loopwright.scoring import audit_change
from loopwright.tasks import Task, apply_overlay, load_benchmark_dir

BUNDLED = Path(__file__).parents[1] / "src" / "loopwright" / "tasks" / "bundled"


def variants(task: Task) -> list[tuple[str, Path]]:
    gold = [("gold", task.gold)] if task.gold is not None else []
    return gold + [(v.name, task.flawed_dir(v.name)) for v in task.spec.flawed]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed audits per variant")
    args = parser.parse_args()
    audited, flagged, times = 0, [], []
    with tempfile.TemporaryDirectory(prefix="lw-audit-bench-") as tmp:
        for directory in sorted(p for p in BUNDLED.iterdir() if p.is_dir()):
            for task in load_benchmark_dir(directory).tasks:
                for name, overlay in variants(task):
                    ws = Path(tmp) / "ws"
                    shutil.rmtree(ws, ignore_errors=True)
                    shutil.copytree(task.repo_dir, ws, symlinks=True)
                    apply_overlay(overlay, ws)
                    for _ in range(args.repeat):
                        started = time.perf_counter()
                        findings = audit_change(ws, task)
                        times.append((time.perf_counter() - started) * 1000)
                    audited += 1
                    if findings:
                        flagged.append(f"{task.id} {name}: " + "; ".join(map(str, findings)))
    print(f"variants audited: {audited} (gold and flawed, bundled benchmarks)")
    print(f"flagged (false positives): {len(flagged)}")
    for line in flagged:
        print(f"  {line}")
    print(
        f"audit time per variant: median {statistics.median(times):.2f} ms, max {max(times):.2f} ms"
    )


if __name__ == "__main__":
    main()
