from __future__ import annotations

import json

import pytest

from loopwright.errors import ConfigError
from loopwright.search._archive import (
    Descriptor,
    MapElitesArchive,
    default_descriptors,
    descriptors_by_name,
)
from loopwright.search._designer import design
from loopwright.search._individual import Individual, Lineage, TaskResult
from loopwright.workflow import Workflow, builtin_workflow


def ind(
    ident: str, score: float | None, wf: Workflow | None = None, cost: float | None = 0.0
) -> Individual:
    results = (
        ()
        if score is None
        else (
            TaskResult(
                task_id="t",
                repetition=0,
                split="train",
                score=score,
                resolved=score == 1.0,
                invalid=False,
                failure_category="none",
                cost_usd=cost,
                duration_s=1.0,
                gate_loops=0,
                record_path=f"r/{ident}",
            ),
        )
    )
    return Individual(
        id=ident,
        generation=0,
        workflow=wf or builtin_workflow("builder-only"),
        lineage=Lineage(operator="seed"),
        results=results,
    )


def archive() -> MapElitesArchive:
    return MapElitesArchive(default_descriptors())


def test_archive_inserts_into_an_empty_cell() -> None:
    a = archive()
    out = a.add(ind("a", 0.4))
    assert out.inserted and out.replaced is None
    assert a.cells() == {out.cell: a.elites()[0]}
    assert len(a) == 1


def test_archive_replaces_worse_elite() -> None:
    a = archive()
    a.add(ind("old", 0.2))
    out = a.add(ind("new", 0.6))
    assert out.inserted and out.replaced == "old"
    assert [e.id for e in a.elites()] == ["new"]


@pytest.mark.parametrize("score", [0.6, 0.5])
def test_archive_keeps_better_or_equal_incumbent(score: float) -> None:
    a = archive()
    a.add(ind("old", 0.6))
    out = a.add(ind("new", score))
    assert not out.inserted and out.replaced is None
    assert [e.id for e in a.elites()] == ["old"]


def test_archive_does_not_add_unevaluated_individual() -> None:
    a = archive()
    out = a.add(ind("x", None))
    assert not out.inserted
    assert len(a) == 0 and a.coverage() == 0.0


def test_coverage_counts_filled_cells() -> None:
    a = archive()
    seed = builtin_workflow("builder-only")
    a.add(ind("a", 0.1, seed))
    a.add(ind("b", 0.1, builtin_workflow("research-build-verify")))
    a.add(ind("c", 0.1, design("thorough", seed)))
    a.add(ind("d", 0.9, seed))  # same cell as "a"
    assert len(a) == 3
    assert a.coverage() == pytest.approx(3 / 50)


def test_descriptors_bin_correctly() -> None:
    seed = builtin_workflow("builder-only")
    by = {d.name: d for d in descriptors_by_name(["agents", "reloop", "prompt_len", "cost"])}
    one, rbv, thorough = (
        ind("a", 0.5, seed, cost=0.004),
        ind("b", 0.5, builtin_workflow("research-build-verify"), cost=0.1),
        ind("c", 0.5, design("thorough", seed), cost=None),
    )
    assert [by["agents"].bin(x) for x in (one, rbv, thorough)] == [0, 1, 3]
    assert [by["reloop"].bin(x) for x in (one, rbv, thorough)] == [0, 1, 1]
    # builder ~2k characters, researcher + builder ~3.6k, four agents ~7.4k
    assert [by["prompt_len"].bin(x) for x in (one, rbv, thorough)] == [1, 2, 3]
    assert [by["cost"].bin(x) for x in (one, rbv, thorough)] == [1, 3, 0]
    assert by["agents"].labels[by["agents"].bin(thorough)] == "4"


def test_five_or_more_agents_share_the_last_bin() -> None:
    base = design("thorough", builtin_workflow("builder-only"))
    extra = [n.model_copy(update={"id": f"{n.id}_2"}) for n in base.nodes[:2]]
    wf = base.model_copy(update={"nodes": (*base.nodes, *extra)})
    assert default_descriptors()[0].bin(ind("x", 0.5, wf)) == 4


def test_unknown_descriptor_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown archive descriptor") as err:
        descriptors_by_name(["agents", "colour"])
    assert "prompt_len" in str(err.value) and "cost" in str(err.value)


def test_archive_json_round_trip() -> None:
    a = MapElitesArchive(descriptors_by_name(["agents", "reloop", "cost"]))
    a.add(ind("a", 0.3))
    a.add(ind("b", 0.7, builtin_workflow("thorough"), cost=0.5))
    text = a.to_json()
    data = json.loads(text)
    assert data["schema_version"] == 1 and data["descriptors"] == ["agents", "reloop", "cost"]
    back = MapElitesArchive.from_json(text)
    assert back.cells() == a.cells()
    assert back.coverage() == a.coverage()
    assert back.to_json() == text


def test_from_json_rejects_mismatched_descriptors() -> None:
    a = archive()
    a.add(ind("a", 0.3))
    with pytest.raises(ConfigError, match="do not match"):
        MapElitesArchive.from_json(a.to_json(), descriptors_by_name(["agents"]))


def test_descriptor_out_of_range_is_a_value_error() -> None:
    bad = Descriptor("bad", lambda _: 7, ("only",))
    with pytest.raises(ValueError, match="bin 7"):
        MapElitesArchive([bad]).add(ind("a", 0.5))


def test_elites_are_in_cell_order() -> None:
    a = archive()
    a.add(ind("c", 0.1, design("thorough", builtin_workflow("builder-only"))))
    a.add(ind("a", 0.1))
    cells = list(a.cells())
    assert cells == sorted(cells)
    assert [e.id for e in a.elites()] == ["a", "c"]
