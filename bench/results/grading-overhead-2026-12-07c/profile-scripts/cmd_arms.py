"""Scratch: the graded step through bubblewrap / local / directly, and `true` and bare bwrap variants; cgroup CPU ms."""
import os, sys, statistics, tempfile, subprocess
sys.path.insert(0, "/work/wt-overhead2/bench")
import grading_overhead as go
from pathlib import Path
from loopwright.sandbox import BubblewrapSandbox, LocalSandbox, create_workspace
from loopwright.sandbox import _bwrap
from loopwright.scoring import PytestGrader, TaskTests, restore_tests
from loopwright.tasks import load_benchmark, apply_overlay
go.CLOCK = go.CgroupClock.open()
R = int(sys.argv[1]) if len(sys.argv) > 1 else 9
try:
    tasks = [t for t in load_benchmark("mini").tasks if t.id in ("l1-slugify", "l2-fsm-guards")]
    root = Path(tempfile.mkdtemp(dir="/tmp/ov2"))
    sb = {"bubblewrap": BubblewrapSandbox(), "local": LocalSandbox()}
    res = {}
    bw = _bwrap.shutil.which("bwrap")
    flags = _bwrap._isolation_flags(network=False)
    def bare(fl):
        return lambda: subprocess.run([bw, *fl, "--", "/bin/true"], check=True)
    variants = {
        "bwrap bare true": bare(flags),
        "bwrap no unshare-net": bare([f for f in flags if f != "--unshare-net"]),
        "bwrap no ipc/uts/cgroup": bare([f for f in flags if f not in ("--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")]),
        "bwrap no pid": bare([f for f in flags if f != "--unshare-pid"]),
        "plain true": lambda: subprocess.run(["/bin/true"], check=True),
    }
    for t in tasks:
        grader = {k: PytestGrader(s) for k, s in sb.items()}
        ws = create_workspace(t.repo_dir, root / "ws"); apply_overlay(t.solution_dir, ws.path)
        path = ws.path.resolve()
        restored = restore_tests(path, t, TaskTests.capture(t))
        for rep in range(R + 1):
            for arm in ["bubblewrap", "local"]:
                private = Path(tempfile.mkdtemp(prefix="kit-", dir=root))
                step = grader[arm]._step(path, t, private, restored.conftests)
                c = go.cpu_s()
                r = sb[arm].run(step.argv, cwd=path, env=step.env, timeout_s=60, writable=step.writable, readonly=step.readonly, channel=True)
                d = go.cpu_s() - c
                assert r.exit_code == 0, r.output[-500:] if hasattr(r,'output') else r
                if rep: res.setdefault((t.id, arm + " step"), []).append(d)
                c = go.cpu_s()
                sb[arm].run(["true"], cwd=path, timeout_s=60)
                d = go.cpu_s() - c
                if rep: res.setdefault(("", arm + " true"), []).append(d)
            for name, f in variants.items():
                c = go.cpu_s(); f(); d = go.cpu_s() - c
                if rep: res.setdefault(("", name), []).append(d)
    for k, v in sorted(res.items()): print(f"{k[0]:16} {k[1]:28} median {1000*statistics.median(v):7.2f}  mean {1000*statistics.mean(v):7.2f}")
finally:
    go.CLOCK.close()
