"""Host-thread CPU of run_process for a command that writes N small lines on its channel, spaced."""
import os, sys, time, statistics
from pathlib import Path
from loopwright.sandbox._process import run_process
import loopwright.sandbox._process as P
code = "import os,time\nfd=int(os.environ['LOOPWRIGHT_CHANNEL_FD'])\nfor i in range(80):\n    os.write(fd, b'report 0011 call passed 0\\n'); time.sleep(0.002)\nprint('x'*300)\n"
env = {"PATH": os.environ["PATH"], "HOME": "/tmp"}
argv = [sys.executable, "-S", "-c", code]
def once(reap):
    c = time.thread_time()
    o = run_process(argv, cwd=Path("/tmp"), env=env, timeout_s=30, output_cap=100000, reap=reap, channel=True)
    assert o.exit_code == 0 and o.channel.count(b"\n") == 80, o
    return time.thread_time() - c
for reap in (False, True):
    xs = [once(reap) for _ in range(30)]
    print("reap", reap, "host thread ms", round(1000*statistics.median(xs), 3))
