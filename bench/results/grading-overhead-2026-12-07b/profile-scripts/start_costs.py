import os, resource, subprocess, sys, time, statistics
import loopwright.scoring, loopwright.sandbox, loopwright.evaluation  # a loaded host
def child_cpu(argv):
    p = subprocess.Popen(argv)
    _, st, ru = os.wait4(p.pid, 0); p.returncode = 0
    return ru.ru_utime + ru.ru_stime
def fork_cpu():
    t0 = time.process_time()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    _, st, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime + time.process_time() - t0
print("rss MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)
for name, f in [("python -I -S -c pass", lambda: child_cpu([sys.executable, "-I", "-S", "-c", "pass"])),
                ("python -I -S -X frozen", lambda: child_cpu([sys.executable, "-I", "-S", "-X", "frozen_modules=on", "-c", "pass"])),
                ("sh -c true", lambda: child_cpu(["sh", "-c", "true; exit $?"])),
                ("true", lambda: child_cpu(["true"])),
                ("setpriv nnp true", lambda: child_cpu(["setpriv", "--no-new-privs", "true"])),
                ("fork+_exit", fork_cpu)]:
    xs = [f() for _ in range(40)]
    print(f"{name:24} {1000*statistics.median(xs):6.2f} ms")
