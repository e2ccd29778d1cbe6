"""The intervention axes: the taxonomy REFLECT maps and every ExperimentSpec names one of.

An axis is a class of lever on the workflow. The taxonomy is derived from the outer loop's
mutation library: every operator is registered with the axis it acts on
(`@mutation(name, axis=...)`), so an offline THINK can propose on any axis and a new operator
lands on its axis without an edit here; REFLECT may add axes of its own (no operator: only
literal patches reach them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from loopwright.search import MUTATIONS, MutationRegistry

__all__ = [
    "AXES",
    "DESCRIPTIONS",
    "Axis",
    "axis_names",
    "axis_of_operator",
    "library_axes",
    "taxonomy_with",
]


@dataclass(frozen=True, slots=True)
class Axis:
    """One intervention axis: its name, what it changes, and the mutation operators on it."""

    name: str
    description: str
    operators: tuple[str, ...] = ()


DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "prompt": "the wording of agent prompts: guidance aimed at the failure kinds seen",
        "verification": "gates that check the work and send it back (RELOOP) with the test output",
        "topology": "which agents run and in what order: study, plan, review, debug steps",
        "agent_loop": "how an agent works through its turns: react, plan_execute, hybrid",
        "model_tier": "which model tier each agent uses",
    }
)
"""What each built-in axis changes, in the taxonomy's default frontier order."""


def library_axes(registry: MutationRegistry = MUTATIONS) -> tuple[Axis, ...]:
    """The taxonomy derived from the registered mutation operators (each registered with
    `@mutation(name, axis=...)`): the described axes in their default frontier order, then
    every other axis an operator is on, in registration order; each axis with its operators
    in registration order. An operator registered on no axis is on none. Deterministic."""
    on = {axis: ops for axis, ops in registry.axes() if axis}
    described = [Axis(name, text, on.get(name, ())) for name, text in DESCRIPTIONS.items()]
    added = [
        Axis(name, f"the levers of the registered operators {', '.join(ops)}", ops)
        for name, ops in on.items()
        if name not in DESCRIPTIONS
    ]
    return (*described, *added)


AXES: tuple[Axis, ...] = library_axes()
"""The taxonomy of the built-in operators (as registered when this module is imported). The
loop reads `library_axes()`, which also holds operators registered later."""


def axis_names(taxonomy: Iterable[Axis]) -> tuple[str, ...]:
    """The names of `taxonomy`'s axes, in order."""
    return tuple(a.name for a in taxonomy)


def axis_of_operator(operator: str, taxonomy: Sequence[Axis] | None = None) -> str | None:
    """The axis a mutation operator is on in `taxonomy` (default: `library_axes()`), or None
    when it is on none (unregistered, or registered without an axis)."""
    for axis in taxonomy if taxonomy is not None else library_axes():
        if operator in axis.operators:
            return axis.name
    return None


def taxonomy_with(
    added: Iterable[tuple[str, str]], base: Sequence[Axis] | None = None
) -> tuple[Axis, ...]:
    """`base` (default: `library_axes()`) followed by the axes REFLECT added (name,
    description), each name once."""
    axes = list(base if base is not None else library_axes())
    names = {a.name for a in axes}
    for name, description in added:
        if name not in names:
            axes.append(Axis(name, description))
            names.add(name)
    return tuple(axes)
