"""The local executor: jobs in, records out as they finish; a hang cancelled at its timeout, a
SIGKILLed worker recorded and retried once, closing the stream kills what still runs."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.evaluation import (
    EvalJob,
    EvalSettings,
    Evaluator,
    LocalExecutor,
    SerialExecutor,
    schedule,
)
from loopwright.models import (
    DEFAULT_PRICES,
    ChatModel,
    Message,
    Reply,
    ScriptedModel,
    ToolCall,
    ToolSpec,
    model_factory,
)
from loopwright.records import FailureCategory, ModelCall, load_record, read_events
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Task, load_benchmark
from loopwright.workflow import Workflow, builtin_workflow, workflow_from_text
from tests.taskfactory import GOLD, make_calc_task

WORKFLOW = """
schema_version: 1
name: one-builder
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [read_file, write_file, run_command]
    max_turns: 4
    prompt: |
      TASK=<{task_id}>: implement the task in {instruction_file}, working in {workspace}.
      {rules}
edges: []
"""


class Behaviour:
    """A model factory whose model writes the gold and finishes, unless the task id says to
    hang (`hang` in the id), die by SIGKILL on its first attempt (`crash-once`) or on every
    attempt (`crash-always`). Pids go to `<marks>/<task>.pid`; first attempts leave a mark."""

    def __init__(self, marks: Path) -> None:
        self.marks = marks

    def __call__(self, seed: int) -> ChatModel:
        del seed
        return ScriptedModel(self.reply)

    def reply(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply | None:
        prompt = messages[1].content
        found = re.search(r"TASK=<calc-?([a-z-]*)>", prompt)
        task = found.group(1) if found and found.group(1) else "calc"
        turn = sum(m.role == "assistant" for m in messages)
        if turn == 0:  # read the instruction first, as any agent should
            path = re.search(r"\S+instruction\.md", prompt)
            return ToolCall.make("r", "read_file", path=path.group(0) if path else "")
        (self.marks / f"{task}.pid").write_text(str(os.getpid()))
        if task == "hang":
            time.sleep(300)
        if task == "hangcmd" and turn == 1:  # a command that hangs, in the sandbox's own session
            pidfile = self.marks / "sleep.pid"
            return ToolCall.make("c", "run_command", command=f"echo $$ > {pidfile}; exec sleep 300")
        first = self.marks / f"{task}.first"
        if task == "crash-always" or (task == "crash-once" and not first.exists()):
            first.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        if turn == 1:
            return ToolCall.make("w", "write_file", path="calc/core.py", content=GOLD)
        return "done"


def one_builder() -> Workflow:
    return workflow_from_text(WORKFLOW, "yaml")


def evaluator(marks: Path, seed: int = 0) -> Evaluator:
    marks.mkdir(parents=True, exist_ok=True)
    return Evaluator(
        Behaviour(marks),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(model="scripted:behaviour", sandbox="local", seed=seed),
    )


def tasks(tmp: Path, *ids: str) -> list[Task]:
    return [make_calc_task(tmp / "bench", task_id) for task_id in ids]


def jobs(root: Path, task_list: list[Task], reps: int = 1) -> list[EvalJob]:
    wf = one_builder()
    return [EvalJob(wf, t, rep, root, root.name) for t in task_list for rep in range(reps)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    return stat.split(") ")[-1][0] != "Z"  # a zombie is dead


def test_a_hanging_job_is_cancelled_at_its_timeout_and_recorded(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    work = jobs(tmp_path / "run", tasks(tmp_path, "calc-hang", "calc-hangcmd", "calc-ok"))
    started = time.monotonic()
    results = list(LocalExecutor(3, job_timeout_s=3).run(evaluator(marks), work))
    elapsed = time.monotonic() - started

    by_task = {r.job.task.id: r for r in results}
    assert sorted(by_task) == ["calc-hang", "calc-hangcmd", "calc-ok"]
    assert results[0].job.task.id == "calc-ok", "the finished job came first, not the hung ones"
    assert by_task["calc-hangcmd"].status == "timeout"
    assert not alive(int((marks / "sleep.pid").read_text())), "the hung command still runs"
    hung = by_task["calc-hang"]
    assert hung.status == "timeout" and hung.attempts == 1
    assert hung.record.run_status == "timeout" and hung.record.grade is None
    assert hung.record.failure_category is FailureCategory.RUN_TIMEOUT
    assert "cancelled at its timeout" in (hung.record.run_error or "")
    assert load_record(hung.job.run_dir) == hung.record  # recorded on disk, in its run dir
    assert not alive(int((marks / "hang.pid").read_text())), "the hung worker still runs"
    assert 3 <= elapsed < 20
    ok = by_task["calc-ok"]
    assert ok.status == "ok" and ok.record.score_end == 1.0


@pytest.mark.parametrize(
    ("task_id", "final"), [("calc-crash-once", "ok"), ("calc-crash-always", "crashed")]
)
def test_a_worker_killed_by_sigkill_mid_job_is_recorded_and_retried_once(
    tmp_path: Path, task_id: str, final: str
) -> None:
    marks = tmp_path / "marks"
    (result,) = LocalExecutor(1).run(
        evaluator(marks), jobs(tmp_path / "run", tasks(tmp_path, task_id))
    )

    assert result.status == final and result.attempts == 2
    crash = result.failures[0]
    assert crash.attempt == 1 and crash.status == "crashed" and "SIGKILL" in crash.message
    assert crash.kept_at is not None and crash.kept_at.name == "rep_0.attempt1"
    kept = load_record(crash.kept_at)  # the crashed attempt, with what it had written
    assert kept.run_status == "error" and kept.grade is None and kept.steps
    if final == "ok":
        assert len(result.failures) == 1
        assert result.record.score_end == 1.0 and result.record.run_status == "completed"
    else:
        assert [f.status for f in result.failures] == ["crashed", "crashed"]
        assert result.record.run_status == "error" and result.record.grade is None
        assert "died without answering: killed by SIGKILL" in (result.record.run_error or "")
    assert load_record(result.job.run_dir) == result.record


def test_results_stream_as_they_finish_and_closing_the_stream_kills_what_runs(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    work = jobs(tmp_path / "run", tasks(tmp_path, "calc-hang", "calc-ok"))
    stream = LocalExecutor(2).run(evaluator(marks), work)
    first = next(stream)
    assert first.index == 1 and first.status == "ok"  # completion order, not job order
    started = time.monotonic()
    stream.close()  # the consumer stops: the hung job is cancelled
    assert time.monotonic() - started < 10
    assert not alive(int((marks / "hang.pid").read_text()))


def test_longest_expected_first_and_unknown_durations_first(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    wf = one_builder()
    expected = [1.0, None, 5.0, 3.0, None]
    work = [EvalJob(wf, task, i, tmp_path, "r", expected_s=e) for i, e in enumerate(expected)]
    assert schedule(work) == [1, 4, 2, 3, 0]


def test_the_evaluator_returns_records_in_task_order_whatever_finished_first(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    ev = evaluator(marks)
    ev.executor = LocalExecutor(2)
    seen: list[str] = []
    evaluation = ev.evaluate(
        one_builder(),
        tasks(tmp_path, "calc-a", "calc-b"),
        tmp_path / "run",
        run_id="run",
        on_record=lambda r: seen.append(r.task_id),
    )
    assert [r.task_id for r in evaluation.records] == ["calc-a", "calc-b"]
    assert sorted(seen) == ["calc-a", "calc-b"]
    assert evaluation.summary.mean_score == 1.0


def test_sim_latency_changes_timing_only(tmp_path: Path) -> None:
    bench = load_benchmark("mini")
    task = bench.task("l1-slugify")
    found = {}
    for spec in ("sim", "sim?latency=0.02"):
        ev = Evaluator(model_factory(spec, benchmark=bench), default_sandbox("local"),
                       DEFAULT_PRICES, EvalSettings(model=spec, sandbox="local", seed=4))  # fmt: skip
        (result,) = SerialExecutor().run(
            ev,
            [EvalJob(builtin_workflow("builder-only"), task, 0, tmp_path / str(len(found)), "r")],
        )
        calls = [
            e for e in read_events(result.job.run_dir / "events.jsonl") if isinstance(e, ModelCall)
        ]
        found[spec] = (result.record, [c.latency_s for c in calls])
    plain, slow = found["sim"], found["sim?latency=0.02"]
    assert all(latency == 0.0 for latency in plain[1]) and all(
        latency >= 0.02 for latency in slow[1]
    )
    timing = {"started_at", "duration_s", "steps", "node_trace"}
    assert slow[0].model_dump(exclude=timing) == plain[0].model_dump(exclude=timing)
    assert [s.input_tokens for s in slow[0].steps] == [s.input_tokens for s in plain[0].steps]
    for bad in ("sim?latency=-1", "sim?latency=fast", "sim?speed=2", "sim?latency=inf"):
        with pytest.raises(ConfigError):
            model_factory(bad, benchmark=bench)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--executor", "threads"], "unknown executor"),
        (["--workers", "0"], "invalid executor option"),
        (["--ray-address", "127.0.0.1:6379"], "only applies to the Ray executor"),
        (["--cache", "x.db", "--no-cache"], "contradict"),
    ],
)
def test_bad_executor_options_are_user_errors_that_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    argv = ["evolve", "--bench", "mini", "--seed-workflow", "builder-only",
            "--run-dir", str(tmp_path / "r"), *flags]  # fmt: skip
    code = main(argv)
    text = "".join(capsys.readouterr())
    assert code == 2 and says in text and "fix:" in text
    assert not (tmp_path / "r").exists()


def test_the_ray_executor_without_ray_installed_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    argv = ["evolve", "--bench", "mini", "--seed-workflow", "builder-only", "--executor", "ray",
            "--run-dir", str(tmp_path / "r")]  # fmt: skip
    assert main(argv) == 2
    assert "pip install 'loopwright[ray]'" in "".join(capsys.readouterr())
    assert not (tmp_path / "r").exists()


def test_a_worker_whose_parent_is_stopping_exits_quietly(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A worker forked as its parent stops (Ctrl-C: its scratch directory, the worker's log
    directory, already removed) exits with status 1 and prints nothing into the terminal."""
    import multiprocessing

    from loopwright.evaluation._executor_local import _worker_main

    ctx = multiprocessing.get_context("fork")
    _, send = ctx.Pipe(duplex=False)
    gone = tmp_path / "removed-scratch" / "job0-attempt1.log"
    worker = ctx.Process(target=_worker_main, args=(None, None, send, gone, os.getpid()))
    worker.start()
    worker.join(timeout=30)
    assert worker.exitcode == 1
    assert "Traceback" not in capfd.readouterr().err
