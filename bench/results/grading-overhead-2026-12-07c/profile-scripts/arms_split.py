"""Scratch: bubblewrap vs local whole grade, split: Sandbox.run (cgroup CPU) and the rest; interleaved with plain."""
import sys, statistics, tempfile
sys.path.insert(0, "/work/wt-overhead2/bench")
import grading_overhead as go
from pathlib import Path
import loopwright.sandbox._base as base
from loopwright.sandbox import BubblewrapSandbox, LocalSandbox
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark
go.CLOCK = go.CgroupClock.open()
R = int(sys.argv[1])
spans = {}
orig = base.Sandbox.run
def run(self, *a, **k):
    c = go.cpu_s()
    try: return orig(self, *a, **k)
    finally: spans.setdefault(self.name, []).append(go.cpu_s() - c)
base.Sandbox.run = run
try:
    tasks = list(load_benchmark("mini").tasks)[:int(sys.argv[2])]
    root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
    prepared = {t.id: go.prepare(t, root / "prepared" / t.id) for t in tasks}
    graders = {"bubblewrap": PytestGrader(BubblewrapSandbox()), "local": PytestGrader(LocalSandbox())}
    res = {}
    for rep in range(R + 1):
        for t in tasks:
            for arm in go.balanced(["plain", "bubblewrap", "local"], rep):
                if arm == "plain":
                    w, cpu = go.time_plain_pytest(prepared[t.id], t)
                    if rep: res.setdefault(("plain", "whole"), {}).setdefault(t.id, []).append(cpu)
                    continue
                w, c, cpu = go.time_loopwright(t, graders[arm], root / "ws")
                if rep:
                    res.setdefault((arm, "whole"), {}).setdefault(t.id, []).append(cpu)
                    res.setdefault((arm, "run"), {}).setdefault(t.id, []).append(spans[arm][-1])
                    res.setdefault((arm, "rest"), {}).setdefault(t.id, []).append(cpu - spans[arm][-1])
    plain = sum(statistics.median(v) for v in res[("plain", "whole")].values())
    for k, by in sorted(res.items()):
        tot = sum(statistics.median(v) for v in by.values())
        print(f"{k[0]:11} {k[1]:6} {1000*tot/len(by):7.2f} ms/task  ratio to plain {tot/plain:.3f}")
finally:
    go.CLOCK.close()
