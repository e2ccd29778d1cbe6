"""Scratch: Ir (callgrind) of plain pytest, the graded command with the guard, and guard variants
(text substitutions in the kit's plugin source, as ablate.py)."""
import sys, subprocess, tempfile, re, os, json, importlib.util, marshal
sys.path.insert(0, "/tmp/ov3")
from pathlib import Path
from setup_step import build, BOOT
import grading_overhead as go
task_id = sys.argv[1]
VARIANTS = json.loads(Path(sys.argv[2]).read_text()) if len(sys.argv) > 2 else {}
root = Path(tempfile.mkdtemp(dir="/tmp/ov3"))
t, step, at, path, env, prepared = build(task_id, root)
kit = Path(step.argv[at - 2]); plugin = step.argv[at]
record = Path(step.env["LOOPWRIGHT_GUARD_RECORD"])
def write_variant(name, subs):
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
def ir(a, cwd, e):
    out = root / "cg.out"
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *a], cwd=cwd, env=e, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if m else r.stderr[-800:]
arms = {"plain": (go.plain_argv(t), prepared, go.PLAIN_ENV), "guard": (step.argv, path, env)}
for vname, subs in VARIANTS.items():
    new = write_variant("_" + re.sub(r"\W", "", vname), subs)
    arms[vname] = ([*step.argv[:at], new, *step.argv[at + 1:]], path, env)
for name, (a, cwd, e) in arms.items():
    for p in record.parent.glob("*"): p.unlink()
    subprocess.run(a, cwd=cwd, env=e, capture_output=True)
    for p in record.parent.glob("*"): p.unlink()
    print(f"{name:30} {ir(a, cwd, e)/1e6:10.2f} Mi", flush=True)
