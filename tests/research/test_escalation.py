"""SKIP_THINK_EMPTY escalates to REFLECT and never ends the run by itself; only REFLECT's
SPACE_EXHAUSTED ends it, as SATURATED."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loopwright.research import check_contracts
from loopwright.research._state import read_run_state
from tests.research.conftest import Meta, envelope, make_loop, make_workdir, records, spec

SKIP = {"status": "SKIP_THINK_EMPTY", "reasoning": "nothing worth testing"}


def frontier(ctx: dict[str, Any], number: int) -> dict[str, Any]:
    axes = [a["name"] for a in ctx["taxonomy"]]
    return {
        "verdict": "FRONTIER",
        "axes": [{"axis": a, "status": "open"} for a in axes],
        "frontier": axes[::-1],
    }


def exhausted(ctx: dict[str, Any], number: int) -> dict[str, Any]:
    axes = [a["name"] for a in ctx["taxonomy"]]
    return {
        "verdict": "SPACE_EXHAUSTED",
        "axes": [{"axis": a, "status": "exhausted"} for a in axes],
    }


def test_skip_escalates_to_reflect_then_think_again(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")

    def think(ctx: dict[str, Any], number: int) -> Any:
        if number == 0:
            return SKIP
        assert ctx["frontier"][0] == "model_tier"  # REFLECT's ranking reached THINK
        return envelope(spec("s1", "model_tier", None))

    meta = Meta(think=think, reflect=frontier)
    outcome = make_loop(wd, meta).run(1)
    assert outcome.status == "paused" and outcome.committed == (1,)
    (record,) = records(wd)
    assert record["think"]["escalations"] == 1
    assert [b["trigger"] for b in record["reflect"]] == ["think_escalation"]
    assert all(r.ok for r in check_contracts(wd))


def test_only_space_exhausted_saturates(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")
    meta = Meta(think=lambda ctx, n: SKIP, reflect=exhausted)
    outcome = make_loop(wd, meta).run(3)
    assert outcome.status == "saturated" and outcome.committed == ()
    state = read_run_state(wd)
    assert state.status == "saturated" and state.saturated_by is not None
    assert state.saturated_by.verdict == "SPACE_EXHAUSTED"
    assert meta.count("think") == 1 and meta.count("reflect") == 1
    again = Meta()
    assert make_loop(wd, again).run(1).status == "saturated" and again.seen == []
    assert "SPACE_EXHAUSTED" in wd.search_space.read_text()
    assert all(r.ok for r in check_contracts(wd))


def test_empty_or_unusable_think_stalls_without_terminating(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")
    replies = [SKIP, "this is not JSON", json.dumps(SKIP)]
    meta = Meta(think=lambda ctx, n: replies[min(n, 2)], reflect=frontier)
    outcome = make_loop(wd, meta).run(1)
    assert outcome.status == "stalled" and wd.committed() == []
    # two escalations (the cap), each a REFLECT; the unusable reply was retried once
    assert meta.count("reflect") == 2 and meta.count("think") == 4
    assert read_run_state(wd).status == "stalled"
    resumed = Meta(think=lambda ctx, n: envelope(spec("s1", "prompt", None)))
    assert make_loop(wd, resumed).run(1).committed == (1,)
    assert records(wd)[0]["attempt"] == 2


def test_sim_saturates_when_constraints_close_every_axis(tmp_path: Path) -> None:
    closing = "\n".join(
        f"- forbid-axis: {a}"
        for a in ("prompt", "verification", "topology", "agent_loop", "model_tier")
    )
    wd = make_workdir(tmp_path / "v1", constraints=closing)
    outcome = make_loop(wd, Meta()).run(2)  # the offline rules for every phase
    assert outcome.status == "saturated"
    block = read_run_state(wd).saturated_by
    assert block is not None and {a.status for a in block.axes} == {"closed"}
