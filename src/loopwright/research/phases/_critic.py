"""CRITIC: one call per patched spec, independent per spec; REVISE/BLOCK goes back to THINK once.

For each spec with a patch, the loop realises the patch in memory (no file is written) to get
its change pattern, and asks CRITIC whether it repeats a refuted pathology. OK and WARN
proceed. REVISE or BLOCK sends that spec alone back to THINK (the siblings are untouched),
then CRITIC judges the revision in round 2: a round-2 BLOCK of a spec without a rebuttal
commits as `critic_block`; anything else proceeds. A CRITIC reply still unusable after the
retry counts as WARN (a broken critic must not block experiments). No-patch specs skip CRITIC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loopwright.research._context import CriticContext
from loopwright.research._patch import pattern_of, realise
from loopwright.research._record import CriticRound, CritiqueFile, write_json
from loopwright.research._schemas import Critique, Envelope, Spec
from loopwright.research._scope import Scope
from loopwright.research.phases._think import ThinkOutcome, revise_spec
from loopwright.workflow import workflow_hash

__all__ = ["Vetted", "run_critic"]


@dataclass(frozen=True)
class Vetted:
    """A spec after CRITIC: possibly revised, its rounds, whether it is blocked, its pattern
    and the hash of the workflow its patch gives (None when it does not realise)."""

    spec: Spec
    revised: bool
    rounds: tuple[CriticRound, ...]
    blocked: bool
    pattern: tuple[str, ...]
    preview_hash: str | None = None


def run_critic(scope: Scope, envelope: Envelope, think: ThinkOutcome) -> list[Vetted]:
    """Vet every spec of the envelope (see the module docstring)."""
    scope.phase("CRITIC")
    vetted = []
    for spec in envelope.specs:
        if spec.patch is None:
            vetted.append(Vetted(spec, False, (), False, (), scope.base_hash))
            continue
        first, pattern, preview = _round(scope, spec, 1)
        rounds = [first]
        revised = False
        if first.verdict in ("REVISE", "BLOCK"):
            spec, revised = revise_spec(scope, spec, _critique(first), think)
            second, pattern, preview = _round(scope, spec, 2)
            rounds.append(second)
        blocked = rounds[-1].verdict == "BLOCK" and len(rounds) == 2 and not spec.rebuttal
        write_json(
            scope.staging / f"critique_{spec.spec_id}.json",
            CritiqueFile(
                spec_id=spec.spec_id, rounds=tuple(rounds), blocked=blocked, pattern=pattern
            ),
        )
        vetted.append(Vetted(spec, revised, tuple(rounds), blocked, pattern, preview))
    return vetted


def _critique(r: CriticRound) -> Critique:
    return Critique(verdict=r.verdict, reason=r.reason, matches=r.matches)


def _round(
    scope: Scope, spec: Spec, number: Literal[1, 2]
) -> tuple[CriticRound, tuple[str, ...], str | None]:
    preview = realise(
        scope.base, spec.patch or (), rules=scope.rules, failures=scope.state.failures
    )
    pattern = pattern_of(scope.base, preview.child) if preview.child is not None else ()
    child_hash = workflow_hash(preview.child) if preview.child is not None else None
    ctx = CriticContext(
        iteration=scope.n,
        round=number,
        spec=spec,
        pattern=pattern,
        preview_error=preview.error,
        workflow_hash=scope.base_hash,
        experience=tuple(scope.memory.experience()),
        knowledge=scope.memory.knowledge(),
    )
    reply = scope.meta.ask("critic", ctx, Critique, subject=spec.spec_id)
    if reply is None:
        return (
            CriticRound(
                round=number,
                verdict="WARN",
                reason="CRITIC reply unusable; proceeding",
                malformed=True,
            ),
            pattern,
            child_hash,
        )
    return (
        CriticRound(
            round=number, verdict=reply.verdict, reason=reply.reason, matches=reply.matches
        ),
        pattern,
        child_hash,
    )
