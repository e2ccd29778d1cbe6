"""The reflector agent's tools: a generation's training exhaust, read run by run.

`ExhaustTools` indexes the runs of the candidates' training records under a stable reference
(`CANDIDATE/TASK/repK`) and answers six tools: list and filter the runs, read a run's record, a
node's transcript (its events), the diff, the test log, and grep the runs' text. It reads only
the run directories the candidates name (their training runs: holdout runs are not among them,
so the agent cannot read them), and only the files loopwright wrote there, by fixed name: no
argument is ever a path. Every answer is cut at `max_chars`. A bad call (unknown tool, run or
node, malformed arguments) is an answer that says what is wrong, never an exception.
Deterministic given the files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.models import JsonValue, ToolCall, ToolSpec
from loopwright.records import DIFF_FILE, EVENTS_FILE, CycleRecord, read_events
from loopwright.reflection._digest import Candidate

__all__ = ["EXHAUST_TOOLS", "ExhaustTools", "RunRef"]

_RUN: JsonValue = {
    "type": "string",
    "description": "a run reference from list_runs: CANDIDATE/TASK/repK",
}


def _spec(name: str, description: str, **props: JsonValue) -> ToolSpec:
    required: list[JsonValue] = [k for k in props if k == "run" or k == "text"]
    params: dict[str, JsonValue] = {"type": "object", "properties": dict(props)}
    if required:
        params["required"] = required
    return ToolSpec(name, description, params)


EXHAUST_TOOLS: tuple[ToolSpec, ...] = (
    _spec(
        "list_runs",
        "List this generation's training runs (reference, candidate, task, repetition, score, "
        "status, failure category), optionally filtered.",
        candidate={"type": "string"},
        task={"type": "string"},
        failed_only={"type": "boolean", "description": "only runs that did not resolve"},
    ),
    _spec("read_record", "A run's CycleRecord: steps per node, gates, grade, errors.", run=_RUN),
    _spec(
        "read_transcript",
        "A run's events in order (model calls, tool calls with arguments, node ends with "
        "summaries, gate decisions), optionally one node's only.",
        run=_RUN,
        node={"type": "string", "description": "a node id (all nodes when left out)"},
    ),
    _spec("read_diff", "The change the run made to the repository (diff.patch).", run=_RUN),
    _spec(
        "read_test_log",
        "The run's test results: failing hidden tests with their messages, collection "
        "errors, and the visible-test output the gates saw.",
        run=_RUN,
    ),
    _spec(
        "grep",
        "Runs whose events, diff or test messages contain `text` (case-insensitive, literal), "
        "with the matching lines.",
        text={"type": "string"},
        candidate={"type": "string"},
    ),
)


@dataclass(frozen=True, slots=True)
class RunRef:
    """One training run the agent may read: its reference, candidate, record and directory
    (None when the caller gave no directories: only the record can be read)."""

    ref: str
    candidate: str
    record: CycleRecord
    directory: Path | None


class ExhaustTools:
    """The tools over `candidates`' training runs; `read` is the set of run references a tool
    has answered about (the agent may cite only those as evidence)."""

    def __init__(self, candidates: Sequence[Candidate], *, max_chars: int = 6_000) -> None:
        self.max_chars = max_chars
        self.runs: dict[str, RunRef] = {}
        for cand in candidates:
            dirs: Sequence[Path | None] = cand.run_dirs or [None] * len(cand.records)
            for record, directory in zip(cand.records, dirs, strict=True):
                ref = f"{cand.id}/{record.task_id}/rep{record.repetition}"
                self.runs[ref] = RunRef(ref, cand.id, record, directory)
        self.read: set[str] = set()
        self._tools: dict[str, Callable[[dict[str, JsonValue]], str]] = {
            "list_runs": self._list_runs,
            "read_record": self._read_record,
            "read_transcript": self._read_transcript,
            "read_diff": self._read_diff,
            "read_test_log": self._read_test_log,
            "grep": self._grep,
        }

    def call(self, call: ToolCall) -> tuple[bool, str]:
        """(ok, answer) for one tool call; the answer is cut at `max_chars`."""
        tool = self._tools.get(call.name)
        if tool is None:
            return False, f"unknown tool {call.name!r}; the tools are: {', '.join(self._tools)}"
        try:
            text = tool(call.arguments())
        except (ValueError, ConfigError) as exc:  # a bad call or an unreadable file: data
            return False, str(exc)
        except OSError as exc:
            return False, f"cannot read the run's files: {exc}"
        if len(text) > self.max_chars:
            text = text[: self.max_chars] + f"\n[cut at {self.max_chars} characters]"
        return True, text

    def index(self) -> str:
        """One line per run (what `list_runs` answers unfiltered)."""
        return "\n".join(_run_line(r) for r in self.runs.values())

    def _run(self, args: dict[str, JsonValue]) -> RunRef:
        ref = args.get("run")
        found = self.runs.get(ref) if isinstance(ref, str) else None
        if found is None:
            raise _Refused(f"no run {ref!r} in this generation; list_runs gives the references")
        self.read.add(found.ref)
        return found

    def _list_runs(self, args: dict[str, JsonValue]) -> str:
        cand, task = args.get("candidate"), args.get("task")
        failed_only = args.get("failed_only") is True
        rows = [
            r
            for r in self.runs.values()
            if (cand is None or r.candidate == cand)
            and (task is None or r.record.task_id == task)
            and not (failed_only and r.record.resolved)
        ]
        return "\n".join(_run_line(r) for r in rows) or "no run matches"

    def _read_record(self, args: dict[str, JsonValue]) -> str:
        rec = self._run(args).record
        keep = rec.model_dump(
            mode="json", exclude={"eval_artifacts", "experiments", "task_digest", "seed"}
        )
        return json.dumps(keep, indent=1)

    def _read_transcript(self, args: dict[str, JsonValue]) -> str:
        run = self._run(args)
        node = args.get("node")
        path = _file(run, EVENTS_FILE)
        if path is None:
            return "this run kept no events.jsonl"
        lines = []
        for event in read_events(path):
            data = event.model_dump(mode="json", exclude={"t"})
            if node is not None and data.get("node_id") not in (node, None):
                continue
            lines.append(json.dumps(data))
        return "\n".join(lines) or f"no events of node {node!r} in this run"

    def _read_diff(self, args: dict[str, JsonValue]) -> str:
        path = _file(self._run(args), DIFF_FILE)
        text = path.read_text(encoding="utf-8", errors="replace") if path is not None else ""
        return text or "the run changed nothing (no diff)"

    def _read_test_log(self, args: dict[str, JsonValue]) -> str:
        run = self._run(args)
        return "\n".join(_test_log(run))

    def _grep(self, args: dict[str, JsonValue]) -> str:
        text = args.get("text")
        if not isinstance(text, str) or not text.strip():
            raise _Refused("grep needs a non-empty `text` to look for")
        cand = args.get("candidate")
        needle, out = text.lower(), []
        for run in self.runs.values():
            if cand is not None and run.candidate != cand:
                continue
            hits = [line for line in _texts(run) if needle in line.lower()]
            if hits:
                self.read.add(run.ref)
                out.append(f"{run.ref}: " + " | ".join(h.strip()[:200] for h in hits[:5]))
        return "\n".join(out) or f"no run contains {text!r}"


class _Refused(ValueError):
    """A tool call that cannot be answered (shown to the agent)."""


def _run_line(r: RunRef) -> str:
    rec = r.record
    return (
        f"{r.ref}  score={rec.score_end:.2f} resolved={rec.resolved} status={rec.run_status} "
        f"failure={rec.failure_category}"
    )


def _file(run: RunRef, name: str) -> Path | None:
    """`name` in the run's directory when it is a regular file loopwright wrote (a symlink is
    never followed)."""
    if run.directory is None:
        return None
    path = run.directory / name
    return path if path.is_file() and not path.is_symlink() else None


def _test_log(run: RunRef) -> list[str]:
    grade = run.record.grade
    if grade is None:
        return ["the run was not graded"]
    lines = [f"score {grade.score:.2f}, resolved {grade.resolved}, invalid {grade.invalid}"]
    lines += [f"FAILED {t.id}: {t.message}" for t in grade.tests if not t.passed]
    lines += [f"collection error: {e}" for e in grade.collection_errors]
    if grade.feedback:
        lines.append(f"evaluator feedback: {grade.feedback}")
    path = _file(run, EVENTS_FILE)
    for event in read_events(path) if path is not None else []:
        if event.type == "gate_decision" and event.reason:
            lines.append(f"gate {event.node_id} ({event.decision}): {event.reason}")
    return lines


def _texts(run: RunRef) -> list[str]:
    """The lines grep searches: the events, the diff and the test log."""
    lines = _test_log(run)
    for name in (EVENTS_FILE, DIFF_FILE):
        path = _file(run, name)
        if path is not None:
            lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines
