import sys
exec(open("/tmp/ov3/passes.py").read().split("for f in (names_pass")[0])
from operator import getitem
which = sys.argv[1]; n = int(sys.argv[2])
nss = []; nms = []
for ns, g, then in groups:
    names = [k for k, v in list(ns.items()) if not k.startswith("__") and (callable(v) or isinstance(v, (types.FunctionType, staticmethod, classmethod, property)))]
    if len(names) == 1: names = names * 2
    nss += [ns] * len(names); nms += names
nss = tuple(nss); nms = tuple(nms)
assert tuple(map(getitem, nss, nms)) == values
fs = {"cur": names_pass, "flat": lambda: not any(map(is_not, map(getitem, nss, nms), values)), "none": lambda: True}
f = fs[which]
for _ in range(n): assert f()
