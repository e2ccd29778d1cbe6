import sys, tempfile, time, statistics, os
from pathlib import Path
from loopwright.sandbox import create_workspace, remove_workspace
from loopwright.sandbox._template import cached_template, signature
from loopwright.tasks import load_benchmark
t = load_benchmark("mini").tasks[0]
root = Path(tempfile.mkdtemp(dir=sys.argv[1]))
ws = create_workspace(t.repo_dir, root); remove_workspace(ws)
tpl = cached_template.get(t.repo_dir.resolve(), signature(t.repo_dir))
print(len(tpl.entries), "entries", sum(len(e.content or b"") for e in tpl.entries), "bytes")
for e in tpl.entries: print("  ", e.rel, len(e.content or b""))
res, sig, rm, cw = [], [], [], []
for i in range(40):
    d = Path(tempfile.mkdtemp(dir=root))
    c = time.thread_time(); tpl.write(d); res.append(time.thread_time() - c)
    c = time.thread_time(); signature(t.repo_dir); sig.append(time.thread_time() - c)
    c = time.thread_time(); ws = create_workspace(t.repo_dir, root); cw.append(time.thread_time() - c)
    c = time.thread_time(); remove_workspace(ws); rm.append(time.thread_time() - c)
for k, v in [("write", res), ("signature", sig), ("create_workspace", cw), ("remove", rm)]:
    print(f"{k:18} median {1000*statistics.median(v):.2f} ms  min {1000*min(v):.2f}")
