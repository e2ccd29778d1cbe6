"""Helpers for the research-loop tests: a tiny working directory and a scripted meta model.

Every loop test measures for real (sim coder, one mini level-1 task, local sandbox) so that a
pass is a real run; the meta model is a ScriptedModel whose replies are chosen per phase.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopwright.models import ScriptedModel
from loopwright.research import (
    Caps,
    InitOptions,
    LoopEvent,
    ReflectSettings,
    ResearchLoop,
    SimResearcher,
    WorkDir,
    build_bench,
    init_workdir,
)
from loopwright.research._prompts import parse_prompt

TASK = "l1-interval-merge"

GOAL = """# Goal

## Ultimate
raise mean partial credit on one mini task

## Escalation
- probe_passes: 1
- perf_passes: 1
- escalate_gain: 0.02
- adopt_gain: 0.0

## Termination
- iterations >= 50
"""

Phase = Callable[[dict[str, Any], int], Any]


def make_workdir(
    root: Path,
    *,
    max_specs: int = 3,
    heartbeat: int = 10,
    axis_window: int = 3,
    constraints: str | None = None,
) -> WorkDir:
    """A research working directory on one fast task, probe and perf both one pass."""
    goal_file = root.parent / f"{root.name}-goal.md"
    goal_file.write_text(GOAL, encoding="utf-8")
    return init_workdir(
        InitOptions(
            dir=root, goal_file=goal_file, workflow="builder-only", bench="mini", tasks=(TASK,),
            sandbox="local", caps=Caps(max_specs_per_iter=max_specs, workers=2, submission_workers=2),
            reflect=ReflectSettings(heartbeat_every=heartbeat, axis_window=axis_window),
            constraints=constraints,
        )
    )  # fmt: skip


class Meta:
    """A scripted meta model: per phase, a function (context dict, call number of that phase)
    -> reply (a dict is sent as JSON, a str as is). Phases without a function answer by the
    offline sim rules. `seen` keeps every (phase, context) asked."""

    def __init__(self, **phases: Phase) -> None:
        self.phases = phases
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.corrections: list[str] = []  # the loop's "your reply could not be used" messages
        self.sim = SimResearcher()
        self.model = ScriptedModel(self._reply, name="scripted-meta")

    def count(self, phase: str) -> int:
        return sum(p == phase for p, _ in self.seen)

    def _reply(self, messages: Any, tools: Any) -> str:
        phase, payload = parse_prompt(messages[0].content)
        ctx = json.loads(payload)
        number = self.count(phase)
        self.seen.append((phase, ctx))
        if len(messages) > 1:
            self.corrections.append(messages[-1].content)
        if phase not in self.phases:
            return self.sim.chat(messages[:1], []).text
        reply = self.phases[phase](ctx, number)
        return reply if isinstance(reply, str) else json.dumps(reply)


def make_loop(
    wd: WorkDir, meta: Meta, events: list[LoopEvent] | None = None, **kw: Any
) -> ResearchLoop:
    sink = events if events is not None else []
    return ResearchLoop(
        wd.root,
        meta.model,
        build_bench(wd.load_config(), "test"),
        kw.get("listener", sink.append),
        max_usd=kw.get("max_usd"),
        should_stop=kw.get("should_stop"),
    )


def spec(
    spec_id: str, axis: str, patch: list[dict[str, Any]] | None, **extra: Any
) -> dict[str, Any]:
    return {
        "spec_id": spec_id,
        "title": f"{spec_id} on {axis}",
        "intervention_axis": axis,
        "hypothesis": f"{spec_id} helps",
        "patch": patch,
        **extra,
    }


def envelope(*specs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"status": "OK", "specs": list(specs), **extra}


def records(wd: WorkDir) -> list[dict[str, Any]]:
    return [
        json.loads((wd.iter_dir(n) / "record.json").read_text(encoding="utf-8"))
        for n in wd.committed()
    ]
