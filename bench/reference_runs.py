"""Reference runs: evidence that a refactoring of the search changed no behaviour.

`run OUT` makes four evolve runs on the offline sim model (mini, builder-only, 4 generations of
6; the demo's command and the same with `--stages 3,all --parents pareto --merge 0.3`; seeds 0
and 1), niced, each into OUT/<kind>-s<seed>. Run it once on the old code and once on the new,
with run directories of the same name (the run id is the directory's name).

`compare A B` compares each run of A with the run of the same name in B:
  result.json      byte for byte; when the bytes differ only in `wall_s` (the run's wall
                   time, which result.json reports) that is said, and it passes
  checkpoint.json  as JSON, equal once every duration (`duration_s`, `wall_s`) is removed
                   (also inside `archive_json`, the archive's JSON held in a string)
Exit 0 when every run matches, 1 otherwise (the first differing path is printed).

    python bench/reference_runs.py run /work/refruns/after [--workers N]
    python bench/reference_runs.py compare /work/refruns/before /work/refruns/after
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

DEMO = ("--bench", "mini", "--seed-workflow", "builder-only", "--model", "sim",
        "--generations", "4", "--population", "6")  # fmt: skip
KINDS = {"demo": (), "pareto": ("--stages", "3,all", "--parents", "pareto", "--merge", "0.3")}
SEEDS = (0, 1)
DURATIONS = frozenset({"duration_s", "wall_s"})
_WALL = re.compile(rb'"wall_s": [0-9.eE+-]+')


def run(out: Path, workers: int | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for seed in SEEDS:
        for kind, extra in KINDS.items():
            run_dir = out / f"{kind}-s{seed}"
            if (run_dir / "result.json").is_file():
                continue
            cli = str(Path(sys.executable).with_name("loopwright"))
            cmd = ["nice", "-n", "10", cli, "evolve", *DEMO, "--seed", str(seed), *extra,
                   "--run-dir", str(run_dir)]  # fmt: skip
            if workers is not None:
                cmd += ["--workers", str(workers)]
            with (out / f"{run_dir.name}.log").open("w") as log:
                subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True)


def _strip(value: Any) -> Any:
    """`value` without durations, `archive_json` (JSON in a string) read as JSON too."""
    if isinstance(value, dict):
        return {
            k: _strip(json.loads(v) if k == "archive_json" and isinstance(v, str) else v)
            for k, v in value.items()
            if k not in DURATIONS
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key} (only in {'B' if key not in a else 'A'})"
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {repr(a)[:200]} vs {repr(b)[:200]}"


def compare_run(a: Path, b: Path) -> list[str]:
    """What differs between two runs of the same name (empty: they match)."""
    problems = []
    ra, rb = (a / "result.json").read_bytes(), (b / "result.json").read_bytes()
    if ra != rb and _WALL.sub(b"", ra) != _WALL.sub(b"", rb):
        problems.append("result.json differs beyond wall_s")
    ca = _strip(json.loads((a / "checkpoint.json").read_text()))
    cb = _strip(json.loads((b / "checkpoint.json").read_text()))
    found = _first_difference(ca, cb)
    if found:
        problems.append(f"checkpoint.json differs at {found}")
    return problems


def compare(a: Path, b: Path) -> int:
    names = sorted(p.name for p in a.iterdir() if (p / "result.json").is_file())
    failed = 0
    for name in names:
        if not (b / name / "result.json").is_file():
            print(f"{name}: missing in {b}")
            failed += 1
            continue
        problems = compare_run(a / name, b / name)
        same = (a / name / "result.json").read_bytes() == (b / name / "result.json").read_bytes()
        how = "byte-identical" if same else "identical but for wall_s"
        print(f"{name}: " + ("; ".join(problems) if problems else f"result.json {how}, "
                             "checkpoint.json identical but for durations"))  # fmt: skip
        failed += bool(problems)
    return 1 if failed or not names else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--workers", type=int, default=None)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, args.workers)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
