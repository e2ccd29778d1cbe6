"""The guided mutation strategy: reflection as a prior for the search (use the exhaust to choose what to change).

Per child, with a report on the parent's generation:

1. With probability `exploration` (one draw from `ctx.rng`) the child is made as the random
   strategy would make it: an operator drawn uniformly, applied as usual (`exploration`).
   Under `objective: cost-aware` (`GuidedStrategy(prune=PRUNE_SHARE)`), one more draw sends
   PRUNE_SHARE of those children to a novel removal of one of the parent's non-writer agents or
   gates instead (`prune`; the random operator when none is novel). A removal is how a
   cost-aware search finds the cheaper workflow that scores as well, and among a dozen
   operators a uniform draw rarely makes one: on family-2 landscapes L4 and L8 the cost-aware
   arm's winners tied the best hand design at 0.71x and 0.66x its dollars, where builder +
   gate (L4) and builder + fixer + gate (L8) tie it at 0.45x and 0.55x (SIMULATED). Runs with
   `objective: holdout` draw as before.
2. Otherwise a suggestion is drawn among those *usable* on this parent (its operator allowed,
   its target a non-frozen node of the parent, and not already satisfied there: an agent of
   the role on that side of the target, a gate RELOOPing to it, every improvement for it in
   its prompt), each weighted
   by `confidence x credit factor` of its (kind, operator) (see `_credit`), its operator drawn
   first (each operator weighted by its best suggestion: five wordings of a prompt lesson
   count as one operator against one gate, `GuidedStrategy.pick`). It is carried out
   at its target: node_insert with its role, gate_add after its agent, prompt_mutate adding the
   report's prompt improvement for that agent, node_remove / gate_remove of its node, crossover
   with a mate from the population; other operators apply as usual. A suggestion that cannot
   apply, or whose child the novelty filter would reject (`ctx.novel`), is set aside and
   another drawn, up to `max_tries` in all. So is a drawn suggestion whose credit factor is
   below 1, with probability 1 - factor (one draw, `kept`): weights only rank the usable
   suggestions against each other, so without it a kind whose children never beat their
   parents was carried out every time it was the only one usable (on a parent holding every
   structural suggestion, prompt lessons were most children of a run).
   Before that draw, with two or more usable structural suggestions, one draw below
   COMPOUND_SHARE makes a compound child carrying them all out (`_neighbourhood.compound`).
3. If none applies, a novel structural neighbour of the parent (`_neighbourhood.neighbours`:
   a gate, a missing role, more gate loops, a removal), drawn by pooled credit (`neighbourhood`);
   when every such neighbour is known already, a novel neighbour of one of them, two steps
   away (a swap of one role for another, a removal and a gate). Without this step a parent
   whose one-step neighbourhood had been evaluated made only duplicates, and a run stopped
   early with `no_offspring` (4 of 10 family-2 landscapes, at 102 to 138 of 144 runs).
4. If none is novel, an operator is drawn with weights from the credit table pooled over kinds
   (`CreditTable.operator_factor`: operators whose children rarely beat their parents are
   drawn less; uniform without credit) and applied as usual (`fallback`).

With no report (reflection disabled, or generation 0 with `first_children: blind`) it draws
exactly what `RandomStrategy` draws. By default the engine makes no guided child before the
first report (`EvolutionEngine.reflects_first`). Every child records how it was chosen
(`MutationResult.guidance`) for credit assignment.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import networkx as nx

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.reflection import MutationSuggestion, ReflectionReport
from loopwright.search._individual import Guidance, Individual
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search._selection import selection_key
from loopwright.search.mutations._core import MUTATIONS, RandomStrategy, mutate, operator_names
from loopwright.search.mutations._crossover import Crossover
from loopwright.search.mutations._guided_ops import AddGate, AddLesson, InsertAgent, RemoveNode
from loopwright.search.mutations._neighbourhood import STRUCTURAL, compound, neighbours
from loopwright.search.mutations._roles import BEFORE_ROLES
from loopwright.workflow import AgentNode, GateNode, Workflow, to_networkx, workflow_hash

__all__ = [
    "COMPOUND_SHARE",
    "DEFAULT_EXPLORATION",
    "PRUNE_SHARE",
    "GuidedStrategy",
    "apply_suggestion",
    "guided_mutate",
]

DEFAULT_EXPLORATION = 0.25
COMPOUND_SHARE = 0.5
"""The chance (one draw, only when two or more structural suggestions are usable) that a
guided child carries out all of them at once (`_neighbourhood.compound`)."""
PRUNE_SHARE = 0.5
"""Under `objective: cost-aware`, the share of exploration children made by a novel removal
of a component of the parent (`GuidedStrategy.prune`)."""
CROSSOVER = "crossover"
TWO_STEP_TRIES = 64
"""The most second-step toggles `_neighbour` applies once every single toggle of a parent is
known (each costs a validation and a novelty check, not a task run)."""


class GuidedStrategy:
    """A MutationStrategy that weights operators by the report's suggestions and their credit,
    keeping a share `exploration` (in [0, 1]) of uniform random choices, of which a share
    `prune` (in [0, 1]; PRUNE_SHARE under `objective: cost-aware`, else 0) removes a component
    of the parent instead. ConfigError for an unknown operator or a share outside [0, 1].
    Deterministic given `ctx.rng`."""

    def __init__(
        self,
        operators: Sequence[str] | None = None,
        exploration: float = DEFAULT_EXPLORATION,
        prune: float = 0.0,
    ) -> None:
        if not 0.0 <= prune <= 1.0:
            raise ConfigError("the prune share must lie in [0, 1]", got=str(prune),
                              fix="pass e.g. PRUNE_SHARE (0: exploration never prunes)")  # fmt: skip
        if not 0.0 <= exploration <= 1.0:
            raise ConfigError(
                "the exploration share must lie in [0, 1]",
                got=str(exploration),
                fix=f"set {spoken('exploration', '--exploration')} to e.g. 0.25 "
                "(0: always follow reflection, 1: random)",
            )
        self.random = RandomStrategy(operators)
        self.operators = self.random.operators
        self.exploration = exploration
        self.prune_share = prune

    def usable(self, parent: Workflow, ctx: MutationContext) -> list[MutationSuggestion]:
        """The report's suggestions that could apply to `parent` (see the module docstring)."""
        if ctx.report is None:
            return []
        allowed = set(self.operators or MUTATIONS.names()) | {CROSSOVER}
        wf = parent
        out = []
        for s in ctx.report.mutation_suggestions:
            if s.operator not in allowed or s.target not in wf.node_ids or s.target in wf.frozen:
                continue
            if s.operator == CROSSOVER and not _mates(parent, ctx):
                continue
            if _satisfied(parent, s, ctx.report):
                continue
            out.append(s)
        return out

    def weight(self, s: MutationSuggestion, ctx: MutationContext) -> float:
        """confidence x the credit factor of (kind, operator) (1.0 without credit)."""
        factor = ctx.credit.factor(s.kind, s.operator) if ctx.credit is not None else 1.0
        return s.confidence * factor

    def pick(
        self, suggestions: Sequence[MutationSuggestion], ctx: MutationContext
    ) -> MutationSuggestion:
        """One suggestion drawn with `ctx.rng` in two draws: first its operator, each weighted
        by the largest `weight` among its suggestions, then a suggestion of that operator by
        `weight`. So an operator counts once however many suggestions name it: a report that
        words five prompt lessons and one gate gives the gate half the draws, not a sixth
        (before 2026-12-07 one draw over all suggestions did; on family-2 landscapes the
        builder-only seed's first children were then mostly prompt lessons that changed
        nothing, and the gate came after 72 training runs)."""
        groups: dict[str, list[tuple[MutationSuggestion, float]]] = {}
        for s in suggestions:
            groups.setdefault(s.operator, []).append((s, self.weight(s, ctx)))
        operators = list(groups)
        tops = [max(w for _, w in groups[o]) for o in operators]
        group = groups[ctx.rng.choices(operators, weights=tops, k=1)[0]]
        return ctx.rng.choices([s for s, _ in group], weights=[w for _, w in group], k=1)[0]

    def kept(self, s: MutationSuggestion, ctx: MutationContext) -> bool:
        """Whether a drawn suggestion is carried out: always without a credit table or with a
        factor (`CreditTable.factor`: its kind's record, shrunk toward its operator's) of 1 or
        more, else with probability `factor` (one draw from `ctx.rng`)."""
        factor = ctx.credit.factor(s.kind, s.operator) if ctx.credit is not None else 1.0
        return factor >= 1.0 or ctx.rng.random() < factor

    def explore(self, ctx: MutationContext) -> bool:
        """One draw: True with probability `exploration`."""
        return ctx.rng.random() < self.exploration

    def prune(
        self, parent: Workflow, ctx: MutationContext, names: Sequence[str]
    ) -> MutationResult | None:
        """With probability `prune_share` (one draw from `ctx.rng`; none when the share is 0),
        a novel child of `parent` with one non-writer agent or gate removed, the removals tried
        in an order drawn from `ctx.rng`; None otherwise or when no removal makes a novel
        child."""
        if self.prune_share <= 0.0 or ctx.rng.random() >= self.prune_share:
            return None
        moves = [m for m in neighbours(parent, names) if isinstance(m, RemoveNode)]
        ctx.rng.shuffle(moves)
        for move in moves:
            result = move.apply(parent, ctx)
            if result.child is not None and _is_novel(ctx, result.child):
                return replace(result, reason=f"prune: {result.reason}",
                               guidance=Guidance(mode="exploration", kind="prune"))  # fmt: skip
        return None

    def choose(self, parent: Workflow, operators: Sequence[str], ctx: MutationContext) -> str:
        """An operator name: uniform without a report or when exploring, else the operator of a
        weighted suggestion among the usable ones within `operators` (uniform if none)."""
        if ctx.report is None or self.explore(ctx):
            return self.random.choose(parent, operators, ctx)
        usable = [s for s in self.usable(parent, ctx) if s.operator in operators]
        if not usable:
            return self.random.choose(parent, operators, ctx)
        return self.pick(usable, ctx).operator


class _CreditWeighted:
    """The fallback's MutationStrategy: an operator drawn with `ctx.rng` weighted by its credit
    pooled over every kind (`CreditTable.operator_factor`), so operators whose children never
    beat their parents are drawn less; uniform, as `RandomStrategy`, without credit."""

    def __init__(self, random_: RandomStrategy) -> None:
        self.random = random_

    def choose(self, parent: Workflow, operators: Sequence[str], ctx: MutationContext) -> str:
        if ctx.credit is None:
            return self.random.choose(parent, operators, ctx)
        allowed = [
            o for o in operators if self.random.operators is None or o in self.random.operators
        ]
        allowed = allowed or list(operators)
        weights = [ctx.credit.operator_factor(o) for o in allowed]
        return ctx.rng.choices(allowed, weights=weights, k=1)[0]


def _satisfied(parent: Workflow, s: MutationSuggestion, report: ReflectionReport) -> bool:
    """True when `parent` already has what `s` asks for: an agent of the role on the same side
    of the target (node_insert), a gate RELOOPing to the target (gate_add), every improvement
    for the target in its prompt (prompt_mutate)."""
    wf = parent
    if s.operator == "node_insert" and (role := _role(report, s)):
        g = to_networkx(wf)
        before = role in BEFORE_ROLES
        near = nx.ancestors(g, s.target) if before else nx.descendants(g, s.target)
        return any(isinstance(n, AgentNode) and n.id in near and n.role == role for n in wf.nodes)
    if s.operator == "gate_add":
        return any(isinstance(n, GateNode) and n.reloop_to == s.target for n in wf.nodes)
    if s.operator == "prompt_mutate" and _has_improvement(report, s):
        return _improvement(report, s, _prompt(parent, s.target)) is None
    return False


def _mates(parent: Workflow, ctx: MutationContext) -> list[Individual]:
    """The mates other than the parent itself and its copies (another workflow hash)."""
    own = workflow_hash(parent)
    return [m for m in ctx.mates if m.hash != own]


def _mate(parent: Workflow, s: MutationSuggestion, ctx: MutationContext) -> Individual | None:
    """A 2-tournament among the mates the suggestion's evidence names (all mates if none)."""
    pool = _mates(parent, ctx)
    named = [m for m in pool if m.id in s.evidence.candidates]
    pool = sorted(named or pool, key=lambda m: m.id)
    if not pool:
        return None
    return min(ctx.rng.sample(pool, min(2, len(pool))), key=selection_key)


def _improvement(report: ReflectionReport, s: MutationSuggestion, prompt: str) -> str | None:
    texts = [p for p in report.prompt_improvements if p.target == s.target and p.text not in prompt]
    matching = [p for p in texts if s.kind.endswith(p.kind) and p.kind]
    pick = matching or texts
    return pick[0].text if pick else None


def _has_improvement(report: ReflectionReport, s: MutationSuggestion) -> bool:
    return any(p.target == s.target for p in report.prompt_improvements)


def _role(report: ReflectionReport, s: MutationSuggestion) -> str | None:
    if s.role:
        return s.role
    recs = [
        r
        for r in report.structural_recommendations
        if r.action == "insert_node" and r.target == s.target
    ]
    return recs[0].role if recs else None


def apply_suggestion(
    parent: Workflow, s: MutationSuggestion, ctx: MutationContext, report: ReflectionReport
) -> MutationResult:
    """Carry out `s` on the workflow `parent` (see the module docstring); child=None when it
    cannot."""
    wf = parent
    extra: tuple[str, ...] = ()
    if s.operator == "node_insert" and (role := _role(report, s)):
        result = InsertAgent(role, s.target).apply(wf, ctx)
    elif s.operator == "gate_add":
        result = AddGate(s.target, s.max_loops).apply(wf, ctx)
    elif s.operator == "prompt_mutate" and _has_improvement(report, s):
        text = _improvement(report, s, _prompt(parent, s.target))
        if text is None:
            return MutationResult(
                "prompt_mutate", None, "the prompt already holds every improvement for it", s.target
            )
        result = AddLesson(s.target, text).apply(wf, ctx)
    elif s.operator in ("node_remove", "gate_remove"):
        result = RemoveNode(s.operator, s.target).apply(wf, ctx)
    elif s.operator == CROSSOVER:
        mate = _mate(parent, s, ctx)
        if mate is None:
            return MutationResult(CROSSOVER, None, "no mate to cross with", s.target)
        result = Crossover(mate.workflow, s.target, report).apply(wf, ctx)
        extra = (mate.id,)
    else:
        result = MUTATIONS[s.operator].apply(wf, ctx)
    guidance = Guidance(mode="suggestion", kind=s.kind, report_generation=report.generation,
                        suggestion_id=s.id)  # fmt: skip
    return replace(result, reason=f"{s.id} ({s.kind}): {result.reason}", parents=extra,
                   guidance=guidance)  # fmt: skip


def _prompt(parent: Workflow, node_id: str) -> str:
    node = parent.node(node_id)
    return str(getattr(node, "prompt", ""))


def guided_mutate(
    parent: Workflow,
    strategy: GuidedStrategy,
    ctx: MutationContext,
    *,
    operators: Sequence[str] | None = None,
    max_tries: int = 5,
) -> MutationResult:
    """One child of the workflow `parent` as the module docstring describes; never raises for a workflow
    that cannot change (child=None with the last reason). ConfigError for bad configuration
    (unknown operators, `max_tries` < 1). Deterministic given `ctx.rng` (and the meta model)."""
    names = operator_names(operators)
    report = ctx.report
    if report is None:
        return mutate(parent, strategy.random, ctx, operators=names, max_tries=max_tries)
    if strategy.explore(ctx):
        pruned = strategy.prune(parent, ctx, names)
        if pruned is not None:
            return pruned
        result = mutate(parent, strategy.random, ctx, operators=names, max_tries=max_tries)
        return replace(result, guidance=Guidance(mode="exploration", kind="exploration"))
    usable = strategy.usable(parent, ctx)
    combined = _compound(parent, usable, ctx, report)
    if combined is not None:
        return combined
    reasons = []
    for _ in range(max_tries):
        if not usable:
            break
        s = strategy.pick(usable, ctx)
        if not strategy.kept(s, ctx):
            reasons.append(f"{s.id}: set aside, its kind's children rarely beat their parents")
            usable.remove(s)
            continue
        result = apply_suggestion(parent, s, ctx, report)
        if result.child is not None and (ctx.novel is None or ctx.novel(result.child)):
            return result
        reasons.append(result.reason if result.child is None else f"{s.id}: child not novel")
        usable.remove(s)
    why = "; ".join(reasons) if reasons else "no usable suggestion for this parent"
    near = _neighbour(parent, ctx, names)
    if near is not None:
        return replace(
            near,
            reason=f"neighbourhood ({why}): {near.reason}",
            guidance=Guidance(mode="fallback", kind="neighbourhood"),
        )
    result = mutate(parent, _CreditWeighted(strategy.random), ctx, operators=names,
                    max_tries=max_tries)  # fmt: skip
    return replace(
        result,
        reason=f"fallback ({why}): {result.reason}",
        guidance=Guidance(mode="fallback", kind="fallback"),
    )


def _compound(
    parent: Workflow,
    usable: Sequence[MutationSuggestion],
    ctx: MutationContext,
    report: ReflectionReport,
) -> MutationResult | None:
    """With two or more usable structural suggestions and a draw below COMPOUND_SHARE, one
    novel child carrying them all out (highest confidence first); else None."""
    structural = sorted(
        (s for s in usable if s.operator in STRUCTURAL), key=lambda s: (-s.confidence, s.id)
    )
    if len(structural) < 2 or ctx.rng.random() >= COMPOUND_SHARE:
        return None
    result = compound(parent, structural, ctx, report)
    if (
        result is None
        or result.child is None
        or (ctx.novel is not None and not ctx.novel(result.child))
    ):
        return None
    guidance = Guidance(mode="suggestion", kind="compound", report_generation=report.generation)
    return replace(result, guidance=guidance)


def _neighbour(
    parent: Workflow, ctx: MutationContext, names: Sequence[str]
) -> MutationResult | None:
    """A novel single-component toggle of `parent` (`_neighbourhood.neighbours`), drawn with
    `ctx.rng` weighted by each operator's pooled credit (uniform without credit); when every
    toggle's child is known already, a novel toggle of one of those children (two steps: a
    swap of one component for another, a removal and a gate, ...). None when neither makes a
    novel child within TWO_STEP_TRIES second steps."""
    known: list[tuple[MutationResult, Workflow]] = []
    for result, child in _toggles(parent, ctx, names):
        if _is_novel(ctx, child):
            return result
        known.append((result, child))
    own, tries = workflow_hash(parent), 0
    while known and tries < TWO_STEP_TRIES:
        first, middle = known.pop(ctx.rng.randrange(len(known)))
        for second, child in _toggles(middle, ctx, names):
            tries += 1
            if workflow_hash(child) != own and _is_novel(ctx, child):
                return replace(second, reason=f"two steps: {first.reason}; then {second.reason}")
            if tries >= TWO_STEP_TRIES:
                break
    return None


def _is_novel(ctx: MutationContext, wf: Workflow) -> bool:
    return ctx.novel is None or ctx.novel(wf)


def _toggles(
    wf: Workflow, ctx: MutationContext, names: Sequence[str]
) -> Iterator[tuple[MutationResult, Workflow]]:
    """The single-component toggles of `wf` that apply, with their children, in an order
    drawn with `ctx.rng` weighted by each operator's pooled credit (uniform without credit)."""
    moves = neighbours(wf, names)
    while moves:
        weights = [
            ctx.credit.operator_factor(m.name) if ctx.credit is not None else 1.0 for m in moves
        ]
        move = ctx.rng.choices(moves, weights=weights, k=1)[0]
        moves.remove(move)
        result = move.apply(wf, ctx)
        if result.child is not None:
            yield result, result.child
