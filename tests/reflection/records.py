"""Small synthetic CycleRecords and workflows for reflection tests (no run needed)."""

from __future__ import annotations

from typing import Any

from loopwright.records import CycleRecord
from loopwright.reflection import Candidate
from loopwright.workflow import AgentNode, Edge, GateNode, Workflow, builtin_workflow

SEED = builtin_workflow("builder-only")
BUILDER = SEED.nodes[0]
assert isinstance(BUILDER, AgentNode)

STUDY = AgentNode(
    id="study",
    role="researcher",
    tools=("read_file", "list_files", "write_notes"),
    prompt="Study {instruction_file} and write notes.",
)


def with_study(wf: Workflow = SEED) -> Workflow:
    return wf.model_copy(
        update={
            "nodes": (STUDY, *wf.nodes),
            "edges": (Edge(source="study", target="builder"), *wf.edges),
        }
    )


def with_gate(wf: Workflow = SEED, *, frozen: bool = False) -> Workflow:
    gate = GateNode(id="gate_verify", check="visible_tests_pass", reloop_to="builder", max_loops=2)
    return wf.model_copy(
        update={
            "nodes": (*wf.nodes, gate),
            "edges": (*wf.edges, Edge(source="builder", target="gate_verify")),
            "frozen": ("gate_verify",) if frozen else wf.frozen,
        }
    )


def step(
    node_id: str = "builder", role: str = "builder", error: str | None = None
) -> dict[str, Any]:
    return {
        "node_id": node_id, "role": role, "attempt": 1, "started_t": 0.0, "duration_s": 1.5,
        "status": "ok" if error is None else "error", "succeeded": error is None, "error": error,
        "turns": 3, "model_errors": 0, "tool_calls": 3, "tool_errors": 0, "input_tokens": 100,
        "output_tokens": 20, "cached_tokens": 0, "cost_usd": 0.01, "notes_chars": 0,
        "read_instruction": True, "produced": ["pkg/mod.py"], "summary": "done",
    }  # fmt: skip


def outcome(test_id: str, passed: bool, message: str = "", f2p: bool = True) -> dict[str, Any]:
    return {"id": test_id, "outcome": "passed" if passed else "failed", "fail_to_pass": f2p,
            "passed": passed, "message": message}  # fmt: skip


def record(
    task_id: str,
    score: float,
    *,
    failing: tuple[tuple[str, str], ...] = (),
    steps: list[dict[str, Any]] | None = None,
    gate: list[tuple[str, bool]] | None = None,
    category: str | None = None,
) -> CycleRecord:
    """A record of one run: `failing` = (test id, message) pairs; `gate` = decisions."""
    tests = [outcome(t, False, m) for t, m in failing] + [outcome("tests/t.py::ok", True)]
    steps = steps if steps is not None else [step()]
    trace: dict[str, Any] = {
        s["node_id"]: {"node_id": s["node_id"], "kind": "agent", "role": s["role"], "fired": 1,
                       "attempts": [1], "statuses": [s["status"]], "produced": [], "duration_s": 1.5}
        for s in steps
    }  # fmt: skip
    if gate is not None:
        decisions = [
            {"t": 1.0, "decision": d, "target": "builder" if d == "reloop" else None,
             "loop_count": i, "max_loops": 2, "passed": ok,
             "reason": "The visible tests do not pass.\nE   TypeError: f() got an unexpected keyword argument 'x'\nE   - diff" if d == "reloop" else ""}
            for i, (d, ok) in enumerate(gate)
        ]  # fmt: skip
        trace["gate_verify"] = {"node_id": "gate_verify", "kind": "gate", "role": "", "fired": len(gate),
                                "attempts": list(range(1, len(gate) + 1)), "statuses": ["ok"] * len(gate),
                                "produced": [], "duration_s": 0.1, "decisions": decisions,
                                "loop_count": len(gate) - 1}  # fmt: skip
    resolved = score == 1.0
    f2p_total = max(len(failing), 1) * 2
    grade = {
        "score": score, "resolved": resolved, "invalid": False, "invalid_reason": None,
        "f2p_passed": round(score * f2p_total), "f2p_total": f2p_total, "p2p_passed": 1,
        "p2p_total": 1, "tests": tests, "collection_errors": [], "restored": [], "timed_out": False,
    }  # fmt: skip
    cat = category or ("none" if resolved else "tests_failing")
    data = {
        "run_id": "r", "task_id": task_id, "task_digest": "d", "workflow_name": "w",
        "workflow_hash": "h", "model": "sim-coder-1", "simulated": True, "seed": 0,
        "repetition": 0, "started_at": "2026-01-01T00:00:00Z", "run_status": "completed",
        "run_error": None, "score_start": 0.0, "score_end": score, "score_delta": score,
        "steps": steps, "node_trace": trace, "gate_loops": {}, "grade": grade,
        "failure_category": cat, "read_instruction": True, "diff_files": [], "errors": [],
        "eval_artifacts": [], "input_tokens": 100, "output_tokens": 20, "cached_tokens": 0,
        "total_cost_usd": 0.01, "cost_by_agent": {"builder": 0.01}, "duration_s": 2.0,
        "experiments": [], "frozen_nodes": [],
        "mutable_node_ids": [],
    }  # fmt: skip
    return CycleRecord.model_validate(data)


TYPE_ERR = "TypeError: Machine.fire() got an unexpected keyword argument 'amount'"
ASSERT_ERR = "AssertionError: assert 'cr-me' == 'creme'"


def generation() -> list[Candidate]:
    """Three candidates on two tasks: the bare seed fails, +study helps, +gate helps most."""
    seed_recs = (
        record(
            "t1",
            0.5,
            failing=(("tests/a.py::test_fire", TYPE_ERR), ("tests/a.py::test_ctx", TYPE_ERR)),
        ),
        record("t2", 0.75, failing=(("tests/b.py::test_fold", ASSERT_ERR),)),
    )
    study_recs = (
        record("t1", 1.0, steps=[step("study", "researcher"), step()]),
        record(
            "t2",
            0.75,
            failing=(("tests/b.py::test_fold", ASSERT_ERR),),
            steps=[step("study", "researcher"), step()],
        ),
    )
    gate_recs = (
        record("t1", 1.0, gate=[("reloop", False), ("proceed", True)]),
        record("t2", 1.0, gate=[("proceed", True)]),
    )
    return [
        Candidate(id="seed", workflow=SEED, records=seed_recs),
        Candidate(
            id="plus_study",
            workflow=with_study(),
            records=study_recs,
            operator="node_insert",
            parents=("seed",),
        ),
        Candidate(
            id="plus_gate",
            workflow=with_gate(),
            records=gate_recs,
            operator="gate_add",
            parents=("seed",),
        ),
    ]
