"""`--max-usd` on `research init` and `research run`: the budget in config.yaml, the run that
stops with status budget and says how to continue, `research status` and the report showing
spent/budget, a larger budget continuing the run, and the refusals (unpriced model, not
positive)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main

TASK = "l1-semver-compare"


def _init(root: Path, *extra: str) -> list[str]:
    return [
        "research", "init", "--dir", str(root), "--goal", "raise mean partial credit on mini",
        "--workflow", "builder-only", "--bench", "mini", "--tasks", TASK, "--max-specs", "1",
        "--sandbox", "local", *extra,
    ]  # fmt: skip


def _config(root: Path) -> dict[str, object]:
    data = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_a_spent_budget_stops_the_run_and_a_larger_one_continues_it(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "v1"
    assert main(_init(root, "--max-usd", "0.01")) == 0  # one sim iteration costs more
    assert "dollar budget $0.01" in capfd.readouterr().out
    assert _config(root)["max_usd"] == 0.01

    run = ["research", "run", "--dir", str(root), "--iterations", "3"]
    assert main(run) == 0
    out, _ = capfd.readouterr()
    assert "budget: dollar budget reached: $" in out and "of a $0.01 budget" in out
    assert "committed 1 iteration(s) now" in out
    fix = f"raise the budget: loopwright research run --dir {root} --max-usd "
    suggested = [line for line in out.splitlines() if line.startswith(fix)]
    assert len(suggested) == 1

    assert main(["research", "status", "--dir", str(root)]) == 0
    out, _ = capfd.readouterr()
    assert "status budget (dollar budget reached" in out
    assert "dollar budget: $" in out and "at simulated prices" in out and suggested[0] in out
    assert main(["research", "status", "--dir", str(root), "--json"]) == 0
    status = json.loads(capfd.readouterr().out)
    assert status["status"] == "budget" and status["max_usd"] == 0.01
    assert status["spent_usd"] >= 0.01 and status["committed"] == 1
    assert float(suggested[0].removeprefix(fix)) >= 2 * status["spent_usd"]  # room to go on
    page = (root / "report.html").read_text(encoding="utf-8")
    assert "stopped by its dollar budget" in page and "dollar budget" in page

    more = [*run[:4], "--max-usd", "5", "--iterations", "1", "--json", "--no-report"]
    assert main(more) == 0
    result = json.loads(capfd.readouterr().out)
    assert result["status"] == "paused" and result["committed"] == [2]
    assert result["max_usd"] == 5.0 and 0.01 <= result["spent_usd"] < 5.0
    assert _config(root)["max_usd"] == 5.0


def test_a_run_without_a_budget_prints_no_budget(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "v1"
    assert main(_init(root)) == 0
    assert _config(root)["max_usd"] is None
    run = ["research", "run", "--dir", str(root), "--iterations", "1", "--json", "--no-report"]
    capfd.readouterr()
    assert main(run) == 0
    result = json.loads(capfd.readouterr().out)
    assert result["status"] == "paused" and "max_usd" not in result
    assert main(["research", "status", "--dir", str(root)]) == 0
    assert "dollar budget" not in capfd.readouterr().out


def test_max_usd_over_an_unpriced_model_is_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "v1"
    assert main(_init(root, "--model", "openai/no-price", "--max-usd", "1")) == 2
    err = capfd.readouterr().err
    assert "--max-usd cannot bound models without a price" in err and "openai/no-price" in err
    assert not root.exists()

    assert main(_init(root)) == 0
    config = (root / "config.yaml").read_bytes()
    run = ["research", "run", "--dir", str(root), "--meta-model", "openai/no-price"]
    capfd.readouterr()
    assert main([*run, "--max-usd", "1"]) == 2
    err = capfd.readouterr().err
    assert "--max-usd cannot bound models without a price" in err and "prices:" in err
    assert (root / "config.yaml").read_bytes() == config
    assert not (root / "iteration" / "iter_1").exists()


@pytest.mark.parametrize("command", ["init", "run"])
def test_max_usd_must_be_positive_and_is_explained_in_help(
    command: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    argv = (
        _init(tmp_path / "v1") if command == "init" else ["research", "run", "--dir", str(tmp_path)]
    )
    assert main([*argv, "--max-usd", "0"]) == 2
    assert "a dollar budget must be positive" in capfd.readouterr().err
    assert not (tmp_path / "v1").exists()
    assert main(["research", command, "--help"]) == 0
    text = " ".join(capfd.readouterr().out.replace("│", " ").split())  # rich's table, unwrapped
    assert "--max-usd" in text and "dollar budget" in text
    if command == "run":
        assert "raise it to continue a run the budget stopped" in text
