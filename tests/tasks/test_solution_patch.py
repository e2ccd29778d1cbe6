"""A gold given as `solution.patch` (a unified diff of repo/, for a gold that deletes or
renames files): applied as the gold overlay is, checked by the loader like one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.tasks import apply_overlay, load_task
from tests.taskfactory import make_calc_task

RENAME_AND_MUL = """\
diff --git a/calc/core.py b/calc/core.py
--- a/calc/core.py
+++ b/calc/core.py
@@ -1,2 +1,5 @@
 def add(a, b):
     return a + b
+
+def mul(a, b):
+    return a * b
diff --git a/calc/__init__.py b/calc/__init__.py
deleted file mode 100644
--- a/calc/__init__.py
+++ /dev/null
@@ -1 +0,0 @@
-from calc.core import add
"""

ADD_TEST = """\
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+x = 1
"""


def _patch_task(tmp_path: Path, patch: str) -> Path:
    task = make_calc_task(tmp_path)
    shutil.rmtree(task.root / "solution")
    (task.root / "solution.patch").write_text(patch)
    return task.root


def test_a_solution_patch_is_the_gold_and_applies_with_deletions(tmp_path: Path) -> None:
    task = load_task(_patch_task(tmp_path / "bench", RENAME_AND_MUL))
    assert task.solution_dir is None and task.gold == task.root / "solution.patch"
    work = tmp_path / "ws"
    shutil.copytree(task.repo_dir, work)
    assert apply_overlay(task.gold, work) == ["calc/__init__.py", "calc/core.py"]
    assert not (work / "calc" / "__init__.py").exists()
    assert "def mul" in (work / "calc" / "core.py").read_text()


@pytest.mark.parametrize(
    ("patch", "problem"),
    [
        (RENAME_AND_MUL.replace("return a + b\n+", "return a - b\n+"), "does not apply"),
        (RENAME_AND_MUL + ADD_TEST, "changes the test file tests/test_new.py"),
        ("not a diff\n", "touches no file"),
    ],
)
def test_a_bad_solution_patch_is_named_by_the_loader(
    tmp_path: Path, patch: str, problem: str
) -> None:
    root = _patch_task(tmp_path / "bench", patch)
    with pytest.raises(ConfigError, match=problem):
        load_task(root)


def test_a_task_with_both_gold_forms_is_refused(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path / "bench")
    (task.root / "solution.patch").write_text(RENAME_AND_MUL)
    with pytest.raises(ConfigError, match="give the gold one way"):
        load_task(task.root)
