"""`mine_repository` with an `--env-spec` file: the table replaces the inferred environment, the
test runs that find FAIL_TO_PASS use it (a dependency installed offline from a wheel, a variable),
and each task written carries the files it needs, so it validates once the spec is gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.sandbox import EnvironmentCache
from loopwright.scoring import (
    MineOptions,
    MineReport,
    PytestGrader,
    mine_repository,
    validate_benchmark,
)
from loopwright.tasks import Environment, load_benchmark
from tests.minerepo import WCALC_F2P, WCALC_P2P, make_env_spec, make_wcalc_repo


@pytest.fixture(scope="module")
def wcalc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wcalc")
    make_wcalc_repo(root / "repo")
    return root / "repo"


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> EnvironmentCache:
    """One cache for the module: the spec's environment (no install) is one build for all."""
    return EnvironmentCache(tmp_path_factory.mktemp("envs"))


@pytest.fixture(scope="module")
def mined_with_spec(
    tmp_path_factory: pytest.TempPathFactory,
    wcalc: Path,
    grader: PytestGrader,
    envs: EnvironmentCache,
) -> tuple[MineReport, Path, Path]:
    root = tmp_path_factory.mktemp("specmine")
    spec = make_env_spec(root / "spec")
    options = MineOptions(repo=wcalc, out=root / "out", jobs=1, env_spec=spec)
    report = mine_repository(options, grader, environments=envs)
    return report, root / "out", spec


def test_without_the_spec_the_inferred_environment_cannot_import_the_dependency(
    tmp_path: Path, wcalc: Path, grader: PytestGrader
) -> None:
    report = mine_repository(MineOptions(repo=wcalc, out=tmp_path / "out"), grader)
    (row,) = report.commits
    assert not row.kept and row.environment is not None
    assert row.environment.startswith("no declared dependencies")
    assert row.reason.startswith("no test ran, before or after the change")


def test_the_spec_environment_replaces_the_inferred_one_and_fail_to_pass_is_measured_in_it(
    mined_with_spec: tuple[MineReport, Path, Path],
) -> None:
    report, out, spec = mined_with_spec
    (row,) = report.commits
    assert row.kept, row.reason
    assert row.fail_to_pass == WCALC_F2P
    assert row.pass_to_pass == len(WCALC_P2P)  # the spec's env variable reached the tests
    assert row.flawed == ["first-half", "second-half"]
    assert report.env_spec == str(spec.resolve())
    assert row.environment == (
        f"--env-spec {spec.resolve()} (replaces the inferred [environment] none; inferred from: "
        "no declared dependencies and no src/ layout: loopwright's interpreter)"
    )
    task = load_benchmark(out).task(row.task_id or "")
    assert task.spec.environment == Environment(
        requirements_files=["environment/requirements.txt"], env={"WCALC_MODE": "mined"}
    )
    assert task.spec.pass_to_pass == WCALC_P2P


def test_a_task_mined_with_a_spec_is_self_contained_and_validates_without_it(
    mined_with_spec: tuple[MineReport, Path, Path], grader: PytestGrader, tmp_path: Path
) -> None:
    report, out, spec = mined_with_spec
    task_dir = out / (report.commits[0].task_id or "")
    assert (task_dir / "environment" / "requirements.txt").is_file()
    assert [p.name for p in (task_dir / "environment" / "wheels").iterdir()] == [
        "units-1.0-py3-none-any.whl"
    ]
    assert not [p for p in out.iterdir() if p.name.startswith(".mining")]
    shutil.rmtree(spec.parent)  # nothing may still point at the spec's folder
    checks = validate_benchmark(
        load_benchmark(out), grader, environments=EnvironmentCache(tmp_path / "fresh")
    )
    assert [(c.variant, c.ok) for c in checks] == [
        ("gold", True), ("first-half", True), ("second-half", True), ("untouched", True),
    ], [c.problem for c in checks]  # fmt: skip


def test_a_container_image_in_the_spec_is_refused_outside_the_container_sandbox(
    tmp_path: Path, wcalc: Path, grader: PytestGrader
) -> None:
    spec = make_env_spec(tmp_path / "spec", '[environment]\nimage = "localhost/x:1"\n')
    options = MineOptions(repo=wcalc, out=tmp_path / "out", env_spec=spec)
    with pytest.raises(UsageError, match="only the container sandbox runs") as caught:
        mine_repository(options, grader)
    assert caught.value.fix is not None and "--sandbox docker" in caught.value.fix
    assert not (tmp_path / "out").exists()


def test_the_report_shows_the_inferred_table_the_spec_replaced(
    tmp_path: Path, wcalc: Path, grader: PytestGrader, envs: EnvironmentCache
) -> None:
    # A repository whose inference gives a table: a setup.py means `pip install -e .`.
    from tests.minerepo import commit, git

    repo = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(wcalc), str(repo))
    commit(repo, "Package it", {"setup.py": "from setuptools import setup\nsetup()\n"})
    commit(repo, "Add half", {"wcalc/half.py": "def half(x):\n    return x / 2\n",
                              "tests/test_half.py": "from wcalc.half import half\n\n\ndef test_half():\n    assert half(4) == 2\n"})  # fmt: skip
    spec = make_env_spec(tmp_path / "spec")
    options = MineOptions(repo=repo, out=tmp_path / "out", max_commits=1, env_spec=spec)
    report = mine_repository(options, grader, environments=envs)
    (row,) = report.commits
    assert row.environment == (
        f'--env-spec {spec.resolve()} (replaces the inferred [environment] {{ install = ["pip '
        'install -e ."] }; inferred from: setup.py (its install_requires are installed by pip '
        "install -e .))"
    )
    assert row.kept, row.reason  # built from the spec: no install of the package was tried
