"""Validating a reflection: parsing the meta model's reply, checking it against the generation,
dropping what names an unknown or frozen node, and normalising what is left.

Two kinds of problem, handled differently:

- *Malformed* (not a JSON object, wrong fields, an unknown operator or role, evidence citing a
  candidate or task that is not in the generation, braces in a prompt text): `ReplyError`,
  whose message goes back to the meta model for a retry.
- *Inapplicable* (a target node that no candidate has; a target that is frozen): the item is
  dropped, and `Dropped` records which item and why. The rest of the report stands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from loopwright.models import ReplyError, parse_structured
from loopwright.reflection._digest import Candidate
from loopwright.reflection._report import (
    Dropped,
    Evidence,
    MutationSuggestion,
    ReflectionBody,
)
from loopwright.workflow import AgentNode

__all__ = [
    "ACTION_OPERATORS",
    "ReplyError",
    "Vocabulary",
    "check_body",
    "parse_reply",
    "slug",
]

ACTION_OPERATORS = {
    "insert_node": "node_insert",
    "add_gate": "gate_add",
    "remove_node": "node_remove",
    "remove_gate": "gate_remove",
}
"""The mutation operator that carries out each structural recommendation."""

DERIVED_CONFIDENCE = 0.5

_T = TypeVar("_T", bound=BaseModel)


@dataclass(frozen=True)
class Vocabulary:
    """The names a report may use: mutation operators (with "crossover") and node_insert roles."""

    operators: tuple[str, ...]
    roles: tuple[str, ...]


def parse_reply(text: str) -> ReflectionBody:
    """The reply as a ReflectionBody, read as `models.ask_structured` reads every reply (a code
    fence or text around the JSON object is tolerated). Raises ReplyError saying what is wrong."""
    return parse_structured(text, ReflectionBody)


def slug(text: str) -> str:
    """Lower case, runs of other characters as `_`, at most 40 characters."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40]


def _evidence_problems(where: str, ev: Evidence, ids: set[str], tasks: set[str]) -> list[str]:
    problems = []
    unknown = [c for c in ev.candidates if c not in ids]
    if unknown:
        problems.append(f"{where}.evidence cites unknown candidates {unknown}")
    unknown = [t for t in ev.tasks if t not in tasks]
    if unknown:
        problems.append(f"{where}.evidence cites unknown tasks {unknown}")
    return problems


def _malformed(body: ReflectionBody, cands: Sequence[Candidate], vocab: Vocabulary) -> list[str]:
    ids = {c.id for c in cands}
    tasks = {r.task_id for c in cands for r in c.records}
    problems: list[str] = []
    for name in ("failure_patterns", "success_patterns"):
        for i, pattern in enumerate(getattr(body, name)):
            where = f"{name}[{i}]"
            problems += _evidence_problems(where, pattern.evidence, ids, tasks)
            if not (pattern.evidence.candidates or pattern.evidence.tasks):
                problems.append(f"{where}.evidence must name at least one candidate or task")
    for i, s in enumerate(body.mutation_suggestions):
        where = f"mutation_suggestions[{i}]"
        problems += _evidence_problems(where, s.evidence, ids, tasks)
        if s.operator not in vocab.operators:
            problems.append(
                f"{where}.operator {s.operator!r} is not one of {list(vocab.operators)}"
            )
        if s.role is not None and (s.operator != "node_insert" or s.role not in vocab.roles):
            problems.append(f"{where}.role is only for node_insert, one of {list(vocab.roles)}")
        if s.max_loops is not None and s.operator != "gate_add":
            problems.append(f"{where}.max_loops is only for gate_add (null otherwise)")
    for i, p in enumerate(body.prompt_improvements):
        problems += _evidence_problems(f"prompt_improvements[{i}]", p.evidence, ids, tasks)
        if "{" in p.text or "}" in p.text:
            problems.append(f"prompt_improvements[{i}].text must not contain braces")
    for i, r in enumerate(body.structural_recommendations):
        where = f"structural_recommendations[{i}]"
        problems += _evidence_problems(where, r.evidence, ids, tasks)
        if r.action == "insert_node" and r.role not in vocab.roles:
            problems.append(f"{where}.role must be one of {list(vocab.roles)} for insert_node")
    return problems


class _Nodes:
    """Which node ids the generation's workflows have, which are agents, which are frozen."""

    def __init__(self, cands: Sequence[Candidate]) -> None:
        self.all = {n.id for c in cands for n in c.workflow.nodes}
        self.agents = {n.id for c in cands for n in c.workflow.nodes if isinstance(n, AgentNode)}
        self.frozen = {f for c in cands for f in c.workflow.frozen}

    def why_not(self, target: str, *, agent: bool = False) -> str | None:
        if target not in self.all:
            known = ", ".join(sorted(self.all)) or "(none)"
            return f"names node {target!r}, which no candidate has (nodes: {known})"
        if target in self.frozen:
            return f"refused: node {target!r} is frozen, and mutations may not touch it"
        if agent and target not in self.agents:
            return f"node {target!r} is not an agent, so it has no prompt"
        return None


def _keep(
    items: list[_T], name: str, nodes: _Nodes, dropped: list[Dropped], *, agent: bool = False
) -> list[_T]:
    kept = []
    for i, item in enumerate(items):
        target = str(getattr(item, "target", ""))
        reason = nodes.why_not(target, agent=agent)
        if reason is None:
            kept.append(item)
        else:
            label = getattr(item, "operator", None) or getattr(item, "action", None) or "prompt"
            dropped.append(Dropped(item=f"{name}[{i}] ({label} on {target!r})", reason=reason))
    return kept


def _normalise(body: ReflectionBody) -> ReflectionBody:
    suggestions = list(body.mutation_suggestions)
    covered = {(s.operator, s.target) for s in suggestions}
    for rec in body.structural_recommendations:
        op = ACTION_OPERATORS[rec.action]
        if (op, rec.target) not in covered:
            kind = f"insert_{rec.role}" if rec.action == "insert_node" else rec.action
            suggestions.append(
                MutationSuggestion(
                    operator=op,
                    target=rec.target,
                    kind=kind,
                    rationale=rec.rationale,
                    confidence=DERIVED_CONFIDENCE,
                    role=rec.role,
                    evidence=rec.evidence,
                )
            )
            covered.add((op, rec.target))
    for imp in body.prompt_improvements:
        if ("prompt_mutate", imp.target) not in covered:
            suggestions.append(
                MutationSuggestion(
                    operator="prompt_mutate",
                    target=imp.target,
                    kind=f"prompt_{imp.kind}".rstrip("_"),
                    rationale=imp.text,
                    confidence=DERIVED_CONFIDENCE,
                    evidence=imp.evidence,
                )
            )
            covered.add(("prompt_mutate", imp.target))
    named = []
    for i, s in enumerate(suggestions, start=1):
        kind = slug(s.kind) or slug(s.operator)
        named.append(s.model_copy(update={"id": f"s{i}", "kind": kind}))
    return body.model_copy(update={"mutation_suggestions": named})


def check_body(
    body: ReflectionBody, candidates: Sequence[Candidate], vocab: Vocabulary
) -> tuple[ReflectionBody, list[Dropped]]:
    """The body checked against the generation: ReplyError when malformed (see the module
    docstring); otherwise items whose target no candidate has, or is frozen, are dropped (and
    recorded), recommendations and improvements not covered by a suggestion get one
    (confidence 0.5), and suggestions are numbered s1, s2... with slug kinds."""
    problems = _malformed(body, candidates, vocab)
    if problems:
        raise ReplyError("; ".join(problems[:8]))
    nodes = _Nodes(candidates)
    dropped: list[Dropped] = []
    kept = body.model_copy(
        update={
            "mutation_suggestions": _keep(
                body.mutation_suggestions, "mutation_suggestions", nodes, dropped
            ),
            "prompt_improvements": _keep(
                body.prompt_improvements, "prompt_improvements", nodes, dropped, agent=True
            ),
            "structural_recommendations": _keep(
                body.structural_recommendations, "structural_recommendations", nodes, dropped
            ),
        }
    )
    return _normalise(kept), dropped
