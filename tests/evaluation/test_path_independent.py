"""Runs are path-independent: the same command and seed in two run directories (and temporary
directories) of different path lengths give the same prompts, token counts and costs. Agents
are told `INSTRUCTION_VIEW` and the workspace as the sandbox shows it (under the local sandbox:
workspace-relative paths), never a host path (issue 21, item 8)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import main
from loopwright.runtime import INSTRUCTION_VIEW
from loopwright.store import RunIndex
from tests.evaluation.test_executor_engine import records

RUN = ["run", "research-build-verify", "--bench", "mini", "--tasks", "l1-slugify",
       "--model", "sim", "--seed", "1", "--sandbox", "local", "--json", "--no-report"]  # fmt: skip
EVOLVE = ["evolve", "--bench", "mini", "--model", "sim", "--seed-workflow", "builder-only",
          "--train", "l1-slugify", "--holdout", "l1-rle-decode", "--population", "2",
          "--generations", "1", "--holdout-reps", "1", "--seed", "3", "--sandbox", "local",
          "--workers", "1", "--no-report"]  # fmt: skip


def places(tmp_path: Path) -> tuple[Path, Path]:
    """A short and a long run directory."""
    return tmp_path / "a", tmp_path / ("much-longer-directory-name-" * 3) / "nested" / "b"


def in_temp(monkeypatch: pytest.MonkeyPatch, run_dir: Path, temp: str) -> None:
    """Temporary files (workspaces) under `temp` beside `run_dir` (forked workers inherit
    `tempfile.tempdir`)."""
    path = run_dir.parent / temp
    path.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(path))


def usage(summary: dict[str, Any]) -> list[tuple[str, int, int, float]]:
    return [
        (t["task"], t["input_tokens"], t["output_tokens"], t["cost_usd"])
        for w in summary["workflows"]
        for t in w["tasks"]
    ]


def test_run_in_two_places_costs_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    short, deep = places(tmp_path)
    found = []
    for run_dir, temp in ((short, "t"), (deep, "temporary-directory-of-another-length")):
        in_temp(monkeypatch, run_dir, temp)
        assert main([*RUN, "--run-dir", str(run_dir)]) == 0
        found.append(json.loads(capsys.readouterr().out))
    assert usage(found[0]) == usage(found[1])
    assert usage(found[0])[0][1] > 0
    events = (deep / "research-build-verify" / "l1-slugify" / "rep_0" / "events.jsonl").read_text()
    assert INSTRUCTION_VIEW in events and str(deep) not in events  # the agent read the view


def test_a_tiny_evolve_in_two_places_costs_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    short, deep = places(tmp_path)
    totals = []
    for run_dir, temp in ((short, "t"), (deep, "temporary-directory-of-another-length")):
        in_temp(monkeypatch, run_dir, temp)
        assert main([*EVOLVE, "--run-dir", str(run_dir)]) == 0, capsys.readouterr()
        with RunIndex.of_run(run_dir) as index:
            rows = index.evaluations(run_dir.name)
        totals.append(
            sorted(
                (r.individual_id, r.split, r.task_id, r.input_tokens, r.output_tokens, r.cost_usd)
                for r in rows
            )
        )
    assert len(totals[0]) >= 3 and totals[0] == totals[1]
    assert records(short) == records(deep)
