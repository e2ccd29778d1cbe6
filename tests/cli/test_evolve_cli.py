"""`loopwright evolve` and `outer-loop`: bad input is a user error (exit 2) and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.search import evolve_run


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def test_unknown_seed_workflow_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(capsys, "evolve", "--bench", "mini", "--seed-workflow", "no-such-wf",
                     "--run-dir", str(tmp_path / "r"))  # fmt: skip
    assert code == 2 and "no-such-wf" in text
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "flag",
    ["--max-evaluations", "--max-train-evaluations", "--max-usd", "--max-wall-s", "--generations"],
)
def test_a_zero_budget_is_a_config_error_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    code, text = run(capsys, "evolve", "--bench", "mini", "--seed-workflow", "builder-only",
                     flag, "0", "--run-dir", str(tmp_path / "r"))  # fmt: skip
    assert code == 2 and "must be positive" in text and "fix:" in text
    assert not (tmp_path / "r").exists()


def test_a_run_dir_of_another_schema_version_names_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "checkpoint.json").write_text(
        json.dumps({"schema_version": 99, "loopwright_version": "9.9"})
    )
    code, text = run(capsys, "evolve", "--resume", "--run-dir", str(tmp_path))
    assert code == 2 and "99" in text and "schema_version 1" in text


def test_a_second_process_on_the_run_dir_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with evolve_run(tmp_path).lock():
        code, text = run(capsys, "evolve", "--resume", "--run-dir", str(tmp_path))
    assert code == 2 and "another process" in text


def test_status_without_a_run_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(capsys, "outer-loop", "status", "--run-dir", str(tmp_path))
    assert code == 2 and "no evolve checkpoint" in text


def test_evolve_reads_the_benchmark_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import loopwright.tasks._registry as registry

    reads: list[str] = []
    real = registry.load_benchmark_dir

    def counted(path: Path, name: str | None = None) -> object:
        reads.append(str(name or path))
        return real(path, name=name)

    monkeypatch.setattr(registry, "load_benchmark_dir", counted)
    code, text = run(capsys, "evolve", "--bench", "mini", "--seed-workflow", "builder-only",
                     "--model", "sim", "--sandbox", "local", "--train", "l1-slugify",
                     "--holdout", "l1-roman-numerals", "--population", "2", "--generations", "1",
                     "--max-evaluations", "1", "--workers", "1", "--no-report",
                     "--run-dir", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, text
    assert reads == ["mini"]
