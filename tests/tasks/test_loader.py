from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.tasks import (
    FailureKind,
    apply_overlay,
    benchmark_names,
    load_benchmark,
    load_benchmark_dir,
    load_task,
)
from tests.taskfactory import make_calc_task


def test_calc_task_loads_with_its_metadata(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    assert task.id == "calc-ops"
    assert task.level == 1
    assert len(task.spec.fail_to_pass) == 6
    assert task.spec.flawed[0].kind is FailureKind.PARTIAL_FEATURE
    assert task.flawed_dir("only-mul").is_dir()
    assert "mul(a, b)" in task.instruction


def test_metadata_table_is_kept_and_changes_nothing_else(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    assert task.spec.metadata == {}
    toml = task.root / "task.toml"
    table = '\n[metadata]\nfiles = 2\nlocate = "find"\nlong = true\nweight = 0.5\n'
    toml.write_text(toml.read_text().replace("[timeouts]", table + "\n[timeouts]", 1))
    loaded = load_task(task.root)
    assert loaded.spec.metadata == {"files": 2, "locate": "find", "long": True, "weight": 0.5}
    assert loaded.spec.model_copy(update={"metadata": {}}) == task.spec


def test_metadata_values_must_be_scalars(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    toml = task.root / "task.toml"
    table = "\n[metadata]\nfiles = [1, 2]\n"
    toml.write_text(toml.read_text().replace("[timeouts]", table + "\n[timeouts]", 1))
    with pytest.raises(ConfigError, match=r"metadata\.files"):
        load_task(task.root)


def test_digest_changes_when_any_task_file_changes(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    before = task.digest
    (task.hidden_tests_dir / "test_ops_hidden.py").write_text("# changed\n")
    assert load_task(task.root).digest != before


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda r: (r / "instruction.md").unlink(), "instruction.md is missing"),
        (lambda r: shutil.rmtree(r / "tests"), "tests/ is missing or empty"),
        (lambda r: shutil.rmtree(r / "repo"), "repo/ is missing"),
        (lambda r: (r / "task.toml").unlink(), "has no task.toml"),
        (lambda r: (r / "task.toml").write_text("id = [unclosed"), "is not valid TOML"),
        (lambda r: shutil.rmtree(r / "flawed" / "only-mul"), "flawed/only-mul/ is missing"),
        (lambda r: (r / "flawed" / "stray").mkdir(), "flawed/stray/ has no [[flawed]] entry"),
        (
            lambda r: (
                (r / "solution" / "tests").mkdir() or (r / "solution/tests/t.py").write_text("")
            ),
            "changes a test file",
        ),
        (
            lambda r: (r / "tests" / "test_add.py").write_text(""),
            "same path as a visible test",
        ),
    ],
    ids=[
        "no instruction",
        "no hidden tests",
        "no repo",
        "no task.toml",
        "bad toml",
        "declared flawed missing",
        "untagged flawed",
        "overlay touches tests",
        "hidden collides with visible",
    ],
)
def test_invalid_task_directory_is_a_config_error_naming_the_problem(
    tmp_path: Path,
    breakage,
    message: str,  # type: ignore[no-untyped-def]
) -> None:
    task = make_calc_task(tmp_path)
    breakage(task.root)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_task(task.root)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('id = "calc-ops"', 'id = "other"', "does not match the directory name"),
        ("level = 1", "level = 7", "level: Input should be less than or equal to 3"),
        ("level = 1", 'level = 1\nsurprise = "field"', "surprise: Extra inputs are not permitted"),
        ("tests/test_add.py::test_add'", "tests/test_add.py'", "is not a pytest node id"),
        ('kind = "partial_feature"', 'kind = "meh"', "flawed[0].kind"),
    ],
)
def test_invalid_task_toml_names_the_field(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    task = make_calc_task(tmp_path)
    toml = task.root / "task.toml"
    toml.write_text(toml.read_text().replace(old, new, 1))
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_task(task.root)


def test_test_ids_outside_test_dir_are_refused(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    toml = task.root / "task.toml"
    toml.write_text(
        toml.read_text().replace("tests/test_add.py::test_add'", "calc/check.py::test_add'", 1)
    )
    with pytest.raises(ConfigError, match="outside test_dir"):
        load_task(task.root)


def test_benchmark_folder_loads_tasks_sorted_and_reports_every_invalid_one(tmp_path: Path) -> None:
    make_calc_task(tmp_path, "b-task")
    make_calc_task(tmp_path, "a-task")
    bench = load_benchmark_dir(tmp_path)
    assert [t.id for t in bench.tasks] == ["a-task", "b-task"]
    (tmp_path / "a-task" / "instruction.md").unlink()
    (tmp_path / "b-task" / "instruction.md").unlink()
    with pytest.raises(ConfigError, match="2 invalid task") as info:
        load_benchmark_dir(tmp_path)
    assert "a-task" in str(info.value) and "b-task" in str(info.value)


def test_a_task_directory_loads_as_a_one_task_benchmark(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    assert [t.id for t in load_benchmark(task.root).tasks] == ["calc-ops"]


def test_unknown_benchmark_name_lists_the_registered_ones() -> None:
    with pytest.raises(ConfigError, match="unknown benchmark 'nope'") as info:
        load_benchmark("nope")
    assert "mini" in str(info.value)


def test_empty_folder_is_not_a_benchmark(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds no task"):
        load_benchmark(tmp_path)


def test_mini_is_registered() -> None:
    assert "mini" in benchmark_names()


def test_overlay_replaces_and_adds_files(tmp_path: Path) -> None:
    overlay, dest = tmp_path / "o", tmp_path / "d"
    (overlay / "pkg").mkdir(parents=True)
    (overlay / "pkg" / "a.py").write_text("new")
    (overlay / "pkg" / "b.py").write_text("added")
    (dest / "pkg").mkdir(parents=True)
    (dest / "pkg" / "a.py").write_text("old")
    written = apply_overlay(overlay, dest)
    assert written == ["pkg/a.py", "pkg/b.py"]
    assert (dest / "pkg" / "a.py").read_text() == "new"
    assert (dest / "pkg" / "b.py").read_text() == "added"


@pytest.mark.parametrize(
    ("rel", "package", "module"),
    [("test.py", False, "test"), ("test/test_add.py", True, "test.test_add")],
    ids=["test.py", "test package"],
)
def test_a_test_module_named_like_the_standard_library_is_refused(
    tmp_path: Path, rel: str, package: bool, module: str
) -> None:
    task = make_calc_task(tmp_path)
    dest = task.root / "repo" / rel
    dest.parent.mkdir(exist_ok=True)
    if package:
        (dest.parent / "__init__.py").write_text("")
    shutil.copy(task.root / "repo" / "tests" / "test_add.py", dest)
    toml = task.root / "task.toml"
    toml.write_text(toml.read_text().replace("tests/test_add.py::test_add'", f"{rel}::test_add'"))
    with pytest.raises(ConfigError, match=f"imported as module '{module}', and 'test' is a"):
        load_task(task.root)


def test_a_test_directory_named_test_without_init_loads(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    (task.root / "repo" / "test").mkdir()
    shutil.copy(task.root / "repo" / "tests" / "test_add.py", task.root / "repo" / "test")
    toml = task.root / "task.toml"
    toml.write_text(
        toml.read_text().replace("tests/test_add.py::test_add'", "test/test_add.py::test_add'")
    )
    assert "test/test_add.py::test_add" in load_task(task.root).spec.pass_to_pass  # module test_add
