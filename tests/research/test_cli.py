"""`loopwright research init|run|status` end to end with the offline sim models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main
from loopwright.report import source_commit
from loopwright.tasks import load_benchmark


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("cli") / "v1"
    init = [
        "research", "init", "--dir", str(root), "--goal", "raise mean partial credit on mini",
        "--workflow", "builder-only", "--bench", "mini", "--tasks", "l1-semver-compare",
        "--max-specs", "1", "--heartbeat", "1", "--sandbox", "local",
    ]  # fmt: skip
    assert main(init) == 0
    return root, init


def test_run_then_status_shows_trajectory_reflect_and_contracts(
    workdir: tuple[Path, list[str]], capfd: pytest.CaptureFixture[str]
) -> None:
    root = workdir[0]
    assert main(["research", "run", "--dir", str(root), "--model", "sim", "--iterations", "2"]) == 0
    out, err = capfd.readouterr()
    assert "SIMULATED" in err
    assert "iter 1:" in err and "iter 2:" in err  # one progress line per committed iteration
    assert "paused: ran 2 iteration(s)" in out
    assert main(["research", "status", "--dir", str(root)]) == 0
    out, _ = capfd.readouterr()
    assert "[SIMULATED]" in out and "trajectory" in out
    assert "heartbeat: FRONTIER" in out
    assert "hard contracts: 6/6 hold" in out
    assert "what was learned" in out and "[iter 1 s1]" in out
    assert main(["research", "status", "--dir", str(root), "--json"]) == 0
    report = json.loads(capfd.readouterr().out)
    assert report["simulated"] is True and report["committed"] == 2
    assert all(c["ok"] for c in report["contracts"])
    assert [len(r["reflect"]) for r in report["iterations"]] == [0, 1]


def test_init_without_goal_is_a_user_error(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code = main(["research", "init", "--dir", str(tmp_path / "v1"), "--workflow", "builder-only",
                 "--bench", "mini"])  # fmt: skip
    assert code == 2 and "needs a goal" in capfd.readouterr().err
    assert not (tmp_path / "v1").exists()


def test_init_refuses_a_non_empty_dir(
    workdir: tuple[Path, list[str]], capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(workdir[1]) == 2 and "not empty" in capfd.readouterr().err


def test_init_stamps_the_source_commit_and_the_benchmark_digest(
    workdir: tuple[Path, list[str]],
) -> None:
    meta = yaml.safe_load((workdir[0] / "config.yaml").read_text(encoding="utf-8"))
    assert meta["benchmark_digest"] == load_benchmark("mini").digest
    assert meta["git_commit"] == source_commit()  # None outside a git checkout
