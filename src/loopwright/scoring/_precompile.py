"""Test files and pytest plugins compiled on the host, as pytest's assertion rewriter compiles them,
once per content: the guard plugin loads this code from the kit instead of compiling the same
source in every grade (parsing, rewriting and compiling the test files and pytest-timeout costs
the graded process about as much as all the guard's checks of the run; bench/grading_overhead.py).

Only for a graded interpreter that is loopwright's own (same Python, same pytest). The kit's table
is keyed by the SHA-256 of each source: the guard uses an entry only for a file whose source, as
it read it (a task file: when it loaded, before any workspace code ran), has that digest, and
only when the header names its own bytecode magic and pytest version and
`enable_assertion_pass_hook` (the rewriter's only setting) is off; otherwise it compiles the file
itself, as before. So the code it runs is always the code of the source it holds. A file whose
rewriting would warn (an `assert` on a tuple) is left to the graded process, which then warns
as pytest does. Source is compiled here from bytes the host read, never run here.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import marshal
import types
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PLUGINS", "precompiled"]

PLUGINS = ("pytest_timeout",)
"""The plugins the grader names with `-p` (pytest rewrites their asserts too)."""

_FILENAME = "<loopwright-precompiled>"  # replaced by the file's path as the graded process loads it


@functools.lru_cache(maxsize=1024)
def _entry(source: bytes) -> tuple[str, types.CodeType] | None:
    """(SHA-256 hex of `source`, `source` compiled as pytest's assertion rewriter compiles a test
    module), or None when it cannot be here."""
    code = _rewritten(source)
    return None if code is None else (hashlib.sha256(source).hexdigest(), code)


def _rewritten(source: bytes) -> types.CodeType | None:
    """`source` compiled as pytest's assertion rewriter compiles a test module (no config: the
    pass hook off), or None when it cannot be here (no pytest, a syntax error, a warning)."""
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        return None
    try:
        tree = ast.parse(source, filename=_FILENAME)
    except (SyntaxError, ValueError):
        return None
    if any(
        isinstance(node, ast.Assert) and isinstance(node.test, ast.Tuple) and node.test.elts
        for node in ast.walk(tree)
    ):
        return None  # the rewriter warns ("assertion is always true"): let pytest do it
    try:
        rewrite_asserts(tree, source, _FILENAME, None)
        return compile(tree, _FILENAME, "exec", dont_inherit=True)
    except Exception:  # noqa: BLE001  anything the rewriter rejects is compiled in the run instead
        return None


@functools.cache
def _pytest_version() -> str | None:
    try:
        import pytest
    except ImportError:
        return None
    return str(pytest.__version__)


@functools.cache
def _plugin_sources() -> tuple[bytes, ...]:
    """The source of each of `PLUGINS` as installed here, read once (a later change of the file
    only means the guard finds no entry for it and compiles it)."""
    found = []
    for name in PLUGINS:
        try:
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                found.append(Path(spec.origin).read_bytes())
        except (ImportError, OSError, ValueError):
            continue
    return tuple(found)


def precompiled(sources: Iterable[bytes]) -> bytes | None:
    """The kit's table (marshal): {"magic", "pytest", "code": {SHA-256 hex of a source: its
    code}} for each of `sources` (the task's test and conftest files) and of `PLUGINS` that
    compiles here; None when none does."""
    version = _pytest_version()
    if version is None:
        return None
    entries = tuple(filter(None, map(_entry, (*sources, *_plugin_sources()))))
    return _table(entries, version) if entries else None


@functools.lru_cache(maxsize=256)
def _table(entries: tuple[tuple[str, types.CodeType], ...], version: str) -> bytes:
    """The marshalled table of `entries` (made once per set: every grade of a task asks again)."""
    header = {"magic": importlib.util.MAGIC_NUMBER, "pytest": version}
    return marshal.dumps({**header, "code": dict(entries)})
