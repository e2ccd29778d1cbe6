"""A crash mid-iteration leaves the last commit intact and `run` resumes from it; a crash after
the commit but before the workspace is reconciled is repaired on the next start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.research import LoopEvent, check_contracts
from loopwright.research._journal import Experience, read_lines
from loopwright.research._knowledge import Knowledge
from loopwright.research._state import read_run_state, recover
from loopwright.research._workspace import Workspace
from tests.research.conftest import Meta, envelope, make_loop, make_workdir, spec


def measure_only(ctx: dict[str, Any], number: int) -> dict[str, Any]:
    """THINK proposing one no-patch spec (re-measure the workspace): no smoke run needed."""
    return envelope(spec("s1", "prompt", None), hypotheses_add=[{"text": "noise", "spec_id": "s1"}])


class Crash(RuntimeError):
    pass


def crash_at(kind: str, iteration: int, events: list[LoopEvent]):  # type: ignore[no-untyped-def]
    def listen(event: LoopEvent) -> None:
        events.append(event)
        if event.kind == kind and event.iteration == iteration:
            raise Crash(f"killed at {kind} of iteration {iteration}")

    return listen


def test_crash_before_commit_keeps_last_commit_and_resumes(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    assert make_loop(wd, Meta(think=measure_only)).run(1).committed == (1,)
    first = (wd.iter_dir(1) / "record.json").read_bytes()
    events: list[LoopEvent] = []
    with pytest.raises(Crash):
        make_loop(wd, Meta(think=measure_only), listener=crash_at("commit_ready", 2, events)).run(1)
    assert wd.committed() == [1]
    assert (wd.iter_dir(1) / "record.json").read_bytes() == first
    assert (wd.staging(2) / "distill_summary.json").is_file()
    crashed_spec = json.loads((wd.staging(2) / "spec.json").read_text())
    assert [e.iter for e in read_lines(wd.experience, Experience)] == [1, 2]  # eager, uncommitted
    orphan = [b.id for b in Knowledge(wd.knowledge).bullets() if b.iteration == 2]
    assert orphan

    resumed: list[LoopEvent] = []
    assert read_run_state(wd).status == "running"
    assert make_loop(wd, Meta(think=measure_only), resumed).run(1).committed == (2,)
    assert resumed[0].kind == "resumed"
    record = json.loads((wd.iter_dir(2) / "record.json").read_text())
    assert record["attempt"] == 2
    assert json.loads((wd.iter_dir(2) / "spec.json").read_text()) == crashed_spec
    assert [e.iter for e in read_lines(wd.experience, Experience)] == [1, 2]  # no duplicate
    correction = [b for b in Knowledge(wd.knowledge).bullets() if "resume" in b.origin]
    assert len(correction) == 1 and set(orphan) <= set(correction[0].supersedes)
    assert not wd.staging(2).exists()
    assert all(r.ok for r in check_contracts(wd)), [r.detail for r in check_contracts(wd)]


def test_crash_between_commit_and_reconcile_is_repaired(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    events: list[LoopEvent] = []
    with pytest.raises(Crash):
        make_loop(wd, Meta(think=measure_only), listener=crash_at("committed", 1, events)).run(1)
    assert wd.committed() == [1]
    assert Workspace(wd.workspace).state().iteration == 0  # not reconciled yet
    assert recover(wd) == (2, 1, None)  # what `run` does first
    state = Workspace(wd.workspace).state()
    assert state.iteration == 1
    assert [(p.task, p.rep) for p in state.pairs] == [("l1-interval-merge", 0)]
    assert all(r.ok for r in check_contracts(wd))


def test_init_and_run_go_through_the_run_lifecycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loopwright.research import RESEARCH_RUN
    from loopwright.store import RunLifecycle

    held = tmp_path / "held"
    with RESEARCH_RUN.at(held).lock(), pytest.raises(Exception, match="research loop"):
        make_workdir(held)  # another init holds the directory: refused, nothing written
    assert not (held / "config.yaml").exists()
    used: list[tuple[str, str]] = []
    for step in ("create", "reopen"):
        real = getattr(RunLifecycle, step)

        def spy(self: RunLifecycle, _real: Any = real, _step: str = step) -> Any:
            used.append((self.spec.kind, _step))
            return _real(self)

        monkeypatch.setattr(RunLifecycle, step, spy)
    wd = make_workdir(tmp_path / "v1", max_specs=1)
    with RESEARCH_RUN.at(wd.root).lock(), pytest.raises(Exception, match="research loop"):
        make_loop(wd, Meta(think=measure_only)).run(1)
    assert used == [("research", "create"), ("research", "reopen")]
