"""Mining speed: `tasks mine` over a 50-commit window of a small pure-Python repository.

Builds the repository (or takes one with `--repo`), then mines its newest `--window` first-parent
commits with the pytest grader in the chosen sandbox, and prints the time per commit examined,
per candidate (a commit changing code and tests: its test runs and flawed-variant grades) and
per kept task, and the total. Target (issue 18): under 5 minutes for a 50-commit window on a
2-core machine. The machine's load average is printed too: the figure depends on it.

The built repository (`shapes`, flat layout, no dependencies, tests in tests/) cycles through five
kinds of commit, ten times: a feature in one module with its tests (kept, level 1), a feature
across two modules with its tests (kept, level 2), a test-only commit, a code-only commit, and a
code change whose new test already passes at base (dropped after its runs). So 20 tasks are
expected of the 50 commits, 30 candidates.

    python bench/mine_speed.py [--repo PATH] [--window 50] [--jobs CORES] [--sandbox auto]
                               [--keep DIR]

Per-candidate and per-task times are each commit's own wall time; with several jobs they
overlap, so the total is below their sum.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from loopwright.sandbox import default_sandbox
from loopwright.scoring import MineOptions, MineReport, PytestGrader, mine_repository


def git(repo: Path, *args: str) -> None:
    env = {
        "PATH": os.environ["PATH"], "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com",
    }  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def commit(repo: Path, message: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def read(repo: Path, rel: str) -> str:
    return (repo / rel).read_text(encoding="utf-8")


def build_repo(repo: Path, cycles: int) -> None:
    """`shapes`: 1 root commit, then `cycles` x 5 commits (see the module docstring)."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "Start shapes", {
        "shapes/__init__.py": "", "shapes/area.py": "def square(s):\n    return s * s\n",
        "shapes/scale.py": "def double(x):\n    return 2 * x\n",
        "tests/test_area.py": "from shapes import area\n\n\ndef test_square():\n    assert area.square(3) == 9\n",
        "tests/test_scale.py": "from shapes import scale\n\n\ndef test_double():\n    assert scale.double(2) == 4\n",
        "README.md": "shapes\n",
    })  # fmt: skip
    for k in range(cycles):
        area = read(repo, "shapes/area.py")
        commit(repo, f"Add rect{k} and tri{k} areas\n\nFixes #{k}.", {
            "shapes/area.py": f"def tri{k}(b, h):\n    return b * h / 2\n\n\n{area}\n\ndef rect{k}(w, h):\n    return w * h + {k} - {k}\n",
            "tests/test_area.py": read(repo, "tests/test_area.py")
            + f"\n\ndef test_rect{k}():\n    assert area.rect{k}(2, 3) == 6\n\n\ndef test_tri{k}():\n    assert area.tri{k}(2, 3) == 3\n",
        })  # fmt: skip
        commit(repo, f"Scale by {k + 3} and area of a scaled square", {
            "shapes/scale.py": read(repo, "shapes/scale.py") + f"\n\ndef by{k}(x):\n    return {k + 3} * x\n",
            "shapes/area.py": read(repo, "shapes/area.py") + f"\n\ndef scaled{k}(s):\n    from shapes.scale import by{k}\n    return square(by{k}(s))\n",
            "tests/test_scale.py": read(repo, "tests/test_scale.py")
            + f"\n\ndef test_by{k}():\n    assert scale.by{k}(1) == {k + 3}\n\n\ndef test_scaled{k}():\n    from shapes.area import scaled{k}\n    assert scaled{k}(1) == {(k + 3) ** 2}\n",
        })  # fmt: skip
        commit(repo, f"Test square of {k}", {
            f"tests/test_square_{k}.py": f"from shapes import area\n\n\ndef test_square_{k}():\n    assert area.square({k}) == {k * k}\n",
        })  # fmt: skip
        commit(repo, f"Document rect{k}", {
            "shapes/area.py": read(repo, "shapes/area.py").replace(
                f"def rect{k}(w, h):\n", f'def rect{k}(w, h):\n    """Area of a w x h rectangle."""\n'
            ),
        })  # fmt: skip
        commit(repo, f"Note on double, and a test of it ({k})", {
            "shapes/scale.py": f"# double({k}) is {2 * k}\n" + read(repo, "shapes/scale.py"),
            f"tests/test_double_{k}.py": f"from shapes import scale\n\n\ndef test_double_{k}():\n    assert scale.double({k}) == {2 * k}\n",
        })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, help="mine this repository instead of building one")
    parser.add_argument("--window", type=int, default=50, help="commits to examine (--max)")
    parser.add_argument("--sandbox", default="auto", help="auto, bubblewrap or local")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="commits at once")
    parser.add_argument("--keep", type=Path, help="write the benchmark here (default: a temp dir)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="lw-mine-speed-"))
    try:
        repo = args.repo
        if repo is None:
            repo = scratch / "shapes"
            build_repo(repo, cycles=(args.window + 4) // 5)
        out = args.keep or scratch / "out"
        load = os.getloadavg()
        grader = PytestGrader(default_sandbox(args.sandbox))
        started = time.perf_counter()
        report = mine_repository(
            MineOptions(repo=repo, out=out, max_commits=args.window, jobs=args.jobs), grader
        )
        print_report(report, time.perf_counter() - started, grader, load, args.jobs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def print_report(
    report: MineReport,
    total: float,
    grader: PytestGrader,
    load: tuple[float, float, float],
    jobs: int,
) -> None:
    examined = report.commits
    candidates = [c for c in examined if c.task_id is not None]
    kept = report.kept
    print(f"sandbox {grader.sandbox.name}; {os.cpu_count()} cores, {jobs} job(s); load average before "
          f"{load[0]:.2f}, after {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{len(examined)} commits examined, {len(candidates)} candidates, {len(kept)} tasks kept "
          f"({sum(len(c.flawed) for c in kept)} flawed variants)")  # fmt: skip
    print(f"total {total:.1f}s ({total / 60:.2f} min; target < 5 min)")
    print(f"per commit examined {total / max(len(examined), 1):.2f}s")
    if candidates:
        print(f"per candidate {sum(c.seconds for c in candidates) / len(candidates):.2f}s")
    if kept:
        print(f"per kept task {sum(c.seconds for c in kept) / len(kept):.2f}s")
    reasons: dict[str, int] = {}
    for c in examined:
        if not c.kept:
            key = c.reason.split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    for reason, n in sorted(reasons.items()):
        print(f"  dropped {n}: {reason}")


if __name__ == "__main__":
    main()
