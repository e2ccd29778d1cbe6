"""Scratch: cProfile inside the graded pytest (guard on / off), one task; prints top functions."""
import sys, subprocess, tempfile
sys.path.insert(0, "/tmp/ov3")
from pathlib import Path
from setup_step import build, BOOT
task_id, mode, out = sys.argv[1], sys.argv[2], sys.argv[3]
root = Path(tempfile.mkdtemp(dir="/tmp/ov3"))
t, step, at, path, env, prepared = build(task_id, root)
boot = BOOT.replace("status = int(pytest.main(plugins=[__import__(guard)] if guard else []))",
  "import cProfile, time\n_p = cProfile.Profile(time.thread_time)\n_p.enable()\nstatus = int(pytest.main(plugins=[__import__(guard)] if guard else []))\n_p.disable(); _p.dump_stats(" + repr(out) + ")")
assert boot != BOOT
argv = list(step.argv); argv[argv.index(BOOT)] = boot
if mode == "noguard": argv[at] = ""
record = Path(step.env["LOOPWRIGHT_GUARD_RECORD"])
for i in range(2):
    for p in record.parent.glob("*"): p.unlink()
    r = subprocess.run(argv, cwd=path, env=env, capture_output=True, text=True)
print(r.returncode, r.stdout[-300:], r.stderr[-500:])
