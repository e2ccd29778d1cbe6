"""RunDir: creation refusals, the typed config.yaml (and older layouts read), typed event logs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loopwright._caller import called_from_cli
from loopwright.errors import UsageError
from loopwright.search import GenerationStarted, RunResumed, read_progress
from loopwright.search._progress import ProgressLog
from loopwright.store import RUN_META_VERSION, RunDir, RunMeta


def test_create_refuses_what_it_must_not_overwrite(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError, match="not empty"):
        RunDir.create(tmp_path / "full", label="t")
    with pytest.raises(UsageError, match="is a file"):
        RunDir.create(tmp_path / "afile", label="t")
    with pytest.raises(UsageError, match="cannot create"):
        RunDir.create(tmp_path / "afile" / "below", label="t")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint.json").write_text("{}")
    with pytest.raises(
        UsageError, match=r"loopwright\.resume\), or give another run directory \(run_dir\)"
    ):
        RunDir.create(tmp_path / "run", label="t", refuse="checkpoint.json")
    with called_from_cli(), pytest.raises(UsageError, match=r"\(--resume\).*\(--run-dir\)"):
        RunDir.create(tmp_path / "run", label="t", refuse="checkpoint.json")


def test_a_write_a_kill_cut_off_does_not_block_a_fresh_start(tmp_path: Path) -> None:
    """The temporary file of an atomic write (`.config.yaml.<12 hex>.tmp`) is no run: a
    directory holding only that is still a new one; anything else still counts."""
    run = tmp_path / "run"
    run.mkdir()
    (run / ".config.yaml.0123456789ab.tmp").write_text("seed: 1")
    assert RunDir.create(run, label="t").path == run
    (run / ".config.yaml.notatempfile.tmp").write_text("x")
    with pytest.raises(UsageError, match="not empty"):
        RunDir.create(run, label="t")


def test_meta_round_trips_and_says_simulated(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "r", label="t")
    run.write_meta(RunMeta.new("run", model="sim", benchmark="mini", seed=3, config={"a": 1}))
    meta = run.meta()
    assert meta is not None and meta.schema_version == RUN_META_VERSION
    assert (meta.kind, meta.model, meta.simulated, meta.seed) == ("run", "sim", True, 3)
    assert RunMeta.new("run", model="openai/x").simulated is False


def test_older_layouts_are_read_as_version_2(tmp_path: Path) -> None:
    old_run = {"schema_version": 1, "kind": "run", "loopwright_version": "0.1.0",
               "settings": {"model": "sim", "seed": 4}, "benchmark": {"name": "mini",
               "digest": "d"}, "tasks": ["t1"], "workflows": []}  # fmt: skip
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(old_run))
    meta = RunDir(tmp_path).meta()
    assert meta is not None
    assert (meta.benchmark, meta.benchmark_digest, meta.seed) == ("mini", "d", 4)
    assert meta.config["tasks"] == ["t1"] and meta.simulated
    old_evolve = {"kind": "evolve", "model": "sim", "bench": "mini", "seed": 1, "population": 6}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(old_evolve))
    meta = RunDir(tmp_path).meta()
    assert meta is not None and meta.config["population"] == 6 and meta.benchmark == "mini"


def test_a_progress_line_cut_off_by_a_kill_is_dropped_before_the_next(tmp_path: Path) -> None:
    log = ProgressLog(tmp_path)
    log.emit(GenerationStarted(generation=0, population=["a"]))
    with (tmp_path / "progress.jsonl").open("a") as fh:
        fh.write('{"v": 1, "event": "generation_sta')  # killed mid-write
    ProgressLog(tmp_path).emit(RunResumed(generation=0, model="sim"))
    assert [e.event for e in read_progress(tmp_path)] == ["generation_started", "run_resumed"]
    lines = (tmp_path / "progress.jsonl").read_text().splitlines()
    assert len(lines) == 2  # the partial line is gone, not left as garbage
