"""`tasks import featurebench` with the FeatureBench harness's semantics: level 1's masking patch
and test patch undone for the gold and the hidden tests, level 2 built from scratch, per-file
grading by exit code on request; rows in the real shape (tests/tasks/fbfixtures.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loopwright.sandbox import default_sandbox
from loopwright.scoring import grader_for, validate_benchmark
from loopwright.scoring._validate import GOLD, UNTOUCHED
from loopwright.tasks import load_benchmark_dir, load_task
from loopwright.tasks.importers import ImportOptions, ImportReport, import_featurebench
from loopwright.tasks.importers.featurebench import harness_test_command
from tests.tasks.fbfixtures import (
    F2P_FILE,
    METADATA,
    P2P_FILE,
    FeatureFixture,
    make_feature_fixture,
)
from tests.tasks.importfixtures import write_json, write_jsonl


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> FeatureFixture:
    return make_feature_fixture(tmp_path_factory.mktemp("fb"))


def _import(
    fx: FeatureFixture, rows: list[dict[str, object]], tmp_path: Path, grading: str = "tests"
) -> ImportReport:
    source = write_jsonl(tmp_path / "fb.jsonl", rows)
    options = ImportOptions(repos=fx.repos, grading=grading)  # type: ignore[arg-type]
    return import_featurebench(source, tmp_path / "out", options)


def _validate(out: Path) -> dict[str, tuple[float, bool, str | None]]:
    """variant -> (score, ok, problem) for the one task under `out`."""
    bench = load_benchmark_dir(out)
    grader = grader_for(bench.tasks[0], default_sandbox("auto"))
    checks = validate_benchmark(bench, grader)
    return {c.variant: (c.grade.score if c.grade else -1.0, c.ok, c.problem) for c in checks}


def test_level_1_undoes_the_masking_patch_for_the_gold_and_the_test_patch_for_the_tests(
    fx: FeatureFixture, tmp_path: Path
) -> None:
    report = _import(fx, [fx.row(1)], tmp_path)
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / report.converted[0].task_id)
    assert report.converted[0].task_id.endswith("-lv1") and task.spec.level == 1
    # The agent starts masked, without the FAIL_TO_PASS file; the gold is the original code.
    assert "def parse_email" not in (task.repo_dir / "minipkg" / "metadata.py").read_text()
    assert not (task.repo_dir / F2P_FILE).exists() and (task.repo_dir / P2P_FILE).exists()
    assert (task.root / "solution" / "minipkg" / "metadata.py").read_text() == METADATA
    # A parametrised test is listed once, by its name: it stands for all its cases.
    assert task.spec.fail_to_pass == [
        f"{F2P_FILE}::test_parse_email",
        f"{F2P_FILE}::TestSeveral::test_two_fields",
    ]
    assert task.spec.pass_to_pass == [f"{P2P_FILE}::test_parse"]
    assert (task.spec.timeouts.grade, task.spec.timeouts.per_test) == (300, 20)
    assert task.spec.environment is not None and task.spec.environment.env == {"PKG_MODE": "strict"}
    checks = _validate(tmp_path / "out")
    assert checks[GOLD][:2] == (1.0, True), checks
    assert checks[UNTOUCHED][0] < 1.0 and checks[UNTOUCHED][1], checks


def test_level_2_starts_from_an_empty_repository(fx: FeatureFixture, tmp_path: Path) -> None:
    report = _import(fx, [fx.row(2)], tmp_path)
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / report.converted[0].task_id)
    assert task.spec.level == 2
    assert sorted(p.name for p in task.repo_dir.iterdir()) == ["README.md"]
    # The hidden tests are the FAIL_TO_PASS file after test_patch (forward): it adds test_empty.
    assert f"{F2P_FILE}::TestSeveral::test_empty" in task.spec.fail_to_pass
    assert task.spec.pass_to_pass == []
    assert (task.root / "solution" / "minipkg" / "metadata.py").read_text() == METADATA
    assert not (task.root / "solution" / F2P_FILE).exists()
    checks = _validate(tmp_path / "out")
    assert checks[GOLD][:2] == (1.0, True), checks
    assert checks[UNTOUCHED][0] == 0.0, checks


@pytest.mark.parametrize("level", [1, 2])
def test_per_file_grading_runs_the_rows_test_command_and_reads_exit_codes(
    fx: FeatureFixture, tmp_path: Path, level: int
) -> None:
    report = _import(fx, [fx.row(level)], tmp_path, grading="files")
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / report.converted[0].task_id)
    grading = task.spec.grading
    assert grading.runner == "command" and grading.junit is not None
    assert task.spec.fail_to_pass == [F2P_FILE]
    assert task.spec.pass_to_pass == ([P2P_FILE] if level == 1 else [])
    assert '"$PYTHON" -m pytest -rA -p no:cacheprovider --color=no --timeout=20' in (
        grading.command or ""
    )
    assert ("pip install" in (grading.command or "")) == (level == 2)
    checks = _validate(tmp_path / "out")
    assert checks[GOLD][:2] == (1.0, True), checks
    assert checks[UNTOUCHED][0] < 1.0, checks


def test_the_harness_test_command() -> None:
    assert harness_test_command({}) == (
        '"$PYTHON" -m pytest -rA -p no:cacheprovider --color=no --timeout=10'
    )
    assert harness_test_command({"test_cmd": "python -m pytest -x", "timeout_one": 0}) == (
        '"$PYTHON" -m pytest -x'
    )
    assert harness_test_command({"test_cmd": "pytest", "use_uv": True, "timeout_one": 5}) == (
        "uv run pytest --timeout=5"
    )


def test_a_row_without_base_commit_needs_an_image(fx: FeatureFixture, tmp_path: Path) -> None:
    report = _import(fx, [fx.row(1, base_commit="")], tmp_path)
    assert "no image_name" in report.skipped[0].reason


def test_a_missing_image_is_reported_not_pulled(
    fx: FeatureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    engine = fake / "podman"
    engine.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls"\nexit 1\n')
    engine.chmod(0o755)
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_CLI", str(engine))
    report = _import(fx, [fx.row(1, base_commit="", image_name="fb/packaging:lv1")], tmp_path)
    assert "is not present here (nothing is pulled" in report.skipped[0].reason
    calls = (fake / "calls").read_text()
    assert "image inspect --format {{.Id}} fb/packaging:lv1" in calls and "pull" not in calls


def test_the_repository_is_taken_from_the_image_when_there_is_no_clone(
    fx: FeatureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in container CLI whose `cp` copies the original repository: the importer copies
    `/testbed` out of the image and imports from it exactly as from the clone."""
    tree = tmp_path / "image-testbed"
    subprocess.run(
        ["git", "-C", str(fx.repos / "pypa__packaging"), "worktree", "add", "-q", "--detach",
         str(tree), fx.original],
        check=True,
    )  # fmt: skip
    fake = tmp_path / "bin"
    fake.mkdir()
    engine = fake / "podman"
    engine.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  image) exit 0 ;;\n"
        "  create) echo c0ffee ;;\n"
        f'  cp) [ "$2" = "c0ffee:/testbed/." ] && cp -r {tree}/. "$3" ;;\n'
        "  rm) exit 0 ;;\n"
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    engine.chmod(0o755)
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_CLI", str(engine))
    for flags in ("LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS", "LOOPWRIGHT_CONTAINER_RUN_FLAGS"):
        monkeypatch.delenv(flags, raising=False)  # CI's podman flags: the stand-in takes none
    rows = [fx.row(1, base_commit="", repo="pypa/packaging-in-image", image_name="fb/pkg:lv1")]
    report = _import(fx, rows, tmp_path)
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / report.converted[0].task_id)
    assert task.spec.environment is not None and task.spec.environment.image == "fb/pkg:lv1"
    assert (task.root / "solution" / "minipkg" / "metadata.py").read_text() == METADATA
    assert not (task.repo_dir / ".git").exists()


def test_unconvertible_rows_say_why(fx: FeatureFixture, tmp_path: Path) -> None:
    rows = [
        fx.row(1, instance_id="pypa__packaging.x.nolevel"),
        fx.row(1, instance_id="a.lv1", patch=""),
        fx.row(1, instance_id="b.lv1", FAIL_TO_PASS=json.dumps([])),
        fx.row(1, instance_id="c.lv1", test_patch=fx.adjust_patch),
    ]
    report = _import(fx, rows, tmp_path)
    reasons = {s.source_id: s.reason for s in report.skipped}
    assert not report.converted
    assert "does not end in .lv1 or .lv2" in reasons["pypa__packaging.x.nolevel"]
    assert "nothing is masked" in reasons["a.lv1"]
    assert "FAIL_TO_PASS is empty" in reasons["b.lv1"]
    assert "does not apply reversed" in reasons["c.lv1"]


def test_a_json_source_works_as_well(fx: FeatureFixture, tmp_path: Path) -> None:
    source = write_json(tmp_path / "fb.json", [fx.row(1)])
    report = import_featurebench(source, tmp_path / "out", ImportOptions(repos=fx.repos))
    assert len(report.converted) == 1 and not report.skipped


def test_the_cli_takes_the_grading_mode(
    fx: FeatureFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from loopwright.cli import main

    source = write_jsonl(tmp_path / "fb.jsonl", [fx.row(1)])
    argv = ["tasks", "import", "featurebench", str(source), "--repos", str(fx.repos),
            "--out", str(tmp_path / "out"), "--no-register", "--json"]  # fmt: skip
    assert main([*argv, "--grading", "files"]) == 0
    capsys.readouterr()
    [task] = load_benchmark_dir(tmp_path / "out").tasks
    assert task.spec.grading.runner == "command"
    assert main([*argv, "--grading", "lines"]) == 2
    assert "--grading 'lines' is not known" in capsys.readouterr().err
