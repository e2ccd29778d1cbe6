"""The reflector agent: it reads the runs' exhaust with tools (list, record, transcript, diff,
test log, grep) before it answers, cites only runs it read, is bounded in turns, cannot reach
anything but the generation's training runs, and falls back to the offline rules when it gives
no usable answer. Driven by a ScriptedModel."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.models import Message, ModelError, ScriptedModel, ToolCall, ToolSpec
from loopwright.reflection import (
    EXHAUST_TOOLS,
    AgentReflector,
    Candidate,
    ExhaustTools,
    Vocabulary,
    load_reflection,
    write_reflection,
)
from loopwright.search import parse_config
from tests.reflection.records import generation

VOCAB = Vocabulary(
    operators=("node_insert", "gate_add", "prompt_mutate", "node_remove", "crossover"),
    roles=("researcher", "reviewer"),
)
SEED_T1 = "seed/t1/rep0"
DIFF = "--- a/pkg/machine.py\n+++ b/pkg/machine.py\n+    def fire(self):  # no amount\n"
EVENTS = [
    {"t": 0.1, "type": "node_start", "node_id": "builder", "kind": "agent", "role": "builder",
     "attempt": 1},
    {"t": 0.2, "type": "tool_call", "node_id": "builder", "attempt": 1, "turn": 1,
     "tool": "write_file", "arguments": "{\"path\": \"pkg/machine.py\"}", "ok": True,
     "error": None, "output_chars": 10, "duration_s": 0.01},
    {"t": 0.3, "type": "node_end", "node_id": "builder", "attempt": 1, "status": "ok",
     "duration_s": 0.2, "error": None, "produced": ["pkg/machine.py"],
     "summary": "wrote fire() without the amount keyword"},
]  # fmt: skip


def with_exhaust(tmp_path: Path) -> list[Candidate]:
    """The synthetic generation, each record with a run directory; the seed's run on t1 holds
    an events.jsonl and a diff.patch."""
    out = []
    for cand in generation():
        dirs = []
        for rec in cand.records:
            d = tmp_path / cand.id / rec.task_id / f"rep_{rec.repetition}"
            d.mkdir(parents=True)
            dirs.append(d)
        out.append(replace(cand, run_dirs=tuple(dirs)))
    seed_t1 = tmp_path / "seed" / "t1" / "rep_0"
    (seed_t1 / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    (seed_t1 / "diff.patch").write_text(DIFF)
    return out


def ev(*runs: str) -> dict[str, Any]:
    return {"candidates": ["seed"], "tasks": ["t1"], "runs": list(runs), "count": 1}


def answer(*runs: str) -> str:
    return json.dumps(
        {
            "failure_patterns": [
                {"description": "fire() lost its amount keyword", "kind": "signature",
                 "evidence": ev(*runs)}
            ],
            "success_patterns": [],
            "mutation_suggestions": [
                {"operator": "node_insert", "target": "builder", "kind": "insert_researcher",
                 "rationale": "read the callers first", "confidence": 0.6, "role": "researcher",
                 "max_loops": None, "evidence": ev(*runs)}
            ],
            "prompt_improvements": [],
            "structural_recommendations": [],
        }
    )  # fmt: skip


def call(n: int, name: str, **args: Any) -> ToolCall:
    return ToolCall.make(f"c{n}", name, **args)


class Recorder:
    """A scripted model over a list of replies that keeps what it was sent each call."""

    def __init__(self, replies: Sequence[Any]) -> None:
        self.sent: list[tuple[list[Message], list[str]]] = []
        self.model = ScriptedModel(self._answer, name="scripted-meta")
        self.replies = list(replies)

    def _answer(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Any:
        self.sent.append((list(messages), [t.name for t in tools]))
        return self.replies.pop(0) if self.replies else None

    def tool_answers(self) -> list[str]:
        return [m.content for m in self.sent[-1][0] if m.role == "tool"]


def test_agent_reads_the_runs_with_tools_before_it_answers(tmp_path: Path) -> None:
    rec = Recorder(
        [
            call(1, "list_runs", failed_only=True),
            (call(2, "read_test_log", run=SEED_T1), call(3, "read_diff", run=SEED_T1)),
            (call(4, "read_transcript", run=SEED_T1, node="builder"),
             call(5, "grep", text="UNEXPECTED keyword")),
            answer(SEED_T1),
        ]
    )  # fmt: skip
    report = AgentReflector(rec.model, VOCAB).reflect(0, with_exhaust(tmp_path))
    assert report.source == "agent" and report.model == "scripted-meta"
    assert [u.tool for u in report.tool_calls] == [
        "list_runs", "read_test_log", "read_diff", "read_transcript", "grep",
    ]  # fmt: skip
    assert all(u.ok for u in report.tool_calls)
    assert report.failure_patterns[0].evidence.runs == [SEED_T1]
    assert report.mutation_suggestions[0].operator == "node_insert"
    # What the tools answered is the exhaust on disk, read run by run.
    listing, log, diff, transcript, grep = rec.tool_answers()
    assert SEED_T1 in listing and "plus_gate/t1/rep0" not in listing  # resolved runs filtered
    assert "unexpected keyword argument 'amount'" in log and "FAILED tests/a.py::test_fire" in log
    assert diff == DIFF
    assert "wrote fire() without the amount keyword" in transcript
    assert grep.startswith("seed/t1/rep0:") and "plus_study" not in grep
    # Tools were offered on every call; the prompt holds the run index, not the digest.
    assert all(tools == [t.name for t in EXHAUST_TOOLS] for _, tools in rec.sent)
    first = rec.sent[0][0][0].content
    assert "plus_gate/t2/rep0" in first and "<<<DIGEST" not in first
    # The report is written and read back (schema 2) with its tool calls.
    back = load_reflection(write_reflection(tmp_path, report))
    assert back.tool_calls == report.tool_calls and back.source == "agent"


def test_an_answer_citing_a_run_it_did_not_read_is_sent_back(tmp_path: Path) -> None:
    rec = Recorder(
        [
            call(1, "read_record", run=SEED_T1),
            answer(SEED_T1, "seed/t2/rep0"),  # t2 was never read
            answer(SEED_T1, "nosuch/t9/rep0"),  # a run that does not exist
            answer(SEED_T1),
        ]
    )
    report = AgentReflector(rec.model, VOCAB).reflect(0, with_exhaust(tmp_path))
    assert report.source == "agent"
    assert [a.ok for a in report.attempts] == [False, False, True]
    assert "did not read: seed/t2/rep0" in (report.attempts[0].error or "")
    assert "do not exist: nosuch/t9/rep0" in (report.attempts[1].error or "")
    retry = rec.sent[2][0][-1]
    assert retry.role == "user" and "did not read" in retry.content


def test_the_tools_reach_only_the_generations_training_runs(tmp_path: Path) -> None:
    """A hostile agent names paths, holdout runs and a symlinked diff: nothing outside the
    candidates' run directories, and no file but the exhaust's own, is ever read."""
    cands = with_exhaust(tmp_path)
    secret = tmp_path / "holdout" / "t9" / "rep_0"
    secret.mkdir(parents=True)
    (secret / "diff.patch").write_text("HOLDOUT-SECRET\n")
    (tmp_path / "plus_gate" / "t1" / "rep_0" / "diff.patch").symlink_to(secret / "diff.patch")
    tools = ExhaustTools(cands)
    probes = [
        call(1, "read_diff", run="../holdout/t9/rep_0"),
        call(2, "read_diff", run=str(secret)),
        call(3, "read_diff", run="holdout/t9/rep0"),
        call(4, "read_file", path=str(secret / "diff.patch")),
        call(5, "read_transcript", run=SEED_T1, node="builder\x00"),
    ]
    answers = [tools.call(p) for p in probes]
    assert [ok for ok, _ in answers[:4]] == [False, False, False, False]
    assert "unknown tool 'read_file'" in answers[3][1]
    assert all("HOLDOUT-SECRET" not in text for _, text in answers)
    ok, linked = tools.call(call(6, "read_diff", run="plus_gate/t1/rep0"))
    assert ok and "HOLDOUT-SECRET" not in linked  # the symlink is not followed
    ok, found = tools.call(call(7, "grep", text="HOLDOUT-SECRET"))
    assert ok and found == "no run contains 'HOLDOUT-SECRET'"
    ok, bad = tools.call(ToolCall("c8", "read_diff", "not json"))
    assert not ok and "not valid JSON" in bad
    assert tools.read == {"plus_gate/t1/rep0", SEED_T1}


def test_the_turn_budget_ends_with_an_answer_or_the_offline_rules(tmp_path: Path) -> None:
    """A model that only ever calls tools gets `max_turns` turns of them, is then offered no
    tool and told to answer; when it still does not, the offline rules report, with every
    tool call and attempt kept. The number of calls is bounded."""
    sent: list[list[str]] = []

    def forever(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ToolCall:
        sent.append([t.name for t in tools])
        return call(len(sent), "list_runs")

    model = ScriptedModel(forever, name="scripted-meta")
    report = AgentReflector(model, VOCAB, max_turns=3, max_retries=1).reflect(
        0, with_exhaust(tmp_path)
    )
    assert report.source == "digest_fallback" and report.mutation_suggestions
    assert len(sent) == 3 + 2  # three tool turns, then two answers (one retry)
    assert all(sent[:3]) and sent[3:] == [[], []]
    assert len(report.tool_calls) == 3 and [a.ok for a in report.attempts] == [False, False]
    assert "gave no usable answer" in report.note


def test_a_failed_call_falls_back_to_the_offline_rules(tmp_path: Path) -> None:
    def broken(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        raise ModelError("HTTP 500 from the provider")

    report = AgentReflector(ScriptedModel(broken), VOCAB).reflect(0, with_exhaust(tmp_path))
    assert report.source == "digest_fallback"
    assert "HTTP 500" in (report.attempts[0].error or "")


def test_an_empty_generation_makes_no_call() -> None:
    model = ScriptedModel([])
    cands = [replace(c, records=()) for c in generation()]
    assert AgentReflector(model, VOCAB).reflect(2, cands).source == "empty"


def test_the_agent_reflector_refuses_an_offline_meta_model() -> None:
    base = {"seed_workflow": "builder-only", "bench": "mini", "strategy": "guided"}
    with pytest.raises(ConfigError, match="needs a meta model that calls tools"):
        parse_config({**base, "model": "sim", "reflection": {"reflector": "agent"}})
    config = parse_config(
        {**base, "model": "sim", "models": {"roles": {"meta": "openai/x"}},
         "reflection": {"reflector": "agent"}}
    )  # fmt: skip
    assert config.reflection.reflector == "agent"
