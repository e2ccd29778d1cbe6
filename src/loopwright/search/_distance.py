"""A cheap distance between workflows: structure tokens and prompt word bigrams, both Jaccard.

    distance(a, b) = max(structural(a, b), prompt(a, b))              in [0, 1]
    structural     = Jaccard distance between the multisets of structure tokens
    prompt         = the largest Jaccard distance, over every prompt key present in a or b,
                     between the word-bigram sets of that key's prompts (1.0 if one side lacks it)

Structure tokens name nodes by what they do, not by id: an agent is kind+role+loop+model+
tools, a function node its name and args, a gate its check (or "judge") + the role it
RELOOPs to + max_loops, an edge the pair of labels (role -> role). Renaming ids therefore
costs nothing, while any change to a node's settings, the edges or the gates is at least
1/|tokens| away. Prompts are keyed by role (a gate's judge by its label); all prompts of
one key are pooled. Taking the max (not a mean) keeps a full rewrite of one prompt, or one
changed node, far from its parent however large the workflow is. Both parts are metrics,
so the max is one too. Timeouts and max_turns are not part of the distance (the hash sees
them). Pure and deterministic.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from loopwright.workflow import AgentNode, FnNode, GateNode, Workflow

__all__ = [
    "WorkflowSignature",
    "jaccard_distance",
    "prompt_shingles",
    "signature_distance",
    "token_rank",
    "workflow_distance",
    "workflow_signature",
]

_WORD_RE = re.compile(r"[a-z0-9_{}]+")


@dataclass(frozen=True, slots=True)
class WorkflowSignature:
    """What the distance looks at: structure tokens and, per prompt key, its word bigrams."""

    structure: frozenset[str]
    prompts: Mapping[str, frozenset[str]]

    @property
    def tokens(self) -> int:
        """How many structure tokens and prompt bigrams in all (a size for filtering)."""
        return len(self.structure) + sum(len(s) for s in self.prompts.values())


def jaccard_distance(a: frozenset[str], b: frozenset[str]) -> float:
    """1 - |a & b| / |a | b|; 0.0 when both are empty."""
    if a is b:
        return 0.0
    union = len(a) + len(b)
    if union == 0:
        return 0.0
    inter = len(a & b) if len(a) <= len(b) else len(b & a)
    return 1.0 - inter / (union - inter)


def prompt_shingles(text: str) -> frozenset[str]:
    """The set of lower-cased word bigrams of `text` (single words if it has one word)."""
    words = _WORD_RE.findall(text.lower())
    if len(words) < 2:
        return frozenset(words)
    return frozenset(f"{x} {y}" for x, y in itertools.pairwise(words))


def workflow_signature(
    wf: Workflow, shingle_cache: dict[str, frozenset[str]] | None = None
) -> WorkflowSignature:
    """The signature of `wf`. `shingle_cache` (prompt text -> bigrams) shares equal prompts'
    sets between signatures, which saves memory and lets equal prompts compare in O(1)."""
    labels = {n.id: _label(n) for n in wf.nodes}
    tokens: list[str] = [_node_token(n, labels) for n in wf.nodes]
    tokens += [f"edge|{labels.get(e.source, '?')}->{labels.get(e.target, '?')}" for e in wf.edges]
    texts: dict[str, list[str]] = {}
    for n in wf.nodes:
        if isinstance(n, AgentNode):
            texts.setdefault(labels[n.id], []).append(n.prompt)
        elif isinstance(n, GateNode) and n.judge is not None:
            texts.setdefault(labels[n.id], []).append(n.judge)
    prompts = {key: _shingles("\n".join(parts), shingle_cache) for key, parts in texts.items()}
    return WorkflowSignature(frozenset(_multiset(tokens)), prompts)


def signature_distance(a: WorkflowSignature, b: WorkflowSignature) -> float:
    """The distance between two signatures (see the module docstring); in [0, 1]."""
    worst = jaccard_distance(a.structure, b.structure)
    for key in a.prompts.keys() | b.prompts.keys():
        if worst >= 1.0:
            break
        pa, pb = a.prompts.get(key), b.prompts.get(key)
        d = 1.0 if pa is None or pb is None else jaccard_distance(pa, pb)
        worst = max(worst, d)
    return worst


def workflow_distance(a: Workflow, b: Workflow) -> float:
    """`signature_distance` of the two workflows' signatures; symmetric, 0 for equal ones."""
    return signature_distance(workflow_signature(a), workflow_signature(b))


def token_rank(token: str) -> int:
    """A stable pseudo-random rank of a token (the global order prefix filtering needs)."""
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "big")


def _label(node: AgentNode | FnNode | GateNode) -> str:
    if isinstance(node, AgentNode):
        return node.role
    if isinstance(node, FnNode):
        return f"fn:{node.fn}"
    return f"gate:{node.check or 'judge'}"


def _node_token(node: AgentNode | FnNode | GateNode, labels: Mapping[str, str]) -> str:
    if isinstance(node, AgentNode):
        return f"agent|{node.role}|{node.loop}|{node.model}|{','.join(sorted(node.tools))}"
    if isinstance(node, FnNode):
        args = ",".join(f"{k}={v!r}" for k, v in sorted(node.args.items()))
        return f"fn|{node.fn}|{args}"
    target = labels.get(node.reloop_to, "?")
    return f"gate|{node.check or 'judge'}|reloop->{target}|{node.max_loops}"


def _multiset(tokens: Iterable[str]) -> list[str]:
    # Repeated tokens (two identical reviewers) stay distinct: "x#0", "x#1".
    return [f"{tok}#{i}" for tok, count in Counter(tokens).items() for i in range(count)]


def _shingles(text: str, cache: dict[str, frozenset[str]] | None) -> frozenset[str]:
    if cache is None:
        return prompt_shingles(text)
    found = cache.get(text)
    if found is None:
        found = cache[text] = prompt_shingles(text)
    return found
