"""`make demo`: its configuration follows the rule stated in the Makefile and the README (forge,
the family's first landscape, search_value.py's split cut to 6 training and 12 holdout tasks,
search alone, the comparison with the hand designs on), and the same command on a tiny budget
prints the winner against the seed and the best hand design, SIMULATED."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.search import load_checkpoint
from loopwright.tasks import load_benchmark
from tests.benchscripts import load_bench_script

ROOT = Path(__file__).resolve().parents[2]


def makefile_vars() -> dict[str, str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return dict(re.findall(r"^(DEMO_\w+)\s*[:?]?=\s*(.*?)\s*$", text, flags=re.MULTILINE))


def demo_argv() -> list[str]:
    """The demo recipe's `loopwright evolve` arguments with the Makefile's variables put in,
    up to its `--run-dir` (a shell expression: the caller gives its own)."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = text[text.index("\ndemo: ") :].split("\n\n")[0]
    line = " ".join(part.strip() for part in recipe.splitlines()[1:]).replace("\\", " ")
    for name, value in makefile_vars().items():
        line = line.replace(f"$({name})", value)
    argv = shlex.split(line)
    return argv[argv.index("evolve") : argv.index("--run-dir")]


def search_value_split(n_train: int, n_holdout: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    module = load_bench_script("search_value")
    split: tuple[tuple[str, ...], tuple[str, ...]] = module.split(
        load_benchmark("forge"), n_train, n_holdout
    )
    return split


def option(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_the_demo_follows_its_stated_rule() -> None:
    argv = demo_argv()
    assert option(argv, "--bench") == "forge"
    assert option(argv, "--model") == "sim:0"  # the family's first landscape
    assert option(argv, "--seed-workflow") == "builder-only"
    train, holdout = option(argv, "--train").split(","), option(argv, "--holdout").split(",")
    assert (tuple(train), tuple(holdout)) == search_value_split(6, 12)
    assert option(argv, "--designs") == "none" and "--compare-designs" in argv


def test_the_demo_command_on_a_tiny_budget_shows_the_winner_against_seed_and_designs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = demo_argv()
    argv[argv.index("--generations") + 1] = "1"
    argv[argv.index("--train") + 1] = option(argv, "--train").split(",")[0]
    argv[argv.index("--holdout") + 1] = ",".join(option(argv, "--holdout").split(",")[:2])
    code = main([*argv, "--run-dir", str(tmp_path / "run"), "--sandbox", "local", "--no-report"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "holdout [SIMULATED]: winner" in out
    assert "winner vs seed and hand designs [SIMULATED]: the winner is the seed itself" in out
    assert "gain over the seed: +0.000" in out
    best = re.search(r"gain over the best hand design \(([\w-]+), holdout", out)
    assert best is not None
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["hand_designs"]["best"] == best.group(1)
    assert [d["name"] for d in result["hand_designs"]["designs"]] == [
        "builder-only", "research-build-verify", "thorough"
    ]  # fmt: skip
    # the seed is builder-only: its design runs come from the fitness cache
    assert result["hand_designs"]["designs"][0]["cached"] == 2
    assert result["simulated"] and not result["made_by_search"]
    # --designs none: generation 0 is the seed alone (no designer's workflow)
    assert len(load_checkpoint(tmp_path / "run").individuals) == 1
