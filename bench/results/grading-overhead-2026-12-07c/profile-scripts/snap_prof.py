import sys, time, types, statistics
from itertools import chain, compress, repeat
from operator import attrgetter, is_, is_not, itemgetter, or_
import pytest, _pytest.python, _pytest.runner, _pytest.main, _pytest.junitxml, _pytest.skipping, _pytest.unittest, pluggy, unittest.case
import _pytest.config
cfg = _pytest.config.get_config()  # loads pytest's builtin plugins
import pytest_timeout
_FUNCTION_KINDS = (types.FunctionType, staticmethod, classmethod, property)
_WRAPPERS = (staticmethod, classmethod, property)
function_type = types.FunctionType
getcode = attrgetter("__code__")
def _functions(value):
    if isinstance(value, types.FunctionType): return [value]
    if isinstance(value, (staticmethod, classmethod)): return _functions(value.__func__)
    if isinstance(value, property): return [f for f in (value.fget, value.fset, value.fdel) if isinstance(f, types.FunctionType)]
    return []
def _spaces(modules):
    found = []
    for module in modules:
        found.append(module)
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                found.append(value)
    return found
_PLUGGY = ("pluggy._callers", "pluggy._hooks", "pluggy._manager", "pluggy._result")
def mods():
    return [m for n, m in sorted(sys.modules.items()) if (n == "pytest" or n.startswith("_pytest.") or n in _PLUGGY or n in ("pluggy", "unittest.case")) and isinstance(m, types.ModuleType)]
T = {}
def tick(k, c):
    now = time.thread_time(); T.setdefault(k, []).append(now - c); return now
def old():
    c = time.thread_time()
    modules = mods(); c = tick("modules", c)
    spaces = _spaces(modules); c = tick("spaces", c)
    groups, functions, codes, watched = [], [], [], {}
    for space in spaces:
        namespace = vars(space)
        names = [name for name, value in list(namespace.items()) if not name.startswith("__") and (callable(value) or isinstance(value, _FUNCTION_KINDS))]
        if not names: continue
        owner = getattr(space, "__qualname__", None) or space.__name__
        getter = itemgetter(*(names + names if len(names) == 1 else names))
        then = getter(namespace)
        groups.append((namespace, getter, then, f"{owner}.", names))
        for value in then:
            if type(value) is function_type: found = (value,)
            elif isinstance(value, _FUNCTION_KINDS): found = _functions(value)
            else: continue
            for function in found:
                if id(function) not in watched:
                    watched[id(function)] = function; functions.append(function); codes.append(function.__code__)
    c = tick("old loop", c)
def new():
    c = time.thread_time()
    modules = mods(); spaces = _spaces(modules); c = time.thread_time()
    groups, candidates = [], []
    for space in spaces:
        namespace = vars(space)
        values = list(namespace.values())
        kept = map(or_, map(callable, values), map(isinstance, values, repeat(_FUNCTION_KINDS)))
        names = [name for name in compress(list(namespace), kept) if name[:2] != "__"]
        if not names: continue
        owner = getattr(space, "__qualname__", None) or space.__name__
        getter = itemgetter(*(names + names if len(names) == 1 else names))
        then = getter(namespace)
        groups.append((namespace, getter, then, f"{owner}.", names))
        candidates.extend(compress(then, map(is_, map(type, then), repeat(function_type))))
        for value in compress(then, map(isinstance, then, repeat(_WRAPPERS))):
            candidates.extend(_functions(value))
    c = tick("new names", c)
    functions = list(dict(zip(map(id, candidates), candidates)).values())
    codes = list(map(getcode, functions))
    c = tick("new funcs", c)
for i in range(30):
    old(); new()
for k, v in T.items(): print(f"{k:12} {1000*statistics.median(v):6.2f} ms (min {1000*min(v):.2f})")
def parts():
    modules = mods(); spaces = _spaces(modules)
    acc = dict.fromkeys(["values", "kept", "owner", "getter", "then", "cands"], 0.0)
    tt = time.thread_time
    n_entries = 0
    for space in spaces:
        c = tt()
        namespace = vars(space)
        values = list(namespace.values()); n_entries += len(values)
        c2 = tt(); acc["values"] += c2 - c; c = c2
        kept = map(or_, map(callable, values), map(isinstance, values, repeat(_FUNCTION_KINDS)))
        names = [name for name in compress(list(namespace), kept) if name[:2] != "__"]
        c2 = tt(); acc["kept"] += c2 - c; c = c2
        if not names: continue
        owner = getattr(space, "__qualname__", None) or space.__name__
        c2 = tt(); acc["owner"] += c2 - c; c = c2
        getter = itemgetter(*(names + names if len(names) == 1 else names))
        c2 = tt(); acc["getter"] += c2 - c; c = c2
        then = getter(namespace)
        c2 = tt(); acc["then"] += c2 - c; c = c2
        cands = list(compress(then, map(is_, map(type, then), repeat(function_type))))
        c2 = tt(); acc["cands"] += c2 - c; c = c2
    return acc, n_entries, len(spaces)
for i in range(3):
    acc, n, ns = parts()
print({k: round(v * 1000, 2) for k, v in acc.items()}, n, ns)
c = time.thread_time()
for i in range(1000): time.thread_time()
print("thread_time cost us", (time.thread_time() - c) * 1000)
