"""The grading kit runs on every Python a task may use (3.7 and later), not only on loopwright's.

What runs inside the graded interpreter is the kit's start-up code (`BOOT`) and the guard plugin:
their syntax is checked against Python 3.7's grammar here, and a SWE-bench-shaped task whose
environment is an old Python (3.9: no `sys.stdlib_module_names`) is validated under bubblewrap.
The old interpreter is Debian's PyPy 3.9 (`pypy3`, Debian 12; the only Python older than 3.10
its archive has), reached as `python3.9` through a link on PATH; the pytest that still runs on
3.9 comes as wheels that .ci/run downloads into LOOPWRIGHT_TEST_OLD_WHEELS (no network here).
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from loopwright.sandbox import EnvironmentCache, bubblewrap_available, default_sandbox
from loopwright.scoring import PytestGrader, validate_benchmark
from loopwright.scoring._kit import BOOT
from loopwright.tasks import Environment, load_benchmark_dir
from loopwright.tasks.importers import EnvSpec, ImportOptions, import_swebench
from tests.tasks.importfixtures import make_fixture, write_jsonl

PLUGIN = Path(__file__).parents[2] / "src" / "loopwright" / "scoring" / "_guard_plugin.py"
OLD_PYTHON = os.environ.get("LOOPWRIGHT_TEST_OLD_PYTHON", "pypy3")
OLD_WHEELS = Path(os.environ.get("LOOPWRIGHT_TEST_OLD_WHEELS", "/nonexistent"))


@pytest.mark.parametrize(
    ("name", "source"), [("BOOT", BOOT), ("the guard plugin", PLUGIN.read_text(encoding="utf-8"))]
)
def test_the_code_run_in_the_graded_interpreter_parses_as_python_3_7(
    name: str, source: str
) -> None:
    ast.parse(source, filename=name, feature_version=(3, 7))


def test_boot_does_not_need_the_standard_library_list_of_python_3_10() -> None:
    """`sys.stdlib_module_names` is 3.10+: BOOT reads it only where it exists."""
    tree = ast.parse(BOOT)
    direct = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "stdlib_module_names"
    ]
    assert not direct, "BOOT reads sys.stdlib_module_names directly (absent before 3.10)"


@pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap (CI has it)")
@pytest.mark.skipif(
    shutil.which(OLD_PYTHON) is None or not OLD_WHEELS.is_dir(),
    reason="needs an old Python and pytest wheels for it (.ci/run installs pypy3 and downloads "
    "them into LOOPWRIGHT_TEST_OLD_WHEELS)",
)
def test_a_swebench_task_on_python_3_9_validates_under_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.9").symlink_to(shutil.which(OLD_PYTHON) or OLD_PYTHON)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    fx = make_fixture(tmp_path / "fixture")
    out = tmp_path / "out"
    wheels = out / "acme__calc-1" / "environment" / "wheels"  # shown to the build sandbox
    install = f"pip install -q --no-index --find-links {wheels} 'pytest<8.4' pytest-timeout"
    spec = EnvSpec(environment=Environment(python="3.9", install=[install]))
    source = write_jsonl(tmp_path / "rows.jsonl", [fx.instance()])
    report = import_swebench(source, out, ImportOptions(repos=fx.repos, env_spec=spec))
    assert not report.skipped, report.skipped
    shutil.copytree(OLD_WHEELS, wheels)
    cache = EnvironmentCache(tmp_path / "cache", builder="pip")
    bench = load_benchmark_dir(out)
    checks = {
        c.variant: c
        for c in validate_benchmark(
            bench, PytestGrader(default_sandbox("bubblewrap")), environments=cache
        )
    }
    gold = checks["gold"].grade
    assert gold is not None, [(v, c.problem) for v, c in checks.items()]
    assert (gold.score, gold.invalid) == (1.0, False), (gold.invalid_reason, gold.output_tail)
    assert cache.ensure(bench.tasks[0]).manifest.python_version.startswith("3.9.")
    assert all(c.ok for c in checks.values()), [(v, c.problem) for v, c in checks.items()]
