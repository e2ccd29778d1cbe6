import sys, time, types, statistics
from itertools import chain
from operator import attrgetter, is_not, itemgetter
import pytest, _pytest.python, _pytest.runner, _pytest.main, _pytest.junitxml, _pytest.skipping, _pytest.unittest, pluggy, unittest.case
import pytest_timeout
sys.path.insert(0, "/work/wt-overhead2/src/loopwright/scoring")
# emulate snapshot
_FUNCTION_KINDS = (types.FunctionType, staticmethod, classmethod, property)
def _functions(value):
    if isinstance(value, types.FunctionType): return [value]
    if isinstance(value, (staticmethod, classmethod)): return _functions(value.__func__)
    if isinstance(value, property): return [f for f in (value.fget, value.fset, value.fdel) if isinstance(f, types.FunctionType)]
    return []
modules = [m for n, m in sorted(sys.modules.items()) if (n == "pytest" or n.startswith("_pytest.") or n.startswith("pluggy") or n == "unittest.case") and isinstance(m, types.ModuleType)]
spaces = []
for m in modules:
    spaces.append(m)
    for v in list(vars(m).values()):
        if isinstance(v, type) and v.__module__ == m.__name__: spaces.append(v)
groups, functions, function_codes, watched = [], [], [], {}
for space in spaces:
    ns = vars(space)
    names = [n for n, v in list(ns.items()) if not n.startswith("__") and (callable(v) or isinstance(v, _FUNCTION_KINDS))]
    if not names: continue
    values = [ns[n] for n in names]
    twice = len(names) == 1
    keys = names + names if twice else names
    groups.append((ns, itemgetter(*keys), tuple(values + values) if twice else tuple(values)))
    for v in values:
        for f in (v,) if type(v) is types.FunctionType else _functions(v):
            if id(f) not in watched:
                watched[id(f)] = f; functions.append(f); function_codes.append(f.__code__)
namespaces = tuple(g[0] for g in groups); getters = tuple(g[1] for g in groups)
values = tuple(chain.from_iterable(g[2] for g in groups))
fnames = [m.__name__ for m in modules] * 2
module_getter = itemgetter(*fnames); mods = tuple(modules) * 2
apply = itemgetter.__call__
getcode = attrgetter("__code__")
print(len(namespaces), "namespaces", len(values), "names", len(functions), "functions", len(modules), "modules")
def names_pass():
    now = chain.from_iterable(map(apply, getters, namespaces))
    return not any(map(is_not, now, values))
def codes_pass():
    return not any(map(is_not, map(getcode, functions), function_codes))
def mods_pass():
    return not any(map(is_not, module_getter(sys.modules), mods))
junk = bytearray(8 << 20)
def flush():
    for i in range(0, len(junk), 64): junk[i] = (junk[i] + 1) & 255
for name, f in [("names", names_pass), ("codes", codes_pass), ("modules", mods_pass)]:
    warm, cold = [], []
    for i in range(30):
        c = time.perf_counter(); assert f(); warm.append(time.perf_counter() - c)
        flush()
        c = time.perf_counter(); assert f(); cold.append(time.perf_counter() - c)
    print(f"{name:8} warm {1e6*statistics.median(warm):7.1f} us  cold {1e6*statistics.median(cold):7.1f} us")

# variants: tuple equality (pointer compares, no per-item call)
then_per_ns = [g[2] for g in groups]
def names_eq():
    return list(map(apply, getters, namespaces)) == then_per_ns
fc_list = list(function_codes)
def codes_eq():
    return list(map(getcode, functions)) == fc_list
def mods_eq():
    return module_getter(sys.modules) == mods
for name, f in [("names eq", names_eq), ("codes eq", codes_eq), ("mods eq", mods_eq)]:
    warm, cold = [], []
    for i in range(30):
        c = time.perf_counter(); assert f(); warm.append(time.perf_counter() - c)
        flush()
        c = time.perf_counter(); assert f(); cold.append(time.perf_counter() - c)
    print(f"{name:8} warm {1e6*statistics.median(warm):7.1f} us  cold {1e6*statistics.median(cold):7.1f} us")

from operator import is_
ids_then = list(map(id, values))
def names_ids():
    return list(map(id, chain.from_iterable(map(apply, getters, namespaces)))) == ids_then
def names_flat_isnot():
    now = [v for t in map(apply, getters, namespaces) for v in t]
    return not any(map(is_not, now, values))
def names_per_ns():
    # per-namespace: tuple compare by identity via map(is_not) on each
    for g, ns, then in zip(getters, namespaces, then_per_ns):
        if any(map(is_not, g(ns), then)): return False
    return True
fc_ids = list(map(id, function_codes))
def codes_ids():
    return list(map(id, map(getcode, functions))) == fc_ids
for name, f in [("names ids", names_ids), ("names per-ns", names_per_ns), ("codes ids", codes_ids)]:
    warm, cold = [], []
    for i in range(30):
        c = time.perf_counter(); assert f(); warm.append(time.perf_counter() - c)
        flush()
        c = time.perf_counter(); assert f(); cold.append(time.perf_counter() - c)
    print(f"{name:8} warm {1e6*statistics.median(warm):7.1f} us  cold {1e6*statistics.median(cold):7.1f} us")
mod_names = sum(len(g[2]) for g in groups if isinstance(g[0], dict) and g[0] is not None and any(g[0] is vars(m) for m in modules))
print("module-level names", mod_names, "class names", len(values) - mod_names)
fn_mod = sum(1 for g in groups if any(g[0] is vars(m) for m in modules) for v in g[2] if type(v) is types.FunctionType)
print("module-level plain functions", fn_mod)
