"""Scratch: thread-CPU spans of the guard's parts inside the graded process (instrumented copy of
the kit's plugin), one task, N runs; medians in ms. Also the whole process CPU (wait4)."""
import sys, subprocess, tempfile, re, json, statistics, os
sys.path.insert(0, "/tmp/ov3")
from pathlib import Path
exec(open("/tmp/ov3/cg2.py").read().split("def ir(")[0].replace("VARIANTS = json.loads(Path(sys.argv[2]).read_text()) if len(sys.argv) > 2 else {}", "VARIANTS = {}; N = int(sys.argv[2])"))
src = Path(sys.argv[3]).read_text() if len(sys.argv) > 3 else (kit / f"{plugin}.py").read_text()
inst = '''
import time as _t
_SPANS = {}
def _timed(name, f):
    def w(*a, **k):
        c = _t.thread_time()
        try:
            return f(*a, **k)
        finally:
            _SPANS[name] = _SPANS.get(name, 0.0) + _t.thread_time() - c
    return w
'''
src = src.replace("_FUNCTION_KINDS = (", inst + "\n_FUNCTION_KINDS = (", 1)
names = ["snapshot", "check", "changed_code", "changed_manager", "changed_guard", "foreign_hook", "changed_in_place", "legitimate_test", "rewrite_test"]
for name in names:
    pat = rf"(\n    (?:@pytest\.hookimpl\([^)]*\)\n    )?def {name}\(.*?\n)(?=\n    (?:def |@|[a-z]))"
    src2 = re.sub(pat, lambda m: m.group(1) + f"\n    {name} = _timed({name!r}, {name})\n", src, count=1, flags=re.S)
    assert src2 != src, name
    src = src2
src = src.replace('        record.write_text(dumps(result), encoding="utf-8")', '        record.write_text(dumps(result), encoding="utf-8")\n        import sys as _s; _s.stderr.write("SPANS " + dumps(_SPANS) + "\\n")')
src = src.replace('def _guard(here: str, module: types.ModuleType) -> dict[str, Any]:\n', 'def _guard(here: str, module: types.ModuleType) -> dict[str, Any]:\n    _c0 = _t.thread_time()\n', 1)
src = src.replace('    send("start")\n    return names', '    send("start")\n    _SPANS["guard setup"] = _t.thread_time() - _c0\n    return names')
marks = [("        framework.extend((m.__name__, m) for m in modules)", "a_modules"),
         ("        # In the order they lie in memory: the per-test pass", "b_spaces"),
         ("        known_codes.update(zip(map(id, function_codes), function_codes))", "c_sort"),
         ("        for plugin in list(sys.modules.values()):  # plugins named by `-p`, loaded by now", "d_flat"),
         ("        digest.append(code_digest(list(known_codes.values())))", "e_plugins"),
         ("        running.append(deopt_table(list(known_codes.values())))", "f_digest")]
for line, name in marks:
    assert line in src, line
    src = src.replace(line, f"        _SPANS[{name!r}] = _SPANS.get({name!r}, 0) + _t.thread_time() - _c1; _c1 = _t.thread_time()\n" + line, 1)
src = src.replace("        modules = [\n            module\n            for name, module in sorted(sys.modules.items())", "        _c1 = _t.thread_time()\n        modules = [\n            module\n            for name, module in sorted(sys.modules.items())", 1)
new = write_variant("_spans", [])
(kit / f"{new}.py").write_text(src)
import importlib.util, marshal
code = compile(src.encode(), str(kit / f"{new}.py"), "exec", dont_inherit=True)
header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") + importlib.util.source_hash(src.encode())
(kit / "__pycache__" / f"{new}.{sys.implementation.cache_tag}.pyc").write_bytes(header + marshal.dumps(code))
a = [*step.argv[:at], new, *step.argv[at + 1:]]
res = {}
for i in range(N + 1):
    for p in record.parent.glob("*"): p.unlink()
    r = subprocess.run(a, cwd=path, env=env, capture_output=True, text=True)
    line = [l for l in r.stderr.splitlines() if l.startswith("SPANS ")]
    if not line: print(r.stdout[-500:], r.stderr[-2000:]); break
    if i:
        for k, v in json.loads(line[0][6:]).items(): res.setdefault(k, []).append(v)
for k, v in res.items(): print(f"  {k:32} {1000*statistics.median(v):7.2f} ms")
