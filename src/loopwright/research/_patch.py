"""Realising a spec's patch on a workflow, and the change signature (pattern) of the result.

A patch is a list of operations applied in order to the workspace's workflow: a mutation
operator of the outer loop's library drawn with a given seed, a field change on one node, text
appended to a prompt, or a whole replacement workflow. The result must differ from the base,
keep its frozen nodes, obey the enforced constraints and validate against the runtime catalog;
otherwise the realisation fails with the reason (an implementer attempt that did not pass).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.reflection import FAILURE_KINDS, lesson_head
from loopwright.research._context import Rules
from loopwright.research._schemas import (
    AppendPromptOp,
    MutationOp,
    PatchOp,
    ReplaceWorkflowOp,
    SetNodeOp,
)
from loopwright.runtime import runtime_catalog
from loopwright.search import GUIDANCE, MUTATIONS, MutationContext
from loopwright.workflow import (
    AgentNode,
    FnNode,
    GateNode,
    Node,
    Workflow,
    validate_workflow,
    workflow_hash,
)

__all__ = ["Realised", "patch_summary", "pattern_of", "realise"]

_SETTABLE: Mapping[str, frozenset[str]] = {
    "agent": frozenset({"prompt", "model", "loop", "max_turns", "timeout_s", "tools", "role"}),
    "gate": frozenset({"max_loops", "check", "judge", "reloop_to"}),
    "fn": frozenset({"args"}),
}
_VALUED_FIELDS = ("model", "loop", "check", "role")


@dataclass(frozen=True, slots=True)
class Realised:
    """The patched workflow (None when the patch could not be realised), the reason it could
    not, and one line per operation saying what it did."""

    child: Workflow | None
    error: str | None
    steps: tuple[str, ...]


def realise(
    base: Workflow,
    patch: Sequence[PatchOp],
    *,
    rules: Rules,
    failures: Mapping[str, Sequence[str]] | None = None,
) -> Realised:
    """Apply `patch` to `base`. Never raises for a patch that cannot apply: the Realised says
    why. Deterministic (mutation operators draw only from `random.Random(op.seed)`)."""
    wf = base
    steps: list[str] = []
    for index, op in enumerate(patch, 1):
        try:
            wf, step = _apply(wf, op, rules, failures or {})
        except (ConfigError, ValidationError, ValueError) as exc:
            return Realised(None, f"operation {index} ({op.op}): {_short(exc)}", tuple(steps))
        steps.append(step)
    problem = _check(base, wf, rules)
    if problem is not None:
        return Realised(None, problem, tuple(steps))
    return Realised(wf.model_copy(update={"name": base.name}), None, tuple(steps))


def _apply(
    wf: Workflow, op: PatchOp, rules: Rules, failures: Mapping[str, Sequence[str]]
) -> tuple[Workflow, str]:
    if isinstance(op, MutationOp):
        if op.operator in rules.forbid_operators:
            raise ValueError(f"constraints forbid the operator {op.operator!r}")
        ctx = MutationContext(rng=random.Random(op.seed), failures=failures)
        result = MUTATIONS[op.operator].apply(wf, ctx)
        if result.child is None:
            raise ValueError(f"{op.operator} did not apply: {result.reason}")
        return result.child, f"{op.operator}: {result.reason}"
    if isinstance(op, SetNodeOp):
        node = wf.node(op.node)
        bad = sorted(set(op.fields) - _SETTABLE[node.kind])
        if bad:
            raise ValueError(
                f"cannot set {', '.join(bad)} on {node.kind} node {node.id!r} "
                f"(settable: {', '.join(sorted(_SETTABLE[node.kind]))})"
            )
        data = node.model_dump(mode="json") | dict(op.fields)
        new: Node = type(node).model_validate(data)
        return _replace(wf, new), f"set {', '.join(sorted(op.fields))} of {node.id!r}"
    if isinstance(op, AppendPromptOp):
        node = wf.node(op.node)
        if not isinstance(node, AgentNode):
            raise ValueError(f"node {node.id!r} is a {node.kind} node and has no prompt")
        prompt = f"{node.prompt.rstrip()}\n\n{op.text.strip()}\n"
        return _replace(wf, node.model_copy(update={"prompt": prompt})), f"appended to {node.id!r}"
    assert isinstance(op, ReplaceWorkflowOp)
    return Workflow.model_validate(op.workflow), "replaced the workflow"


def _replace(wf: Workflow, node: Node) -> Workflow:
    return wf.model_copy(update={"nodes": tuple(node if n.id == node.id else n for n in wf.nodes)})


def _check(base: Workflow, child: Workflow, rules: Rules) -> str | None:
    if workflow_hash(child) == workflow_hash(base):
        return "the patch leaves the workflow unchanged"
    if tuple(child.frozen) != tuple(base.frozen):
        return "the patch changes the frozen list"
    kept = {n.id: n for n in child.nodes}
    for node_id in (*base.frozen, *rules.protect_nodes):
        if node_id not in base.node_ids:
            continue
        if node_id not in kept or kept[node_id] != base.node(node_id):
            kind = "frozen" if node_id in base.frozen else "protected (constraints)"
            return f"the patch changes or removes the {kind} node {node_id!r}"
    if rules.max_nodes is not None and len(child.nodes) > rules.max_nodes:
        return f"the patched workflow has {len(child.nodes)} nodes; constraints allow {rules.max_nodes}"
    issues = validate_workflow(child, runtime_catalog())
    if issues:
        return "the patched workflow is invalid: " + "; ".join(str(i) for i in issues[:3])
    return None


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    return str(exc).splitlines()[0]


def _label(node: Node) -> str:
    if isinstance(node, AgentNode):
        return f"agent:{node.role}"
    if isinstance(node, GateNode):
        return f"gate:{node.check or 'judge'}"
    assert isinstance(node, FnNode)
    return f"fn:{node.fn}"


def _guidance_kinds(before: str, after: str) -> list[str]:
    """The failure kinds of the lines `after` adds to `before` that loopwright itself writes: a
    prompt mutation's guidance sentence (search's GUIDANCE) or a reflection lesson (its head).
    Other added text is guidance of no known kind."""
    old = set(before.splitlines())
    added = [line.removeprefix("- ").strip() for line in after.splitlines() if line not in old]
    kinds = {kind for kind, sentences in GUIDANCE.items() for s in sentences if s in added}
    kinds |= {k for k in FAILURE_KINDS for line in added if line.startswith(lesson_head(k))}
    return sorted(kinds)


def pattern_of(base: Workflow, child: Workflow) -> tuple[str, ...]:
    """The change signature of `child` against `base`, independent of node ids and seeds.

    Tokens: `+agent:ROLE` / `-gate:CHECK` for nodes added or removed, `~agent:ROLE.FIELD` for a
    changed field (`=VALUE` for model, loop, check, role; the failure kinds a prompt change
    newly guides against in brackets), `~edges` when only edges moved. Sorted, deduplicated.
    Two patches with the same pattern test the same mechanism: CRITIC matches on it.
    """
    before = {n.id: n for n in base.nodes}
    after = {n.id: n for n in child.nodes}
    tokens = {f"+{_label(after[i])}" for i in after.keys() - before.keys()}
    tokens |= {f"-{_label(before[i])}" for i in before.keys() - after.keys()}
    for node_id in before.keys() & after.keys():
        old, new = before[node_id].model_dump(), after[node_id].model_dump()
        for field in sorted(k for k in old if old[k] != new.get(k)):
            label = f"~{_label(before[node_id])}.{field}"
            if field == "prompt":
                kinds = _guidance_kinds(old[field], new[field])
                tokens.add(label + (f"[{','.join(kinds)}]" if kinds else ""))
            elif field in _VALUED_FIELDS:
                tokens.add(f"{label}={new[field]}")
            else:
                tokens.add(label)
    if not tokens and set(base.edges) != set(child.edges):
        tokens.add("~edges")
    return tuple(sorted(tokens))


def patch_summary(patch: Sequence[PatchOp] | None) -> str:
    """One line naming the patch's operations (seeds and node ids included)."""
    if not patch:
        return "no patch (measure the workspace)"
    parts = []
    for op in patch:
        if isinstance(op, MutationOp):
            parts.append(f"{op.operator}(seed {op.seed})")
        elif isinstance(op, SetNodeOp):
            parts.append(f"set {op.node}.{'/'.join(sorted(op.fields))}")
        elif isinstance(op, AppendPromptOp):
            parts.append(f"append to {op.node}.prompt")
        else:
            parts.append("replace workflow")
    return "; ".join(parts)
