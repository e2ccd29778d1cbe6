import os, time, sys, tempfile, statistics, shutil
base = sys.argv[1]
res = []
for r in range(30):
    d = tempfile.mkdtemp(dir=base)
    c = time.thread_time()
    for i in range(8):
        os.mkdir(f"{d}/d{i}")
    for i in range(24):
        fd = os.open(f"{d}/d{i%8}/f{i}", os.O_WRONLY|os.O_CREAT|os.O_EXCL|os.O_CLOEXEC, 0o644)
        os.write(fd, b"x"*2000); os.close(fd)
    res.append(time.thread_time() - c)
    shutil.rmtree(d)
print(base, f"{1000*statistics.median(res):.2f} ms")
