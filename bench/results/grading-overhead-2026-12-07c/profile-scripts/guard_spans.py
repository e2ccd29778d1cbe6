"""Scratch: time the guard's parts inside the graded process (thread CPU), one task, N runs."""
import os, re, subprocess, sys, tempfile, statistics, json
from pathlib import Path
from loopwright.sandbox import default_sandbox, create_workspace, remove_workspace
from loopwright.scoring import PytestGrader, TaskTests, restore_tests
from loopwright.scoring._kit import BOOT
from loopwright.tasks import load_benchmark, apply_overlay
task_id = sys.argv[1]; runs = int(sys.argv[2])
task = next(t for t in load_benchmark("mini").tasks if t.id == task_id)
root = Path(tempfile.mkdtemp())
grader = PytestGrader(default_sandbox("local"))
ws = create_workspace(task.repo_dir, root / "ws"); apply_overlay(task.solution_dir, ws.path)
path = ws.path.resolve()
restored = restore_tests(path, task, TaskTests.capture(task))
private = Path(tempfile.mkdtemp(prefix="kit-", dir=root))
step = grader._step(path, task, private, restored.conftests)
kit = private / "kit"
plugin = next(kit.glob("lwguard_*.py"))
src = Path(sys.argv[3]).read_text() if len(sys.argv) > 3 else plugin.read_text()
# instrument: wrap named inner functions with thread_time accumulation
inst = '''
import time as _t, atexit as _ae
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
for name in ["snapshot", "check", "changed_code", "changed_manager", "changed_guard", "foreign_hook", "changed_in_place", "rewrite_test", "pytest_collection_modifyitems_inner"]:
    src = re.sub(rf"(\n    def {name}\(.*?\n)(?=    def |\n    @)", lambda m: m.group(1) + f"    {name} = _timed({name!r}, {name})\n", src, count=1, flags=re.S)
src = src.replace('        record.write_text(dumps(result), encoding="utf-8")', '        record.write_text(dumps(result), encoding="utf-8")\n        import sys as _s; _s.stderr.write("SPANS " + dumps(_SPANS) + "\\n")')
src = src.replace("def _guard(here: str, module: types.ModuleType) -> dict[str, Any]:", "def _guard(here: str, module: types.ModuleType) -> dict[str, Any]:\n    _c0 = _t.thread_time()", 1)
src = src.replace('    send("start")\n    return names', '    send("start")\n    _SPANS["guard setup"] = _t.thread_time() - _c0\n    return names')
marks = [("        framework.extend((m.__name__, m) for m in modules)", "a_modules"),
         ("        known_codes.update(zip(map(id, function_codes), function_codes))", "b_spaces"),
         ("        for plugin in list(sys.modules.values()):  # plugins named by `-p`, loaded by now", "c_flat"),
         ("        digest.append(code_digest(list(known_codes.values())))", "d_plugins"),
         ("        running.append(deopt_table(list(known_codes.values())))", "e_digest")]
for line, name in marks:
    assert line in src, line
    src = src.replace(line, f"        _SPANS[{name!r}] = _SPANS.get({name!r}, 0) + _t.thread_time() - _c1; _c1 = _t.thread_time()\n" + line, 1)
src = src.replace("""        and before any conftest is imported: every module of pytest, pluggy and unittest.case loaded by then (pytest's own plugins
        and those named by `-p`).\"\"\"""", "XX")
src = src.replace("        modules = [\n            module\n            for name, module in sorted(sys.modules.items())", "        _c1 = _t.thread_time()\n        modules = [\n            module\n            for name, module in sorted(sys.modules.items())", 1)
plugin.write_text(src)
for p in kit.glob("__pycache__/*"): p.unlink()
env = {"PATH": os.environ["PATH"], "HOME": str(root), "LANG": "C.UTF-8", **step.env}
tot = {}
for i in range(runs + 1):
    p = subprocess.run(step.argv, cwd=path, env=env, capture_output=True, text=True)
    m = re.search(r"SPANS (\{.*\})", p.stderr + p.stdout)
    if not m:
        print(p.stdout[-3000:], p.stderr[-3000:]); sys.exit(1)
    if i:
        for k, v in json.loads(m.group(1)).items(): tot.setdefault(k, []).append(v)
for k, v in tot.items(): print(f"{k:20} {1000*statistics.median(v):7.2f} ms")
