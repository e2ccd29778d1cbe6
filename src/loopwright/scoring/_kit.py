"""The grader's private kit: the files a grading run needs that the workspace must not touch.

Written fresh for every grade into a directory created after the agent finished, with names
drawn from a secret token, and shown to the sandboxed test run read-only: the pytest config and
the guard plugin (scoring/_guard_plugin.py under a random module name, which also defines the
canary tests). Results come back through a separate writable directory: the junit XML and the
guard's record. The kit holds no absolute path: a sandbox may show it, the workspace and the
results directory at other paths than the host's (the container sandbox does), and rewrites
the paths it is given in the command line and environment, never inside files.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import marshal
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BOOT", "RECORD_ENV", "Kit", "write_kit"]

_PLUGIN_SOURCE = Path(__file__).with_name("_guard_plugin.py")
RECORD_ENV = "LOOPWRIGHT_GUARD_RECORD"
"""The environment variable naming the guard's record file (read once, as the guard loads)."""

BOOT = """\
import sys
from importlib.machinery import (
    EXTENSION_SUFFIXES, SOURCE_SUFFIXES, ExtensionFileLoader, FileFinder, PathFinder,
    SourceFileLoader,
)
kit, workspace, *extra = sys.argv[1], *sys.argv[2].split(chr(10))
guard = sys.argv[3]


def stdlib_names():
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return names
    import os
    import sysconfig

    found = set(sys.builtin_module_names)
    paths = sysconfig.get_paths()
    for top in {paths["stdlib"], paths["platstdlib"]}:
        for place in (top, os.path.join(top, "lib-dynload")):
            try:
                entries = os.listdir(place)
            except OSError:
                continue
            found.update(entry.split(".")[0] for entry in entries)
    return frozenset(name for name in found if name.isidentifier())


STDLIB = stdlib_names()


def in_workspace(path):
    return path == workspace or path.startswith(workspace + "/")


class NoShadow:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None or name not in STDLIB:
            return None
        spec = PathFinder.find_spec(name, [p for p in sys.path if not in_workspace(p)])
        if spec is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return spec


class SourceOnly(SourceFileLoader):
    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


workspace_finder = FileFinder.path_hook(
    (ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceOnly, SOURCE_SUFFIXES)
)


def workspace_hook(path):
    if not in_workspace(path):
        raise ImportError("not in the workspace")
    return workspace_finder(path)


sys.meta_path.insert(sys.meta_path.index(PathFinder), NoShadow)
sys.path_hooks.insert(0, workspace_hook)
sys.path.insert(0, kit)
if sys.flags.no_site:
    import site

    site.venv(None)
    site.addsitepackages(None)
sys.path.append(workspace)
sys.path.extend(p for p in extra if in_workspace(p))
sys.argv[:] = ["pytest", *sys.argv[4:]]
import pytest
status = int(pytest.main(plugins=[__import__(guard)] if guard else []))
import atexit
import os
run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
if run_exit_functions is None:
    sys.exit(status)
run_exit_functions()
for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
    try:
        stream.flush()
    except BaseException:
        pass
os._exit(status)
"""
"""The grading process's entry point (`python -I -B -c BOOT KIT WORKSPACE GUARD PYTEST_ARGS...`).
WORKSPACE may be followed, after newlines, by directories inside it to append to `sys.path` too
(a task environment's editable roots, `TaskEnvironment.import_paths`). GUARD is the guard
plugin's module name in the kit ("" for none): BOOT imports it as a plain module (from the
bytecode the kit holds for it, `write_kit`) and hands it to `pytest.main`, rather than naming it
with `-p`, which would have pytest's assertion rewriter compile it from source on every grade. In a task environment the
grader also passes `-S`: its site-packages (whose `.pth` files may put the workspace on `sys.path`,
as an editable install does) are added by BOOT once its hooks are in place, so no file of the
workspace (a `sitecustomize.py`) is imported at start-up or through an unguarded finder.

Isolated mode leaves the workspace off `sys.path`; BOOT puts the kit first (only the grader's
files, under secret names) and the workspace last, after the standard library and
site-packages, so no file of the workspace can shadow a module that pytest, its plugins or the
code under test import from there. With `--import-mode=append`, test directories go last too.
A standard-library name is never looked up in the workspace at all, so a module this Python
lacks (`nt`, `_winapi`, `msvcrt` on Linux, probed by `try: import`) cannot be supplied by it.
BOOT and the guard plugin run on every Python a task may use (3.7 and later; tests/scoring check
the syntax and run them on an old interpreter): before 3.10, which has no
`sys.stdlib_module_names`, the standard-library names are those of the interpreter's own
standard-library directories and built-in modules.
Once pytest has returned, BOOT runs the `atexit` handlers as a normal exit would (the guard's
among them: it says `early` when pytest stopped before finishing), flushes the output streams
and leaves with `os._exit(status)`: the interpreter's teardown (waiting for threads, freeing
every module and object: about as much CPU time as the guard costs, bench/grading_overhead.py)
is skipped. A flush that raises is ignored: the status is pytest's either way. An exception from
the handlers (an old Python re-raises the last one, a `SystemExit` of the code under test's
handler among them) ends the process as before, with another status than pytest's: `tamper:`.
Modules in the workspace are compiled from their source, never from bytecode (`SourceOnly`; the
guard makes pytest's assertion rewriter do the same for test files): a `.pyc` the code under test
forges for a module imported later is never read. Bytecode of the standard library and
site-packages is used as usual."""


@functools.cache
def _guard_files() -> tuple[bytes, bytes | None]:
    """The guard plugin's source, and its bytecode for this interpreter as a checked hash-based
    `.pyc` (PEP 552; None where this Python caches no bytecode). Compiled once per process: a
    graded Python of this version reads it instead of compiling the plugin on every grade (about
    15 ms); any other version finds no file under its own cache tag and compiles the source. The
    loader checks the file against the source's hash and sets the code's file name to the path it
    loaded the source from, so one file serves every kit and every sandbox's view of it."""
    source = _PLUGIN_SOURCE.read_bytes()
    if sys.implementation.cache_tag is None:
        return source, None
    code = compile(source, str(_PLUGIN_SOURCE), "exec", dont_inherit=True)
    flags = (0b11).to_bytes(4, "little")  # hash-based, checked against the source
    header = importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source)
    return source, header + marshal.dumps(code)


@dataclass(frozen=True, slots=True)
class Kit:
    """Where one grade's files are. `directory` is shown read-only; `out` is writable."""

    directory: Path
    out: Path
    ini: Path
    plugin: str  # the guard's module name, imported by BOOT; it defines the canary tests too
    canaries: dict[str, str]  # canary test name -> the outcome it must have
    record: Path  # the guard's record (JSON): when pytest finished, or at a normal early exit
    junit: Path

    @property
    def started_marker(self) -> Path:
        """Written by the guard as it is imported: the run got as far as loading it."""
        return self.record.with_suffix(".started")


def write_kit(
    private: Path,
    conftests: list[Path],
    tests: Sequence[str] = (),
    helpers: Sequence[str] = (),
    digests: Mapping[str, str] | None = None,
    compiled: bytes | None = None,
    tracing: bool = False,
) -> Kit:
    """Create `private/kit` and `private/out` (private must exist and be empty) and the files.

    `conftests` are the workspace's conftest.py files after restoration, relative to the
    workspace: the only files in it allowed to define pytest hooks; `tests` the task's test
    files, relative to it (posix): the guard reads both as it loads, and holds each collected
    test function of `tests` to its file's code. `helpers` are the other Python files of the
    restored test directory (workspace-relative, posix): read as the guard loads too, the code a
    test imported or inherited from one of them is held to. `digests` (workspace-relative path ->
    SHA-256 of its bytes as the host read them after restoration): the guard reads each of those
    files as it loads, and a difference is `tamper:`. `compiled`: the test and conftest files
    compiled on the host (scoring/_precompile.py), written beside the plugin (`.code`), which
    the guard loads instead of compiling a file whose source it read is the one compiled.
    `tracing`: the task allows trace and profile functions (`frame-inspection` in its
    `[grading] allow`); otherwise one set while the tests run is `tamper:`. The guard's record
    path reaches the test run in the environment (`RECORD_ENV`), as the sandbox shows it."""
    token = secrets.token_hex(8)
    directory, out = private / "kit", private / "out"
    directory.mkdir()
    out.mkdir()
    canaries = {f"test_lw_{token}_pass": "passed", f"test_lw_{token}_fail": "xfailed"}
    plugin = f"lwguard_{token}"
    record = out / f"guard-{token}.json"
    source, bytecode = _guard_files()
    (directory / f"{plugin}.py").write_bytes(source)
    if bytecode is not None:
        cache = directory / "__pycache__"
        cache.mkdir()
        (cache / f"{plugin}.{sys.implementation.cache_tag}.pyc").write_bytes(bytecode)
    settings = {
        "canaries": canaries,
        "n": 10 + secrets.randbelow(90),
        "conftests": [p.as_posix() for p in conftests],
        "tests": list(tests),
        "helpers": list(helpers),
        "digests": dict(digests or {}),
        "tracing": tracing,
    }
    (directory / f"{plugin}.json").write_text(json.dumps(settings), encoding="utf-8")
    if compiled is not None:
        (directory / f"{plugin}.code").write_bytes(compiled)
    ini = directory / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")
    return Kit(
        directory=directory,
        out=out,
        ini=ini,
        plugin=plugin,
        canaries=canaries,
        record=record,
        junit=out / f"junit-{token}.xml",
    )
