"""The brief suite grades right from wrong: each brief against its known-good and known-bad
solutions, a brief whose checks cannot tell them apart fails, and produced code cannot fake
its grade."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.harness import (
    COMPLEXITIES,
    CORRECTNESS_GATE_FLOOR,
    BriefSuite,
    load_brief_suite,
    run_checks,
    validate_brief,
)
from loopwright.sandbox import Sandbox, create_workspace, remove_workspace
from loopwright.tasks import apply_overlay


def test_one_brief_per_complexity(suite: BriefSuite) -> None:
    assert [b.complexity for b in suite.briefs] == list(COMPLEXITIES)
    assert suite.version >= 1 and len(suite.digest) == 64
    for brief in suite.briefs:
        task = brief.task()
        assert task.level == COMPLEXITIES.index(brief.complexity) + 1
        assert task.spec.timeouts.agent == brief.spec.timeout_s


@pytest.mark.parametrize("brief_id", ["simple-wordfreq", "medium-units", "complex-calc"])
def test_brief_tells_known_good_from_known_bad(
    suite: BriefSuite, sandbox: Sandbox, brief_id: str
) -> None:
    result = validate_brief(suite.get(brief_id), sandbox)
    assert result.problems == []
    assert result.good == 1.0
    assert result.seed < CORRECTNESS_GATE_FLOOR
    assert result.bad and all(score < 1.0 for score in result.bad.values())


def _copy_suite(suite: BriefSuite, tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    shutil.copytree(suite.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_checks_that_cannot_tell_good_from_bad_fail_the_suite(
    suite: BriefSuite, sandbox: Sandbox, tmp_path: Path
) -> None:
    root = _copy_suite(suite, tmp_path)
    weak = (
        "def check_top_words_exists():\n"
        "    from wordfreq import top_words\n\n"
        "    assert callable(top_words)\n"
    )
    (root / "simple-wordfreq" / "checks.py").write_text(weak, encoding="utf-8")
    result = validate_brief(load_brief_suite(root).get("simple-wordfreq"), sandbox)
    assert not result.ok
    assert result.problems == [
        "the checks cannot tell the known-bad 'ties_first_seen' from the known-good (it scores 1.0)",
        "the checks cannot tell the known-bad 'case_sensitive' from the known-good (it scores 1.0)",
        "the untouched seed already scores 1.000 (gate 0.9)",
    ]


def test_a_brief_without_checks_or_with_an_undeclared_overlay_is_refused(
    suite: BriefSuite, tmp_path: Path
) -> None:
    root = _copy_suite(suite, tmp_path)
    (root / "medium-units" / "checks.py").write_text("def helper():\n    pass\n", encoding="utf-8")
    (root / "complex-calc" / "flawed" / "stray").mkdir()
    with pytest.raises(ConfigError) as err:
        load_brief_suite(root)
    assert "brief medium-units: checks.py is missing or defines no check_* function" in str(
        err.value
    )
    assert "flawed/stray/ has no [[flawed]] entry in brief.toml" in str(err.value)


def _grade(suite: BriefSuite, sandbox: Sandbox, tmp_path: Path, code: str) -> list[str | None]:
    brief = suite.get("simple-wordfreq")
    workspace = create_workspace(brief.repo_dir, tmp_path)
    try:
        apply_overlay(brief.solution_dir, workspace.path)
        (workspace.path / "wordfreq" / "core.py").write_text(code, encoding="utf-8")
        return [c.error for c in run_checks(brief, workspace.path, sandbox).checks]
    finally:
        remove_workspace(workspace)


def test_produced_code_cannot_fake_its_grade(
    suite: BriefSuite, sandbox: Sandbox, tmp_path: Path
) -> None:
    forged = (
        "import json, os, sys\n"
        'fake = {"checks": [{"name": "check_counts_and_orders_by_frequency", "passed": True}]}\n'
        "print('0' * 32 + json.dumps(fake))\n"
        "os._exit(0)\n"
    )
    errors = _grade(suite, sandbox, tmp_path, forged)
    assert len(errors) == 6 and all(e is not None and "did not run" in e for e in errors)


def test_a_hanging_check_fails_alone(suite: BriefSuite, sandbox: Sandbox, tmp_path: Path) -> None:
    brief = suite.get("simple-wordfreq")
    code = (brief.solution_dir / "wordfreq" / "core.py").read_text(encoding="utf-8")
    code += "\n_real = top_words\n\ndef top_words(text, n):\n    while n == 10:\n        pass\n    return _real(text, n)\n"
    import loopwright.harness._checks as checks

    previous = checks.PER_CHECK_S
    checks.PER_CHECK_S = 0.5
    try:
        errors = _grade(suite, sandbox, tmp_path, code)
    finally:
        checks.PER_CHECK_S = previous
    assert errors[4] == "timed out after 0.5s"
    assert [e is None for i, e in enumerate(errors) if i != 4] == [True] * 5


def test_produced_code_cannot_shadow_a_module_the_checks_import(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The workspace comes after the standard library on the check runner's import path."""
    from loopwright.harness._checks import _RUNNER_SOURCE

    (tmp_path / "fractions.py").write_text(
        "raise ImportError('the workspace shadowed fractions')\n"
    )
    checks = "def check_a():\n    import fractions\n    assert fractions.Fraction(1, 2) == 0.5\n"
    argv = [sys.executable, "-I", "-S", "-B", "-c", _RUNNER_SOURCE, str(tmp_path), "5"]
    canaries = json.dumps({"canaries": {"c_pass": "passed", "c_fail": "failed"}, "n": 12})
    stdin = f"{'1' * 32}\n{json.dumps(['check_a'])}\n{canaries}\n{checks}"
    result = sandbox.run(argv, cwd=tmp_path, timeout_s=60, stdin=stdin)
    report = json.loads(result.stdout.strip()[32:])
    assert report["checks"] == [{"name": "check_a", "passed": True, "error": None}]
    assert report["canaries"] == {"c_pass": "passed", "c_fail": "failed"}
    assert report["tamper"] == []
