"""Nothing in the workspace shadows a module the grader, pytest, its plugins or the standard
library provide: the workspace comes last on `sys.path`."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from loopwright.sandbox import create_workspace, remove_workspace
from loopwright.scoring import GradeResult, PytestGrader
from loopwright.tasks import Task
from tests.taskfactory import GOLD, write_files

# The distributions the grader's pytest process imports from: pytest and its own modules, the
# libraries it imports, and the plugins the grader loads.
_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "pytest_timeout")


def _imported_names(package: str) -> set[str]:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return set()
    root = Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)
    files = root.rglob("*.py") if root.is_dir() else [root]
    names = {package}
    for file in files:
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def shadow_names() -> list[str]:
    """Every standard-library module name, and every top-level module the grader's packages
    import (optional ones included: those are the ones a workspace file could supply)."""
    names = set(sys.stdlib_module_names)
    for package in _PACKAGES:
        names |= _imported_names(package)
    return sorted(n for n in names if n.isidentifier())


def test_the_shadow_list_covers_the_modules_that_were_attacked() -> None:
    names = shadow_names()
    assert {"pytest_timeout", "pdb", "code", "codeop", "cmd", "os", "_pytest", "pluggy"} <= set(
        names
    )
    assert len(names) > 300


def _grade_with_files(
    grader: PytestGrader, task: Task, parent: Path, core: str, files: dict[str, str]
) -> tuple[GradeResult, list[str]]:
    """Grade `core` plus `files`; also return the files whose module was imported (marked)."""
    ws = create_workspace(task.repo_dir, parent)
    try:
        (ws.path / "calc" / "core.py").write_text(core)
        write_files(ws.path, files)
        grade = grader.grade(ws.path, task)
        hits = sorted(p.name.removesuffix(".hit") for p in ws.path.rglob("*.hit"))
    finally:
        remove_workspace(ws)
    return grade, hits


_MARK = "open(__file__ + '.hit', 'w').close()\n"


def test_no_workspace_module_shadows_one_the_grader_imports(
    grader: PytestGrader, calc_task: Task, tmp_path: Path
) -> None:
    shadows = {
        f"{name}.py": _MARK + f"raise ImportError('{name} shadowed')\n" for name in shadow_names()
    }
    grade, hits = _grade_with_files(grader, calc_task, tmp_path, GOLD, shadows)
    assert hits == []
    assert (grade.score, grade.resolved, grade.invalid) == (1.0, True, False), grade.invalid_reason


def test_a_module_imported_from_the_workspace_leaves_its_mark(
    grader: PytestGrader, calc_task: Task, tmp_path: Path
) -> None:
    """Proves the test above can fail: the code under test imports lw_probe on purpose."""
    core = GOLD.replace("def add", "import lw_probe\n\n\ndef add", 1)
    grade, hits = _grade_with_files(grader, calc_task, tmp_path, core, {"lw_probe.py": _MARK})
    assert hits == ["lw_probe.py"]
    assert grade.score == 1.0
