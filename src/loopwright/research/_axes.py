"""The intervention axes: the taxonomy REFLECT maps and every ExperimentSpec names one of.

An axis is a class of lever on the workflow. The built-in axes cover the outer loop's mutation
library, operator by operator, so an offline THINK can propose on any axis; REFLECT may add
axes of its own (no operator: only literal patches reach them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from loopwright.errors import ConfigError

__all__ = ["AXES", "Axis", "axis_names", "axis_of_operator", "taxonomy_with"]


@dataclass(frozen=True, slots=True)
class Axis:
    """One intervention axis: its name, what it changes, and the mutation operators on it."""

    name: str
    description: str
    operators: tuple[str, ...] = ()


AXES: tuple[Axis, ...] = (
    Axis(
        "prompt",
        "the wording of agent prompts: guidance aimed at the failure kinds seen",
        ("prompt_mutate",),
    ),
    Axis(
        "verification",
        "gates that check the work and send it back (RELOOP) with the test output",
        ("gate_add", "gate_remove"),
    ),
    Axis(
        "topology",
        "which agents run and in what order: study, plan, review, debug steps",
        ("node_insert", "node_remove", "edge_rewire", "parallelize"),
    ),
    Axis(
        "agent_loop",
        "how an agent works through its turns: react, plan_execute, hybrid",
        ("loop_type_change",),
    ),
    Axis("model_tier", "which model tier each agent uses", ("model_tier_change",)),
)
"""The built-in taxonomy, in its default frontier order."""


def axis_names(taxonomy: Iterable[Axis]) -> tuple[str, ...]:
    """The names of `taxonomy`'s axes, in order."""
    return tuple(a.name for a in taxonomy)


def axis_of_operator(operator: str, taxonomy: Sequence[Axis] = AXES) -> str:
    """The axis a mutation operator belongs to. ConfigError for an operator on no axis."""
    for axis in taxonomy:
        if operator in axis.operators:
            return axis.name
    known = ", ".join(op for a in taxonomy for op in a.operators)
    raise ConfigError(
        f"mutation operator {operator!r} belongs to no intervention axis",
        got=operator,
        fix=f"use one of: {known}",
    )


def taxonomy_with(
    added: Iterable[tuple[str, str]], base: Sequence[Axis] = AXES
) -> tuple[Axis, ...]:
    """`base` followed by the axes REFLECT added (name, description), each name once."""
    axes = list(base)
    names = {a.name for a in axes}
    for name, description in added:
        if name not in names:
            axes.append(Axis(name, description))
            names.add(name)
    return tuple(axes)
