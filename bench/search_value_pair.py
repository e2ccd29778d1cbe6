"""Search value, two checkouts paired: the same landscapes and budget run by `search_value.py`
on a baseline checkout and on this one, scored against one optimum per landscape.

SIMULATED (docs/sim-model.md, family sim-landscapes-1). Reads BASE/L{n}.json and NEW/L{n}.json
for the landscapes both finished; the baseline's arms are renamed `<arm>-old`; the optimum of a
landscape is the best holdout either run saw. Prints `search_value.py`'s report for the new
arms (against that optimum) and, for each arm both ran, old against new: regret per landscape
and the paired Wilcoxon and sign tests.

    python bench/search_value_pair.py BASE NEW [--budget 96] [--regret 0.02]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from search_value import ARMS, _mean, optimum, report

from loopwright.stats import sign_test, wilcoxon


def merged(base: Path, new: Path) -> list[dict[str, Any]]:
    """One outcome per landscape both runs finished: the new run's, with the baseline's arms
    added as `<arm>-old` (the hand designs are the new run's; both runs evaluate them alike)."""
    out = []
    for path in sorted(new.glob("L*.json"), key=lambda p: int(p.stem[1:])):
        old_path = base / path.name
        if not old_path.is_file():
            continue
        o, b = json.loads(path.read_text()), json.loads(old_path.read_text())
        o["arms"].update({f"{a}-old": v for a, v in b["arms"].items()})
        out.append(o)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--budget", type=int, default=96)
    parser.add_argument("--regret", type=float, default=0.02)
    args = parser.parse_args()
    outcomes = merged(args.base, args.new)
    if not outcomes:
        sys.exit(f"no landscape finished in both {args.base} and {args.new}")
    print("SIMULATED: the offline sim model stands in for an LLM; family sim-landscapes-1.")
    arms = [a for a in ARMS if all(a in o["arms"] for o in outcomes)]
    report(outcomes, argparse.Namespace(arms=arms, budget=args.budget, regret=args.regret))
    partial = [
        f"L{o['landscape']} {a} ({len(v['scores'])} of {len(o['designs']['builder-only']['scores'])})"
        for o in outcomes
        for a, v in sorted(o["arms"].items())
        if len(v["scores"]) < len(o["designs"]["builder-only"]["scores"])
    ]
    print("\nholdout cut short by the budget (the final best's holdout covers fewer tasks than the "
          "designs'; its mean is over those): " + (", ".join(partial) or "none"))  # fmt: skip
    print("\nold (baseline checkout) against new (this checkout), regret to the shared optimum:")
    for arm in arms:
        if not all(f"{arm}-old" in o["arms"] for o in outcomes):
            continue
        old = [optimum(o) - _mean(o["arms"][f"{arm}-old"]["scores"]) for o in outcomes]
        new = [optimum(o) - _mean(o["arms"][arm]["scores"]) for o in outcomes]
        diffs = [n - b for n, b in zip(new, old, strict=True)]
        cells = " ".join(f"L{o['landscape']} {b:.3f}->{n:.3f}" for o, b, n in
                         zip(outcomes, old, new, strict=True))  # fmt: skip
        print(f"  {arm}: {cells}")
        print(f"  {arm}: median old {statistics.median(old):.3f}, new {statistics.median(new):.3f};"
              f" new better on {sum(d < 0 for d in diffs)}, equal {sum(d == 0 for d in diffs)},"
              f" worse {sum(d > 0 for d in diffs)}; Wilcoxon p {wilcoxon(diffs):.3f},"
              f" sign p {sign_test(diffs):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
