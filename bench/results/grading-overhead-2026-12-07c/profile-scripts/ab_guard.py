"""Scratch: whole grade (workspace+gold+grade) cgroup CPU with two guard plugin sources, interleaved; and pump wake-ups."""
import sys, statistics, tempfile
sys.path.insert(0, "/work/wt-overhead2/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import default_sandbox
import loopwright.scoring._kit as kit
import loopwright.sandbox._process as proc
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark
kind, R = sys.argv[1], int(sys.argv[2]); srcs = dict(a.split("=") for a in sys.argv[3:])
steps = [0]
orig = proc._Pump._step if hasattr(proc, "_Pump") else None
go.CLOCK = go.CgroupClock.open()
try:
    tasks = [t for t in load_benchmark("mini").tasks][:6]
    root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
    prepared = {t.id: go.prepare(t, root / "prepared" / t.id) for t in tasks}
    g = PytestGrader(default_sandbox(kind))
    res = {}
    def use(path):
        kit._PLUGIN_SOURCE = Path(path); kit._guard_files.cache_clear()
    for rep in range(R + 1):
        for t in tasks:
            for arm in go.balanced(["plain", *srcs], rep):
                if arm == "plain":
                    w, cpu = go.time_plain_pytest(prepared[t.id], t)
                else:
                    use(srcs[arm]); w, c, cpu = go.time_loopwright(t, g, root / "ws")
                if rep: res.setdefault(arm, {}).setdefault(t.id, []).append(cpu)
    plain = sum(statistics.median(v) for v in res["plain"].values())
    for arm, by in res.items():
        tot = sum(statistics.median(v) for v in by.values())
        print(f"{kind:10} {arm:8} {1000*tot/len(by):7.2f} ms/task  over plain {1000*(tot-plain)/len(by):6.2f}  ratio {tot/plain:.3f}")
finally:
    go.CLOCK.close()
