import sys, tempfile
from pathlib import Path
from loopwright.sandbox import default_sandbox, create_workspace, remove_workspace
import loopwright.scoring._kit as kit
import loopwright.sandbox._process as proc
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark, apply_overlay
n = [0]; o = proc._Watcher._step
def st(self, until): n[0] += 1; return o(self, until)
proc._Watcher._step = st
g = PytestGrader(default_sandbox(sys.argv[1]))
root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
for src in sys.argv[2:]:
    kit._PLUGIN_SOURCE = Path(src); kit._guard_files.cache_clear()
    n[0] = 0; k = 0
    for t in load_benchmark("mini").tasks:
        ws = create_workspace(t.repo_dir, root); apply_overlay(t.solution_dir, ws.path)
        assert g.grade(ws.path, t).score == 1.0; remove_workspace(ws); k += 1
    print(src, "pump steps per grade", n[0] / k)
