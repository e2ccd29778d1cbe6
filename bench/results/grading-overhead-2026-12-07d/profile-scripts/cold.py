import sys, time
exec(open("/tmp/ov3/passes.py").read().split("for f in (names_pass")[0])
import statistics
junk = bytearray(16 << 20)
def flush():
    for i in range(0, len(junk), 64): junk[i] = (junk[i] + 1) & 255
def cold(f, n=40):
    ts = []
    for _ in range(n):
        flush(); t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6
fs_sorted = sorted(functions, key=id); codes_sorted = tuple(f.__code__ for f in fs_sorted)
def codes_sorted_pass(): return not any(map(is_not, map(getcode, fs_sorted), codes_sorted))
# names: within each namespace, names ordered by id of value
sg = []
for ns, g, then in groups:
    names = [n for n in ns if not n.startswith("__")]
for f in (names_pass, codes_pass, codes_sorted_pass):
    print(f.__name__, f"{cold(f):.0f} us cold", f"{cold(lambda: [f() for _ in range(1)] ):.0f}")
def build(key):
    gs = []; vals = []
    for ns, g, then in groups:
        names = [k for k, v in list(ns.items()) if not k.startswith("__") and (callable(v) or isinstance(v, (types.FunctionType, staticmethod, classmethod, property)))]
        names.sort(key=key(ns))
        gg = itemgetter(*(names + names if len(names) == 1 else names))
        gs.append(gg); vals.extend(gg(ns))
    return tuple(gs), tuple(vals)
g_id, v_id = build(lambda ns: (lambda n: id(ns[n])))
g_k, v_k = build(lambda ns: (lambda n: id(n)))
def names_byval(): return not any(map(is_not, chain.from_iterable(map(apply, g_id, namespaces)), v_id))
def names_bykey(): return not any(map(is_not, chain.from_iterable(map(apply, g_k, namespaces)), v_k))
for f in (names_pass, names_byval, names_bykey, names_pass):
    print(f.__name__, f"{cold(f):.0f} us cold")
