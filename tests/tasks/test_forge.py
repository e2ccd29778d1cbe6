"""The bundled `forge` benchmark (docs/forge.md): its size, its axes, a sampled subset grading as
`bench validate` demands, and the generator reproducing the committed tree byte for byte.

The whole `loopwright bench validate forge` (500 gradings) is too slow for the suite; docs/forge.md
says how long it takes. Here two tasks are graded: one file (with an import error and a broken
regression among its flaws) and five files (a misleading report, a partial feature)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from loopwright.sandbox import default_sandbox
from loopwright.scoring import PytestGrader, validate_benchmark
from loopwright.tasks import Benchmark, Task, load_benchmark, tree_digest

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "bench" / "forge" / "generate.py"

AXES: dict[str, set[object]] = {
    "files": {1, 2, 3, 4, 5},
    "edges": {"spelled", "hinted"},
    "visible_tests": {True, False},
    "locate": {"named", "find"},
    "context": {"short", "long"},
    "misleading_failure": {True, False},
    "family": {"wordsmith", "numkit", "seqkit"},
}


@pytest.fixture(scope="module")
def forge() -> Benchmark:
    return load_benchmark("forge")


def test_forge_has_at_least_80_tasks_each_with_a_gold_and_two_tagged_flaws(
    forge: Benchmark,
) -> None:
    bench = forge
    assert bench.name == "forge"
    assert len(bench.tasks) >= 80
    for task in bench.tasks:
        assert task.solution_dir is not None, task.id
        assert len(task.spec.flawed) >= 2, task.id
        assert len({v.kind for v in task.spec.flawed}) == len(task.spec.flawed), task.id
        hidden = [t for t in task.spec.fail_to_pass if "_hidden.py::" in t]
        assert len(hidden) >= 3, task.id
        assert task.level == (1 if task.spec.metadata["files"] == 1 else 2), task.id


def test_every_axis_value_is_covered_by_many_tasks(forge: Benchmark) -> None:
    tasks = forge.tasks
    for axis, values in AXES.items():
        seen = Counter(t.spec.metadata[axis] for t in tasks)
        assert set(seen) == values, axis
        assert min(seen.values()) >= 10, (axis, seen)


def test_the_files_axis_counts_the_modules_the_gold_changes(forge: Benchmark) -> None:
    for task in forge.tasks:
        assert task.solution_dir is not None
        changed = [p for p in task.solution_dir.rglob("*.py")]
        assert len(changed) == task.spec.metadata["files"], task.id


def test_locate_find_instructions_name_no_module_path(forge: Benchmark) -> None:
    for task in forge.tasks:
        assert task.solution_dir is not None
        paths = [
            p.relative_to(task.solution_dir).as_posix() for p in task.solution_dir.rglob("*.py")
        ]
        named = [p for p in paths if p in task.instruction]
        if task.spec.metadata["locate"] == "named":
            assert named == paths, task.id
        else:
            assert named == [], task.id


def test_instructions_are_distinct_so_the_sim_recognises_each_task(forge: Benchmark) -> None:
    tasks = forge.tasks
    assert len({t.instruction.strip() for t in tasks}) == len(tasks)


def test_visible_feature_tests_exist_only_on_visible_tasks(forge: Benchmark) -> None:
    for task in forge.tasks:
        visible_f2p = [t for t in task.spec.fail_to_pass if "_hidden.py::" not in t]
        assert bool(visible_f2p) == task.spec.metadata["visible_tests"], task.id
        report = (task.repo_dir / str(task.spec.metadata["family"]) / "report.py").is_file()
        assert report == task.spec.metadata["misleading_failure"], task.id


def test_a_sampled_subset_validates_gold_at_one_and_every_flaw_below(forge: Benchmark) -> None:
    def kinds(task: Task) -> set[str]:
        return {v.kind.value for v in task.spec.flawed}

    one = next(
        t
        for t in forge.tasks
        if t.spec.metadata["files"] == 1 and {"import_error", "broken_regression"} <= kinds(t)
    )
    five = next(
        t
        for t in forge.tasks
        if t.spec.metadata["files"] == 5
        and t.spec.metadata["misleading_failure"]
        and "partial_feature" in kinds(t)
    )
    subset = Benchmark(name="forge-sample", root=forge.root, tasks=(one, five))
    checks = validate_benchmark(subset, PytestGrader(default_sandbox("auto")))
    assert len(checks) == sum(len(t.spec.flawed) + 2 for t in subset.tasks)
    assert all(c.ok for c in checks), [
        (c.task_id, c.variant, c.problem) for c in checks if not c.ok
    ]


def test_the_generator_reproduces_the_committed_benchmark(forge: Benchmark, tmp_path: Path) -> None:
    out = tmp_path / "forge"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(out)], check=True, capture_output=True
    )
    committed = forge.root
    assert tree_digest(out) == tree_digest(committed)


def test_the_generator_with_another_seed_writes_other_tasks(
    forge: Benchmark, tmp_path: Path
) -> None:
    out = tmp_path / "other"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(out), "--seed", "3", "--count", "10"],
        check=True,
        capture_output=True,
    )
    assert len([p for p in out.iterdir() if p.is_dir()]) == 10
    committed = forge.root
    assert tree_digest(out / "fg001-wordsmith-1f") != tree_digest(committed / "fg001-wordsmith-1f")


def test_every_python_file_of_forge_parses(forge: Benchmark) -> None:
    broken = []
    for path in sorted(forge.root.rglob("*.py")):
        try:
            ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as exc:
            broken.append(f"{path.relative_to(forge.root)}: {exc}")
    assert broken == []


CHECK_A_BAD_OP = """
import sys
sys.path.insert(0, sys.argv[1])
from dataclasses import replace
from check import op_problems
import family_num
op = family_num.OPS[0]
print(op_problems(op))
print(op_problems(replace(op, logic_flaw=op.gold, edge_flaw=op.gold)))
"""


def test_the_generator_refuses_an_op_whose_flaws_pass_its_cases() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK_A_BAD_OP, str(GENERATOR.parent)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert out[0] == "[]"
    assert "the edge flaw passes every edge case" in out[1]
    assert "the logic flaw passes every main case" in out[1]
