import sys, tempfile, time, statistics, hashlib, shutil
from pathlib import Path
from loopwright.sandbox import default_sandbox, create_workspace
from loopwright.scoring import PytestGrader, TaskTests, restore_tests
import loopwright.scoring._grader as gm
import loopwright.scoring._kit as km
from loopwright._scratch import memory_scratch
from loopwright.tasks import load_benchmark, apply_overlay, node_files
t = [t for t in load_benchmark("mini").tasks if t.id == "l2-fsm-guards"][0]
root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
g = PytestGrader(default_sandbox("bubblewrap"))
ws = create_workspace(t.repo_dir, root); apply_overlay(t.solution_dir, ws.path)
path = ws.path.resolve()
T = {}
def timed(name, f, *a, **k):
    c = time.thread_time(); r = f(*a, **k); T.setdefault(name, []).append(time.thread_time() - c); return r
for i in range(40):
    tests = timed("capture", TaskTests.capture, t)
    restored = timed("restore", restore_tests, path, t, tests)
    private = Path(timed("mkdtemp", tempfile.mkdtemp, prefix="lw-grade-", dir=memory_scratch()))
    seen = g.sandbox.visible
    tn = node_files(t.test_ids)
    rels = [p.relative_to(path) for p in restored.conftests]
    helpers = timed("helpers", gm._helpers, path, t, {*tn, *map(str, rels)})
    rest = timed("contents", gm._contents, path, [*tn, *(p.as_posix() for p in rels), *helpers])
    digests = timed("digests", lambda: {rel: hashlib.sha256(d).hexdigest() for rel, d in rest.items()})
    compiled = timed("precompiled", gm.precompiled, (d for r, d in rest.items() if r not in helpers))
    kit = timed("write_kit", km.write_kit, private, rels, tn, helpers, digests, compiled)
    step = timed("_step whole", g._step, path, t, Path(tempfile.mkdtemp(dir=memory_scratch())), restored.conftests)
    timed("rmtree", shutil.rmtree, private)
for k, v in T.items(): print(f"{k:14} {1000*statistics.median(v):6.3f} ms")
