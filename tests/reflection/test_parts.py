"""The part rules: what each node did in its runs turned into add / remove suggestions
(an idle file-writing agent, a costly role with no effect, runs a gate let through that the
hidden tests failed)."""

from __future__ import annotations

from typing import Any

from loopwright.records import CycleRecord
from loopwright.reflection import Candidate, OfflineReflector, Vocabulary, _parts
from loopwright.reflection._parts import FIXER_ROLE, PRUNE_COST_SHARE, hidden_misses
from loopwright.reflection._rules import MARGIN
from loopwright.workflow import AgentNode, Edge, Workflow
from tests.reflection.records import SEED, record, step, with_gate, with_study

VOCAB = Vocabulary(
    operators=("node_insert", "gate_add", "prompt_mutate", "node_remove", "crossover"),
    roles=("researcher", "reviewer", "test_writer", FIXER_ROLE),
)

FIX = AgentNode(
    id="fixer",
    role=FIXER_ROLE,
    tools=("read_file", "edit_file", "write_notes"),
    prompt="Review the change against {instruction_file} and fix what is wrong.",
)


def with_fixer(wf: Workflow = SEED) -> Workflow:
    return wf.model_copy(
        update={
            "nodes": (*wf.nodes, FIX),
            "edges": (*wf.edges, Edge(source="builder", target="fixer")),
        }
    )


def produced(rec: CycleRecord, node_id: str, files: list[str]) -> CycleRecord:
    trace = rec.node_trace[node_id].model_copy(update={"produced": files})
    return rec.model_copy(update={"node_trace": {**rec.node_trace, node_id: trace}})


def fixer_run(task: str, score: float, wrote: bool) -> CycleRecord:
    rec = record(task, score, steps=[step(), step("fixer", FIXER_ROLE)],
                 failing=(() if score == 1.0 else (("tests/a.py::test_x", "AssertionError: x"),)))  # fmt: skip
    return produced(rec, "fixer", ["pkg/mod.py"] if wrote else [])


def kinds(cands: list[Candidate]) -> dict[str, Any]:
    report = OfflineReflector(VOCAB).reflect(1, cands)
    return {s.kind: s for s in report.mutation_suggestions}


def test_a_writer_that_never_changes_a_file_is_suggested_for_removal() -> None:
    idle = [fixer_run("t1", 1.0, False), fixer_run("t2", 0.5, False), fixer_run("t3", 1.0, False)]
    got = kinds([Candidate("fixed", with_fixer(), tuple(idle))])
    s = got["remove_idle"]
    assert (s.operator, s.target) == ("node_remove", "fixer")
    assert s.confidence == 0.7  # one of its runs ended unresolved: it had something to fix
    assert "changed no workspace file in any of its 3 runs" in s.rationale
    resolved = [fixer_run(t, 1.0, False) for t in ("t1", "t2")]
    assert (
        kinds([Candidate("fixed", with_fixer(), tuple(resolved))])["remove_idle"].confidence == 0.35
    )


def test_a_writer_that_changed_a_file_once_or_ran_once_is_kept() -> None:
    busy = [fixer_run("t1", 1.0, False), fixer_run("t2", 0.5, True)]
    assert "remove_idle" not in kinds([Candidate("fixed", with_fixer(), tuple(busy))])
    once = [fixer_run("t1", 0.5, False)]
    assert "remove_idle" not in kinds([Candidate("fixed", with_fixer(), tuple(once))])


def test_runs_a_gate_let_through_that_hidden_tests_failed_ask_for_a_fixer() -> None:
    miss = record("t1", 0.5, failing=(("tests/a.py::test_x", "AssertionError: x"),),
                  gate=[("proceed", True)])  # fmt: skip
    ok = record("t2", 1.0, gate=[("reloop", False), ("proceed", True)])
    cands = [Candidate("gated", with_gate(), (miss, ok))]
    assert hidden_misses(cands) == [("gated", "t1")]
    got = kinds(cands)
    fixer, tests = got["insert_fixer"], got["insert_test_writer"]
    assert (fixer.operator, fixer.target, fixer.role) == ("node_insert", "builder", FIXER_ROLE)
    assert tests.role == "test_writer" and tests.confidence < fixer.confidence
    assert fixer.evidence.tasks == ["t1"]


def test_no_fixer_when_the_gate_caught_every_failure_or_there_is_no_gate() -> None:
    exhausted = record("t1", 0.5, failing=(("tests/a.py::test_x", "AssertionError: x"),),
                       gate=[("reloop", False), ("exhausted", False)])  # fmt: skip
    assert "insert_fixer" not in kinds([Candidate("gated", with_gate(), (exhausted,))])
    bare = record("t1", 0.5, failing=(("tests/a.py::test_x", "AssertionError: x"),))
    assert "insert_fixer" not in kinds([Candidate("seed", SEED, (bare,))])


def _runs(wf_study: bool, n: int) -> tuple[CycleRecord, ...]:
    """n runs, half resolved; with the study, the researcher costs as much as the builder."""
    steps = [step("study", "researcher"), step()] if wf_study else [step()]
    cost = {"researcher": 0.01, "builder": 0.01} if wf_study else {"builder": 0.01}
    return tuple(record(f"t{i}", 1.0 if i % 2 else 0.5, steps=steps,
                        failing=(() if i % 2 else (("tests/a.py::test_x", "AssertionError: x"),))
                        ).model_copy(update={"cost_by_agent": cost,
                                             "total_cost_usd": sum(cost.values())})
                 for i in range(n))  # fmt: skip


def test_a_costly_role_with_no_effect_is_pruned() -> None:
    cands = [
        Candidate("studied", with_study(), _runs(True, 4)),
        Candidate("seed", SEED, _runs(False, 4)),
    ]
    s = kinds(cands)["prune_researcher"]
    assert (s.operator, s.target) == ("node_remove", "study")
    assert "no effect either way" in s.rationale


def test_a_role_that_helped_or_costs_little_is_not_pruned(monkeypatch: Any) -> None:
    worse = tuple(r.model_copy(update={"score_end": 0.0}) for r in _runs(False, 4))
    cands = [Candidate("studied", with_study(), _runs(True, 4)), Candidate("seed", SEED, worse)]
    assert "prune_researcher" not in kinds(cands)  # the contrast shows an effect
    monkeypatch.setattr(_parts, "PRUNE_COST_SHARE", 1.01)  # the role is never costly enough
    same = [
        Candidate("studied", with_study(), _runs(True, 4)),
        Candidate("seed", SEED, _runs(False, 4)),
    ]
    assert "prune_researcher" not in kinds(same)


def test_the_part_rules_margin_is_the_contrast_rules() -> None:
    assert _parts._MARGIN == MARGIN and 0 < PRUNE_COST_SHARE < 1
