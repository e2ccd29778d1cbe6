"""Scratch: where a mini grade's CPU goes on the host side, per sandbox (cgroup clock)."""
import statistics, sys, time, os, subprocess, tempfile
from pathlib import Path
sys.path.insert(0, "/work/wt-overhead3/bench")
import grading_overhead as go
from loopwright.sandbox import default_sandbox, create_workspace, remove_workspace, bubblewrap_available
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark, apply_overlay
import loopwright.scoring._frame as frame
import loopwright.scoring._grader as grader_mod

go.CLOCK = go.CgroupClock.open()
cpu = go.cpu_s
spans = {}
def wrap(owner, name, label):
    orig = getattr(owner, name)
    def inner(*a, **k):
        c = time.thread_time()
        try:
            return orig(*a, **k)
        finally:
            spans.setdefault(label, []).append(time.thread_time() - c)
    setattr(owner, name, inner)
wrap(frame, "audit_change", "audit")
wrap(frame, "restore_tests", "restore")
wrap(frame.TaskTests, "capture", "capture")
wrap(grader_mod.PytestGrader, "_step", "step(kit)")
wrap(grader_mod, "_read", "read")
import loopwright.sandbox._base as base
wrap(base.Sandbox, "run", "sandbox.run(host thread)")
import loopwright.sandbox._template as tpl
wrap(tpl.Template, "write", "template.write")
bench = load_benchmark("mini")
tasks = list(bench.tasks)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
kinds = ["local"] + (["bubblewrap"] if bubblewrap_available() else [])
try:
  with tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    for kind in kinds:
        sb = default_sandbox(kind)
        g = PytestGrader(sb)
        # warm
        for t in tasks[:1]:
            ws = create_workspace(t.repo_dir, root); apply_overlay(t.solution_dir, ws.path); g.grade(ws.path, t); remove_workspace(ws)
        spans.clear()
        tot = {"ws": [], "gold": [], "grade": [], "true": []}
        for rep in range(reps):
            for t in tasks:
                c = cpu(); ws = create_workspace(t.repo_dir, root); tot["ws"].append(cpu() - c)
                c = cpu(); apply_overlay(t.solution_dir, ws.path); tot["gold"].append(cpu() - c)
                c = cpu(); gr = g.grade(ws.path, t); tot["grade"].append(cpu() - c)
                assert gr.score == 1.0, gr.invalid_reason
                remove_workspace(ws)
        n = len(spans["sandbox.run(host thread)"])
        for i in range(25):
            c = cpu(); sb.run(["true"], cwd=root, timeout_s=60); tot["true"].append(cpu() - c)
        print(f"== {kind}: ms CPU per grade, mean (median) over {len(tasks)}x{reps}")
        for k, v in {**tot, **spans}.items():
            if k == "sandbox.run(host thread)": v = v[:n]
            print(f"  {k:14} {1000*statistics.mean(v):7.2f} ({1000*statistics.median(v):6.2f})")
        spans.clear()
finally:
    go.CLOCK.close()
