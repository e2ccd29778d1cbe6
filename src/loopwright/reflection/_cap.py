"""The digest's size cap: reductions applied in a fixed order until the JSON fits, each noted.

The order keeps what reflection needs most (contrasts, the most frequent errors, the best and
worst candidates) and drops detail first:

1. error groups beyond the 3 most frequent per node;
2. failing tests beyond the 5 most frequent per task;
3. evaluator feedback beyond the 2 most frequent texts per task;
4. every candidate's per-task outcomes;
5. nodes that have no errors and no failure categories;
6. error groups beyond the most frequent one per node;
7. candidates beyond the 3 best and the worst (by mean score; contrasts still count them);
8. texts cut to 80 characters; contrasts beyond 6; failing tests and feedback beyond 2 and 1
   per task;
9. every candidate's nodes and RELOOP details;
10. candidates beyond the best and the worst;
11. per-role cost, tokens and time, feature lists, contrasts beyond 3.

If the digest still does not fit after all of them, `omitted` says so; the JSON is then as small
as the digest can be made. Deterministic: the same digest and cap give the same result.
"""

from __future__ import annotations

from collections.abc import Callable

from loopwright.reflection._digest import CandidateDigest, ExhaustDigest, NodeDigest

__all__ = ["digest_chars", "fit_digest"]

Reducer = Callable[[ExhaustDigest], tuple[ExhaustDigest, str | None]]


def digest_chars(digest: ExhaustDigest) -> int:
    """The length of the digest as the meta model reads it (compact JSON)."""
    return len(digest.model_dump_json())


def _map_nodes(digest: ExhaustDigest, fn: Callable[[NodeDigest], NodeDigest]) -> ExhaustDigest:
    cands = [c.model_copy(update={"nodes": [fn(n) for n in c.nodes]}) for c in digest.candidates]
    return digest.model_copy(update={"candidates": cands})


def _errors_beyond(keep: int) -> Reducer:
    def reduce(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
        dropped = sum(max(0, len(n.errors) - keep) for c in digest.candidates for n in c.nodes)
        if not dropped:
            return digest, None
        out = _map_nodes(digest, lambda n: n.model_copy(update={"errors": n.errors[:keep]}))
        return out, f"{dropped} error groups (kept {keep} per node)"

    return reduce


def _tests_beyond(keep: int) -> Reducer:
    def reduce(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
        dropped = sum(max(0, len(t.failing_tests) - keep) for t in digest.tasks)
        if not dropped:
            return digest, None
        tasks = [
            t.model_copy(update={"failing_tests": t.failing_tests[:keep]}) for t in digest.tasks
        ]
        return digest.model_copy(update={"tasks": tasks}), (
            f"{dropped} failing tests (kept {keep} per task)"
        )

    return reduce


def _feedback_beyond(keep: int) -> Reducer:
    def reduce(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
        dropped = sum(max(0, len(t.feedback) - keep) for t in digest.tasks)
        if not dropped:
            return digest, None
        tasks = [t.model_copy(update={"feedback": t.feedback[:keep]}) for t in digest.tasks]
        return digest.model_copy(update={"tasks": tasks}), (
            f"{dropped} evaluator feedback texts (kept {keep} per task)"
        )

    return reduce


def _task_outcomes(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
    dropped = sum(len(c.tasks) for c in digest.candidates)
    if not dropped:
        return digest, None
    cands = [c.model_copy(update={"tasks": []}) for c in digest.candidates]
    return digest.model_copy(update={"candidates": cands}), (f"{dropped} per-task outcome rows")


def _quiet_nodes(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
    def loud(n: NodeDigest) -> bool:
        return bool(n.errors or n.failure_categories)

    dropped = sum(1 for c in digest.candidates for n in c.nodes if not loud(n))
    if not dropped:
        return digest, None
    cands = [
        c.model_copy(update={"nodes": [n for n in c.nodes if loud(n)]}) for c in digest.candidates
    ]
    return digest.model_copy(update={"candidates": cands}), (f"{dropped} nodes without errors")


def _score(c: CandidateDigest) -> float:
    return c.mean_score if c.mean_score is not None else -1.0


def _few_candidates(best: int) -> Reducer:
    def reduce(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
        if len(digest.candidates) <= best + 1:
            return digest, None
        ranked = sorted(digest.candidates, key=lambda c: (-_score(c), c.id))
        keep = {c.id for c in ranked[:best]} | {ranked[-1].id}
        left = [c.id for c in digest.candidates if c.id not in keep]
        cands = [c for c in digest.candidates if c.id in keep]
        return digest.model_copy(update={"candidates": cands}), (
            f"candidates {', '.join(left)} (kept the {best} best and the worst)"
        )

    return reduce


def _lean_candidates(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
    lean: dict[str, object] = {
        "cost_by_role": {},
        "tokens_by_role": {},
        "seconds_by_role": {},
        "features": [],
    }
    cands = [c.model_copy(update=lean) for c in digest.candidates]
    contrasts = digest.contrasts[:3]
    return digest.model_copy(update={"candidates": cands, "contrasts": contrasts}), (
        "per-role cost, tokens and time; feature lists; contrasts beyond 3"
    )


def _short_texts(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
    def cut(n: NodeDigest) -> NodeDigest:
        return n.model_copy(
            update={"errors": [e.model_copy(update={"text": e.text[:80]}) for e in n.errors]}
        )

    out = _map_nodes(digest, cut)
    tasks = [
        t.model_copy(
            update={
                "failing_tests": [
                    r.model_copy(update={"message": r.message[:80]}) for r in t.failing_tests[:2]
                ],
                "feedback": [f.model_copy(update={"text": f.text[:80]}) for f in t.feedback[:1]],
            }
        )
        for t in out.tasks
    ]
    out = out.model_copy(update={"tasks": tasks, "contrasts": out.contrasts[:6]})
    return out, (
        "texts cut to 80 chars; contrasts beyond 6; failing tests beyond 2 and evaluator "
        "feedback beyond 1 per task"
    )


def _no_details(digest: ExhaustDigest) -> tuple[ExhaustDigest, str | None]:
    cands = [c.model_copy(update={"nodes": [], "reloops": []}) for c in digest.candidates]
    return digest.model_copy(
        update={"candidates": cands}
    ), "every candidate's node and RELOOP details"


REDUCERS: tuple[Reducer, ...] = (
    _errors_beyond(3),
    _tests_beyond(5),
    _feedback_beyond(2),
    _task_outcomes,
    _quiet_nodes,
    _errors_beyond(1),
    _few_candidates(3),
    _short_texts,
    _no_details,
    _few_candidates(1),
    _lean_candidates,
)


def fit_digest(digest: ExhaustDigest, max_chars: int) -> ExhaustDigest:
    """`digest` reduced (in the documented order) until its JSON, notes included, is at most
    `max_chars` characters, with `omitted` listing each reduction made (after any notes it
    already had). Returned unchanged when it fits."""
    notes = list(digest.omitted)
    out = digest
    for reduce in REDUCERS:
        if digest_chars(out.model_copy(update={"omitted": notes})) <= max_chars:
            break
        out, note = reduce(out)
        if note:
            notes.append(note)
    if digest_chars(out.model_copy(update={"omitted": notes})) > max_chars:
        notes.append(f"the digest still exceeds the cap of {max_chars} characters")
    return out.model_copy(update={"omitted": notes})
