"""Scratch: the graded command (local, started directly) with guard variants; CPU of the child (wait4), ms."""
import os, sys, statistics, tempfile, subprocess, importlib.util, marshal, re, json
sys.path.insert(0, "/work/wt-overhead2/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import LocalSandbox, create_workspace
from loopwright.scoring import PytestGrader, TaskTests, restore_tests
from loopwright.scoring._kit import BOOT
from loopwright.tasks import load_benchmark, apply_overlay
R = int(sys.argv[1]); ids = sys.argv[2].split(",")
VARIANTS = json.loads(Path(sys.argv[3]).read_text()) if len(sys.argv) > 3 else {}
tasks = [t for t in load_benchmark("mini").tasks if t.id in ids]
root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
grader = PytestGrader(LocalSandbox())
env0 = {"PATH": os.environ["PATH"], "HOME": str(root), "LANG": "C.UTF-8"}
def write_variant(kit, plugin, name, subs):
    src = (kit / f"{plugin}.py").read_text()
    for a, b in subs:
        assert a in src, a
        src = src.replace(a, b)
    new = f"{plugin}{name}"
    (kit / f"{new}.py").write_text(src)
    (kit / f"{new}.json").write_bytes((kit / f"{plugin}.json").read_bytes())
    if (kit / f"{plugin}.code").exists(): (kit / f"{new}.code").write_bytes((kit / f"{plugin}.code").read_bytes())
    source = src.encode()
    code = compile(source, str(kit / f"{new}.py"), "exec", dont_inherit=True)
    header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") + importlib.util.source_hash(source)
    (kit / "__pycache__" / f"{new}.{sys.implementation.cache_tag}.pyc").write_bytes(header + marshal.dumps(code))
    return new
res = {}
for t in tasks:
    ws = create_workspace(t.repo_dir, root / "ws"); apply_overlay(t.solution_dir, ws.path)
    path = ws.path.resolve()
    restored = restore_tests(path, t, TaskTests.capture(t))
    prepared = go.prepare(t, root / "prepared" / t.id)
    private = Path(tempfile.mkdtemp(prefix="kit-", dir=root))
    step = grader._step(path, t, private, restored.conftests)
    at = step.argv.index(BOOT) + 3
    kit = Path(step.argv[at - 2]); plugin = step.argv[at]
    arms = {"plain": (go.plain_argv(t), prepared, go.PLAIN_ENV),
            "guard": (step.argv, path, {**env0, **step.env}),
            "no guard": ([*step.argv[:at], "", *step.argv[at + 1:]], path, {**env0, **step.env})}
    for vname, subs in VARIANTS.items():
        new = write_variant(kit, plugin, "_" + re.sub(r"\W", "", vname), subs)
        arms[vname] = ([*step.argv[:at], new, *step.argv[at + 1:]], path, {**env0, **step.env})
    names = list(arms)
    for rep in range(R + 1):
        for name in go.balanced(names, rep):
            record = Path(step.env["LOOPWRIGHT_GUARD_RECORD"])
            for p in record.parent.glob("*"): p.unlink()
            cpu = go.child_cpu(*arms[name])
            if rep: res.setdefault(name, {}).setdefault(t.id, []).append(cpu)
plain = sum(statistics.median(v) for v in res["plain"].values())
for name, by in res.items():
    tot = sum(statistics.median(v) for v in by.values())
    print(f"{name:24} {1000*tot/len(by):8.2f} ms/task  over plain {1000*(tot-plain)/len(by):6.2f}  ratio {tot/plain:.3f}")
