"""Scratch: the whole grade (workspace + gold + grade, cgroup CPU) with main's guard ("before",
its source read from /tmp/ov3/guard_main.py = `git show main:src/loopwright/scoring/_guard_plugin.py`)
and this worktree's ("after"), in one interleaved loop with plain pytest, for bubblewrap and local.
All 13 mini tasks, the bench's balanced order. Usage: ab_guard.py REPEATS"""
import sys, statistics, tempfile
sys.path.insert(0, "/work/wt-overhead3/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import BubblewrapSandbox, LocalSandbox
import loopwright.scoring._kit as kit
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark
R = int(sys.argv[1])
NEW = Path("/work/wt-overhead3/src/loopwright/scoring/_guard_plugin.py"); OLD = Path("/tmp/ov3/guard_main.py")
def use(after):
    kit._PLUGIN_SOURCE = NEW if after else OLD; kit._guard_files.cache_clear()
go.CLOCK = go.CgroupClock.open()
try:
    tasks = list(load_benchmark("mini").tasks)
    root = Path(tempfile.mkdtemp(dir="/tmp/ov3"))
    prepared = {t.id: go.prepare(t, root / "prepared" / t.id) for t in tasks}
    graders = {"bubblewrap": PytestGrader(BubblewrapSandbox()), "local": PytestGrader(LocalSandbox())}
    arms = ["plain", "bubblewrap before", "bubblewrap after", "local before", "local after"]
    res = {}
    for t in tasks:
        for rep in range(R + 1):
            for arm in go.balanced(arms, rep):
                if arm == "plain":
                    w, cpu = go.time_plain_pytest(prepared[t.id], t)
                else:
                    kind, when = arm.split()
                    use(when == "after"); w, c, cpu = go.time_loopwright(t, graders[kind], root / "ws")
                if rep: res.setdefault(arm, {}).setdefault(t.id, []).append(cpu)
    plain = sum(statistics.median(v) for v in res["plain"].values())
    for arm in arms:
        by = res[arm]; tot = sum(statistics.median(v) for v in by.values())
        print(f"{arm:18} {1000*tot/len(by):7.2f} ms/task  over plain {1000*(tot-plain)/len(by):6.2f}  ratio {tot/plain:.3f}")
finally:
    go.CLOCK.close()
