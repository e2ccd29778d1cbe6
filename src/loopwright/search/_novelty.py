"""The novelty filter: reject a child before it is evaluated when it is nothing new.

A child is rejected when its canonical hash is already known (a duplicate, whatever its key
order, node order or name) or when the cheap distance of `_distance` to the nearest
remembered workflow is below the threshold. Exact graph edit distance is not used: it is
exponential in the number of nodes.

Speed: a check must not compare prompt text against everything remembered. Remembered
workflows are grouped by their exact structure-token set; since distance >= structural
distance, only groups whose structural distance is below the threshold can hold a near
neighbour. Those groups are found with prefix filtering (a set-similarity join): with
similarity s = 1 - threshold, two token sets with Jaccard >= s always share a token among
the first |x| - ceil(s|x|) + 1 tokens of each in one fixed global order, so each group is
indexed under only those few prefix tokens. Prompts are then compared only within the
candidate groups, with a size bound that skips most of them without a set intersection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from loopwright.search._distance import (
    WorkflowSignature,
    jaccard_distance,
    token_rank,
    workflow_signature,
)
from loopwright.search._individual import Individual
from loopwright.search._protocols import NoveltyVerdict
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["NoveltyFilter"]


@dataclass(slots=True)
class _Group:
    """Remembered workflows sharing one exact structure-token set."""

    structure: frozenset[str]
    members: list[tuple[str, WorkflowSignature]] = field(default_factory=list)


class NoveltyFilter:
    """Remembers evaluated workflows and judges whether a child is new enough to evaluate.

    `threshold` is in [0, 1]: a child closer than it (strictly) to a remembered workflow is
    rejected; 0 rejects exact duplicates only. Deterministic: the verdict depends only on what
    was remembered, in which order (the first individual with a hash keeps it).
    """

    def __init__(self, threshold: float = 0.1) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1]; got {threshold}")
        self.threshold = threshold
        self._by_hash: dict[str, str] = {}
        self._groups: dict[frozenset[str], _Group] = {}
        self._index: dict[str, list[_Group]] = {}
        self._shingles: dict[str, frozenset[str]] = {}
        self._ranks: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._by_hash)

    def known(self, digest: str) -> str | None:
        """The id of the remembered individual with this workflow hash, if any."""
        return self._by_hash.get(digest)

    def remember(self, ind: Individual) -> None:
        """Add `ind`'s workflow to the memory (a hash already known is kept with its first id)."""
        digest = ind.hash
        if digest in self._by_hash:
            return
        self._by_hash[digest] = ind.id
        sig = workflow_signature(ind.workflow, self._shingles)
        group = self._groups.get(sig.structure)
        if group is None:
            group = self._groups[sig.structure] = _Group(sig.structure)
            for token in self._prefix(sig.structure):
                self._index.setdefault(token, []).append(group)
        group.members.append((ind.id, sig))

    def check(self, workflow: Workflow) -> NoveltyVerdict:
        """Accept `workflow`, or reject it as a duplicate or as too close to a remembered one.

        The verdict names the nearest remembered id and the distance when it rejects.
        """
        digest = workflow_hash(workflow)
        twin = self._by_hash.get(digest)
        if twin is not None:
            return NoveltyVerdict(False, f"duplicate of {twin}", nearest_id=twin, distance=0.0)
        if self.threshold <= 0.0 or not self._groups:
            return NoveltyVerdict(True, "new")
        sig = workflow_signature(workflow, self._shingles)
        nearest: tuple[float, str] | None = None
        for group in self._candidates(sig.structure):
            d_struct = jaccard_distance(sig.structure, group.structure)
            if d_struct >= self.threshold:
                continue
            for member_id, other in group.members:
                limit = self.threshold if nearest is None else nearest[0]
                d = _bounded_distance(sig, other, d_struct, limit)
                if d is not None and (nearest is None or d < nearest[0]):
                    nearest = (d, member_id)
        if nearest is None:
            return NoveltyVerdict(True, f"new (nothing within distance {self.threshold:g})")
        d, member_id = nearest
        return NoveltyVerdict(
            False,
            f"too close to {member_id} (distance {d:.3f} < {self.threshold:g})",
            nearest_id=member_id,
            distance=d,
        )

    def _candidates(self, structure: frozenset[str]) -> list[_Group]:
        seen: dict[int, _Group] = {}
        for token in self._prefix(structure):
            for group in self._index.get(token, ()):
                seen.setdefault(id(group), group)
        exact = self._groups.get(structure)
        if exact is not None:
            seen.setdefault(id(exact), exact)
        return list(seen.values())

    def _prefix(self, structure: frozenset[str]) -> list[str]:
        """The first |x| - ceil(s|x|) + 1 tokens of `structure` in the global token order."""
        size = len(structure)
        if size == 0:
            return []
        similarity = 1.0 - self.threshold
        # The epsilon keeps float error from shortening the prefix (longer is always safe).
        length = size - math.ceil(similarity * size - 1e-9) + 1
        ordered = sorted(structure, key=self._rank)
        return ordered[: max(1, min(size, length))]

    def _rank(self, token: str) -> tuple[int, str]:
        rank = self._ranks.get(token)
        if rank is None:
            rank = self._ranks[token] = token_rank(token)
        return rank, token


def _bounded_distance(
    a: WorkflowSignature, b: WorkflowSignature, d_struct: float, limit: float
) -> float | None:
    """The distance of a and b when it is below `limit`, else None (stops at the first
    prompt key that reaches the limit; a size ratio bounds the Jaccard before intersecting)."""
    if a.prompts.keys() != b.prompts.keys():
        return None
    worst = d_struct
    for key, pa in a.prompts.items():
        pb = b.prompts[key]
        if pa is pb:
            continue
        small, large = sorted((len(pa), len(pb)))
        if large and 1.0 - small / large >= limit:
            return None
        worst = max(worst, jaccard_distance(pa, pb))
        if worst >= limit:
            return None
    return worst
