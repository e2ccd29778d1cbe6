"""Scratch: instruction-light alternatives for the per-test names/codes passes (warm timings)."""
import sys, time, types
from itertools import chain
from operator import attrgetter, is_not, itemgetter
import pytest, _pytest.python, _pytest.runner, _pytest.junitxml, _pytest.unittest, _pytest.skipping, _pytest.main
import pluggy, unittest.case
_PLUGGY = ("pluggy._callers", "pluggy._hooks", "pluggy._manager", "pluggy._result")
mods = [m for n, m in sorted(sys.modules.items()) if (n == "pytest" or n.startswith("_pytest.") or n in _PLUGGY or n in ("pluggy", "unittest.case")) and isinstance(m, types.ModuleType)]
spaces = []
for m in mods:
    spaces.append(m)
    spaces += [v for v in list(vars(m).values()) if isinstance(v, type) and v.__module__ == m.__name__]
groups = []; functions = []; seen = set()
for s in spaces:
    ns = vars(s)
    names = [k for k, v in list(ns.items()) if not k.startswith("__") and (callable(v) or isinstance(v, (types.FunctionType, staticmethod, classmethod, property)))]
    if not names: continue
    g = itemgetter(*(names + names if len(names) == 1 else names))
    then = g(ns)
    groups.append((ns, g, then))
    for v in then:
        if type(v) is types.FunctionType and id(v) not in seen:
            seen.add(id(v)); functions.append(v)
codes = tuple(f.__code__ for f in functions)
namespaces = tuple(g[0] for g in groups); getters = tuple(g[1] for g in groups)
values = tuple(chain.from_iterable(g[2] for g in groups))
apply = itemgetter.__call__; getcode = attrgetter("__code__")
print(len(namespaces), len(values), len(functions), "entries total", sum(len(ns) for ns in namespaces))
def names_pass(): return not any(map(is_not, chain.from_iterable(map(apply, getters, namespaces)), values))
def codes_pass(): return not any(map(is_not, map(getcode, functions), codes))
# alternative: the whole value sequence and key sequence of each namespace
from operator import methodcaller; mvalues = methodcaller("values"); mkeys = methodcaller("keys")
allvals = tuple(chain.from_iterable(map(mvalues, namespaces)))
allkeys = tuple(chain.from_iterable(map(mkeys, namespaces)))
lens = tuple(map(len, namespaces))
def seq_pass(): return (tuple(map(len, namespaces)) == lens and not any(map(is_not, chain.from_iterable(map(mvalues, namespaces)), allvals)) and not any(map(is_not, chain.from_iterable(map(mkeys, namespaces)), allkeys)))
ftuple = tuple(functions)
def codes_tuple(): return tuple(map(getcode, ftuple)) == codes  # (not usable as is: == )
for f in (names_pass, codes_pass, seq_pass):
    assert f(), f
    best = min((lambda: (lambda t0: [f() for _ in range(200)] and (time.perf_counter() - t0) / 200)(time.perf_counter()))() for _ in range(5))
    print(f"{f.__name__:12} {best*1e6:8.1f} us")
