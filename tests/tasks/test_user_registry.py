"""Benchmarks registered by path: `bench add|remove|list`, the versioned registry file, and every
command taking a registered name like `mini`."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.tasks import (
    load_benchmark,
    register_benchmark_dir,
    user_benchmarks,
    user_benchmarks_path,
)
from tests.taskfactory import make_calc_task


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_tests_never_touch_the_users_registry() -> None:
    assert user_benchmarks_path() != Path.home() / ".loopwright" / "benchmarks.json"
    assert os.environ["LOOPWRIGHT_BENCHMARKS"] == str(user_benchmarks_path())


def test_bench_add_registers_a_folder_that_list_and_load_then_take_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_calc_task(tmp_path / "my-bench")
    code, out, _ = run(capsys, "bench", "add", str(tmp_path / "my-bench"), "--name", "calc")
    assert code == 0 and "registered calc" in out
    code, out, _ = run(capsys, "bench", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["calc"]["tasks"] == 1 and rows["calc"]["source"] == "manual"
    assert rows["calc"]["path"] == str((tmp_path / "my-bench").resolve())
    assert rows["mini"]["source"] == "bundled"
    assert load_benchmark("calc").name == "calc"
    stored = json.loads(user_benchmarks_path().read_text())
    assert stored["schema_version"] == 1 and stored["benchmarks"][0]["name"] == "calc"
    code, out, _ = run(capsys, "bench", "validate", "calc", "--sandbox", "local", "--json")
    assert code == 0 and all(row["ok"] for row in json.loads(out))


def test_a_name_for_another_folder_needs_replace(tmp_path: Path) -> None:
    make_calc_task(tmp_path / "a")
    make_calc_task(tmp_path / "b")
    register_benchmark_dir(tmp_path / "a", name="calc")
    register_benchmark_dir(tmp_path / "a", name="calc")  # the same folder again: refreshed
    with pytest.raises(ConfigError, match="already registered"):
        register_benchmark_dir(tmp_path / "b", name="calc")
    register_benchmark_dir(tmp_path / "b", name="calc", replace=True, source="harbor")
    entry = user_benchmarks().find("calc")
    assert entry is not None and entry.path == str((tmp_path / "b").resolve())
    assert entry.source == "harbor"


def test_bundled_names_and_invalid_folders_are_refused(tmp_path: Path) -> None:
    make_calc_task(tmp_path / "a")
    with pytest.raises(ConfigError, match="bundled"):
        register_benchmark_dir(tmp_path / "a", name="mini")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no task"):
        register_benchmark_dir(tmp_path / "empty")
    with pytest.raises(ConfigError, match="not a benchmark name"):
        register_benchmark_dir(tmp_path / "a", name="Bad Name")
    assert user_benchmarks().benchmarks == []


def test_a_registered_folder_that_is_gone_is_listed_with_its_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_calc_task(tmp_path / "gone")
    register_benchmark_dir(tmp_path / "gone")
    shutil.rmtree(tmp_path / "gone")
    code, out, _ = run(capsys, "bench", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and "gone" in rows["gone"]["problem"]
    code, _, err = run(capsys, "bench", "validate", "gone")
    assert code == 2 and "bench remove gone" in err
    code, out, _ = run(capsys, "bench", "remove", "gone")
    assert code == 0 and user_benchmarks().find("gone") is None


def test_a_garbled_registry_is_a_user_error_naming_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    user_benchmarks_path().write_text('{"schema_version": 9, "benchmarks": []}')
    code, _, err = run(capsys, "bench", "list")
    assert code == 2 and str(user_benchmarks_path()) in err


def test_concurrent_registrations_are_all_kept(tmp_path: Path) -> None:
    for i in range(6):
        make_calc_task(tmp_path / f"b{i}")
    threads = [
        threading.Thread(target=register_benchmark_dir, args=(tmp_path / f"b{i}",))
        for i in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [b.name for b in user_benchmarks().benchmarks] == [f"b{i}" for i in range(6)]
