"""run_task grades through a pluggable Grader: the hidden material is captured before the
agent runs, the grader's GradeResult is the run's grade.json and record, the agent scope wraps
exactly the agent phase, and a non-default grader kind has its own fitness-cache keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from loopwright.evaluation import EvalJob, EvalSettings, Evaluator, TaskRunSpec, cache_key, run_task
from loopwright.models import DEFAULT_PRICES, ScriptedModel, ToolCall
from loopwright.records import GRADE_FILE
from loopwright.sandbox import LocalSandbox, Sandbox
from loopwright.scoring import Grader, GradeResult, Outcome, PytestGrader, TestResult
from loopwright.tasks import Task
from loopwright.workflow import workflow_from_text
from tests.taskfactory import GOLD, make_calc_task

WORKFLOW = """
schema_version: 1
name: seam
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [write_file]
    max_turns: 4
    prompt: "Implement {instruction_file}. {rules}"
"""


@dataclass
class Log:
    """What happened, in order."""

    lines: list[str] = field(default_factory=list)


@dataclass
class _Grading:
    log: Log
    task: Task

    def grade(self, workspace: Path) -> GradeResult:
        written = (workspace / "calc" / "core.py").read_text(encoding="utf-8")
        self.log.lines.append("grade")
        passed = "def div" in written
        return GradeResult(
            task_id=self.task.id,
            score=1.0 if passed else 0.0,
            resolved=passed,
            invalid=False,
            f2p_passed=int(passed),
            f2p_total=1,
            p2p_passed=0,
            p2p_total=0,
            tests=[
                TestResult(
                    id="probe",
                    outcome=Outcome.PASSED if passed else Outcome.FAILED,
                    fail_to_pass=True,
                    passed=passed,
                )
            ],
            exit_code=0,
            sandbox="none",
            duration_s=0.0,
            pytest_duration_s=0.0,
        )


@dataclass
class ProbeGrader:
    """A grader kind of its own: one probe test, passed when calc/core.py defines div."""

    log: Log
    name: str = "probe"
    sandbox: Sandbox = field(default_factory=LocalSandbox)

    def capture(self, task: Task) -> _Grading:
        self.log.lines.append("capture")
        return _Grading(self.log, task)


class _Scope:
    def __init__(self, log: Log) -> None:
        self.log = log

    def __enter__(self) -> None:
        self.log.lines.append("enter")

    def __exit__(self, *exc: object) -> None:
        self.log.lines.append("exit")


def _model(log: Log) -> ScriptedModel:
    calls = [
        ToolCall.make("w", "write_file", path="calc/core.py", content=GOLD),
        ToolCall.make("f", "finish", summary="done"),
    ]

    def answer(messages: object, tools: object) -> ToolCall:
        log.lines.append("model")
        return calls[min(sum(1 for x in log.lines if x == "model"), 2) - 1]

    return ScriptedModel(answer)


def test_run_task_grades_through_the_given_grader_around_a_scoped_agent_phase(
    tmp_path: Path,
) -> None:
    log = Log()
    task = make_calc_task(tmp_path / "bench")
    grader = ProbeGrader(log)
    assert isinstance(grader, Grader)
    spec = TaskRunSpec(
        workflow=workflow_from_text(WORKFLOW, "yaml"),
        task=task,
        model=_model(log),
        sandbox=LocalSandbox(),
        prices=DEFAULT_PRICES,
        run_dir=tmp_path / "run",
        run_id="seam",
        seed=1,
        grader=grader,
        agent_scope=lambda: _Scope(log),
    )
    record = run_task(spec)
    assert log.lines == ["capture", "enter", "model", "model", "exit", "grade"]
    assert record.grade is not None and record.score_end == 1.0
    assert [t.id for t in record.grade.tests] == ["probe"]
    written = GradeResult.model_validate_json((tmp_path / "run" / GRADE_FILE).read_text())
    assert written.tests[0].id == "probe" and written.resolved


def test_a_non_default_grader_kind_has_its_own_cache_keys_and_pytest_keeps_the_old_ones(
    tmp_path: Path,
) -> None:
    task = make_calc_task(tmp_path / "bench")
    job = EvalJob(workflow_from_text(WORKFLOW, "yaml"), task, 0, tmp_path / "root", "run")

    def evaluator(grader: Grader | None) -> Evaluator:
        return Evaluator(
            lambda seed: ScriptedModel([]),
            LocalSandbox(),
            DEFAULT_PRICES,
            EvalSettings(),
            grader=grader,
        )

    default = cache_key(evaluator(None), job)
    assert cache_key(evaluator(PytestGrader(LocalSandbox())), job) == default
    assert cache_key(evaluator(ProbeGrader(Log())), job) != default
