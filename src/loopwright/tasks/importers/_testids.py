"""SWE-bench / FeatureBench test ids mapped to the ids loopwright's graders run
(docs/importing.md, "Test ids").

Three forms are understood; one instance must use one runner's forms only:
- pytest node ids, `tests/test_x.py::TestA::test_b[param]`: kept as they are (pytest runner);
- unittest names as Django's runner prints them, `test_b (module.Class)` (a docstring line may
  follow) or Python 3.11's `test_b (module.Class.test_b)`: `module.Class.test_b` for the
  unittest runner, with the test directory prepended when the module lives there
  (`admin_views.tests` -> `tests.admin_views.tests` when `tests/admin_views/tests.py` exists);
- a bare test function name, `test_b` (sympy's runner): `file::test_b` when exactly one file the
  test patch touches defines `def test_b(` at module level;
- a test file path, `tests/test_x.py` (FeatureBench): every test function and `Test*` class
  method defined in it, read statically; a parametrised test is listed once, without
  parameters, and the graders count it passed only when every parametrisation passed.
Anything else makes the instance not convertible, saying which id.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from loopwright.tasks.importers._gitrepo import SkipInstance

__all__ = ["MappedTests", "TreeView", "map_test_ids"]

_PYTEST = re.compile(r"^[\w./-]+\.py::\S.*$", re.DOTALL)
_UNITTEST = re.compile(r"^(\w+) \(([\w.]+)\)(?:\s.*)?$", re.DOTALL)
_BARE = re.compile(r"^[A-Za-z_]\w*$")
_FILE = re.compile(r"^[\w./-]+\.py$")


@dataclass(frozen=True)
class TreeView:
    """The files the ids are resolved against: the repo at the base commit with the test patch
    applied. `patched` holds the files the test patch touches (None: deleted); `exists` and
    `read` answer for any other path of the base commit."""

    patched: Mapping[str, bytes | None]
    exists: Callable[[str], bool]
    read: Callable[[str], bytes | None]

    def has(self, rel: str) -> bool:
        if rel in self.patched:
            return self.patched[rel] is not None
        return self.exists(rel)

    def text(self, rel: str) -> str | None:
        content = self.patched[rel] if rel in self.patched else self.read(rel)
        return None if content is None else content.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class MappedTests:
    """The grader's view of an instance's tests: runner, test_dir and the two id lists (each
    deduplicated in order; an id in both lists is kept in fail_to_pass only). `dropped` says
    which ids of the instance were left out and why (cut off, or naming no test of its file)."""

    runner: str
    test_dir: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    dropped: tuple[str, ...] = ()


def map_test_ids(f2p: Sequence[str], p2p: Sequence[str], tree: TreeView) -> MappedTests:
    """Map both lists (see the module docstring). Raises SkipInstance naming the first id that
    cannot be mapped, or when the two lists mix runners or fail_to_pass is empty."""
    if not f2p:
        raise SkipInstance("FAIL_TO_PASS is empty: there is nothing to grade")
    kinds = {_kind(test_id) for test_id in (*f2p, *p2p)}
    if "unittest" in kinds and len(kinds) > 1:
        raise SkipInstance("the test ids mix unittest names with pytest ids")
    if kinds == {"unittest"}:
        mapped_f2p = [_unittest_id(t, tree) for t in f2p]
        mapped_p2p = [_unittest_id(t, tree) for t in p2p]
        dirs = {t.split(".", 1)[0] for t in (*mapped_f2p, *mapped_p2p)}
        if len(dirs) != 1:
            raise SkipInstance(f"the unittest ids span several top-level packages: {sorted(dirs)}")
        return _mapped("unittest", dirs.pop(), mapped_f2p, mapped_p2p)
    dropped: dict[str, str] = {}
    mapped_f2p = _kept([m for t in f2p for m in _pytest_ids(t, tree)], tree, dropped)
    mapped_p2p = _kept([m for t in p2p for m in _pytest_ids(t, tree)], tree, dropped)
    if not mapped_f2p:
        raise SkipInstance(
            "no FAIL_TO_PASS id names a test of its file: "
            + "; ".join(f"{i} ({why})" for i, why in dropped.items())
        )
    mapped = _mapped("pytest", _pytest_dir(mapped_f2p), mapped_f2p, mapped_p2p)
    notes = tuple(f"{test_id}: {why}" for test_id, why in dropped.items())
    return MappedTests(mapped.runner, mapped.test_dir, mapped.fail_to_pass,
                       mapped.pass_to_pass, notes)  # fmt: skip


def _kept(ids: list[str], tree: TreeView, dropped: dict[str, str]) -> list[str]:
    """`ids` less those that cannot name a test pytest reports (recorded in `dropped`): cut
    off (a `[` never closed, as ids cut at a space are) or naming no function of its file."""
    kept = []
    for test_id in ids:
        why = _unresolvable(test_id, tree)
        if why is None:
            kept.append(test_id)
        else:
            dropped[test_id] = why
    return kept


def _unresolvable(test_id: str, tree: TreeView) -> str | None:
    path, _, rest = test_id.partition("::")
    if "[" in rest and not rest.endswith("]"):
        return "cut off: its parameter's `[` is never closed"
    text = tree.text(path)
    if text is None:
        return None  # not a file here (made at build or test time?): pytest will tell
    name = rest.split("[", 1)[0].rsplit("::", 1)[-1]
    if not re.search(rf"\b{re.escape(name)}\b", text):  # defined, assigned or generated
        return f"{path} never names a test {name}"
    return None


def _mapped(runner: str, test_dir: str, f2p: list[str], p2p: list[str]) -> MappedTests:
    first = list(dict.fromkeys(f2p))
    kept = set(first)
    return MappedTests(runner, test_dir, first, [t for t in dict.fromkeys(p2p) if t not in kept])


def _kind(test_id: str) -> str:
    if _PYTEST.match(test_id):
        return "pytest"
    if _UNITTEST.match(test_id):
        return "unittest"
    if _BARE.match(test_id) or _FILE.match(test_id):
        return "pytest"
    raise SkipInstance(
        f"unknown test id format {test_id!r} (expected a pytest node id 'tests/test_x.py::test_y', "
        "a unittest name 'test_y (module.Class)', a bare test function name or a test file)"
    )


def _pytest_ids(test_id: str, tree: TreeView) -> list[str]:
    if _PYTEST.match(test_id):
        return [test_id]
    if _FILE.match(test_id):
        return _file_tests(test_id, tree)
    defining = [
        rel
        for rel, content in sorted(tree.patched.items())
        if rel.endswith(".py")
        and content is not None
        and re.search(rf"^(?:async )?def {test_id}\(", content.decode(errors="replace"), re.M)
    ]
    if len(defining) != 1:
        where = "no file" if not defining else f"{len(defining)} files ({', '.join(defining)})"
        raise SkipInstance(
            f"test {test_id!r}: {where} of the test patch defines it at module level, so it "
            "cannot be mapped to a pytest node id"
        )
    return [f"{defining[0]}::{test_id}"]


def _file_tests(rel: str, tree: TreeView) -> list[str]:
    text = tree.text(rel)
    if text is None:
        raise SkipInstance(f"test file {rel!r} is neither in the repo nor added by the tests")
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise SkipInstance(f"test file {rel!r} does not parse: {exc}") from None
    ids = []
    for node in module.body:
        if _is_test(node, "test"):
            ids.append(f"{rel}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            ids += [f"{rel}::{node.name}::{m.name}" for m in node.body if _is_test(m, "test")]
    if not ids:
        raise SkipInstance(f"test file {rel!r} defines no test function")
    return ids


def _is_test(node: ast.stmt, prefix: str) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    return node.name.startswith(prefix)  # a parametrised test too: its id stands for all cases


def _unittest_id(test_id: str, tree: TreeView) -> str:
    match = _UNITTEST.match(test_id)
    if match is None:
        raise SkipInstance(f"unknown test id format {test_id!r}")
    name, where = match.group(1), match.group(2)
    dotted = where if where.endswith("." + name) else f"{where}.{name}"
    module = dotted.rsplit(".", 2)[0]
    for prefix in ("", "tests."):
        path = (prefix + module).replace(".", "/")
        if tree.has(path + ".py") or tree.has(path + "/__init__.py"):
            return prefix + dotted
    raise SkipInstance(
        f"test {test_id!r}: its module {module} is not a file of the repo (looked for "
        f"{module.replace('.', '/')}.py and tests/{module.replace('.', '/')}.py)"
    )


def _pytest_dir(ids: list[str]) -> str:
    """The common top-level directory of the test files, else `tests`."""
    tops = {i.split("::", 1)[0].split("/", 1)[0] for i in ids if "/" in i.split("::", 1)[0]}
    return tops.pop() if len(tops) == 1 else "tests"
