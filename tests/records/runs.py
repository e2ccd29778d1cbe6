"""Building task-run directories for CycleAnalyzer tests: events through EventWriter, grade.json
from a real scoring.GradeResult. Every `t` is explicit so records are exact."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loopwright.records import (
    EVENTS_FILE,
    ErrorEvent,
    EventWriter,
    GateDecision,
    ModelCall,
    NodeEnd,
    NodeStart,
    NotesWritten,
    RunEnd,
    RunStart,
    RunStatus,
    ToolCallEvent,
)
from loopwright.records._events import NodeStatus
from loopwright.scoring import GradeResult, Outcome, TestResult

__all__ = ["F2P", "P2P", "Call", "RunDir", "grade_result", "read_call"]

F2P = ["tests/test_calc.py::test_mul", "tests/test_calc.py::test_div"]
P2P = ["tests/test_calc.py::test_add"]
INSTRUCTION = "/runs/r1/instruction.md"


@dataclass(frozen=True)
class Call:
    """One model turn and the tools it called: (tool, arguments, ok)."""

    input_tokens: int = 100
    output_tokens: int = 20
    cached_tokens: int = 0
    cost_usd: float | None = 0.125
    tools: tuple[tuple[str, str, bool], ...] = ()
    error: str | None = None


def read_call() -> Call:
    """A turn that reads the instruction file."""
    return Call(tools=(("read_file", json.dumps({"path": INSTRUCTION}), True),))


class RunDir:
    """Writes one run directory's events in order; `t` advances by one second per event."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer = EventWriter(path / EVENTS_FILE)
        self.t = 0.0

    def _tick(self) -> float:
        t = self.t
        self.t += 1.0
        return t

    def start(self, *, simulated: bool = False) -> RunDir:
        self.writer.write(
            RunStart(
                t=self._tick(),
                run_id="r1",
                task_id="calc-ops",
                task_digest="d1",
                workflow_name="wf",
                workflow_hash="h1",
                model="scripted",
                simulated=simulated,
                seed=7,
                repetition=0,
                loopwright_version="0.1.0",
                started_at="2025-01-01T00:00:00+00:00",
            )
        )
        return self

    def agent(
        self,
        node_id: str,
        role: str,
        calls: list[Call],
        *,
        attempt: int = 1,
        status: NodeStatus | None = "ok",
        produced: tuple[str, ...] = (),
        error: str | None = None,
        notes: int = 0,
    ) -> RunDir:
        """An agent visit; `status=None` leaves it without node_end (a crash inside it)."""
        started = self._tick()
        self.writer.write(
            NodeStart(t=started, node_id=node_id, kind="agent", role=role, attempt=attempt)
        )
        for turn, call in enumerate(calls, 1):
            self._call(node_id, attempt, turn, call)
        if notes:
            self.writer.write(NotesWritten(t=self._tick(), node_id=node_id, chars=notes))
        if status is not None:
            end = self._tick()
            self.writer.write(
                NodeEnd(
                    t=end,
                    node_id=node_id,
                    attempt=attempt,
                    status=status,
                    duration_s=end - started,
                    error=error,
                    produced=list(produced),
                    summary=f"{node_id} done",
                )
            )
        return self

    def _call(self, node_id: str, attempt: int, turn: int, call: Call) -> None:
        self.writer.write(
            ModelCall(
                t=self._tick(),
                node_id=node_id,
                attempt=attempt,
                turn=turn,
                model="scripted",
                simulated=False,
                input_tokens=call.input_tokens,
                output_tokens=call.output_tokens,
                cached_tokens=call.cached_tokens,
                latency_s=0.5,
                cost_usd=call.cost_usd,
                price_table="test-2025",
                tool_calls=len(call.tools),
                error=call.error,
            )
        )
        for tool, arguments, ok in call.tools:
            self.writer.write(
                ToolCallEvent(
                    t=self._tick(),
                    node_id=node_id,
                    attempt=attempt,
                    turn=turn,
                    tool=tool,
                    arguments=arguments,
                    ok=ok,
                    error=None if ok else "error: refused",
                    output_chars=10,
                    duration_s=0.1,
                )
            )

    def gate(
        self,
        node_id: str,
        *,
        attempt: int,
        loops: int,
        decision: Literal["proceed", "reloop"] = "reloop",
    ) -> RunDir:
        """A gate visit: node_start, its decision (RELOOP to `builder` unless proceed), node_end."""
        started = self._tick()
        self.writer.write(NodeStart(t=started, node_id=node_id, kind="gate", attempt=attempt))
        passed = decision == "proceed"
        self.writer.write(
            GateDecision(
                t=self._tick(),
                node_id=node_id,
                decision=decision,
                target=None if passed else "builder",
                loop_count=loops,
                max_loops=3,
                passed=passed,
                reason="all visible tests pass" if passed else "2 tests failed",
            )
        )
        end = self._tick()
        self.writer.write(
            NodeEnd(
                t=end,
                node_id=node_id,
                attempt=attempt,
                status="ok" if passed else "failed",
                duration_s=end - started,
            )
        )
        return self

    def error(self, where: str, message: str, node_id: str | None = None) -> RunDir:
        self.writer.write(ErrorEvent(t=self._tick(), node_id=node_id, where=where, message=message))
        return self

    def end(self, status: RunStatus = "completed", error: str | None = None) -> RunDir:
        self.writer.write(RunEnd(t=self.t, status=status, duration_s=self.t, error=error))
        self.writer.close()
        return self

    def close(self) -> RunDir:
        self.writer.close()
        return self

    def diff(self, text: str) -> RunDir:
        (self.path / "diff.patch").write_text(text, encoding="utf-8")
        return self

    def grade(self, result: GradeResult) -> RunDir:
        (self.path / "grade.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        return self


def grade_result(
    passing: set[str],
    *,
    outcomes: dict[str, Outcome] | None = None,
    invalid_reason: str | None = None,
    collection_errors: tuple[str, ...] = (),
) -> GradeResult:
    """A GradeResult for calc-ops (F2P, P2P) where the ids in `passing` pass and the others fail
    (or have the outcome given in `outcomes`)."""
    outcomes = outcomes or {}
    tests = [
        TestResult(
            id=test_id,
            outcome=Outcome.PASSED if test_id in passing else outcomes.get(test_id, Outcome.FAILED),
            fail_to_pass=test_id in F2P,
            passed=test_id in passing,
            message="" if test_id in passing else "assert 1 == 2",
        )
        for test_id in F2P + P2P
    ]
    f2p = sum(1 for t in F2P if t in passing)
    p2p = sum(1 for t in P2P if t in passing)
    invalid = invalid_reason is not None
    return GradeResult(
        task_id="calc-ops",
        score=0.0 if invalid else f2p / len(F2P),
        resolved=not invalid and f2p == len(F2P) and p2p == len(P2P),
        invalid=invalid,
        invalid_reason=invalid_reason,
        f2p_passed=f2p,
        f2p_total=len(F2P),
        p2p_passed=p2p,
        p2p_total=len(P2P),
        tests=tests,
        collection_errors=list(collection_errors),
        restored=["removed conftest.py"],
        exit_code=None if invalid else (0 if len(passing) == 3 else 1),
        timed_out=False,
        sandbox="none",
        duration_s=2.0,
        pytest_duration_s=1.5,
        output_tail="",
    )
