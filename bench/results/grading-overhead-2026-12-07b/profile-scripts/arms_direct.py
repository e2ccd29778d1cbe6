import sys, statistics, tempfile, time
sys.path.insert(0, "/work/wt-overhead/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import BubblewrapSandbox, LocalSandbox
import loopwright.sandbox._base as base
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark
go.CLOCK = go.CgroupClock.open()
spans = {}
orig = base.Sandbox.run
def run(self, *a, **k):
    c = go.cpu_s()
    try: return orig(self, *a, **k)
    finally: spans.setdefault(self.name, []).append(go.cpu_s() - c)
base.Sandbox.run = run
try:
    tasks = [t for t in load_benchmark("mini").tasks if t.id in ("l1-slugify", "l1-csv-row", "l2-kvstore-json-backend", "l2-fsm-guards")]
    root = Path(tempfile.mkdtemp())
    prepared = {t.id: go.prepare(t, root / "prepared" / t.id) for t in tasks}
    graders = {"bubblewrap": PytestGrader(BubblewrapSandbox()), "local": PytestGrader(LocalSandbox())}
    res = {}
    for rep in range(9):
        for t in tasks:
            for arm in go.balanced(["plain", "bubblewrap", "local"], rep):
                if arm == "plain":
                    w, cpu = go.time_plain_pytest(prepared[t.id], t); prev = "plain"
                    if rep: res.setdefault(("plain", ""), []).append(cpu)
                    continue
                c0 = len(spans.get(arm, []))
                w, c, cpu = go.time_loopwright(t, graders[arm], root / "ws")
                if rep:
                    res.setdefault((arm, "whole"), []).append(cpu)
                    res.setdefault((arm, "run"), []).append(spans[arm][-1])
    for k, v in sorted(res.items()): print(k, round(1000*statistics.median(v), 1), round(1000*statistics.mean(v), 1))
finally:
    go.CLOCK.close()
