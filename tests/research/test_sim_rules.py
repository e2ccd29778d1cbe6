"""The offline meta model's documented rules, phase by phase."""

from __future__ import annotations

import json
from typing import Any

from loopwright.models import Message
from loopwright.research import AXES, SimResearcher
from loopwright.research._context import (
    AxisView,
    CriticContext,
    DistillContext,
    Promising,
    ReflectContext,
    Rules,
    SpecOutcome,
    ThinkContext,
)
from loopwright.research._goal import Escalation
from loopwright.research._journal import Experience
from loopwright.research._prompts import render
from loopwright.research._schemas import Envelope, MutationOp, Reflection, Spec, SpecRef
from loopwright.research.offline._distill import sim_distill
from loopwright.research.offline._researcher import critic, reflect, think
from loopwright.workflow import builtin_workflow, workflow_hash, workflow_to_json

BASE = builtin_workflow("builder-only")
HASH = workflow_hash(BASE)
DOC = json.loads(workflow_to_json(BASE))
TAXONOMY = tuple(
    AxisView(name=a.name, description=a.description, operators=a.operators) for a in AXES
)
SPEC = Spec(spec_id="s1", title="gate", intervention_axis="verification", hypothesis="h",
            patch=(MutationOp(op="mutation", operator="gate_add", seed=1),))  # fmt: skip


def exp(
    iter_: int, axis: str, verdict: str, pattern: tuple[str, ...], delta: float = 0.0
) -> Experience:
    return Experience(
        iter=iter_, spec_id="s1", axis=axis, scale="probe", title="t", pattern=pattern,
        patch_summary="p", base_hash=HASH, workflow_hash=f"h{iter_}{axis}",
        outcome_class="measured", verdict=verdict, score=0.5, baseline=0.5, delta=delta,  # type: ignore[arg-type]
        runs=1, lesson="l",
    )  # fmt: skip


def think_ctx(**kw: Any) -> ThinkContext:
    base: dict[str, Any] = dict(
        iteration=1, seed=0, goal="g", constraints="", rules=Rules(), knowledge=(), workflow=DOC,
        workflow_hash=HASH, score=None, probe_score=None, failures={}, experience=(), hypotheses=(),
        taxonomy=TAXONOMY, frontier=tuple(a.name for a in AXES), shared_axes=(), axis_window=3,
        max_specs=3, escalation=Escalation(), promising=(),
    )  # fmt: skip
    return ThinkContext(**{**base, **kw})


def test_think_proposes_one_probe_per_frontier_axis_jumping_shared_ones() -> None:
    env = think(think_ctx(shared_axes=("prompt",)), slots=2)
    assert env.status == "OK" and env.rebuttal is None
    assert [s.intervention_axis for s in env.specs] == ["verification", "topology"]
    assert all(s.scale == "probe" and s.patch for s in env.specs)
    assert [h.spec_id for h in env.hypotheses_add] == ["s1", "s2"]


def test_think_confirms_promising_probes_first() -> None:
    promising = Promising(iter=2, spec_id="s2", axis="prompt", title="lesson", hypothesis="h",
                          patch=SPEC.patch, delta=0.1)  # fmt: skip
    env = think(think_ctx(promising=(promising,)), slots=2)
    first = env.specs[0]
    assert first.scale == "perf" and first.confirms is not None and first.confirms.iter == 2
    assert env.specs[1].intervention_axis == "verification"  # prompt is already used


def test_think_writes_a_rebuttal_only_when_every_open_axis_is_shared() -> None:
    env = think(think_ctx(frontier=("prompt",), shared_axes=("prompt",)), slots=2)
    assert [s.intervention_axis for s in env.specs] == ["prompt"] and env.rebuttal


def test_think_measures_at_perf_scale_when_the_probe_pairs_are_at_the_ceiling() -> None:
    env = think(think_ctx(score=0.9, probe_score=1.0), slots=1)
    assert [s.scale for s in env.specs] == ["perf"]
    assert think(think_ctx(score=0.9, probe_score=0.95), slots=1).specs[0].scale == "probe"


def test_think_is_empty_when_no_open_axis_has_an_untried_change() -> None:
    assert think(think_ctx(frontier=()), slots=2).status == "SKIP_THINK_EMPTY"


def test_critic_counts_refutations_of_the_same_pattern() -> None:
    pattern = ("+gate:visible_tests_pass",)

    def verdict(experience: tuple[Experience, ...], spec: Spec = SPEC) -> str:
        ctx = CriticContext(iteration=3, round=1, spec=spec, pattern=pattern, preview_error=None,
                            workflow_hash=HASH, experience=experience, knowledge=())  # fmt: skip
        return critic(ctx).verdict

    refuted = exp(1, "verification", "refuted", pattern, -0.1)
    assert verdict(()) == "OK"
    assert verdict((refuted,)) == "REVISE"
    assert verdict((refuted, exp(2, "verification", "no_effect", pattern))) == "BLOCK"
    assert (
        verdict((refuted, refuted), SPEC.model_copy(update={"rebuttal": "new gate kind"})) == "WARN"
    )
    assert verdict((exp(1, "verification", "promising", pattern, 0.1),)) == "OK"


def test_distill_verdicts_follow_the_escalation_thresholds() -> None:
    def outcome(
        sid: str,
        delta: float | None,
        scale: str = "probe",
        kind: str = "measured",
        confirms: bool = False,
    ) -> SpecOutcome:
        ref = SpecRef(iter=1, spec_id="s1") if confirms else None
        spec = SPEC.model_copy(update={"spec_id": sid, "scale": scale, "confirms": ref})
        return SpecOutcome(spec=spec, outcome_class=kind, pattern=(), score=0.5, baseline=0.5,  # type: ignore[arg-type]
                           delta=delta, pairs=3, resolved_rate=None, baseline_resolved_rate=None,
                           failure_counts={}, note="")  # fmt: skip

    ctx = DistillContext(
        iteration=4, escalation=Escalation(), workspace_hash=HASH, workspace_score=0.5,
        outcomes=(outcome("a", 0.05), outcome("b", 0.01), outcome("c", 0.0), outcome("d", -0.1),
                  outcome("e", 0.03, "perf"), outcome("f", 0.06, "perf"), outcome("g", 0.0, "perf"),
                  outcome("i", -0.1, "perf", confirms=True),
                  outcome("h", None, kind="implementer_skip")),
        hypotheses=(), knowledge=(), experience=(),
    )  # fmt: skip
    got = sim_distill(ctx)
    assert {s.spec_id: s.verdict for s in got.specs} == {
        "a": "promising", "b": "inconclusive", "c": "no_effect", "d": "refuted",
        "e": "confirmed", "f": "adopted", "g": "no_effect", "h": "implementer_skip",
        "i": "not_confirmed",
    }  # fmt: skip
    assert got.adopt == "f" and len(got.knowledge_add) == 9


def reflect_ctx(**kw: Any) -> ReflectContext:
    base: dict[str, Any] = dict(
        iteration=4, seed=0, trigger="heartbeat", rules=Rules(), taxonomy=TAXONOMY, workflow=DOC,
        workflow_hash=HASH, failures={}, experience=(), exhaust_after=2, last_adoption=0,
        shared_axes=(),
    )  # fmt: skip
    return ReflectContext(**{**base, **kw})


def test_reflect_exhausts_refuted_axes_closes_forbidden_ones_and_ranks_the_frontier() -> None:
    refuted = (exp(1, "prompt", "refuted", ("a",)), exp(2, "prompt", "no_effect", ("b",)))
    got = reflect(reflect_ctx(experience=(*refuted, exp(3, "topology", "promising", ("c",), 0.2)),
                              rules=Rules(forbid_axes=("model_tier",)),
                              shared_axes=("verification",)))  # fmt: skip
    status = {a.axis: a.status for a in got.axes}
    assert status == {"prompt": "exhausted", "verification": "open", "topology": "open",
                      "agent_loop": "open", "model_tier": "closed"}  # fmt: skip
    # untried first, then by tries; the shared axis last
    assert got.frontier == ("agent_loop", "topology", "verification")
    assert got.verdict == "FRONTIER"


def test_the_sim_answers_through_the_chat_protocol() -> None:
    prompt = render("reflect", reflect_ctx(rules=Rules(forbid_axes=tuple(a.name for a in AXES))))
    reply = SimResearcher().chat([Message(role="user", content=prompt)], [])
    assert reply.simulated and reply.model == "sim-researcher-1"
    assert Reflection.model_validate_json(reply.text).verdict == "SPACE_EXHAUSTED"
    env = Envelope.model_validate_json(
        SimResearcher().chat([Message(role="user", content=render("think", think_ctx()))], []).text
    )
    assert len(env.specs) == 2  # the sim's breadth
