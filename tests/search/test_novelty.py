from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.search._distance import (
    signature_distance,
    workflow_distance,
    workflow_signature,
)
from loopwright.search._individual import Individual, Lineage
from loopwright.search._novelty import NoveltyFilter
from loopwright.workflow import AgentNode, Edge, GateNode, Workflow, builtin_workflow

SEED = builtin_workflow("builder-only")
RBV = builtin_workflow("research-build-verify")


def remembered(ident: str, wf: Workflow) -> Individual:
    return Individual(id=ident, generation=0, workflow=wf, lineage=Lineage(operator="seed"))


def reworded(wf: Workflow, node_id: str, old: str, new: str) -> Workflow:
    nodes = tuple(
        n.model_copy(update={"prompt": n.prompt.replace(old, new, 1)}) if n.id == node_id else n
        for n in wf.nodes
    )
    return wf.model_copy(update={"nodes": nodes})


def test_novelty_rejects_exact_duplicate_after_key_reordering() -> None:
    f = NoveltyFilter()
    f.remember(remembered("seed-1", RBV))
    data = RBV.model_dump(mode="json")
    shuffled = {k: data[k] for k in reversed(list(data))}
    shuffled["nodes"] = [dict(reversed(list(n.items()))) for n in reversed(data["nodes"])]
    shuffled["name"] = "renamed"
    twin = Workflow.model_validate(json.loads(json.dumps(shuffled)))
    verdict = f.check(twin)
    assert not verdict.accepted
    assert verdict.reason == "duplicate of seed-1" and verdict.nearest_id == "seed-1"


def test_novelty_rejects_near_identical_prompt_tweak() -> None:
    f = NoveltyFilter(threshold=0.1)
    f.remember(remembered("p", SEED))
    child = reworded(SEED, "builder", "completely and correctly", "fully and correctly")
    verdict = f.check(child)
    assert not verdict.accepted
    assert verdict.nearest_id == "p"
    assert verdict.distance is not None and 0.0 < verdict.distance < 0.1
    assert verdict.reason.startswith("too close to p (distance ")


def test_novelty_accepts_structurally_different_child() -> None:
    f = NoveltyFilter()
    f.remember(remembered("p", SEED))
    verdict = f.check(RBV)
    assert verdict.accepted, verdict.reason


def test_novelty_accepts_changed_model_tier() -> None:
    f = NoveltyFilter()
    f.remember(remembered("p", RBV))
    nodes = tuple(
        n.model_copy(update={"model": "large"}) if n.id == "builder" else n for n in RBV.nodes
    )
    assert f.check(RBV.model_copy(update={"nodes": nodes})).accepted


def test_novelty_accepts_full_rewrite_of_one_prompt() -> None:
    f = NoveltyFilter()
    f.remember(remembered("p", RBV))
    text = "Read {instruction_file} and summarise it for the builder. Stay in {workspace}. {rules}"
    nodes = tuple(
        n.model_copy(update={"prompt": text}) if n.id == "study" else n for n in RBV.nodes
    )
    assert f.check(RBV.model_copy(update={"nodes": nodes})).accepted


def test_zero_threshold_rejects_duplicates_only() -> None:
    f = NoveltyFilter(threshold=0.0)
    f.remember(remembered("p", SEED))
    assert f.check(reworded(SEED, "builder", "completely", "fully")).accepted
    assert not f.check(SEED).accepted


def test_distance_ignores_node_ids() -> None:
    nodes = tuple(
        n.model_copy(update={"id": "make"}) if n.id == "builder" else n for n in SEED.nodes
    )
    assert workflow_distance(SEED, SEED.model_copy(update={"nodes": nodes})) == 0.0


def test_bad_threshold_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="threshold"):
        NoveltyFilter(1.5)


# -- random workflows: properties of the distance, and the index against brute force --------

_WORDS = ["read", "the", "{instruction_file}", "tests", "never", "fix", "code", "notes", "run"]
_ROLES = ["builder", "researcher", "reviewer", "test_writer", "planner"]


@st.composite
def workflows(draw: st.DrawFn) -> Workflow:
    count = draw(st.integers(1, 4))
    agents = [
        AgentNode(
            id=f"n{i}",
            role=draw(st.sampled_from(_ROLES)),
            model=draw(st.sampled_from(["small", "medium", "large"])),
            tools=tuple(draw(st.sets(st.sampled_from(["read_file", "run_tests", "edit_file"])))),
            prompt=" ".join(draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12))),
        )
        for i in range(count)
    ]
    edges = tuple(Edge(source=f"n{i}", target=f"n{i + 1}") for i in range(count - 1))
    nodes: tuple[AgentNode | GateNode, ...] = tuple(agents)
    if draw(st.booleans()):
        nodes += (GateNode(id="g", check="visible_tests_pass", reloop_to="n0"),)
        edges += (Edge(source=f"n{count - 1}", target="g"),)
    return Workflow(name="w", nodes=nodes, edges=edges)


@settings(max_examples=150, deadline=None)
@given(workflows(), workflows())
def test_distance_properties(a: Workflow, b: Workflow) -> None:
    assert workflow_distance(a, a) == 0.0
    d = workflow_distance(a, b)
    assert 0.0 <= d <= 1.0
    assert d == workflow_distance(b, a)


@settings(max_examples=60, deadline=None)
@given(workflows(), workflows(), workflows())
def test_distance_triangle_inequality(a: Workflow, b: Workflow, c: Workflow) -> None:
    assert workflow_distance(a, c) <= workflow_distance(a, b) + workflow_distance(b, c) + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.lists(workflows(), min_size=1, max_size=25), workflows(), st.sampled_from([0.1, 0.3]))
def test_index_finds_what_brute_force_finds(
    known: list[Workflow], child: Workflow, threshold: float
) -> None:
    f = NoveltyFilter(threshold)
    for i, wf in enumerate(known):
        f.remember(remembered(f"i{i}", wf))
    verdict = f.check(child)
    sig = workflow_signature(child)
    near = [signature_distance(sig, workflow_signature(wf)) for wf in known]
    if verdict.reason.startswith("duplicate"):
        return
    assert verdict.accepted == (min(near) >= threshold)
    if not verdict.accepted:
        assert verdict.distance == pytest.approx(min(near))


def test_check_stays_fast_with_many_remembered() -> None:
    rng = random.Random(0)
    f = NoveltyFilter()
    base = [n for n in builtin_workflow("thorough").nodes if isinstance(n, AgentNode)]
    for i in range(2_000):
        agents = [
            a.model_copy(update={"prompt": a.prompt + f" variant {rng.randrange(10**9)} " * 30})
            for a in rng.sample(base, rng.randint(1, 4))
        ]
        f.remember(remembered(f"i{i}", Workflow(name="w", nodes=tuple(agents))))
    start = time.perf_counter()
    for _ in range(50):
        f.check(SEED)
    assert (time.perf_counter() - start) / 50 < 0.05
