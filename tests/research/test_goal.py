"""goal.md: required, parsed, polled for termination at the start of every iteration."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.research import InitOptions, bootstrap_goal, init_workdir, parse_goal
from loopwright.research._goal import Standing, termination_hit
from loopwright.research._state import read_run_state
from tests.research.conftest import Meta, make_loop, make_workdir


def standing(**kw: float | None) -> Standing:
    base = {"iterations": 0, "plateau": 0, "score": None, "resolved_rate": None, "cost_usd": 0.0}
    return Standing(**{**base, **kw})  # type: ignore[arg-type]


def test_one_line_goal_gets_default_escalation_and_termination() -> None:
    goal = parse_goal(bootstrap_goal("raise mean partial credit on mini level 2"))
    assert goal.ultimate == "raise mean partial credit on mini level 2"
    assert (goal.escalation.probe_passes, goal.escalation.perf_passes) == (1, 2)
    assert [r.text() for r in goal.termination] == [
        "resolved_rate >= 1",
        "plateau >= 8",
        "iterations >= 30",
    ]


@pytest.mark.parametrize(
    "text,message",
    [
        ("## Ultimate\nx\n## Escalation\n", "Termination"),
        ("## Ultimate\n\n## Escalation\n## Termination\n", "Ultimate section is empty"),
        ("## Ultimate\nx\n## Escalation\n- probe_passes: many\n## Termination\n", "Escalation"),
        ("## Ultimate\nx\n## Escalation\n- speed: 3\n## Termination\n", "not understood"),
        ("## Ultimate\nx\n## Escalation\n## Termination\n- when bored\n", "not understood"),
    ],
)
def test_malformed_goal_is_a_config_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_goal(text)


def test_termination_rules() -> None:
    text = bootstrap_goal("g").replace("- resolved_rate >= 1.0", "- score >= 0.9\n- cost_usd > 5")
    goal = parse_goal(text)
    assert termination_hit(goal, standing()) is None
    assert termination_hit(goal, standing(score=0.95)) == "score >= 0.9"
    assert termination_hit(goal, standing(plateau=8)) == "plateau >= 8"
    assert termination_hit(goal, standing(cost_usd=6.0)) == "cost_usd > 5"
    assert termination_hit(goal, standing(iterations=30)) == "iterations >= 30"
    assert termination_hit(goal, standing(resolved_rate=0.9)) is None
    stop = parse_goal(text + "- stop\n")
    assert termination_hit(stop, standing()) == "stop"


def test_init_refuses_without_a_goal_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "v1"
    with pytest.raises(UsageError, match="needs a goal"):
        init_workdir(InitOptions(dir=target, workflow="builder-only", bench="mini"))
    bad = tmp_path / "goal.md"
    bad.write_text("## Ultimate\nonly this\n")
    with pytest.raises(ConfigError, match="Escalation"):
        init_workdir(InitOptions(dir=target, goal_file=bad, workflow="builder-only", bench="mini"))
    assert not target.exists()


def test_loop_refuses_to_start_without_goal_md(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")
    wd.goal.unlink()
    with pytest.raises(ConfigError, match="no goal"):
        make_loop(wd, Meta()).run(1)


def test_termination_is_polled_from_goal_md(tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")
    wd.goal.write_text(wd.goal.read_text() + "- stop\n")
    meta = Meta()
    outcome = make_loop(wd, meta).run(2)
    assert outcome.status == "terminated" and outcome.committed == () and meta.seen == []
    state = read_run_state(wd)
    assert state.status == "terminated" and state.reason == "goal.md Termination: stop"
