"""The evolve page's whole lineage tree (collapsible, the winner's chain open) and its
cost-over-time curve (dollars by role against task runs), on a real sim evolution and on
checkpoints edited to hold a family the run did not make."""

from __future__ import annotations

import re

from loopwright.report.pages._evolve_cost import META, cost_curve
from loopwright.report.pages._evolve_data import load_evolve
from loopwright.report.pages._evolve_lineage import lineage_of, lineage_section
from loopwright.search import EvaluationFinished, Lineage, Spent, load_checkpoint
from tests.report.conftest import CliRun
from tests.report.probe import charts, marks, section

_IND = re.compile(r'<(details|div) class="ind[^"]*" data-id="([^"]+)"([^>]*)>')


def test_the_tree_shows_every_individual_not_only_the_winners_chain(
    sim_evolution: CliRun,
) -> None:
    cp = load_checkpoint(sim_evolution.run_dir)
    winner = cp.individuals[cp.winner_id or ""]
    chain = {i.id for i in lineage_of(cp, winner)}
    body = lineage_section(cp).body
    shown = {m.group(2): m.group(3) for m in _IND.finditer(body)}
    assert set(shown) == set(cp.individuals)
    assert set(cp.individuals) - chain, "the run made no individual off the winner's chain"
    for ind_id, attrs in shown.items():
        assert ("data-chain" in attrs) == (ind_id in chain)


def test_the_tree_nests_children_under_their_parent_and_opens_only_the_chain(
    sim_evolution: CliRun,
) -> None:
    cp = load_checkpoint(sim_evolution.run_dir)
    seed = cp.individuals[cp.seed_id]
    # a grandchild off the winner's chain: its parent must become a closed <details>
    side = next(i for i in cp.individuals.values() if i.lineage.parents == (seed.id,)
                and i.id != cp.winner_id and i.id not in {x.id for x in lineage_of(cp, cp.individuals[cp.winner_id or ""])})  # fmt: skip
    child = side.model_copy(
        update={
            "id": "feedfacecafe",
            "generation": side.generation + 1,
            "lineage": Lineage(parents=(side.id,), operator="prompt_mutate", target="builder"),
        }
    )
    changed = cp.model_copy(update={"individuals": {**cp.individuals, child.id: child}})
    body = lineage_section(changed).body
    parent = re.search(rf'<details class="ind" data-id="{side.id}"([^>]*)>(.*)', body, re.S)
    assert parent is not None, "the side branch with a child is not collapsible"
    assert " open" not in parent.group(1)  # off the chain: closed
    assert 'data-id="feedfacecafe"' in parent.group(2).split("</details>", 1)[0]
    assert f'data-id="{cp.seed_id}" data-chain="true" open' in body


def test_the_cost_curve_adds_up_to_the_records_and_skips_cached_runs(
    sim_evolution: CliRun,
) -> None:
    data = load_evolve(sim_evolution.run_dir)
    curve = cost_curve(data)
    finished = [e for e in data.progress if isinstance(e, EvaluationFinished)]
    assert len(curve.totals) == len(finished) > 0
    last = curve.totals[-1]
    by_role = {r: u.usd for r, u in data.spend.by_role.items()}
    assert set(last) == set(by_role)
    for role, usd in by_role.items():
        assert abs(last[role] - usd) < 1e-9, role
    steps = [sum(t.values()) for t in curve.totals]
    assert steps == sorted(steps) and steps[-1] > 0  # cumulative, never falling
    figure = charts(section((sim_evolution.run_dir / "report.html").read_text(), "spend"))
    assert marks(figure["spend-curve"]) >= len(finished) * 2  # the total and at least one role


def test_a_cached_evaluation_spends_nothing_on_the_curve(sim_evolution: CliRun) -> None:
    data = load_evolve(sim_evolution.run_dir)
    first = next(e for e in data.progress if isinstance(e, EvaluationFinished))
    again = first.model_copy(update={"cached": True})
    curve = cost_curve(type(data)(**{**_fields(data), "progress": (first, again)}))
    assert curve.cached == 1 and curve.totals[0] == curve.totals[1]
    assert sum(curve.totals[0].values()) > 0


def _fields(data: object) -> dict[str, object]:
    return {name: getattr(data, name) for name in data.__slots__}  # type: ignore[attr-defined]


def test_the_meta_roles_spend_is_a_line_of_its_own_that_never_adds_twice(
    sim_evolution: CliRun,
) -> None:
    data = load_evolve(sim_evolution.run_dir)
    first, second = [e for e in data.progress if isinstance(e, EvaluationFinished)][:2]
    # the reflector spent $0.50 before the first run and $0.25 more before the second:
    # each event carries the run's spend so far, so the line is 0.50 then 0.75, not 0.50, 1.25
    spent = [Spent(meta_usd=0.5), Spent(meta_usd=0.75, unpriced_meta_calls=2)]
    events = tuple(
        e.model_copy(update={"spent": s}) for e, s in zip((first, second), spent, strict=True)
    )
    curve = cost_curve(type(data)(**{**_fields(data), "progress": events}))
    assert [t[META] for t in curve.totals] == [0.5, 0.75]
    assert curve.unpriced >= 2  # the meta calls without a price are counted, never as $0
    agents = [sum(v for r, v in t.items() if r != META) for t in curve.totals]
    assert agents[0] > 0 and agents[1] >= agents[0]
