"""Crossover: a child synthesised from two parents and what reflection found.

With a meta model (`ctx.meta_model`), the model is asked once (`models.ask_structured`, no
retry) with `CROSSOVER_PROMPT`: both parents as JSON, the report's success patterns and
suggestions, and the rules (parent A is the base; keep A's frozen nodes and frozen list; every
prompt keeps `{instruction_file}`; reply with the child as JSON; a code fence or prose around
it is tolerated). Its reply is taken when it parses as a workflow and passes the operator
contract (valid, frozen nodes untouched, differs from A) and differs from B too.

Offline (no meta model, or a rejected reply), a documented graft onto parent A, at the target
agent (the suggestion's, else A's first builder):

1. *study*: when B has an agent that writes notes but no files before a file-writing agent and
   A has none before the target, a copy of B's first such agent is inserted before it;
2. *gate*: when B has a gate RELOOPing to a file-writing agent and nothing RELOOPs to A's
   target, a gate with B's check and max_loops is added after it;
3. *lessons*: for every agent id in both, each bullet under "Lessons from earlier attempts:" in
   B's prompt that A's prompt lacks is added to A's.

Everything that applies is taken; with nothing to take the operator does not apply. The
offline graft draws nothing from `ctx.rng`.
"""

from __future__ import annotations

from string import Template

import networkx as nx

from loopwright.errors import ConfigError
from loopwright.models import ChatModel, ask_structured, label_scope
from loopwright.reflection import ReflectionReport, note_takers, writers
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import Operator, Proposal, Skip, contract_violation
from loopwright.search.mutations._guided_ops import AddGate, AddLesson, InsertAgent
from loopwright.workflow import (
    AgentNode,
    GateNode,
    Workflow,
    prompt_lessons,
    to_networkx,
    workflow_hash,
    workflow_to_json,
)

__all__ = ["CROSSOVER_PROMPT", "Crossover", "findings_text", "offline_graft"]

CROSSOVER_PROMPT = Template(
    """You combine two workflows of LLM agents that solve $task_kind into one child workflow.

Parent A is the base. Parent B contributes what the findings below credit.

Parent A (JSON):
$a

Parent B (JSON):
$b

What reflection on their generation found:
$findings

Rules for the child:
- Start from A; take from B the nodes, gates or prompt lessons the findings credit.
- Keep every node listed in A's "frozen" exactly as it is in A, and keep A's "frozen" list.
- Edges go forward only; a gate's reloop_to must be an earlier node. One entry node.
- Every agent prompt must contain {instruction_file}; use only the placeholders the parents use.
- Use only tools, loops, checks and roles that appear in the parents.
Reply with the child workflow as one JSON object in the parents' schema, and nothing else."""
)
"""The meta model's crossover instruction (string.Template: `$name` fields, braces literal)."""


def findings_text(report: ReflectionReport | None, limit: int = 12) -> str:
    """The report's success patterns and suggestions as bullets (at most `limit`)."""
    if report is None:
        return "(no reflection report)"
    lines = [f"- success: {p.description}" for p in report.success_patterns]
    lines += [
        f"- suggestion {s.id}: {s.operator} on {s.target}"
        + (f" ({s.role})" if s.role else "")
        + f": {s.rationale}"
        for s in report.mutation_suggestions
    ]
    return "\n".join(lines[:limit]) or "(nothing found)"


def _target(wf: Workflow, target: str | None) -> AgentNode | None:
    ws = [w for w in writers(wf) if w.id not in wf.frozen]
    named = [w for w in ws if w.id == target]
    builders = [w for w in ws if w.role == "builder"]
    pick = named or builders or ws
    return pick[0] if pick else None


def _studies(wf: Workflow) -> list[AgentNode]:
    g = to_networkx(wf)
    writer_ids = {w.id for w in writers(wf)}
    return [n for n in note_takers(wf) if nx.descendants(g, n.id) & writer_ids]


def offline_graft(
    a: Workflow, b: Workflow, target: str | None, ctx: MutationContext
) -> tuple[Workflow, list[str]] | None:
    """A with what B has and A lacks (see the module docstring), and what was taken; None
    when nothing applies. Unchecked: `Crossover.apply` checks the contract."""
    anchor = _target(a, target)
    if anchor is None:
        return None
    child: Workflow = a
    taken: list[str] = []
    g = to_networkx(a)
    upstream = nx.ancestors(g, anchor.id)
    b_studies = _studies(b)
    if b_studies and not any(n.id in upstream for n in note_takers(a)):
        step = InsertAgent(b_studies[0].role, anchor.id, node=b_studies[0]).propose(child, ctx)
        if isinstance(step, Proposal):
            child, taken = step.child, [*taken, f"study node {b_studies[0].id!r}"]
    b_writers = {w.id for w in writers(b)}
    b_gates = [n for n in b.nodes if isinstance(n, GateNode) and n.reloop_to in b_writers]
    if b_gates and not any(
        isinstance(n, GateNode) and n.reloop_to == anchor.id for n in child.nodes
    ):
        gate = b_gates[0]
        step = AddGate(anchor.id, max_loops=gate.max_loops, check=gate.check or "").propose(
            child, ctx
        )
        if isinstance(step, Proposal):
            child, taken = step.child, [*taken, f"gate {gate.id!r} (max_loops {gate.max_loops})"]
    for node in a.nodes:
        other = next((n for n in b.nodes if n.id == node.id), None)
        if (
            not isinstance(node, AgentNode)
            or not isinstance(other, AgentNode)
            or node.id in a.frozen
        ):
            continue
        for lesson in prompt_lessons(other.prompt):
            step = AddLesson(node.id, lesson).propose(child, ctx)
            if isinstance(step, Proposal):
                child, taken = step.child, [*taken, f"a lesson of {node.id!r}"]
    return (child, taken) if taken else None


class Crossover(Operator):
    """A child of the parent (A) and `mate` (B), by the meta model or the offline graft."""

    name = "crossover"

    def __init__(self, mate: Workflow, target: str | None, report: ReflectionReport | None) -> None:
        super().__init__()
        self.mate = mate
        self.target = target
        self.report = report

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        note = ""
        if ctx.meta_model is not None:
            child, problem = self._ask(ctx.meta_model, parent, ctx.task_kind)
            if child is not None:
                return Proposal(child, self.target, "meta model combined the parents")
            note = f"meta model reply rejected ({problem}); "
        grafted = offline_graft(parent, self.mate, self.target, ctx)
        if grafted is None:
            return Skip(f"{note}the mate has nothing the parent lacks (study node, gate, lessons)")
        child, taken = grafted
        if workflow_hash(child) == workflow_hash(self.mate):
            return Skip(f"{note}the graft would reproduce the mate")
        return Proposal(child, self.target, f"{note}offline crossover took " + ", ".join(taken))

    def _ask(
        self, model: ChatModel, parent: Workflow, task_kind: str
    ) -> tuple[Workflow | None, str]:
        text = CROSSOVER_PROMPT.substitute(
            task_kind=task_kind, a=workflow_to_json(parent), b=workflow_to_json(self.mate),
            findings=findings_text(self.report),
        )  # fmt: skip
        with label_scope(role="meta:crossover"):
            answer = ask_structured(
                model, text, dict[str, object], 0, check=lambda data: self._refusal(parent, data)
            )
        if answer.value is None:
            return None, answer.problem or "no reply"
        return _child(parent, answer.value), ""

    def _refusal(self, parent: Workflow, data: dict[str, object]) -> str | None:
        """Why the reply `data` cannot be the child of `parent` and the mate, or None."""
        try:
            child = _child(parent, data)
        except (ValueError, ConfigError) as exc:
            return f"not a workflow: {str(exc)[:200]}"
        problem = contract_violation(parent, child, self.catalog)
        if problem is not None:
            return problem
        if workflow_hash(child) == workflow_hash(self.mate):
            return "it reproduces parent B"
        return None


def _child(parent: Workflow, data: dict[str, object]) -> Workflow:
    """The workflow a reply describes, under the parent's name."""
    return Workflow.model_validate({**data, "name": parent.name})
