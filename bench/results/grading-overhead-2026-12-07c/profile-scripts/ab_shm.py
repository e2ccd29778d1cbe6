"""Scratch: whole grade cgroup CPU with the grade's private dir in the default tempdir (/tmp, ext4) vs /dev/shm, interleaved."""
import sys, statistics, tempfile
sys.path.insert(0, "/work/wt-overhead2/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import default_sandbox
import loopwright.scoring._frame as frame
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark
kind, R = sys.argv[1], int(sys.argv[2])
real = tempfile.mkdtemp
class TF:
    shm = False
    @staticmethod
    def mkdtemp(*a, **k):
        if TF.shm: k["dir"] = "/dev/shm"
        return real(*a, **k)
frame.tempfile = TF
go.CLOCK = go.CgroupClock.open()
try:
    tasks = [t for t in load_benchmark("mini").tasks][:6]
    root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
    prepared = {t.id: go.prepare(t, root / "prepared" / t.id) for t in tasks}
    g = PytestGrader(default_sandbox(kind))
    res = {}
    for rep in range(R + 1):
        for t in tasks:
            for arm in go.balanced(["plain", "tmp", "shm"], rep):
                if arm == "plain":
                    w, cpu = go.time_plain_pytest(prepared[t.id], t)
                else:
                    TF.shm = arm == "shm"; w, c, cpu = go.time_loopwright(t, g, root / "ws")
                if rep: res.setdefault(arm, {}).setdefault(t.id, []).append(cpu)
    plain = sum(statistics.median(v) for v in res["plain"].values())
    for arm, by in res.items():
        tot = sum(statistics.median(v) for v in by.values())
        print(f"{kind:10} {arm:8} {1000*tot/len(by):7.2f} ms/task  over plain {1000*(tot-plain)/len(by):6.2f}  ratio {tot/plain:.3f}")
finally:
    go.CLOCK.close()
