"""Scratch: the snapshot's new name and function passes against the old loops, on every module
of pytest, pluggy and unittest.case loaded after a pytest start-up (plus classes)."""
import sys, types, importlib.util
import pytest, _pytest.config
from _pytest.config import get_config
cfg = get_config(); cfg.pluginmanager.import_plugin("pytest_timeout")
for name in list(_pytest.config.default_plugins): cfg.pluginmanager.import_plugin(name)
spec = importlib.util.spec_from_file_location("g", "/work/wt-overhead3/src/loopwright/scoring/_guard_plugin.py")
src = open(spec.origin).read().split("globals().update(_guard(__file__")[0]
g = {"__name__": "g"}; exec(compile(src, "g", "exec"), g)
_PLUGGY = g["_PLUGGY"] + g["_PLUGGY_OLD"]
mods = [m for n, m in sorted(sys.modules.items()) if (n == "pytest" or n.startswith("_pytest.") or n in _PLUGGY or n in ("pluggy", "unittest.case")) and isinstance(m, types.ModuleType)]
K = g["_FUNCTION_KINDS"]
def old_spaces(modules):
    found = []
    for module in modules:
        found.append(module)
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                found.append(value)
    return found
assert old_spaces(mods) == g["_spaces"](mods) and all(a is b for a, b in zip(old_spaces(mods), g["_spaces"](mods)))
nn = nf = 0
oldf, newf = {}, {}
for space in old_spaces(mods):
    ns = vars(space)
    old = [n for n, v in list(ns.items()) if not n.startswith("__") and (callable(v) or isinstance(v, K))]
    new = g["_watched_names"](ns)
    assert old == new, (space, set(old) ^ set(new))
    nn += len(new)
    for v in [ns[n] for n in old]:
        if type(v) is types.FunctionType: fs = (v,)
        elif isinstance(v, K): fs = g["_functions"](v)
        else: continue
        for f in fs: oldf[id(f)] = f
    for f in g["_held_functions"]([ns[n] for n in new]): newf[id(f)] = f
assert oldf.keys() == newf.keys() and all(oldf[k] is newf[k] for k in oldf)
print("names", nn, "functions", len(newf), "same")
import time
from operator import itemgetter
def t(f, n=20):
    c = time.thread_time()
    for _ in range(n): r = f()
    return (time.thread_time() - c) / n * 1e3
sp = g["_spaces"](mods)
print("spaces ms", t(lambda: g["_spaces"](mods)), len(sp))
print("names ms", t(lambda: [g["_watched_names"](vars(s)) for s in sp]))
allnames = [g["_watched_names"](vars(s)) for s in sp]
print("old names ms", t(lambda: [[n for n, v in list(vars(s).items()) if not n.startswith("__") and (callable(v) or isinstance(v, K))] for s in sp]))
print("getters ms", t(lambda: [itemgetter(*(n + n if len(n) == 1 else n))(vars(s)) for s, n in zip(sp, allnames) if n]))
thens = [itemgetter(*(n + n if len(n) == 1 else n))(vars(s)) for s, n in zip(sp, allnames) if n]
print("held ms", t(lambda: [g["_held_functions"](x) for x in thens]))
print("qualname ms", t(lambda: [getattr(s, "__qualname__", None) or s.__name__ for s in sp]))
def old_held():
    watched = {}
    for then in thens:
        for value in then:
            if type(value) is types.FunctionType: found = (value,)
            elif isinstance(value, K): found = g["_functions"](value)
            else: continue
            for f in found:
                if id(f) not in watched: watched[id(f)] = f
    return watched
def new_held():
    held = []
    for x in thens: held += g["_held_functions"](x)
    return sorted(dict(zip(map(id, held), held)).values(), key=id)
print("old held ms", t(old_held), "new held+dedupe+sort ms", t(new_held))
