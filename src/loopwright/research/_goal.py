"""goal.md: the run's Ultimate, Escalation and Termination sections, parsed and polled.

goal.md is markdown with three `## ` sections. Ultimate is free text (the direction). Escalation
and Termination hold prose plus `- ` bullets the loop reads:

    ## Escalation                     ## Termination
    - probe_passes: 1                 - score >= 0.95
    - perf_passes: 2                  - plateau >= 8
    - escalate_gain: 0.02             - iterations >= 30
    - adopt_gain: 0.0                 - stop

A bullet that is not understood is a ConfigError naming the line: a silently ignored stop rule
would be worse. The file is read again at the start of every iteration, so editing it steers or
stops a running loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._caller import spoken
from loopwright.errors import ConfigError, validation_problems

__all__ = [
    "Escalation",
    "Goal",
    "Standing",
    "TerminationRule",
    "bootstrap_goal",
    "load_goal",
    "parse_goal",
    "termination_hit",
]

SECTIONS = ("Ultimate", "Escalation", "Termination")
Metric = Literal["score", "resolved_rate", "iterations", "plateau", "cost_usd"]
Op = Literal[">=", ">", "<=", "<"]

_RULE = re.compile(r"^(score|resolved_rate|iterations|plateau|cost_usd)\s*(>=|<=|>|<)\s*([0-9.]+)$")
_SETTING = re.compile(r"^([a-z_]+)\s*:\s*(\S+)$")


class Escalation(BaseModel):
    """Experiment sizes: a probe measures a new idea with `probe_passes` passes over the eval
    tasks; a probe at least `escalate_gain` better than the workspace is re-measured at perf
    scale (`perf_passes`); only a perf measurement more than `adopt_gain` better is adopted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    probe_passes: int = Field(default=1, ge=1, le=20)
    perf_passes: int = Field(default=2, ge=1, le=20)
    escalate_gain: float = Field(default=0.02, ge=0.0, le=1.0)
    adopt_gain: float = Field(default=0.0, ge=0.0, le=1.0)


class TerminationRule(BaseModel):
    """`metric op value`, e.g. `score >= 0.95`; `stop` is the rule that always holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: Metric | Literal["stop"]
    op: Op = ">="
    value: float = 0.0

    def text(self) -> str:
        return "stop" if self.metric == "stop" else f"{self.metric} {self.op} {self.value:g}"


class Goal(BaseModel):
    """A parsed goal.md."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ultimate: str
    escalation: Escalation
    termination: tuple[TerminationRule, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    """What termination rules are checked against, at the start of an iteration.

    `score` and `resolved_rate` are the workspace's over every pair measured (None before the
    first measurement); `plateau` counts committed iterations since the last adoption."""

    iterations: int
    plateau: int
    score: float | None
    resolved_rate: float | None
    cost_usd: float


def bootstrap_goal(one_line: str) -> str:
    """goal.md text for `--goal "<one line>"`: the line as Ultimate, default Escalation and
    Termination. ConfigError for an empty or multi-line goal."""
    text = one_line.strip()
    if not text or "\n" in text:
        raise ConfigError(
            f"{spoken('InitOptions.goal', '--goal')} takes one non-empty line",
            got=repr(one_line[:80]),
            fix=spoken(
                'e.g. goal="raise mean partial credit on mini level 2", or goal_file=goal.md',
                'e.g. --goal "raise mean partial credit on mini level 2", or --goal-file goal.md',
            ),
        )
    e = Escalation()
    return f"""# Goal

## Ultimate
{text}

## Escalation
Every new idea is first measured as a probe. A probe that beats the workspace by at least
escalate_gain is measured again at perf scale, and only a perf measurement that beats the
workspace by more than adopt_gain is adopted into the workspace.
- probe_passes: {e.probe_passes}
- perf_passes: {e.perf_passes}
- escalate_gain: {e.escalate_gain}
- adopt_gain: {e.adopt_gain}

## Termination
Polled at the start of every iteration: the loop stops when any rule holds (resolved_rate 1.0:
every measured pair resolves its task, nothing is left to raise). Edit this file to change
them, or add a line `- stop` to end the run at the next iteration.
- resolved_rate >= 1.0
- plateau >= 8
- iterations >= 30
"""


def load_goal(path: Path) -> Goal:
    """Read and parse goal.md. ConfigError when it is missing (the loop refuses to start
    without a goal) or malformed."""
    if not path.is_file():
        raise ConfigError(
            f"no goal: {path} does not exist",
            fix="a research run needs a goal: "
            + spoken(
                "create the directory with research(dir, init=InitOptions(goal=...))",
                "pass --goal TEXT or --goal-file goal.md to `loopwright research init`",
            )
            + ", or write goal.md with Ultimate, Escalation and Termination sections",
        )
    return parse_goal(path.read_text(encoding="utf-8"), source=str(path))


def parse_goal(text: str, *, source: str = "goal.md") -> Goal:
    """Parse goal.md text. Every section must be present; Ultimate must not be empty."""
    sections = _sections(text)
    missing = [s for s in SECTIONS if s not in sections]
    if missing:
        raise ConfigError(
            f"{source} lacks the section(s) {', '.join(missing)}",
            got="sections: " + (", ".join(sections) or "none"),
            fix="write `## Ultimate`, `## Escalation` and `## Termination` sections "
            "(docs/research.md shows an example)",
        )
    ultimate = sections["Ultimate"].strip()
    if not ultimate:
        raise ConfigError(f"{source}: the Ultimate section is empty", fix="state the goal there")
    return Goal(
        ultimate=ultimate,
        escalation=_escalation(sections["Escalation"], source),
        termination=tuple(_rule(b, source) for b in _bullets(sections["Termination"])),
    )


def termination_hit(goal: Goal, standing: Standing) -> str | None:
    """The first termination rule that holds (as text), or None."""
    for rule in goal.termination:
        if rule.metric == "stop":
            return "stop"
        value = _metric(rule.metric, standing)
        if value is not None and _compare(value, rule.op, rule.value):
            return rule.text()
    return None


def _metric(metric: str, s: Standing) -> float | None:
    return {
        "score": s.score,
        "resolved_rate": s.resolved_rate,
        "iterations": float(s.iterations),
        "plateau": float(s.plateau),
        "cost_usd": s.cost_usd,
    }[metric]


def _compare(value: float, op: str, bound: float) -> bool:
    if op == ">=":
        return value >= bound
    if op == ">":
        return value > bound
    if op == "<=":
        return value <= bound
    return value < bound


def _sections(text: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = out.setdefault(line[3:].strip(), [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def _bullets(section: str) -> list[str]:
    return [
        line.strip()[2:].strip() for line in section.splitlines() if line.strip().startswith("- ")
    ]


def _escalation(section: str, source: str) -> Escalation:
    values: dict[str, str] = {}
    for bullet in _bullets(section):
        match = _SETTING.match(bullet)
        if match is None or match.group(1) not in Escalation.model_fields:
            raise ConfigError(
                f"{source}: Escalation bullet not understood: {bullet!r}",
                fix=f"write `- KEY: VALUE` with KEY one of {', '.join(Escalation.model_fields)}, "
                "or make the line prose (no leading '- ')",
            )
        values[match.group(1)] = match.group(2)
    try:
        return Escalation.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(f"{source}: bad Escalation value", got=validation_problems(exc)) from None


def _rule(bullet: str, source: str) -> TerminationRule:
    if bullet == "stop":
        return TerminationRule(metric="stop")
    match = _RULE.match(bullet)
    if match is None:
        raise ConfigError(
            f"{source}: Termination bullet not understood: {bullet!r}",
            fix="write `- METRIC OP NUMBER` with METRIC one of score, resolved_rate, iterations, "
            "plateau, cost_usd and OP one of >=, >, <=, <; or `- stop`; or make it prose",
        )
    try:
        value = float(match.group(3))
    except ValueError:
        raise ConfigError(f"{source}: not a number in {bullet!r}") from None
    return TerminationRule(metric=match.group(1), op=match.group(2), value=value)
