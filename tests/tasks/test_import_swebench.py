"""`tasks import swebench`: instances from JSON, JSONL, parquet and a v5 task repository become
tasks that `bench validate` passes; instances that cannot be converted are reported with why."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.sandbox import default_sandbox
from loopwright.scoring import PytestGrader, grade_variant, validate_benchmark
from loopwright.tasks import load_benchmark_dir, load_task, tree_digest
from loopwright.tasks.importers import (
    REPORT_FILE,
    EnvSpec,
    ImportOptions,
    ImportReport,
    import_swebench,
    load_env_spec,
)
from tests.tasks.importfixtures import (
    F2P,
    P2P,
    Fixture,
    git,
    make_fixture,
    make_unittest_fixture,
    write_json,
    write_jsonl,
    write_v5,
)

TASK = "acme__calc-1"


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("fixture"))


@pytest.fixture(scope="module")
def grader() -> PytestGrader:
    return PytestGrader(default_sandbox("auto"))


def _import(fx: Fixture, source: Path, out: Path, **options: object) -> ImportReport:
    return import_swebench(source, out, ImportOptions(repos=fx.repos, **options))  # type: ignore[arg-type]


def _reasons(report: ImportReport) -> dict[str, str]:
    return {s.source_id: s.reason for s in report.skipped}


def test_an_imported_instance_validates_gold_resolved_untouched_zero(
    fx: Fixture, grader: PytestGrader, tmp_path: Path
) -> None:
    report = _import(fx, write_json(tmp_path / "i.json", [fx.instance()]), tmp_path / "out")
    assert [c.task_id for c in report.converted] == [TASK] and not report.skipped
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "out"), grader)
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]
    grades = {c.variant: c.grade for c in checks}
    gold, untouched = grades["gold"], grades["untouched"]
    assert gold is not None and untouched is not None
    assert (gold.score, gold.resolved, gold.p2p_passed, gold.p2p_total) == (1.0, True, 2, 2)
    assert untouched.score == 0.0 and not untouched.invalid


def test_the_task_holds_the_instance_mapped_to_the_task_format(fx: Fixture, tmp_path: Path) -> None:
    _import(fx, write_json(tmp_path / "i.json", [fx.instance()]), tmp_path / "out")
    task = load_task(tmp_path / "out" / TASK)
    assert task.spec.fail_to_pass == F2P and task.spec.pass_to_pass == P2P
    assert task.spec.hidden_tests_layout == "patch" and task.spec.level == 1
    assert task.spec.grading.rules == "swebench" and task.spec.grading.runner == "pytest"
    assert task.spec.environment is None  # no Python packaging in the fixture repo
    assert (task.root / "tests.patch").read_text() == fx.test_patch
    assert "def mul" in (task.root / "solution" / "calc" / "ops.py").read_text()
    assert "def mul" not in (task.repo_dir / "calc" / "ops.py").read_text()
    assert not (task.repo_dir / "tests" / "test_extra.py").exists()
    assert not (task.repo_dir / ".git").exists()
    assert task.instruction.startswith("Add mul(a, b)") and "Look at add" not in task.instruction


def test_hints_go_into_the_instruction_only_when_asked(fx: Fixture, tmp_path: Path) -> None:
    _import(fx, write_json(tmp_path / "i.json", [fx.instance()]), tmp_path / "out", hints=True)
    assert "## Hints\n\nLook at add." in load_task(tmp_path / "out" / TASK).instruction


def test_without_the_swebench_rules_the_skipped_pass_to_pass_test_breaks_resolution(
    fx: Fixture, grader: PytestGrader, tmp_path: Path
) -> None:
    _import(fx, write_json(tmp_path / "i.json", [fx.instance()]), tmp_path / "out")
    toml = tmp_path / "out" / TASK / "task.toml"
    toml.write_text(toml.read_text().replace('rules = "swebench"', 'rules = "loopwright"'))
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "out"), grader)
    gold = next(c for c in checks if c.variant == "gold")
    assert gold.grade is not None and gold.grade.score == 1.0
    assert not gold.grade.resolved and not gold.ok
    skipped = next(t for t in gold.grade.tests if t.id.endswith("test_skipped"))
    assert skipped.outcome == "skipped" and not skipped.passed


def test_jsonl_and_parquet_with_real_lists_give_the_same_task_as_json(
    fx: Fixture, tmp_path: Path
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    real_lists = fx.instance(FAIL_TO_PASS=F2P, PASS_TO_PASS=P2P)
    _import(fx, write_json(tmp_path / "i.json", [fx.instance()]), tmp_path / "json")
    _import(fx, write_jsonl(tmp_path / "i.jsonl", [real_lists]), tmp_path / "jsonl")
    pq.write_table(pa.Table.from_pylist([real_lists]), tmp_path / "i.parquet")
    _import(fx, tmp_path / "i.parquet", tmp_path / "parquet")
    digests = {f: tree_digest(tmp_path / f / TASK) for f in ("json", "jsonl", "parquet")}
    assert len(set(digests.values())) == 1, digests


def test_a_v5_task_repository_imports_with_its_dockerfile(
    fx: Fixture, grader: PytestGrader, tmp_path: Path
) -> None:
    report = _import(fx, write_v5(tmp_path / "v5", fx), tmp_path / "out")
    assert [c.task_id for c in report.converted] == [TASK], report.skipped
    task = load_task(tmp_path / "out" / TASK)
    assert task.spec.environment is not None
    assert task.spec.environment.dockerfile == "environment/Dockerfile"
    assert (task.root / "environment" / "Dockerfile").read_text().startswith("FROM python")
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "out"), grader)
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]


def test_unconvertible_instances_are_reported_with_their_reason(
    fx: Fixture, tmp_path: Path
) -> None:
    bad_gold = fx.gold_patch.replace("return a + b", "return a - b")
    records = [
        fx.instance(),
        fx.instance(instance_id="bad-patch", patch=bad_gold),
        fx.instance(instance_id="no-commit", base_commit="0" * 40),
        fx.instance(instance_id="odd-id", FAIL_TO_PASS=json.dumps(["tests/x.py test one"])),
        fx.instance(instance_id="no-clone", repo="nobody/nothing"),
        fx.instance(instance_id="bad-tests", test_patch=fx.test_patch.replace("+", "-", 3)),
        {"instance_id": "malformed", "repo": "acme/calc"},
    ]
    report = _import(fx, write_json(tmp_path / "i.json", records), tmp_path / "out")
    reasons = _reasons(report)
    assert [c.task_id for c in report.converted] == [TASK]
    assert set(reasons) == {r["instance_id"] for r in records[1:]}
    assert "gold patch does not apply" in reasons["bad-patch"]
    assert "is not in the clone" in reasons["no-commit"]
    assert "unknown test id format 'tests/x.py test one'" in reasons["odd-id"]
    assert "no local clone of nobody/nothing" in reasons["no-clone"]
    assert "test patch" in reasons["bad-tests"]
    assert "base_commit" in reasons["malformed"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [TASK, REPORT_FILE]
    on_disk = ImportReport.model_validate_json((tmp_path / "out" / REPORT_FILE).read_text())
    assert on_disk == report


def test_ids_select_instances_and_an_unknown_id_is_reported(fx: Fixture, tmp_path: Path) -> None:
    records = [fx.instance(), fx.instance(instance_id="other", base_commit="0" * 40)]
    options = {"ids": (TASK, "nope")}
    report = _import(fx, write_json(tmp_path / "i.json", records), tmp_path / "out", **options)
    assert [c.task_id for c in report.converted] == [TASK]
    assert list(_reasons(report)) == ["nope"] and "does not hold" in _reasons(report)["nope"]


def test_an_existing_task_folder_is_not_overwritten(fx: Fixture, tmp_path: Path) -> None:
    source = write_json(tmp_path / "i.json", [fx.instance()])
    _import(fx, source, tmp_path / "out")
    again = _import(fx, source, tmp_path / "out")
    assert not again.converted and "already exists" in _reasons(again)[TASK]


def test_a_python_package_gets_an_editable_install_with_its_test_extra_pinned_to_its_era(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = make_fixture(tmp_path / "pkg")
    git(fixture.clone, "checkout", "-q", "-b", "packaging", fixture.base)
    pyproject = '[project]\nname = "calc"\nversion = "0"\n[project.optional-dependencies]\ntest = ["pytest"]\n'
    (fixture.clone / "pyproject.toml").write_text(pyproject)
    (fixture.clone / "requirements-test.txt").write_text("pytest\n")
    git(fixture.clone, "add", "-A")
    # A commit of 2019 (committed at +02:00): the environment takes packages of its era only.
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2019-05-04T12:30:00+02:00")
    git(fixture.clone, "commit", "-q", "-m", "packaging")
    head = git(fixture.clone, "rev-parse", "HEAD").strip()
    source = write_json(tmp_path / "i.json", [fixture.instance(base_commit=head)])
    report = import_swebench(source, tmp_path / "out", ImportOptions(repos=fixture.repos))
    assert not report.skipped, report.skipped
    raw = tomllib.loads((tmp_path / "out" / TASK / "task.toml").read_text())
    assert raw["environment"] == {
        "requirements_files": ["repo/requirements-test.txt"],
        "install": ["pip install -e '.[test]'"],
        "packages_before": "2019-05-04T10:30:00Z",
    }


def test_an_env_spec_replaces_the_environment_per_repo(fx: Fixture, tmp_path: Path) -> None:
    spec_file = tmp_path / "env.toml"
    spec_file.write_text(
        '[environment]\nrequirements = ["attrs"]\n\n'
        '[repos."acme/calc".environment]\nimage = "calc:dev"\n'
    )
    spec = load_env_spec(spec_file)
    assert isinstance(spec, EnvSpec) and spec.for_repo("other/x") is not None
    source = write_json(tmp_path / "i.json", [fx.instance()])
    _import(fx, source, tmp_path / "out", env_spec=spec)
    environment = load_task(tmp_path / "out" / TASK).spec.environment
    assert environment is not None and environment.image == "calc:dev"


def test_an_env_spec_brings_its_environment_folder_into_every_task(
    fx: Fixture, tmp_path: Path
) -> None:
    """As `tasks mine --env-spec` does: the `environment/` folder beside the spec (wheels, a
    requirements file naming them) is copied into each task, so the task's [environment] can
    name its files (issue 31)."""
    spec_dir = tmp_path / "spec"
    (spec_dir / "environment" / "wheels").mkdir(parents=True)
    (spec_dir / "environment" / "requirements.txt").write_text("--find-links wheels\nattrs\n")
    (spec_dir / "environment" / "wheels" / "attrs-1.0-py3-none-any.whl").write_bytes(b"PK\x03")
    (spec_dir / "env.toml").write_text(
        '[environment]\nrequirements_files = ["environment/requirements.txt"]\n'
    )
    source = write_json(tmp_path / "i.json", [fx.instance()])
    report = _import(fx, source, tmp_path / "out", env_spec=load_env_spec(spec_dir / "env.toml"))
    assert not _reasons(report)
    task = load_task(tmp_path / "out" / TASK)
    assert task.spec.environment is not None
    assert task.spec.environment.requirements_files == ["environment/requirements.txt"]
    copied = tmp_path / "out" / TASK / "environment"
    assert (copied / "requirements.txt").read_text() == "--find-links wheels\nattrs\n"
    assert (copied / "wheels" / "attrs-1.0-py3-none-any.whl").read_bytes() == b"PK\x03"


def test_a_malformed_env_spec_is_a_config_error(tmp_path: Path) -> None:
    spec_file = tmp_path / "env.toml"
    spec_file.write_text('[environment]\nimage = "a"\ndockerfile = "b"\n')
    with pytest.raises(ConfigError, match="image or dockerfile"):
        load_env_spec(spec_file)


def test_the_cli_imports_reports_time_per_task_and_exits_1_when_any_was_skipped(
    fx: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [fx.instance(), fx.instance(instance_id="no-commit", base_commit="0" * 40)]
    source = write_json(tmp_path / "i.json", records)
    out = tmp_path / "out"
    argv = ["tasks", "import", "swebench", str(source), "--repos", str(fx.repos), "--out", str(out)]
    code = main(argv)
    printed = capsys.readouterr().out
    assert code == 1
    assert "converted 1 of 2 instance(s), skipped 1" in printed and "s per task" in printed
    assert "no-commit" in printed and "is not in the clone" in printed
    assert main(["bench", "validate", str(out), "--json"]) == 0
    capsys.readouterr()
    one = write_json(tmp_path / "one.json", records[:1])
    code = main([*argv[:3], str(one), *argv[4:7], str(tmp_path / "o2"), "--json"])
    assert code == 0
    assert ImportReport.model_validate_json(capsys.readouterr().out).converted[0].task_id == TASK


def test_the_cli_names_an_unreadable_source_as_a_user_error(
    fx: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "i.json").write_text("{not json")
    argv = ["tasks", "import", "swebench", str(tmp_path / "i.json"), "--repos", str(fx.repos)]
    code = main([*argv, "--out", str(tmp_path / "out")])
    assert code == 2 and "is not valid JSON" in capsys.readouterr().err


def test_a_hostile_mul_that_skips_its_tests_scores_zero_under_the_swebench_rules(
    fx: Fixture, grader: PytestGrader, tmp_path: Path
) -> None:
    """Code under test that skips the tests calling it gains nothing: a skipped fail_to_pass
    test fails under the swebench rules too."""
    _import(fx, write_json(tmp_path / "i.json", [fx.instance()]), tmp_path / "out")
    task = load_task(tmp_path / "out" / TASK)
    overlay = tmp_path / "hostile" / "calc"
    overlay.mkdir(parents=True)
    (overlay / "ops.py").write_text(
        "import pytest\n\n\ndef add(a, b):\n    return a + b\n\n\n"
        "def mul(a, b):\n    pytest.skip('not today')\n"
    )
    grade = grade_variant(task, tmp_path / "hostile", grader, tmp_path / "ws")
    assert not grade.invalid, grade.invalid_reason
    assert grade.score == 0.0 and not grade.resolved
    assert {t.outcome for t in grade.tests if t.fail_to_pass} == {"skipped"}


def test_a_parquet_source_without_pyarrow_says_how_to_install_it(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import fails as when not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    (tmp_path / "i.parquet").write_bytes(b"PAR1")
    argv = ["tasks", "import", "swebench", str(tmp_path / "i.parquet"), "--repos", str(fx.repos)]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "loopwright[parquet]" in capsys.readouterr().err


def test_django_style_unittest_names_import_and_validate_with_the_unittest_runner(
    grader: PytestGrader, tmp_path: Path
) -> None:
    units = make_unittest_fixture(tmp_path / "units")
    record = units.instance(
        instance_id="acme__units-1",
        repo="acme/units",
        FAIL_TO_PASS=json.dumps(["test_mul (tests.test_ops.TestOps)"]),
        PASS_TO_PASS=json.dumps(
            [
                "test_add (tests.test_ops.TestOps)",
                "test_skipped (tests.test_ops.TestOps)\nA skipped one.",
            ]
        ),
    )
    report = import_swebench(
        write_json(tmp_path / "i.json", [record]),
        tmp_path / "out",
        ImportOptions(repos=units.repos),
    )
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / "acme__units-1")
    assert task.spec.grading.runner == "unittest" and task.spec.test_dir == "tests"
    assert task.spec.fail_to_pass == ["tests.test_ops.TestOps.test_mul"]
    assert task.spec.pass_to_pass == [
        "tests.test_ops.TestOps.test_add",
        "tests.test_ops.TestOps.test_skipped",
    ]
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "out"), grader)
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]


def test_a_gold_that_deletes_a_file_is_kept_as_solution_patch_and_validates(
    fx: Fixture, grader: PytestGrader, tmp_path: Path
) -> None:
    deleting = git(fx.clone, "diff", fx.base, fx.feature + "~2", "--", "README.md")
    assert "deleted file mode" in deleting
    record = fx.instance(patch=fx.gold_patch + deleting)
    report = _import(fx, write_json(tmp_path / "i.json", [record]), tmp_path / "out")
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / TASK)
    assert task.solution_dir is None and task.gold == task.root / "solution.patch"
    assert task.gold.read_text() == fx.gold_patch + deleting
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "out"), grader)
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]
    gold = next(c for c in checks if c.variant == "gold")
    assert gold.grade is not None and gold.grade.resolved


def test_export_ignore_attributes_drop_nothing_from_the_exported_repo(tmp_path: Path) -> None:
    fixture = make_fixture(tmp_path / "attrs")
    git(fixture.clone, "checkout", "-q", "-b", "attrs", fixture.base)
    (fixture.clone / ".gitattributes").write_text("tests/** export-ignore\n")
    git(fixture.clone, "add", "-A")
    git(fixture.clone, "commit", "-q", "-m", "sdist without tests")
    head = git(fixture.clone, "rev-parse", "HEAD").strip()
    source = write_json(tmp_path / "i.json", [fixture.instance(base_commit=head)])
    report = import_swebench(source, tmp_path / "out", ImportOptions(repos=fixture.repos))
    assert not report.skipped, report.skipped
    repo = tmp_path / "out" / TASK / "repo"
    assert (repo / "tests" / "test_ops.py").is_file() and (repo / ".gitattributes").is_file()
    assert git(fixture.clone, "status", "--porcelain") == ""  # the clone is left as it was


def test_a_relative_out_source_and_repos_work_from_another_working_directory(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As in docs/importing.md's example (`--out bench/x`): every path relative to the
    working directory, which is neither the source's nor the clones' directory."""
    import os
    import shutil

    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    write_json(work / "data" / "i.json", [fx.instance()])
    shutil.copytree(fx.repos, work / "clones")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rel = os.path.relpath(work, elsewhere)  # ../work: relative, through a parent
    code = main(["tasks", "import", "swebench", f"{rel}/data/i.json", "--repos", f"{rel}/clones",
                 "--out", f"{rel}/bench/x"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "converted 1 of 1" in printed and "Invalid path" not in printed
    task = load_task(work / "bench" / "x" / TASK)
    assert task.gold is not None and (task.repo_dir / "calc").is_dir()
    assert main(["bench", "validate", f"{rel}/bench/x", "--json"]) == 0
