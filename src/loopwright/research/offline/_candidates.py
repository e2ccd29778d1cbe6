"""Untried changes on an axis: the offline THINK proposes them, the offline REFLECT counts them.

For an axis, its operators (minus forbidden ones) are taken in an order rotated by the
iteration number, and each is tried with `TRIES` seeds derived from (run seed, iteration, axis,
operator, try). A try is a candidate when the patch realises (valid, within the constraints)
and the child's hash was never tried on this workspace. Both offline phases use the same
iteration's seeds, so REFLECT's "exhausted" means exactly "THINK would find nothing here".
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from loopwright.research._context import AxisView, Rules
from loopwright.research._patch import pattern_of, realise
from loopwright.research._schemas import MutationOp
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["TRIES", "Candidate", "candidates", "derive_seed"]

TRIES = 4


@dataclass(frozen=True, slots=True)
class Candidate:
    """One realisable, untried change: the operation, the child's hash and pattern, and the
    operator's account of what it did."""

    op: MutationOp
    child_hash: str
    pattern: tuple[str, ...]
    reason: str


def derive_seed(*parts: object) -> int:
    """A seed from `parts`, stable across processes (SHA-256, 31 bits)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def candidates(
    workflow: Workflow,
    axis: AxisView,
    *,
    rules: Rules,
    failures: Mapping[str, Sequence[str]],
    tried: Collection[str],
    seed: int,
    iteration: int,
) -> Iterator[Candidate]:
    """Every untried candidate on `axis`, in the documented order (lazily)."""
    ops = [op for op in axis.operators if op not in rules.forbid_operators]
    if not ops:
        return
    start = iteration % len(ops)
    seen: set[str] = set()
    for operator in ops[start:] + ops[:start]:
        for attempt in range(TRIES):
            op = MutationOp(
                op="mutation",
                operator=operator,
                seed=derive_seed(seed, iteration, axis.name, operator, attempt),
            )
            result = realise(workflow, [op], rules=rules, failures=failures)
            if result.child is None:
                continue
            child_hash = workflow_hash(result.child)
            if child_hash in tried or child_hash in seen:
                continue
            seen.add(child_hash)
            reason = result.steps[0].split(": ", 1)[-1] if result.steps else operator
            yield Candidate(op, child_hash, pattern_of(workflow, result.child), reason)
