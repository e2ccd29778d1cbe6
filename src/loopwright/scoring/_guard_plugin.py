"""The grader's guard: a pytest plugin that watches the test run for forgery.

Never imported by loopwright itself. The grader copies this file into each grade's private,
read-only kit under a random module name; the kit's start-up code (BOOT) imports it and hands it
to `pytest.main`, before any workspace code runs. Its settings are the JSON file beside it (same stem). It sends, as they happen,
on the outcome channel the host gave the process (a pipe the host drains; docs/grading.md, "The
outcome stream"): that it started, every test report's outcome, every finding, and that pytest
finished with its exit status. What was sent stays sent: nothing the code under test does later
(an `atexit` handler, `os._exit`, a rewritten junit file) takes a failure back. It also writes a
JSON record at the end, read where the sandbox passes no channel (the docker CLI).

It checks, per test and at the end:
- the code, not the names, of every pytest, pluggy and unittest function the outcome of a test
  depends on (a replaced function, a swapped `__code__`, bytecode changed in place), the plugin
  manager's own executor and hook callers, and the guard's own functions and hook registrations;
- every hook implementation: its code must be code pytest or the kit loaded before any workspace
  code ran, or code found by compiling its file (the environment's, or a conftest.py of the task
  as it was when the guard loaded): a name under a trusted prefix is not enough;
- each collected test function of the task's test files: its code must be the code of its file,
  compiled here from the source read as the guard loaded;
- the canary tests (defined here under names the agent could not predict, and run last): a
  must-pass canary that fails, or a must-fail canary that passes, means outcomes were forged.

Its state lives in closures, not in module globals, and none of its functions looks a name up
where the code under test can change it: they run on a private copy of this module's globals
whose builtins are a copy of the builtins module made as the guard loaded (`_private`), so an
`any` replaced in the builtins module, or an `int` shadowed in this module's globals, changes
nothing the guard calls. Nor does anything it decides, once workspace code may run, go through
a Python-level function of the standard library (`posixpath`, `pathlib`, `ast`, `json`), whose
names are looked up in modules the code under test can rewrite: it reads, writes, resolves paths
and finds `def`s with C functions it took as it loaded (`_OPEN`...) and its own code
(`_read_bytes`, `_absolute`, `_defs_of`, `_json_text`). The code under test runs in this same
process, so a determined attacker can still defeat much of this; docs/grading.md says what
remains possible. Runs on Python 3.7+ (no newer syntax or API here).
"""

# ruff: noqa: PTH100, PTH109, PTH118, PTH120, B905  (runs on Python 3.7+: os.path, zip without strict)
from __future__ import annotations

import _imp
import ast
import atexit
import builtins
import dis
import fcntl
import hashlib
import importlib.util
import json
import marshal
import os
import signal
import sys
import types
import unittest.case
from operator import attrgetter
from pathlib import Path
from typing import Any

import _pytest.assertion.rewrite
import _pytest.junitxml
import _pytest.main
import _pytest.nodes
import _pytest.outcomes
import _pytest.pathlib
import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.unittest
import pytest

# Test files are compiled from their source: a rewritten test module's bytecode cached in the
# workspace (which the code under test could forge mid-run) is never read.
_pytest.assertion.rewrite._read_pyc = lambda *args, **kwargs: None

_FUNCTION_KINDS = (types.FunctionType, staticmethod, classmethod, property)
_PLUGGY = ("pluggy._callers", "pluggy._hooks", "pluggy._manager", "pluggy._result")
# What the guard calls once workspace code may run: C functions taken as it loads (a name
# rewritten later in `os`, `hashlib` or `signal` does not reach them) and its own code. Never
# the standard library's Python-level functions (`posixpath`, `pathlib`, `ast`, `json`), which
# look their names up in their own modules, where the code under test can rewrite them.
_OPEN, _READ, _WRITE, _CLOSE, _FSTAT, _STAT = (
    os.open,
    os.read,
    os.write,
    os.close,
    os.fstat,
    os.stat,
)
_READING = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)  # a FIFO never blocks
_WRITING = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_SHA256 = hashlib.sha256
_SIGKILL = int(signal.SIGKILL)
_ONLY_AST = ast.PyCF_ONLY_AST
_GETTRACE, _GETPROFILE = sys.gettrace, sys.getprofile
_CODE = types.CodeType
_PLUGGY_OLD = ("pluggy.callers", "pluggy.hooks", "pluggy.manager")


def _functions(value: object) -> list[types.FunctionType]:
    """The plain functions inside a namespace entry (a function, a static or class method, the
    accessors of a property)."""
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, (staticmethod, classmethod)):
        return _functions(value.__func__)
    if isinstance(value, property):
        return [
            f for f in (value.fget, value.fset, value.fdel) if isinstance(f, types.FunctionType)
        ]
    return []


def _spaces(modules: list[types.ModuleType]) -> list[Any]:
    """Every module given and every class defined in one of them: the namespaces to watch."""
    found: list[Any] = []
    for module in modules:
        found.append(module)
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                found.append(value)
    return found


def _code_digest(codes: list[types.CodeType]) -> bytes:
    """A copy of the bytecode of `codes`, to compare at the end (a copy, not a hash: hashlib's
    import alone would cost more than the comparison)."""
    return b"".join(map(attrgetter("co_code"), codes))


_MASK = bytes([0] + [255] * 255)  # an opcode byte of `co_code` -> its mask byte (CACHE, 0: none)


def _deopt_table(codes: list[types.CodeType]) -> bytes | None:
    """Since Python 3.11 the bytecode that runs is `_co_code_adaptive`, which the interpreter
    specialises as it goes, and `co_code` is a copy made once (deoptimised, inline caches zeroed)
    and cached: an edit in place of the running bytecode (ctypes) does not show in `co_code`.
    This is the table (bytes.translate) from each opcode to its base opcode (dis's own map), to
    read the running bytecode as `co_code` (`_runs_as_compiled`). None before 3.11 (`co_code`
    is the bytecode that runs), without dis's map, or when the reading does not hold for
    `codes` (the framework's, before any workspace code ran: checked, so that a Python whose
    specialisation the reading does not cover never has a grade called tamper for it)."""
    deopt = getattr(dis, "_deoptop", None)
    if deopt is None or not hasattr(_deopt_table.__code__, "_co_code_adaptive"):
        return None
    try:
        table = bytes(deopt(op) for op in range(256))
    except Exception:  # noqa: BLE001  another layout of dis: the check is off
        return None
    return table if all(_runs_as_compiled(code, table) for code in codes) else None


def _runs_as_compiled(code: types.CodeType, table: bytes) -> bool:
    """True when the bytecode `code` runs is its `co_code`: every instruction's base opcode and
    argument the same, inline caches (opcode 0 in `co_code`) left out. C-level passes only."""
    running: bytes = code._co_code_adaptive  # type: ignore[attr-defined]
    plain = code.co_code
    if running == plain:
        return True
    if len(running) != len(plain):
        return False
    ops, args = plain[0::2], plain[1::2]
    mask = int.from_bytes(ops.translate(_MASK), "little")
    return int.from_bytes(running[0::2].translate(table), "little") & mask == int.from_bytes(
        ops, "little"
    ) and int.from_bytes(running[1::2], "little") & mask == int.from_bytes(args, "little")


def _nested(code: types.CodeType, into: list[types.CodeType]) -> list[types.CodeType]:
    """`code` and every code object nested in it, appended to `into`."""
    stack = [code]
    while stack:
        code = stack.pop()
        into.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return into


def _read_bytes(path: str) -> bytes | None:
    """The bytes of the regular file `path`; None for anything else (a FIFO, a device, a
    directory) or when it cannot be read."""
    try:
        fd = _OPEN(path, _READING)
    except (OSError, ValueError):
        return None
    try:
        if _FSTAT(fd).st_mode & 0o170000 != 0o100000:
            return None
        chunks: list[bytes] = []
        while True:
            chunk = _READ(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        _CLOSE(fd)


def _write_bytes(path: str, data: bytes) -> None:
    fd = _OPEN(path, _WRITING, 0o644)
    try:
        while data:
            data = data[_WRITE(fd, data) :]
    finally:
        _CLOSE(fd)


def _absolute(path: str, cwd: str) -> str:
    """`path` made absolute against `cwd` and normalised (`.`, `..`, repeated separators), in
    string operations alone."""
    if not path.startswith("/"):
        path = cwd + "/" + path
    parts: list[str] = []
    for part in path.split("/"):
        if part == ".." and parts:
            parts.pop()
        elif part not in ("", ".", ".."):
            parts.append(part)
    return "/" + "/".join(parts)


def _json_text(value: Any) -> str:
    """`value` (dicts, lists, strings, integers, booleans, None) as ASCII JSON."""
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, str):
        return '"' + "".join(map(_json_char, value)) + '"'
    if isinstance(value, dict):
        pairs = (_json_text(str(k)) + ": " + _json_text(v) for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    return "[" + ", ".join(map(_json_text, value)) + "]"


def _json_char(char: str) -> str:
    code = ord(char)
    if char in '"\\':
        return "\\" + char
    if 0x20 <= code < 0x7F:
        return char
    if code > 0xFFFF:  # a surrogate pair
        code -= 0x10000
        high, low = 0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)
        return f"\\u{high:04x}\\u{low:04x}"
    return f"\\u{code:04x}"


def _defs_of(code: types.CodeType, scope: tuple[str, ...], into: set[tuple[str, ...]]) -> None:
    """Add to `into` the (class names..., name) of every `def` compiled into `code` (a module's
    or a class body's code): its functions' code objects, by name, and the defs of the classes
    whose bodies it holds; not a function's own nested defs. Read from code objects (whose type
    nothing can change), not from an AST (whose node classes the code under test can)."""
    for const in code.co_consts:
        if type(const) is not _CODE or const.co_name.startswith("<"):
            continue  # not code, or a lambda, comprehension or annotation scope
        if const.co_flags & 0x1:  # CO_OPTIMIZED: a function
            into.add((*scope, const.co_name))
        else:  # a class body
            _defs_of(const, (*scope, const.co_name), into)


def _guard(here: str, module: types.ModuleType) -> dict[str, Any]:
    """Install the guard; returns the names the plugin module must define (hooks, canaries)."""
    from itertools import chain  # local names: out of the module's reach
    from operator import attrgetter, is_not, itemgetter

    apply = itemgetter.__call__  # apply(getter, namespace): a C call, where a lambda is not

    write, getpid, getcode = os.write, os.getpid, attrgetter("__code__")
    code_digest, nested, root_of = _code_digest, _nested, _rootpath
    cwd = os.getcwd()  # the workspace: where the test run started
    deopt_table, runs_as_compiled = _deopt_table, _runs_as_compiled
    fix_filename = getattr(_imp, "_fix_co_filename", None)  # CPython's, as importlib uses it
    function_type = types.FunctionType
    settings = json.loads(Path(here).with_suffix(".json").read_text(encoding="utf-8"))
    record = os.environ.pop("LOOPWRIGHT_GUARD_RECORD")  # as the sandbox shows it
    channel = _open_channel()
    fstat, kill = os.fstat, os.kill
    # What the channel is: a descriptor the code under test points elsewhere (found through
    # /proc/self/fd and dup2'd over, keeping a copy to write a forged stream on) is another file.
    pipe = None if channel is None else (fstat(channel).st_dev, fstat(channel).st_ino)
    # A trace or profile function sees each call's frame and return value, so it can rewrite a
    # test report as pytest makes it without replacing anything the checks watch: the ones set
    # now (none, unless the interpreter was started with one) are the only ones allowed.
    tracers = (_GETTRACE(), _GETPROFILE())
    tracing = bool(settings.get("tracing"))  # the task allows them (frame-inspection)
    canaries = settings["canaries"]  # test name -> expected outcome
    n = settings["n"]  # the canaries' arithmetic, so that no answer is a constant
    # The task's test files and conftest.py files, relative to the workspace (the working
    # directory), read now: before any workspace code can rewrite them.
    sources: dict[str, bytes] = {}
    for rel in list(settings["tests"]) + list(settings["conftests"]):
        try:
            sources[rel] = Path(rel).read_bytes()
        except OSError:
            continue
    # The other Python files of the task's restored test directory (helpers, base classes), read
    # now too: a test function imported or inherited from one is held to its code as restored.
    helpers: dict[str, bytes] = {}
    for rel in settings.get("helpers", ()):
        try:
            helpers[rel] = Path(rel).read_bytes()
        except OSError:
            continue
    defined: dict[str, Any] = {}  # task test file -> the (class names..., name) its defs bind
    state: dict[str, Any] = {
        "exitstatus": None,
        "tamper": [],
        "canaries": {},
        "config": None,
        "plugins": -1,
        "root": None,  # pytest's root directory, absolute, with a trailing separator
    }
    finished: list[bool] = []
    held: list[bytes] = []  # lines of passed reports, not sent yet

    def send(*fields: str, hold: bool = False) -> None:
        """One line on the channel: space-separated fields, text ones hex-encoded. With `hold`
        (a report that passed: what the stream is for is that no failure can be taken back,
        and the host counts nothing without the `finish` or `early` line that always follows
        and carries the held lines with it), the line waits for the next one sent and goes out
        with it, in one write: a run whose tests all pass makes three writes (start, the
        canary's xfail, finish), not one a test, and wakes the host as often. Every failure
        and skip, every finding, and the finish go out at once."""
        if channel is None:
            return
        line = (" ".join(fields) + "\n").encode("ascii")
        if hold:
            held.append(line)
            return
        try:
            now = fstat(channel)
            same = (now.st_dev, now.st_ino) == pipe
        except OSError:
            same = False  # closed: the host sees what is missing
        if not same and pipe is not None:
            # Redirected: whatever stream a copy carries now is not the guard's. Dying by a
            # signal no handler can catch makes the exit code contradict any forged `finish`.
            kill(getpid(), _SIGKILL)
        data = b"".join(held) + line
        del held[:]
        try:
            while data:
                data = data[write(channel, data) :]
        except OSError:
            pass  # closed by the code under test: the host sees what is missing

    def hexed(text: object) -> str:
        return str(text).encode("utf-8", "surrogateescape").hex()

    def found(what: str) -> None:
        if not state["tamper"]:
            send("tamper", hexed(what))
        state["tamper"].append(what)

    # Each file as read above against its digest as the host read it after restoration: a
    # difference means something rewrote it between the two reads.
    for rel, expected in settings.get("digests", {}).items():
        data = sources.get(rel, helpers.get(rel))
        if data is None or _SHA256(data).hexdigest() != expected:
            found(f"{rel} changed after the tests were restored (before the test run read it)")
    # Test files and plugins as the host compiled them (scoring/_precompile.py), by the SHA-256
    # of their source, read now too: each used only for a file whose source is the one compiled.
    precompiled = _precompiled(here)

    known_codes: dict[
        int, types.CodeType
    ] = {}  # id -> code of every function pytest, pluggy and the kit loaded so far
    digest: list[bytes] = []
    running: list[bytes | None] = []  # the table to read running bytecode by (_deopt_table)

    framework: list[Any] = []  # (name, module) as they are in sys.modules at the snapshot
    groups: list[Any] = []  # (namespace, getter of its watched names, their values then,
    # "owner.", the names)
    functions: list[Any] = []  # every watched function, and its code object then:
    function_codes: list[types.CodeType] = []
    # The same as flat sequences, so that one check is a few C-level passes over them: the
    # namespaces, their getters, every watched value then; a getter of the framework's module
    # names in sys.modules, and those modules then.
    flat: list[Any] = []

    def snapshot() -> None:
        """The framework's functions and their code, as pytest left them once its own start-up
        patches are made (pytest_load_initial_conftests) and before any conftest is imported:
        every module of pytest, pluggy and unittest.case loaded by then (pytest's own plugins
        and those named by `-p`)."""
        modules = [
            module
            for name, module in sorted(sys.modules.items())
            if (
                name == "pytest"
                or name.startswith("_pytest.")
                or name in _PLUGGY
                or name in _PLUGGY_OLD
                or name in ("pluggy", "unittest.case")
            )
            and isinstance(module, types.ModuleType)
        ]
        framework.extend((m.__name__, m) for m in modules)
        watched: dict[int, Any] = {}
        for space in _spaces(modules):
            namespace = vars(space)
            names = [
                name
                for name, value in list(namespace.items())
                if not name.startswith("__")
                and (callable(value) or isinstance(value, _FUNCTION_KINDS))
            ]
            if not names:
                continue
            owner = getattr(space, "__qualname__", None) or space.__name__
            # An itemgetter of one name returns that value, not a tuple: ask for it twice.
            getter: Any = itemgetter(*(names + names if len(names) == 1 else names))
            then = getter(namespace)
            groups.append((namespace, getter, then, f"{owner}.", names))
            for value in then:
                if type(value) is function_type:
                    found: Any = (value,)
                elif isinstance(value, _FUNCTION_KINDS):  # the rest (classes...) hold none
                    found = _functions(value)
                else:
                    continue
                for function in found:
                    if id(function) not in watched:  # re-exported elsewhere: watched once
                        watched[id(function)] = function
                        functions.append(function)
                        function_codes.append(function.__code__)
        known_codes.update(zip(map(id, function_codes), function_codes))
        names = [name for name, _ in framework] * 2  # twice: more than one key, a tuple back
        flat.extend(
            (
                tuple(group[0] for group in groups),
                tuple(group[1] for group in groups),
                tuple(chain.from_iterable(group[2] for group in groups)),
                itemgetter(*names),
                tuple(module for _, module in framework) * 2,
            )
        )
        for plugin in list(sys.modules.values()):  # plugins named by `-p`, loaded by now
            if isinstance(plugin, types.ModuleType) and plugin.__name__.startswith("pytest_"):
                for space in _spaces([plugin]):
                    for value in list(vars(space).values()):
                        for function in _functions(value):
                            known_codes[id(function.__code__)] = function.__code__
        digest.append(code_digest(list(known_codes.values())))
        running.append(deopt_table(list(known_codes.values())))

    compiled: dict[
        str, list[types.CodeType]
    ] = {}  # path -> [code objects of its source, plain and assertion-rewritten]
    vetted: dict[int, object] = {}  # id -> hook implementation found legitimate
    test_codes: dict[
        int, tuple[Any, types.CodeType]
    ] = {}  # id(function) -> (function, its code when collected)
    pm_watch: list[
        tuple[dict[str, Any], str, object]
    ] = []  # (namespace dict, name, value) of the plugin manager's own attributes
    own: list[Any] = []  # (namespace dict, name, value, its code, its closure's contents)

    rewritten: dict[str, list[types.CodeType]] = {}  # path -> its assertion-rewritten code
    rewrite_asserts = _pytest.assertion.rewrite.rewrite_asserts

    def plain_codes(key: str, source: bytes) -> list[types.CodeType]:
        if key not in compiled:
            try:
                compiled[key] = nested(compile(source, key, "exec", dont_inherit=True), [])
            except Exception:  # noqa: BLE001  a file that does not compile holds no code
                compiled[key] = []
        return compiled[key]

    def rewritten_codes(key: str, source: bytes, config: Any) -> list[types.CodeType]:
        if key not in rewritten:
            try:
                rewritten[key] = nested(rewrite(key, source, config), [])
            except Exception:  # noqa: BLE001  as above
                rewritten[key] = []
        return rewritten[key]

    def rewrite(key: str, source: bytes, config: Any) -> types.CodeType:
        """`source` compiled as pytest's assertion rewriter compiles a test module."""
        tree: Any = compile(source, key, "exec", _ONLY_AST, dont_inherit=True)
        rewrite_asserts(tree, source, key, config)
        return compile(tree, key, "exec", dont_inherit=True)

    original_rewrite_test: Any = getattr(_pytest.assertion.rewrite, "_rewrite_test", None)

    def rewrite_test(fn: Any, config: Any) -> tuple[os.stat_result, types.CodeType]:
        """pytest's `_rewrite_test`, but a task file's code is compiled from the source read as
        the guard loaded (what is on disk now may have been rewritten by the code under test),
        and kept: the code the guard holds that file's functions to."""
        key = _absolute(str(fn), cwd)
        rel = relative(key)
        source = sources.get(rel) if rel is not None else None
        if source is None or original_rewrite_test is None:
            code = loaded(key, None, config) if original_rewrite_test is not None else None
            if code is None:  # not a task file (a plugin named by `-p`): as pytest does
                return original_rewrite_test(fn, config)  # type: ignore[no-any-return]
            return _STAT(key), code
        code = loaded(key, source, config) or rewrite(key, source, config)
        rewritten[key] = nested(code, [])
        return _STAT(key), code

    def loaded(key: str, source: bytes | None, config: Any) -> types.CodeType | None:
        """The code the host compiled (scoring/_precompile.py) from exactly `source` (None: the
        file `key` as read now), its file name set to `key`; None when there is none."""
        if not precompiled or fix_filename is None or config.getini("enable_assertion_pass_hook"):
            return None
        if source is None:
            source = _read_bytes(key)
            if source is None:
                return None
        code = precompiled.pop(_SHA256(source).hexdigest(), None)
        if code is not None:
            fix_filename(code, key)  # its file's path here, in it and every nested code object
        return code

    def matches(code: types.CodeType, codes: list[types.CodeType]) -> bool:
        return any(c == code for c in codes if c.co_firstlineno == code.co_firstlineno)

    def from_its_file(code: types.CodeType, config: Any, elsewhere: bool = False) -> bool:
        """Whether `code` is code of the file it names: compiled from the source read as the
        guard loaded (a task file) or from the environment's file (read-only there). With
        `elsewhere` (a test function its task file does not define itself), also a helper of the
        restored test directory as read when the guard loaded, or any other workspace file as it
        is now: code the agent could have written there anyway."""
        filename = _absolute(code.co_filename, cwd)
        rel = relative(filename)
        if rel is not None:
            source = sources.get(rel)
            if source is None and elsewhere:
                source = helpers.get(rel) or _read_bytes(filename)
            if source is None:
                return False
        elif filename.startswith(trusted):
            source = _read_bytes(filename)
            if source is None:
                return False
        else:
            return False
        if rel is not None and rel in sources:  # a task file: pytest rewrote its asserts
            return matches(code, rewritten_codes(filename, source, config)) or matches(
                code, plain_codes(filename, source)
            )
        return matches(code, plain_codes(filename, source)) or matches(
            code, rewritten_codes(filename, source, config)
        )

    def legitimate_test(item: Any, rel: str, code: types.CodeType, config: Any) -> bool:
        """A test of task file `rel` runs that file's code (as read when the guard loaded) when
        the file defines it with `def` (in the class the test was collected from); a test it
        imports, or inherits from a base class defined elsewhere, runs the code of the file that
        code names (`from_its_file`, `elsewhere`)."""
        if relative(_absolute(code.co_filename, cwd)) == rel:
            return from_its_file(code, config)
        return not defines(rel, item) and from_its_file(code, config, elsewhere=True)

    def defines(rel: str, item: Any) -> bool:
        """Whether task file `rel` binds the test's name with a `def` in the scope the test
        was collected from (its module, or the chain of classes in it, by collected name)."""
        if rel not in defined:
            found_defs: set[tuple[str, ...]] = set()
            try:
                _defs_of(
                    compile(sources.get(rel, b""), rel, "exec", dont_inherit=True), (), found_defs
                )
                defined[rel] = found_defs
            except (SyntaxError, ValueError):
                defined[rel] = None  # unreadable: every test of it must be its own code
        scope: list[str] = []
        node = getattr(item, "parent", None)
        while node is not None and isinstance(node, pytest.Class):
            scope.insert(0, str(node.name))
            node = node.parent
        name = str(getattr(item, "originalname", None) or item.name)
        return defined[rel] is None or (*scope, name) in defined[rel]

    def relative(filename: str) -> str | None:
        """`filename` (absolute, normalised) relative to pytest's root directory, None outside
        it or before pytest has one."""
        root = state["root"]
        if root is None:
            return None
        return filename[len(root) :] if filename.startswith(root) else None

    trusted = tuple(
        {
            os.path.join(os.path.abspath(place), "")
            for base in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
            for place in (base, os.path.realpath(base))
        }
        | {os.path.join(os.path.dirname(os.path.abspath(here)), "")}
    )

    def check(where: str, full: bool = False, last: bool = False) -> None:
        if state["tamper"]:
            return  # the first finding is the evidence; later ones follow from it
        problem = traced() or changed_code() or changed_manager() or changed_guard()
        if problem is None and last and changed_in_place():
            problem = "the bytecode of a pytest or pluggy function was changed in place"
        if problem is None:
            problem = foreign_hook(full)
        if problem is not None:
            found(f"{problem} (noticed {where})")

    def traced() -> str | None:
        """A trace or profile function set in this thread (the one pytest runs the tests and
        makes the reports in) since the guard loaded, unless the task allows them."""
        if tracing:
            return None
        for name, now, then in zip(
            ("settrace", "setprofile"), (_GETTRACE(), _GETPROFILE()), tracers
        ):
            if now is not then:
                return (
                    f"a trace or profile function was set (sys.{name}); a task whose tests "
                    "need one lists frame-inspection in [grading] allow"
                )
        return None

    def changed_in_place() -> bool:
        codes = list(known_codes.values())
        if code_digest(codes) != digest[0]:
            return True
        table = running[0] if running else None
        return table is not None and not all(runs_as_compiled(code, table) for code in codes)

    def changed_code() -> str | None:
        """Fast (C-level passes over flat sequences) while nothing changed; then names what
        did."""
        if not flat:
            return None  # before the snapshot
        namespaces, getters, values, module_getter, modules = flat
        try:
            now = chain.from_iterable(map(apply, getters, namespaces))
            same = (
                not any(map(is_not, now, values))
                and not any(map(is_not, map(getcode, functions), function_codes))
                and not any(map(is_not, module_getter(sys.modules), modules))
            )
        except KeyError:  # a watched name or module was deleted
            same = False
        return None if same else what_changed()

    def what_changed() -> str | None:
        for namespace, _, values, owner, names in groups:
            for name, original in zip(names, values):
                if namespace.get(name) is not original:
                    return f"{owner}{name} was replaced"
        for function, code in zip(functions, function_codes):
            if function.__code__ is not code:
                return f"the code of {function.__module__}.{function.__qualname__} was swapped"
        for name, module_then in framework:
            if sys.modules.get(name) is not module_then:
                return f"the module {name} in sys.modules was replaced"
        return None

    def changed_manager() -> str | None:
        config = state["config"]
        if config is None:
            return None
        manager = config.pluginmanager
        for namespace, name, original in pm_watch:
            if namespace.get(name) is not original:
                return f"the plugin manager's {name} was replaced"
        # The manager's own relay: pytest 8's `config.hook` is a proxy that wraps the hooks
        # taking legacy path arguments in plain functions (and keeps its relay as an attribute).
        for hook_name, caller in list(vars(manager.hook).items()):
            if hook_name.startswith("_"):
                continue
            bound = getattr(caller, "_hookexec", None)
            if (
                getattr(bound, "__self__", None) is not manager
                or getattr(bound, "__func__", None) is not hookexec
            ):
                return f"the hook caller {getattr(caller, 'name', '?')} runs another executor"
            kind = type(caller)  # by identity: `in` compares by `==`, which a metaclass answers
            if not any(kind is known for known in caller_types):
                return f"the hook caller {getattr(caller, 'name', '?')} is of another class"
        return None

    def changed_guard() -> str | None:
        for namespace, name, original, code, cells in own:
            if namespace.get(name) is not original or original.__code__ is not code:
                return f"the guard's {name} was replaced"
            now = tuple(c.cell_contents for c in original.__closure__ or ())
            if len(now) != len(cells) or any(a is not b for a, b in zip(now, cells)):
                return f"the guard's {name} was rewired"
        config = state["config"]
        if config is not None:
            for name in hooks:
                impls = getattr(config.hook, name).get_hookimpls()
                if not any(i.plugin is module and i.function is hooks[name] for i in impls):
                    return f"the guard's hook {name} was unregistered or replaced"
        return None

    def foreign_hook(full: bool) -> str | None:
        config = state["config"]
        if config is None:
            return None
        plugins = len(config.pluginmanager.get_plugins())
        if not full and plugins == state["plugins"]:
            return None  # no plugin registered since the last look: no new hook to vet
        state["plugins"] = plugins
        for caller in list(vars(config.hook).values()):
            for impl in getattr(caller, "get_hookimpls", list)():
                if vetted.get(id(impl)) is impl:
                    continue
                function = getattr(impl.function, "__func__", impl.function)
                code = getattr(function, "__code__", None)
                if code is None:
                    return (
                        f"a pytest hook was added without Python code ({type(function).__name__})"
                    )
                if id(code) not in known_codes and not from_its_file(code, config):
                    return f"a pytest hook was added from {code.co_filename}"
                vetted[id(impl)] = impl
        return None

    def exited() -> None:
        """At a normal interpreter exit: say so, unless pytest finished (then the record
        exists). A run that ends with neither was cut short (`os._exit`, a signal)."""
        if not finished:
            send("early")
            try:
                _STAT(record)
            except OSError:
                _write_bytes(record, _json_text({"finished": False}).encode("ascii"))

    def canary_pass() -> None:
        """Must pass: and the means by which tests reject wrong code must still reject it."""
        if sum(range(n)) != n * (n - 1) // 2:
            raise AssertionError("arithmetic is broken")
        try:
            with pytest.raises(ZeroDivisionError):
                pass
        except pytest.fail.Exception:
            pass
        else:
            raise AssertionError("pytest.raises accepted a block that raised nothing")
        try:
            unittest.case.TestCase().assertEqual(n, n + 1)
        except AssertionError:
            pass
        else:
            raise AssertionError("assertEqual accepted unequal values")

    @pytest.mark.xfail(strict=True, reason="loopwright canary: must fail")
    def canary_fail() -> None:
        """Must fail (a strict xfail), through `pytest.fail` without a traceback: formatting an
        assertion's failure would cost more than the rest of the guard."""
        if sum(range(n)) == n * (n - 1) // 2:
            pytest.fail("loopwright canary: must fail", pytrace=False)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
        """Each test function of the task's files must be its file's code; the canaries go
        last: they run after every test the code under test could touch."""
        config = session.config
        for item in items:
            function = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
            # The file part of the node id (relative to the root directory), not the item's path,
            # whose text pathlib's code (which the code under test can rewrite) makes.
            rel = str(item.nodeid).split("::", 1)[0]
            if rel not in settings["tests"] or not isinstance(function, types.FunctionType):
                continue
            inner = function
            while hasattr(inner, "__wrapped__"):  # a decorator's wrapper: judge what it wraps
                inner = inner.__wrapped__
            code = getattr(inner, "__code__", None)
            if code is None or not legitimate_test(item, rel, code, config):
                found(f"test {item.nodeid} is not the code of its file (noticed at collection)")
                break
            test_codes[id(item)] = (inner, code)
        # Built directly, not collected: collecting the kit's module would look at every name in
        # it (and cost more than the canaries' run).
        module_item = pytest.Module.from_parent(session, path=Path(here))
        items.extend(
            pytest.Function.from_parent(module_item, name=name, callobj=tests[name])
            for name in canaries
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
        pair = test_codes.get(id(item))
        if pair is not None and pair[0].__code__ is not pair[1]:
            found(f"the code of test {item.nodeid} was swapped (noticed at {item.nodeid})")

    def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
        """After pytest's own start-up patches (tryfirst), before the conftests (trylast)."""
        snapshot()
        state["config"] = early_config
        root = _absolute(str(root_of(early_config)), cwd)  # before any workspace code runs
        state["root"] = root if root.endswith("/") else root + "/"
        manager = early_config.pluginmanager
        pm_watch.extend(
            (vars(manager), name, value)
            for name, value in list(vars(manager).items())
            if callable(value) or name == "hook"
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":  # once a test, and at any failure
            check(f"at {report.nodeid}")
        xfail = "1" if hasattr(report, "wasxfail") else "0"
        hold = report.outcome == "passed"
        send(
            "report", hexed(report.nodeid), str(report.when), str(report.outcome), xfail, hold=hold
        )
        name = report.nodeid.rsplit("::", 1)[-1]
        if name in canaries and (report.when == "call" or report.outcome != "passed"):
            outcome = str(report.outcome)
            if xfail == "1":
                outcome = "xfailed" if report.skipped else "xpassed"
            state["canaries"].setdefault(name, outcome)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        check("at the end of the session", full=True)
        state["exitstatus"] = int(exitstatus)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config: pytest.Config) -> None:
        check("at unconfigure", full=True, last=True)
        finished.append(True)
        send("finish", str(state["exitstatus"]))
        result = {"finished": True, "pid": getpid(), **state, "config": None}
        del result["plugins"], result["root"]
        _write_bytes(record, _json_text(result).encode("ascii"))

    hooks = {
        "pytest_collection_modifyitems": pytest_collection_modifyitems,
        "pytest_runtest_protocol": pytest_runtest_protocol,
        "pytest_load_initial_conftests": pytest_load_initial_conftests,
        "pytest_runtest_logreport": pytest_runtest_logreport,
        "pytest_sessionfinish": pytest_sessionfinish,
        "pytest_unconfigure": pytest_unconfigure,
    }
    hookexec = _manager_class().__dict__["_hookexec"]
    caller_types = _caller_types()
    tests = {
        name: canary_pass if expected == "passed" else canary_fail
        for name, expected in canaries.items()
    }
    names = {**hooks, **tests}
    own.extend(
        (vars(module), name, value, value.__code__, _cells(value)) for name, value in names.items()
    )
    if original_rewrite_test is not None and original_rewrite_test.__code__.co_varnames[
        : original_rewrite_test.__code__.co_argcount
    ] == ("fn", "config"):
        vars(_pytest.assertion.rewrite)["_rewrite_test"] = rewrite_test  # watched from the snapshot
    for value in names.values():  # the guard's own hooks: code the kit loaded
        known_codes[id(value.__code__)] = value.__code__
    helpers_watched = (check, send, found, traced, changed_code, changed_manager, changed_guard)
    for helper in (*helpers_watched, rewrite_test):
        own.append(({"f": helper}, "f", helper, helper.__code__, _cells(helper)))
    atexit.register(exited)
    _write_bytes(record[: -len(".json")] + ".started", b"started\n")
    send("start")
    return names


def _precompiled(here: str) -> dict[str, types.CodeType]:
    """The kit's precompiled files (`.code` beside the plugin), by the SHA-256 of their source:
    empty unless compiled for this Python and this pytest."""
    try:
        table = marshal.loads(Path(here).with_suffix(".code").read_bytes())
        if table["magic"] != importlib.util.MAGIC_NUMBER or table["pytest"] != pytest.__version__:
            return {}
        return {
            str(digest): code
            for digest, code in table["code"].items()
            if isinstance(code, types.CodeType)
        }
    except Exception:  # noqa: BLE001  no file, or not ours: every file is compiled here
        return {}


def _cells(function: Any) -> tuple[object, ...]:
    return tuple(c.cell_contents for c in function.__closure__ or ())


def _open_channel() -> int | None:
    """The outcome channel's descriptor, moved to a number of its own (closed on exec, so that
    no process the tests start inherits it); None when the sandbox passed none."""
    raw = os.environ.pop("LOOPWRIGHT_CHANNEL_FD", None)
    if raw is None:
        return None
    fd = int(raw)
    try:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 64 + int.from_bytes(os.urandom(2), "big") % 400)
    except OSError:  # a low limit on descriptors: keep the number
        os.set_inheritable(fd, False)
        return fd
    os.set_inheritable(moved, False)
    os.close(fd)
    return moved


def _manager_class() -> type:
    import pluggy

    return pluggy.PluginManager


def _caller_types() -> tuple[type, ...]:
    import pluggy

    kinds = []
    for name in _PLUGGY + _PLUGGY_OLD:
        space = sys.modules.get(name)
        for attr in ("HookCaller", "_HookCaller", "_SubsetHookCaller"):
            kind = getattr(space, attr, None)
            if isinstance(kind, type):
                kinds.append(kind)
    kinds.append(getattr(pluggy, "HookCaller", type(None)))
    return tuple(kinds)


def _rootpath(config: Any) -> object:
    return getattr(config, "rootpath", None) or config.rootdir


def _private(namespace: dict[str, Any]) -> dict[str, Any]:
    """A copy of `namespace` (this module's globals) whose `__builtins__` is a copy of the
    builtins module's namespace as it is now, and whose functions defined in this module are
    copies running on it (their `__globals__`), so that every name they and the closures made in
    them look up is resolved in a namespace no code under test is handed: a builtin replaced in
    the builtins module, or a name shadowed in this module's globals, after the guard loaded
    changes nothing it calls."""
    private = dict(namespace)
    private["__builtins__"] = dict(vars(builtins))
    for name, value in namespace.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is namespace:
            copy = types.FunctionType(
                value.__code__, private, value.__name__, value.__defaults__, value.__closure__
            )
            copy.__kwdefaults__ = value.__kwdefaults__
            copy.__qualname__ = value.__qualname__
            private[name] = copy
    return private


globals().update(_private(globals())["_guard"](__file__, sys.modules[__name__]))
del _guard
