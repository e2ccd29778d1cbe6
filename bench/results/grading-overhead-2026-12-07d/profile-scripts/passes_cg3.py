import sys, gc
exec(open("/tmp/ov3/passes.py").read().split("for f in (names_pass")[0])
which = sys.argv[1]; n = int(sys.argv[2])
mod = [(ns, g, t) for ns, g, t in groups if type(ns) is dict]
cls = [(ns, g, t) for ns, g, t in groups if type(ns) is not dict]
real = [(gc.get_referents(ns)[0], g, t) for ns, g, t in cls]
def mk(gr):
    N = tuple(x[0] for x in gr); G = tuple(x[1] for x in gr); V = tuple(chain.from_iterable(x[2] for x in gr))
    return (lambda: tuple(chain.from_iterable(map(apply, G, N)))), len(V)
fs = {"mod": mk(mod), "cls": mk(cls), "clsreal": mk(real), "none": ((lambda: 1), 0)}
f, cnt = fs[which]
print(which, cnt, file=sys.stderr)
for _ in range(n): f()
