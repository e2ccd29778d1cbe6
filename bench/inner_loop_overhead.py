"""Inner-loop overhead: the share of a run's wall time spent outside model calls and test runs.

Runs `builder-only` on every task of a benchmark (default: mini) with a zero-latency scripted
model that reads the instruction, writes the gold solution, runs the visible tests and finishes.
For each run, in one process:
  total  = wall time of `run_task` (workspace, agents, diff, grading, records)
  model  = the model calls' latency (from the events)
  tests  = the visible test runs (run_tests tool calls) + the grader's pytest run
  overhead share = (total - model - tests) / total
Target (issue 3): under 10%.

    python bench/inner_loop_overhead.py [--benchmark mini] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, Message, Reply, ScriptedModel, ToolCall, ToolSpec
from loopwright.records import ModelCall, ToolCallEvent, read_events
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Task, load_benchmark
from loopwright.workflow import builtin_workflow


def gold_script(task: Task, instruction: Path) -> list[Reply]:
    assert task.solution_dir is not None
    writes = [
        ToolCall.make(
            f"w{i}",
            "write_file",
            path=p.relative_to(task.solution_dir).as_posix(),
            content=p.read_text(),
        )
        for i, p in enumerate(sorted(f for f in task.solution_dir.rglob("*") if f.is_file()))
    ]
    return [
        ToolCall.make("r", "read_file", path=str(instruction)),
        tuple(writes),
        ToolCall.make("t", "run_tests"),
        ToolCall.make("f", "finish", summary="gold written"),
    ]


def zero_latency(replies: list[Reply]) -> ScriptedModel:
    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply | None:
        return replies.pop(0) if replies else None

    return ScriptedModel(answer)


def one_run(task: Task, root: Path, rep: int) -> tuple[float, float, float]:
    run_dir = root / task.id / f"rep_{rep}"
    spec = TaskRunSpec(
        workflow=builtin_workflow("builder-only"),
        task=task,
        model=zero_latency(gold_script(task, (run_dir / "instruction.md").resolve())),
        sandbox=default_sandbox(),
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="bench",
        seed=rep,
    )
    start = time.perf_counter()
    record = run_task(spec)
    total = time.perf_counter() - start
    if record.score_end != 1.0:
        raise SystemExit(
            f"{task.id}: the gold script scored {record.score_end} ({record.failure_category})"
        )
    events = read_events(run_dir / "events.jsonl")
    model = sum(e.latency_s for e in events if isinstance(e, ModelCall))
    tests = sum(
        e.duration_s for e in events if isinstance(e, ToolCallEvent) and e.tool == "run_tests"
    )
    tests += json.loads((run_dir / "grade.json").read_text())["pytest_duration_s"]
    return total, model, tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="mini")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bench = load_benchmark(args.benchmark)
    sandbox = default_sandbox()
    print(
        f"inner-loop overhead on {bench.name}: {len(bench.tasks)} tasks x {args.repeat}, sandbox {sandbox.name}"
    )
    print(f"{'task':28} {'total s':>8} {'model s':>8} {'tests s':>8} {'overhead':>9}")
    root = Path(tempfile.mkdtemp(prefix="lw-bench-inner-"))
    sums = [0.0, 0.0, 0.0]
    try:
        one_run(bench.tasks[0], root / "warm", 0)  # untimed: imports and disk caches warm
        for task in bench.tasks:
            runs = [one_run(task, root, rep) for rep in range(args.repeat)]
            total, model, tests = (statistics.median(r[i] for r in runs) for i in range(3))
            sums = [sums[0] + total, sums[1] + model, sums[2] + tests]
            print(
                f"{task.id:28} {total:8.3f} {model:8.3f} {tests:8.3f} {(total - model - tests) / total:9.1%}"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    total, model, tests = sums
    print(
        f"{'all tasks (sum of medians)':28} {total:8.3f} {model:8.3f} {tests:8.3f} {(total - model - tests) / total:9.1%}"
    )


if __name__ == "__main__":
    main()
