import sys, time
exec(open("/tmp/ov3/passes.py").read().split("for f in (names_pass")[0])
from itertools import compress, filterfalse, repeat
from operator import methodcaller, is_
K = (types.FunctionType, staticmethod, classmethod, property)
sp = [s for s in spaces]
def orig():
    out = []
    for space in sp:
        namespace = vars(space)
        names = [name for name, value in list(namespace.items()) if not name.startswith("__") and (callable(value) or isinstance(value, K))]
        out.append(names)
    return out
dunder = methodcaller("startswith", "__")
def fast():
    out = []
    for space in sp:
        namespace = vars(space)
        keys = list(namespace); vals = list(namespace.values())
        names = list(filterfalse(dunder, compress(keys, map(callable, vals))))
        names += filterfalse(dunder, compress(keys, map(isinstance, vals, repeat((classmethod, property)))))
        out.append(names)
    return out
a = orig(); b = fast()
assert [sorted(x) for x in a] == [sorted(x) for x in b], "differ"
print(sum(map(len, a)))
for f in (orig, fast, orig, fast):
    t = time.perf_counter(); [f() for _ in range(20)]; print(f.__name__, (time.perf_counter() - t) / 20 * 1e3, "ms")
