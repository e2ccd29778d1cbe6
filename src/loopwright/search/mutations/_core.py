"""Mutation operators, the default random strategy, and `mutate` (docs/mutations.md).

`MUTATIONS` holds the built-in operators, registered with `@mutation(name, axis=...)` in the
modules imported here: node_insert, node_remove, edge_rewire, parallelize (`_mutations_graph`),
gate_add, gate_remove, loop_type_change, model_tier_change (`_mutations_node`) and
prompt_mutate (`_prompt_mutate`). Every child validates against the runtime catalog, leaves
frozen nodes (and frozen gates' edges) untouched, differs from its parent and keeps its name.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.errors import ConfigError
from loopwright.search._protocols import MutationContext, MutationResult, MutationStrategy
from loopwright.search.mutations import _graph, _node, _prompt  # noqa: F401
from loopwright.search.mutations._base import MUTATIONS, MutationRegistry, Operator, mutation
from loopwright.workflow import Workflow

__all__ = [
    "MUTATIONS",
    "MutationRegistry",
    "Operator",
    "RandomStrategy",
    "mutate",
    "mutation",
    "operator_names",
]


def operator_names(operators: Sequence[str] | None = None) -> tuple[str, ...]:
    """`operators` checked against the registry (all registered names when None).

    Raises ConfigError naming the unknown ones and listing the known, or when it is empty.
    """
    if operators is None:
        return MUTATIONS.names()
    unknown = [name for name in operators if name not in MUTATIONS]
    if unknown or not operators:
        raise ConfigError(
            "unknown mutation operators" if unknown else "no mutation operators given",
            got=", ".join(unknown) or "(empty list)",
            fix=f"use some of: {', '.join(MUTATIONS.names())}",
        )
    return tuple(dict.fromkeys(operators))


class RandomStrategy:
    """The default MutationStrategy: an operator drawn uniformly with `ctx.rng`.

    `operators` restricts the choice (validated at construction: ConfigError if unknown);
    the list passed to `choose` is intersected with it (falling back to that list when the
    two share nothing). Deterministic for the same rng state.
    """

    def __init__(self, operators: Sequence[str] | None = None) -> None:
        self.operators: tuple[str, ...] | None = (
            operator_names(operators) if operators is not None else None
        )

    def choose(self, parent: Workflow, operators: Sequence[str], ctx: MutationContext) -> str:
        if not operators:
            raise ConfigError("RandomStrategy.choose needs at least one operator name")
        allowed = [o for o in operators if self.operators is None or o in self.operators]
        return ctx.rng.choice(allowed or list(operators))


def mutate(
    parent: Workflow,
    strategy: MutationStrategy,
    ctx: MutationContext,
    *,
    operators: Sequence[str] | None = None,
    max_tries: int = 5,
) -> MutationResult:
    """Ask `strategy` for an operator, apply it to the workflow `parent`; when it cannot
    apply, ask again among the operators not tried yet, up to `max_tries` operators in all.

    Returns the first result with a child, else the last failure's result (child=None with
    its reason). Raises ConfigError for an unknown operator name or `max_tries` < 1 (bad
    configuration), never for a workflow that cannot be changed. Deterministic for the same
    `ctx.rng` state (and a deterministic strategy and meta model).
    """
    if max_tries < 1:
        raise ConfigError("max_tries must be at least 1", got=str(max_tries), fix="use 1 or more")
    remaining = list(operator_names(operators))
    result: MutationResult | None = None
    for _ in range(min(max_tries, len(remaining))):
        name = strategy.choose(parent, tuple(remaining), ctx)
        op = MUTATIONS[name]
        result = op.apply(parent, ctx)
        if result.child is not None:
            return result
        if name in remaining:
            remaining.remove(name)
        if not remaining:
            break
    assert result is not None  # the loop runs at least once: remaining is never empty here
    return result
