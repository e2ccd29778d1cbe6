"""The axis-jump rule: after the last K committed iterations share an axis, THINK must jump
axes or write a rebuttal; REFLECT fires on the concentration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from loopwright.research import WorkDir, check_contracts
from tests.research.conftest import Meta, envelope, make_loop, make_workdir, records, spec


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[WorkDir, Meta]:
    wd = make_workdir(tmp_path_factory.mktemp("axis") / "v1", axis_window=2)

    def think(ctx: dict[str, Any], number: int) -> dict[str, Any]:
        stay = spec("s1", "prompt", None)
        if ctx["shared_axes"] and len(meta.corrections) == 0:
            return envelope(stay)  # breaks the rule: the loop must refuse it
        if ctx["shared_axes"]:
            return envelope(stay, rebuttal="re-measuring the workspace is not a push on prompt")
        return envelope(stay)

    meta = Meta(think=think)
    assert make_loop(wd, meta).run(3).committed == (1, 2, 3)
    return wd, meta


def test_a_spec_on_the_shared_axis_without_rebuttal_is_refused(run: Any) -> None:
    wd, meta = run
    assert len(meta.corrections) == 1 and "axis-jump rule" in meta.corrections[0]
    third = records(wd)[2]
    assert third["think"]["shared_axes"] == ["prompt"]
    assert third["think"]["rebuttal"].startswith("re-measuring")
    assert third["think"]["malformed"] == 1


def test_concentration_fires_reflect(run: Any) -> None:
    wd, _ = run
    assert [b["trigger"] for b in records(wd)[2]["reflect"]] == ["axis_concentration"]
    assert [r["reflect"] for r in records(wd)[:2]] == [[], []]
    assert "axis_concentration" in wd.search_space.read_text()


def test_contract_checker_catches_a_missing_rebuttal(run: Any, tmp_path: Path) -> None:
    wd = WorkDir(tmp_path / "copy")
    shutil.copytree(run[0].root, wd.root)
    assert all(r.ok for r in check_contracts(wd))
    path = wd.iter_dir(3) / "record.json"
    data = json.loads(path.read_text())
    data["think"]["rebuttal"] = None
    path.write_text(json.dumps(data))
    broken = [r for r in check_contracts(wd) if not r.ok]
    assert [r.number for r in broken] == [6] and "shared axes" in broken[0].detail
