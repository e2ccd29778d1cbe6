import sys, tempfile, collections
from pathlib import Path
from loopwright.sandbox import default_sandbox, create_workspace, remove_workspace
import loopwright.sandbox._process as proc
from loopwright.scoring import PytestGrader
from loopwright.tasks import load_benchmark, apply_overlay
kinds = collections.Counter(); sizes = collections.Counter()
o = proc._Watcher._read
def rd(self, pipe, fd, capture):
    import os
    kinds[getattr(capture, "name", None) or repr(capture)[:40]] += 1
    return o(self, pipe, fd, capture)
proc._Watcher._read = rd
g = PytestGrader(default_sandbox(sys.argv[1]))
root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
t = [t for t in load_benchmark("mini").tasks if t.id == "l2-fsm-guards"][0]
ws = create_workspace(t.repo_dir, root); apply_overlay(t.solution_dir, ws.path)
gr = g.grade(ws.path, t); print(gr.score, len(gr.tests))
print(kinds)
