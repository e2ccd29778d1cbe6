"""Proposal: the children of a generation. Each try is a merge of two frontier members (when
merging is on and its draw says so) or a mutation of a selected parent, guided by the
reflection on the parents' generation and the credit table when there is one; the novelty
filter lets a child in or not. Generation 0 adds the designer's workflows of the seed."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from loopwright.reflection import ReflectionReport
from loopwright.search._components import SearchComponents
from loopwright.search._credit import credit_table
from loopwright.search._designer import DESIGN_KINDS
from loopwright.search._engine_records import child_created
from loopwright.search._individual import Individual, Lineage
from loopwright.search._progress import MutationRejected, PopulationShort
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search._report import failures_of
from loopwright.search.strategies._merge_policy import maybe_merge
from loopwright.search.strategies._parents import parent_selector
from loopwright.search.strategies._state import RunState, individual_id

__all__ = ["Proposer", "SearchProposer"]


class Proposer(Protocol):
    """Makes the individuals of a generation; draws only from `state.rng`."""

    def designs(self, state: RunState, seed: Individual) -> list[Individual]:
        """Generation 0's designed workflows of the seed."""
        ...

    def offspring(
        self, state: RunState, parents: list[Individual], n: int, gen: int,
        report: ReflectionReport | None = None,
    ) -> list[Individual]:  # fmt: skip
        """Up to `n` novel children of `parents` for generation `gen`."""
        ...

    def generation_zero(
        self, state: RunState, seed: Individual, reflects_first: bool
    ) -> list[Individual]:
        """Generation 0: the seed, its designs and blind mutations of it, every slot filled."""
        ...


class SearchProposer:
    """Merge, mutation (random or guided, as `components.mutate` does) and the designer."""

    def __init__(self, components: SearchComponents) -> None:
        self.parts = components

    def designs(self, state: RunState, seed: Individual) -> list[Individual]:
        """The designer's workflows of generation 0 that `config.designs` asks for (each keeps
        its slot, so the ids do not depend on which others are made)."""
        out = []
        for slot, kind in enumerate(DESIGN_KINDS, start=1):
            if kind not in state.config.designs:
                continue
            workflow = self.parts.design(kind, seed.workflow)
            verdict = state.novelty.check(workflow)
            if not verdict.accepted:
                state.log.emit(MutationRejected(generation=0, operator=f"design:{kind}",
                                                stage="novelty", reason=verdict.reason))  # fmt: skip
                continue
            ind = Individual(
                id=individual_id(state.config.seed, 0, slot, workflow),
                generation=0,
                workflow=workflow,
                lineage=Lineage(parents=(seed.id,), operator=f"design:{kind}"),
            )
            state.novelty.remember(ind)
            out.append(ind)
        return out

    def generation_zero(
        self, state: RunState, seed: Individual, reflects_first: bool
    ) -> list[Individual]:
        """The seed, the designs, then blind mutations of the seed until every slot is full:
        `population` slots, or with `reflects_first` one per design (its children wait for the
        reflection), so a design the novelty filter turned away (the minimal design of a seed
        that is already minimal) gives its slot to a mutation. `offspring` bounds the tries; a
        generation still short says so (`PopulationShort`)."""
        wanted = state.config.population
        if reflects_first:
            wanted = min(wanted, 1 + len(state.config.designs))
        population = [seed, *self.designs(state, seed)][:wanted]
        missing = wanted - len(population)
        population += self.offspring(state, [seed], missing, 0)
        if len(population) < wanted:
            state.log.emit(
                PopulationShort(
                    generation=0, held=len(population), wanted=wanted,
                    tries=4 * missing + 4 if missing > 0 else 0,
                    reason="the designs and the mutations tried were not novel or made no "
                    "child; see the mutation_rejected events",
                )
            )  # fmt: skip
        return population

    def offspring(
        self, state: RunState, parents: list[Individual], n: int, gen: int,
        report: ReflectionReport | None = None,
    ) -> list[Individual]:  # fmt: skip
        """Up to `n` novel children of selected parents; rejected tries are logged and
        replaced, up to a cap of 4n + 4 tries. `report` (the reflection on the parents'
        generation) and the credit table reach the strategy through the MutationContext."""
        children: list[Individual] = []
        tries = 0
        credit = (
            credit_table(state.individuals.values(), state.config.selection_tolerance)
            if report is not None
            else None
        )
        selector = parent_selector(state, self.parts.tournament)
        while len(children) < n and tries < 4 * n + 4:
            tries += 1
            merged = maybe_merge(state, selector.front)
            if merged is not None:
                _adopt(state, *merged, gen, children)
                continue
            parent = selector.select(state, parents)
            ctx = MutationContext(
                rng=state.rng, failures=failures_of(state.individuals[parent.id], state.run_dir),
                report=report, credit=credit, mates=tuple(parents),
            )  # fmt: skip
            ctx = replace(ctx, novel=lambda wf: state.novelty.check(wf).accepted)
            _adopt(state, parent, self.parts.mutate(parent.workflow, ctx), gen, children)
        return children


def _adopt(
    state: RunState,
    parent: Individual,
    result: MutationResult,
    gen: int,
    children: list[Individual],
) -> None:
    """Append `result`'s child to `children` when there is one and the novelty filter lets it
    in; otherwise log why not."""
    verdict = None if result.child is None else state.novelty.check(result.child)
    if result.child is None or verdict is None or not verdict.accepted:
        state.log.emit(
            MutationRejected(
                generation=gen,
                parent_id=parent.id,
                operator=result.operator,
                stage="mutation" if result.child is None else "novelty",
                reason=result.reason if verdict is None else verdict.reason,
            )
        )
        return
    child = Individual(
        id=individual_id(state.config.seed, gen, 100 + len(children), result.child),
        generation=gen,
        workflow=result.child,
        lineage=Lineage(
            parents=(parent.id, *result.parents),
            operator=result.operator,
            target=result.target,
            reason=result.reason,
            guidance=result.guidance,
        ),
    )
    state.novelty.remember(child)
    children.append(child)
    state.log.emit(child_created(child))
