"""Bring your own evaluator: a task graded by a registered Python function gets the same grade,
record and fitness cache as any task; a function that raises, returns a score outside [0, 1]
or is not registered gives an invalid `grading failed:` grade; the workspace it reads is the
agent's, read only as regular files inside it."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.evaluation import (
    CachedExecutor,
    EvalJob,
    EvalSettings,
    Evaluator,
    FitnessCache,
    SerialExecutor,
    TaskRunSpec,
    cache_key,
    run_task,
)
from loopwright.models import DEFAULT_PRICES, ChatModel, ScriptedModel, ToolCall
from loopwright.records import GRADE_FILE, CycleRecord
from loopwright.sandbox import LocalSandbox
from loopwright.scoring import (
    Assessment,
    Check,
    FunctionGrader,
    GradeResult,
    Submission,
    evaluator_key,
    grader_for,
    register_evaluator,
    unregister_evaluator,
)
from loopwright.tasks import Task, load_task
from loopwright.workflow import workflow_from_text
from tests.taskfactory import GOLD, REPO, make_calc_task, write_files

NAME = "calc-fn"
WORKFLOW = """
schema_version: 1
name: byoe
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [write_file]
    max_turns: 4
    prompt: "Implement {instruction_file}. {rules}"
"""
TOML = """
schema_version = 1
id = "calc-fn"
level = 1

[grading]
runner = "function"
evaluator = "calc-fn"
"""


def _task(parent: Path) -> Task:
    root = parent / "calc-fn"
    write_files(root / "repo", {k: v for k, v in REPO.items() if not k.startswith("tests/")})
    (root / "instruction.md").write_text("Add `mul(a, b)` and `div(a, b)` to `calc/core.py`.\n")
    (root / "task.toml").write_text(TOML)
    return load_task(root)  # no tests/: a function-graded task needs none


def grade_calc(sub: Submission) -> Assessment:
    """Reads the source as data, runs the code only in the sandbox."""
    source = sub.read_text("calc/core.py")
    ran = sub.run([sys.executable, "-c", "from calc.core import div; print(div(6, 3))"])
    checks = (
        Check(name="defines mul", passed="def mul" in source),
        Check(name="div runs", passed=ran.stdout.strip() == "2.0", message=ran.stderr[-200:]),
    )
    passed = sum(c.passed for c in checks)
    return Assessment(score=passed / 2, checks=checks, feedback=f"{passed}/2 checks passed")


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    register_evaluator(NAME, grade_calc)
    yield
    unregister_evaluator(NAME)


def _model(content: str = GOLD) -> ScriptedModel:
    return ScriptedModel(
        [
            ToolCall.make("w", "write_file", path="calc/core.py", content=content),
            ToolCall.make("f", "finish", summary="done"),
        ]
    )


def _run(tmp_path: Path, task: Task, content: str = GOLD) -> CycleRecord:
    spec = TaskRunSpec(
        workflow=workflow_from_text(WORKFLOW, "yaml"),
        task=task,
        model=_model(content),
        sandbox=LocalSandbox(),
        prices=DEFAULT_PRICES,
        run_dir=tmp_path / "run",
        run_id="byoe",
        seed=1,
    )
    return run_task(spec)


def test_a_function_graded_run_records_its_score_checks_and_feedback_and_is_cached(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path / "bench")
    assert isinstance(grader_for(task), FunctionGrader)
    made: list[int] = []

    def make_model(seed: int) -> ChatModel:
        made.append(seed)
        return _model()

    ev = Evaluator(
        make_model, LocalSandbox(), DEFAULT_PRICES, EvalSettings(model="scripted:byoe", seed=0)
    )
    wf = workflow_from_text(WORKFLOW, "yaml")
    cache_file = tmp_path / "runs.db"

    def run(name: str) -> tuple[CycleRecord, bool]:
        executor = CachedExecutor(SerialExecutor(), FitnessCache(cache_file))
        try:
            (result,) = executor.run(ev, [EvalJob(wf, task, 0, tmp_path / name, name)])
        finally:
            executor.close()
        assert result.record is not None
        return result.record, result.cached

    first, cached = run("a")
    assert not cached and len(made) == 1
    grade = first.grade
    assert grade is not None and not grade.invalid and first.score_end == 1.0 and grade.resolved
    assert [(t.id, t.passed) for t in grade.tests] == [("defines mul", True), ("div runs", True)]
    assert grade.f2p_passed == grade.f2p_total == 2
    (run_dir,) = [p for p in (tmp_path / "a").rglob(GRADE_FILE)]
    written = GradeResult.model_validate_json(run_dir.read_text(encoding="utf-8"))
    assert written.output_tail == "2/2 checks passed"  # the feedback, in grade.json

    again, cached = run("b")
    assert cached and len(made) == 1 and again == first

    job = EvalJob(wf, task, 0, tmp_path / "c", "c")
    key = cache_key(ev, job)
    register_evaluator(NAME, grade_calc, version="2")  # a new version: graded afresh
    assert cache_key(ev, job) != key and evaluator_key(NAME).startswith(f"{NAME}:2:")


def test_partial_credit_and_failed_checks_reach_the_record(tmp_path: Path) -> None:
    record = _run(tmp_path, _task(tmp_path / "bench"), "def mul(a, b):\n    return a * b\n")
    grade = record.grade
    assert grade is not None and not grade.invalid and not grade.resolved
    assert record.score_end == 0.5
    failed = [t for t in grade.tests if not t.passed]
    assert [t.id for t in failed] == ["div runs"] and "ImportError" in failed[0].message


def test_a_function_that_raises_gives_an_invalid_grade_saying_why(tmp_path: Path) -> None:
    def broken(sub: Submission) -> Assessment:
        raise RuntimeError("the rubric file is gone")

    register_evaluator(NAME, broken)
    grade = _run(tmp_path, _task(tmp_path / "bench")).grade
    assert grade is not None and grade.invalid and grade.score == 0.0
    assert grade.invalid_reason == (
        "grading failed: evaluator 'calc-fn': RuntimeError: the rubric file is gone"
    )


@pytest.mark.parametrize("returned", [1.5, -0.1, float("nan"), "1.0", True, None])
def test_a_score_outside_0_1_or_not_a_score_is_refused(tmp_path: Path, returned: object) -> None:
    register_evaluator(NAME, lambda sub: returned)  # type: ignore[arg-type,return-value]
    grade = _run(tmp_path, _task(tmp_path / "bench")).grade
    assert grade is not None and grade.invalid and grade.score == 0.0
    assert grade.invalid_reason is not None
    assert grade.invalid_reason.startswith("grading failed: evaluator 'calc-fn': ValueError")
    assert "expected an Assessment or a number in [0, 1]" in grade.invalid_reason or (
        "expected a number in [0, 1]" in grade.invalid_reason
    )


def test_an_evaluation_with_a_score_outside_0_1_cannot_be_made(tmp_path: Path) -> None:
    register_evaluator(NAME, lambda sub: Assessment(score=2.0))
    grade = _run(tmp_path, _task(tmp_path / "bench")).grade
    assert grade is not None and grade.invalid
    assert grade.invalid_reason is not None and "less than or equal to 1" in grade.invalid_reason


def test_an_unregistered_evaluator_says_how_to_register_it(tmp_path: Path) -> None:
    unregister_evaluator(NAME)
    grade = _run(tmp_path, _task(tmp_path / "bench")).grade
    assert grade is not None and grade.invalid
    assert grade.invalid_reason is not None
    assert "no evaluator is registered under 'calc-fn'" in grade.invalid_reason
    assert "register_evaluator('calc-fn', fn)" in grade.invalid_reason


def test_the_agents_workspace_is_read_only_as_regular_files_inside_it(tmp_path: Path) -> None:
    """A hostile workspace: a symlinked directory out of it, a symlinked file, a FIFO (opening
    one would block the grader for ever), `..` and an absolute path."""
    task = _task(tmp_path / "bench")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("s3cret")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "ok.txt").write_text("fine" * 10)
    (ws / "out").symlink_to(outside)
    (ws / "key.txt").symlink_to(outside / "key.txt")
    os.mkfifo(ws / "pipe")
    sub = Submission(ws, task, LocalSandbox())
    assert sub.read_text("ok.txt", limit=4) == "fine"
    for rel in ("out/key.txt", "key.txt", "pipe", "../secret/key.txt", str(outside / "key.txt")):
        with pytest.raises(OSError):
            sub.read_bytes(rel)


def test_the_task_model_pairs_runner_function_with_an_evaluator(tmp_path: Path) -> None:
    from loopwright.tasks import GradingTable

    with pytest.raises(ValueError, match="needs evaluator"):
        GradingTable(runner="function")
    with pytest.raises(ValueError, match="for runner 'function' only"):
        GradingTable(runner="pytest", evaluator="x")
    table = GradingTable(runner="function", evaluator="x")
    assert not table.per_test


def test_the_function_grader_is_a_grader() -> None:
    from loopwright.scoring import Grader

    grader = FunctionGrader(LocalSandbox())
    assert isinstance(grader, Grader) and grader.name == "function"


def test_a_function_that_does_not_return_is_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from loopwright.scoring import _function

    monkeypatch.setattr(_function, "HOST_MARGIN_S", 0.5)
    task = _task(tmp_path / "bench")
    toml = (task.root / "task.toml").read_text()
    (task.root / "task.toml").write_text(
        toml.replace("[grading]", "[timeouts]\ngrade = 0.5\n\n[grading]")
    )
    release = threading.Event()
    register_evaluator(NAME, lambda sub: float(release.wait(60)))
    try:
        grade = _run(tmp_path, load_task(task.root)).grade
    finally:
        release.set()
    assert grade is not None and grade.invalid
    assert grade.invalid_reason == (
        "grading failed: evaluator 'calc-fn': the evaluator did not return within 1s"
    )


def test_registering_something_that_is_not_a_function_is_refused() -> None:
    from loopwright.errors import ConfigError

    with pytest.raises(ConfigError, match="needs a function") as caught:
        register_evaluator("x", "not a function")  # type: ignore[arg-type]
    assert caught.value.got == "str" and caught.value.fix is not None


FEEDBACK = "div(6, 3) raised ImportError: write div next to mul in calc/core.py"


def _with_feedback(sub: Submission) -> Assessment:
    assessed = grade_calc(sub)
    return assessed.model_copy(update={"feedback": FEEDBACK if assessed.score < 1 else "ok"})


def test_an_evaluators_feedback_reaches_the_record_and_the_reflection_the_search_reads(
    tmp_path: Path,
) -> None:
    """The feedback is the record's (schema 3), the digest's and the offline rules' (a failure
    pattern quoting it and a prompt lesson for the builder, which guided search applies); the
    meta model's prompt and the agent reflector's test log carry it too."""
    from loopwright.records import load_record
    from loopwright.reflection import (
        Candidate,
        ExhaustTools,
        OfflineReflector,
        Vocabulary,
        build_digest,
        render_prompt,
    )

    register_evaluator(NAME, _with_feedback)
    task = _task(tmp_path / "bench")
    record = _run(tmp_path, task, "def mul(a, b):\n    return a * b\n")
    assert record.grade is not None and record.grade.feedback == FEEDBACK
    assert load_record(tmp_path / "run") == record and record.schema_version == 3
    vocab = Vocabulary(
        operators=("node_insert", "gate_add", "prompt_mutate", "node_remove", "crossover"),
        roles=("researcher", "reviewer"),
    )
    cand = Candidate(id="seed", workflow=workflow_from_text(WORKFLOW, "yaml"), records=(record,))
    digest = build_digest(0, [cand])
    (row,) = digest.tasks[0].feedback
    assert (row.text, row.runs, row.candidates) == (FEEDBACK, 1, ["seed"])
    assert FEEDBACK in render_prompt(digest, vocab)
    report = OfflineReflector(vocab).reflect(0, [cand])
    said = [p for p in report.failure_patterns if p.kind == "evaluator_feedback"]
    assert len(said) == 1 and FEEDBACK in said[0].description and said[0].evidence.tasks == [NAME]
    (lesson,) = [p for p in report.prompt_improvements if p.kind == "feedback"]
    assert lesson.target == "builder" and f"`{FEEDBACK}`" in lesson.text
    (suggestion,) = [s for s in report.mutation_suggestions if s.kind == "prompt_feedback"]
    assert suggestion.operator == "prompt_mutate" and suggestion.rationale == lesson.text
    import random

    from loopwright.search._protocols import MutationContext
    from loopwright.search.mutations._guided import apply_suggestion

    made = apply_suggestion(
        cand.workflow, suggestion, MutationContext(rng=random.Random(0)), report
    )
    assert made.child is not None  # the guided search's child carries the evaluator's words
    assert FEEDBACK in made.child.node("builder").model_dump()["prompt"]
    tools = ExhaustTools([cand])
    ok, log = tools.call(ToolCall.make("t", "read_test_log", run="seed/calc-fn/rep0"))
    assert ok and f"evaluator feedback: {FEEDBACK}" in log


def test_a_resolved_runs_feedback_is_not_a_failure_to_reflect_on(tmp_path: Path) -> None:
    from loopwright.reflection import Candidate, build_digest

    register_evaluator(NAME, _with_feedback)
    record = _run(tmp_path, _task(tmp_path / "bench"))
    assert record.resolved and record.grade is not None and record.grade.feedback == "ok"
    cand = Candidate(id="seed", workflow=workflow_from_text(WORKFLOW, "yaml"), records=(record,))
    assert build_digest(0, [cand]).tasks[0].feedback == []


def test_a_cached_run_from_before_feedback_is_run_again_to_get_it(tmp_path: Path) -> None:
    """Issue 31: a function-graded evaluation cached under CycleRecord schema 2 (no feedback)
    was served as a hit, so reflection had no feedback on that task until the cache was
    dropped. It is now a miss, run again once and stored afresh; then it hits."""
    task = _task(tmp_path / "bench")
    made: list[int] = []

    def make_model(seed: int) -> ChatModel:
        made.append(seed)
        return _model()

    ev = Evaluator(
        make_model, LocalSandbox(), DEFAULT_PRICES, EvalSettings(model="scripted:byoe", seed=0)
    )
    wf = workflow_from_text(WORKFLOW, "yaml")
    cache_file = tmp_path / "runs.db"

    def run(name: str) -> tuple[CycleRecord, bool]:
        executor = CachedExecutor(SerialExecutor(), FitnessCache(cache_file))
        try:
            (result,) = executor.run(ev, [EvalJob(wf, task, 0, tmp_path / name, name)])
        finally:
            executor.close()
        assert result.record is not None
        return result.record, result.cached

    first, _ = run("a")
    assert first.grade is not None and first.grade.feedback == "2/2 checks passed"
    with sqlite3.connect(cache_file) as db:  # as a loopwright before schema 3 stored it
        (stored,) = db.execute("SELECT record_json FROM fitness_cache").fetchone()
        old = json.loads(stored)
        old["schema_version"] = 2
        del old["grade"]["feedback"]
        db.execute("UPDATE fitness_cache SET record_json = ?", (json.dumps(old),))
    again, cached = run("b")
    assert not cached and len(made) == 2  # run again, not served without feedback
    assert again.grade is not None and again.grade.feedback == "2/2 checks passed"
    third, cached = run("c")
    assert cached and len(made) == 2 and third.grade is not None
    assert third.grade.feedback == "2/2 checks passed"  # the fresh record was stored
    with sqlite3.connect(cache_file) as db:
        assert db.execute("SELECT COUNT(*) FROM fitness_cache").fetchone() == (1,)


def test_an_old_record_of_a_task_graded_by_its_tests_still_serves(tmp_path: Path) -> None:
    from loopwright.evaluation._cache import _outdated

    tested = make_calc_task(tmp_path / "bench")
    function = _task(tmp_path / "bench2")
    wf = workflow_from_text(WORKFLOW, "yaml")
    old = json.dumps({"schema_version": 2})
    assert not _outdated(EvalJob(wf, tested, 0, tmp_path / "t", "t"), old)
    assert _outdated(EvalJob(wf, function, 0, tmp_path / "f", "f"), old)
    assert not _outdated(EvalJob(wf, function, 0, tmp_path / "f", "f"), '{"schema_version": 3}')
