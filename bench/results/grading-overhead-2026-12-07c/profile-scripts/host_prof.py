import cProfile, pstats, sys, tempfile, time
from pathlib import Path
from loopwright.sandbox import default_sandbox, create_workspace, remove_workspace
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark, apply_overlay
kind = sys.argv[1]; reps = int(sys.argv[2])
tasks = list(load_benchmark("mini").tasks)
g = PytestGrader(default_sandbox(kind))
g.grade = lambda ws, t, tests=None: g._grade(ws, t, tests)
root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
def one(t):
    ws = create_workspace(t.repo_dir, root); apply_overlay(t.solution_dir, ws.path)
    gr = g.grade(ws.path, t); assert gr.score == 1.0, gr.invalid_reason
    g.sandbox.release(ws.path); remove_workspace(ws)
for t in tasks: one(t)
pr = cProfile.Profile(time.thread_time)
pr.enable()
for r in range(reps):
    for t in tasks: one(t)
pr.disable()
n = reps * len(tasks)
st = pstats.Stats(pr); st.sort_stats(sys.argv[3] if len(sys.argv) > 3 else "tottime")
import io
s = io.StringIO(); st.stream = s; st.print_stats(35); print(s.getvalue()[:9000])
print("grades", n)
