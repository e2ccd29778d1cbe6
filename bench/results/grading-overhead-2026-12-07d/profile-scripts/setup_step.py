"""Scratch: build the graded command of a mini task (local sandbox), as ablate.py did."""
import os, sys, tempfile
sys.path.insert(0, "/work/wt-overhead3/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import LocalSandbox, create_workspace
from loopwright.scoring import PytestGrader, TaskTests, restore_tests
from loopwright.scoring._kit import BOOT
from loopwright.tasks import load_benchmark, apply_overlay

def build(task_id, root):
    t = next(t for t in load_benchmark("mini").tasks if t.id == task_id)
    grader = PytestGrader(LocalSandbox())
    ws = create_workspace(t.repo_dir, root / "ws"); apply_overlay(t.solution_dir, ws.path)
    path = ws.path.resolve()
    restored = restore_tests(path, t, TaskTests.capture(t))
    private = Path(tempfile.mkdtemp(prefix="kit-", dir=root))
    step = grader._step(path, t, private, restored.conftests)
    at = step.argv.index(BOOT) + 3
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "LANG": "C.UTF-8", **step.env}
    prepared = go.prepare(t, root / "prepared" / t.id)
    return t, step, at, path, env, prepared
