"""`tasks import featurebench`: the released shape (a feature-removal patch, test files as
FAIL_TO_PASS) and the SWE-bench shape both become tasks that validate, at the id's level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.sandbox import default_sandbox
from loopwright.scoring import PytestGrader, validate_benchmark
from loopwright.tasks import load_benchmark_dir, load_task
from loopwright.tasks.importers import ImportOptions, ImportReport, import_featurebench
from tests.tasks.importfixtures import REPO, Fixture, git, make_fixture, write_json, write_jsonl


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("fixture"))


def removal_instance(fx: Fixture, **fields: object) -> dict[str, object]:
    """The released FeatureBench shape: base_commit has the feature; `patch` removes it (code
    and the new test file); FAIL_TO_PASS names the test file."""
    removal = git(fx.clone, "diff", fx.feature, fx.base, "--", "calc", "tests/test_extra.py")
    record: dict[str, object] = {
        "instance_id": "acme__calc.mul.lv1",
        "repo": REPO,
        "base_commit": fx.feature,
        "patch": removal,
        "problem_statement": "Implement calc.ops.mul(a, b).",
        "FAIL_TO_PASS": json.dumps(["tests/test_extra.py"]),
        "PASS_TO_PASS": json.dumps(["tests/test_ops.py::test_add"]),
        "image_name": "libercoders/acme-calc:mul",
        "repo_settings": json.dumps(
            {
                "timeout_run": 120,
                "timeout_one": 7,
                "docker_specs": {"custom_docker_args": ["-e CALC_MODE=strict", "-e HTTP_PROXY=x"]},
            }
        ),
    }
    record.update(fields)
    return record


def _import(fx: Fixture, records: list[dict[str, object]], tmp_path: Path) -> ImportReport:
    source = write_jsonl(tmp_path / "fb.jsonl", records)
    return import_featurebench(source, tmp_path / "out", ImportOptions(repos=fx.repos))


def test_the_released_shape_imports_and_validates(fx: Fixture, tmp_path: Path) -> None:
    report = _import(fx, [removal_instance(fx)], tmp_path)
    assert [c.task_id for c in report.converted] == ["acme__calc-mul-lv1"], report.skipped
    assert report.format == "featurebench"
    task = load_task(tmp_path / "out" / "acme__calc-mul-lv1")
    assert task.spec.level == 1
    assert task.spec.fail_to_pass == [
        "tests/test_extra.py::test_mul_zero",
        "tests/test_extra.py::TestMul::test_negative",
    ]
    assert (task.spec.timeouts.grade, task.spec.timeouts.per_test) == (120, 7)
    env = task.spec.environment
    assert env is not None and env.image == "libercoders/acme-calc:mul"
    assert env.env == {"CALC_MODE": "strict"}  # the proxy variable is left out
    assert not (task.repo_dir / "tests" / "test_extra.py").exists()
    assert "def mul" not in (task.repo_dir / "calc" / "ops.py").read_text()
    checks = validate_benchmark(
        load_benchmark_dir(tmp_path / "out"), PytestGrader(default_sandbox("auto"))
    )
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]


def test_the_swebench_shape_keeps_its_gold_and_takes_the_level_from_the_id(
    fx: Fixture, tmp_path: Path
) -> None:
    record = fx.instance(instance_id="acme__calc.mul.lv2", image_name="calc:fb")
    report = _import(fx, [record], tmp_path)
    assert not report.skipped, report.skipped
    task = load_task(tmp_path / "out" / "acme__calc-mul-lv2")
    assert task.spec.level == 2 and task.spec.grading.rules == "swebench"
    assert task.spec.environment is not None and task.spec.environment.image == "calc:fb"


def test_unconvertible_featurebench_instances_say_why(fx: Fixture, tmp_path: Path) -> None:
    records = [
        removal_instance(fx, instance_id="acme__calc.nolevel"),
        removal_instance(fx, instance_id="x.lv1", patch=""),
        removal_instance(fx, instance_id="y.lv1", FAIL_TO_PASS=json.dumps(["tests/test_ops.py"])),
        removal_instance(fx, instance_id="z.lv2", base_commit="f" * 40),
    ]
    report = _import(fx, records, tmp_path)
    reasons = {s.source_id: s.reason for s in report.skipped}
    assert not report.converted
    assert "does not end in .lv1 or .lv2" in reasons["acme__calc.nolevel"]
    assert "nothing removes the feature" in reasons["x.lv1"]
    assert "nothing is hidden" in reasons["y.lv1"]
    assert "is not in the clone" in reasons["z.lv2"]


def test_a_json_source_works_as_well(fx: Fixture, tmp_path: Path) -> None:
    source = write_json(tmp_path / "fb.json", [removal_instance(fx)])
    report = import_featurebench(source, tmp_path / "out", ImportOptions(repos=fx.repos))
    assert len(report.converted) == 1 and not report.skipped
