"""Reflectors: the meta model's reply validated, retried with the error, the digest fallback,
dropped and refused suggestions, the empty generation, and the offline rules."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from loopwright.models import Message, ScriptedModel, ToolSpec
from loopwright.reflection import (
    Candidate,
    Contrast,
    ModelReflector,
    OfflineReflector,
    ReplyError,
    Vocabulary,
    check_body,
    describe_report,
    parse_reply,
    prompt_template,
    write_lesson,
)
from loopwright.reflection._rules import _confidence as contrast_confidence
from loopwright.workflow import AgentNode, add_lesson
from tests.reflection.records import SEED, generation, record, with_gate

VOCAB = Vocabulary(
    operators=("node_insert", "gate_add", "prompt_mutate", "node_remove", "crossover"),
    roles=("researcher", "reviewer"),
)


def ev(*candidates: str, count: int = 1) -> dict[str, Any]:
    return {"candidates": list(candidates), "tasks": ["t1"], "count": count}


def body(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "failure_patterns": [{"description": "TypeError on fire()", "kind": "signatures",
                              "evidence": ev("seed", count=2)}],
        "success_patterns": [{"description": "a gate re-runs the builder", "kind": "reloop_gate",
                              "evidence": ev("plus_gate")}],
        "mutation_suggestions": [{"operator": "gate_add", "target": "builder", "kind": "add_gate",
                                  "rationale": "RELOOP fixed t1", "confidence": 0.9,
                                  "evidence": ev("plus_gate")}],
        "prompt_improvements": [{"target": "builder", "kind": "verification",
                                 "text": "Verify every example.", "evidence": ev("seed")}],
        "structural_recommendations": [{"action": "insert_node", "target": "builder",
                                        "role": "researcher", "evidence": ev("plus_study")}],
    }  # fmt: skip
    data.update(over)
    return data


class Recorder:
    """A scripted meta model that replies from a list and keeps every conversation."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[list[Message]] = []
        self.model = ScriptedModel(self._reply, name="meta-test")

    def _reply(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        self.calls.append(list(messages))
        return self.replies.pop(0)


def test_a_valid_reply_becomes_the_report() -> None:
    meta = Recorder([f"```json\n{json.dumps(body())}\n```"])
    report = ModelReflector(meta.model, VOCAB).reflect(3, generation())
    assert (report.source, report.model, report.generation) == ("model", "meta-test", 3)
    assert [a.ok for a in report.attempts] == [True]
    assert report.failure_patterns[0].evidence.count == 2
    # the recommendation and the improvement become suggestions too, numbered
    ops = [(s.id, s.operator, s.kind) for s in report.mutation_suggestions]
    assert ops == [("s1", "gate_add", "add_gate"), ("s2", "node_insert", "insert_researcher"),
                   ("s3", "prompt_mutate", "prompt_verification")]  # fmt: skip
    prompt = meta.calls[0][0].content
    assert "generation 3" in prompt and '"candidates"' in prompt and "gate_add" in prompt


def test_malformed_json_is_retried_with_the_validation_error() -> None:
    meta = Recorder(["here you go: {not json}", json.dumps(body())])
    report = ModelReflector(meta.model, VOCAB).reflect(0, generation())
    assert report.source == "model"
    assert [a.ok for a in report.attempts] == [False, True]
    assert "not valid JSON" in (report.attempts[0].error or "")
    retry = meta.calls[1]
    assert [m.role for m in retry] == ["user", "assistant", "user"]
    assert "not valid JSON" in retry[2].content and retry[1].content == "here you go: {not json}"


def test_replies_that_keep_failing_fall_back_to_the_digest() -> None:
    wrong_operator = body(mutation_suggestions=[
        {"operator": "teleport", "target": "builder", "evidence": ev("seed")}])  # fmt: skip
    meta = Recorder(["no", json.dumps({"failure_patterns": "x"}), json.dumps(wrong_operator)])
    report = ModelReflector(meta.model, VOCAB, max_retries=2).reflect(0, generation())
    assert report.source == "digest_fallback"
    assert [a.ok for a in report.attempts] == [False, False, False]
    assert "teleport" in (report.attempts[2].error or "")
    assert "failed validation" in report.note and "offline rules" in report.note
    assert report.failure_patterns and report.mutation_suggestions  # built from the digest
    assert len(meta.calls) == 3


def test_max_loops_is_for_gate_add_only() -> None:
    misplaced = body(
        mutation_suggestions=[
            {"operator": "node_remove", "target": "builder", "max_loops": 2, "evidence": ev("seed")}
        ]
    )
    fixed = body(
        mutation_suggestions=[
            {"operator": "gate_add", "target": "builder", "max_loops": 2, "evidence": ev("seed")}
        ]
    )
    meta = Recorder([json.dumps(misplaced), json.dumps(fixed)])  # fmt: skip
    report = ModelReflector(meta.model, VOCAB).reflect(0, generation())
    assert [a.ok for a in report.attempts] == [False, True]
    assert "max_loops is only for gate_add" in (report.attempts[0].error or "")
    assert report.mutation_suggestions[0].max_loops == 2


def test_a_suggestion_naming_a_missing_node_is_dropped_with_the_reason() -> None:
    reply = body(mutation_suggestions=[
        {"operator": "node_remove", "target": "planner", "evidence": ev("seed")},
        {"operator": "gate_add", "target": "builder", "evidence": ev("plus_gate")},
    ])  # fmt: skip
    report = ModelReflector(Recorder([json.dumps(reply)]).model, VOCAB).reflect(0, generation())
    assert report.source == "model"
    assert [s.target for s in report.mutation_suggestions if s.operator != "prompt_mutate"] == [
        "builder", "builder"]  # fmt: skip
    (dropped,) = report.dropped
    assert "mutation_suggestions[0]" in dropped.item and "'planner'" in dropped.reason
    assert "no candidate has" in dropped.reason
    assert "dropped (1)" in describe_report(report)


def test_a_suggestion_on_a_frozen_node_is_refused() -> None:
    cands = [Candidate(id="seed", workflow=with_gate(SEED, frozen=True),
                       records=(record("t1", 0.5),))]  # fmt: skip
    reply = body(
        failure_patterns=[], success_patterns=[], prompt_improvements=[],
        structural_recommendations=[{"action": "remove_gate", "target": "gate_verify",
                                     "evidence": ev("seed")}],
        mutation_suggestions=[{"operator": "gate_add", "target": "builder", "evidence": ev("seed")}],
    )  # fmt: skip
    report = ModelReflector(Recorder([json.dumps(reply)]).model, VOCAB).reflect(0, cands)
    (refused,) = report.dropped
    assert refused.item.startswith("structural_recommendations[0]")
    assert refused.reason.startswith("refused") and "frozen" in refused.reason
    assert all(s.target != "gate_verify" for s in report.mutation_suggestions)


def test_evidence_must_cite_known_candidates_and_tasks() -> None:
    bad = body(success_patterns=[{"description": "x", "evidence": ev("ghost")}])
    with pytest.raises(ReplyError, match="unknown candidates"):
        check_body(parse_reply(json.dumps(bad)), generation(), VOCAB)
    braces = body(
        prompt_improvements=[{"target": "builder", "text": "use {x}", "evidence": ev("seed")}]
    )
    with pytest.raises(ReplyError, match="braces"):
        check_body(parse_reply(json.dumps(braces)), generation(), VOCAB)


def test_an_empty_generation_makes_no_call_and_a_clear_record() -> None:
    meta = Recorder([])
    cands = [Candidate(id="a", workflow=SEED, records=())]
    for reflector in (ModelReflector(meta.model, VOCAB), OfflineReflector(VOCAB)):
        report = reflector.reflect(2, cands)
        assert report.source == "empty" and report.empty
        assert "no evaluated training runs" in report.note and "no model call" in report.note
    assert meta.calls == []


def test_offline_rules_follow_the_digest() -> None:
    report = OfflineReflector(VOCAB).reflect(0, generation())
    assert report.source == "offline_rules" and report.simulated
    kinds = {s.kind: s for s in report.mutation_suggestions}
    assert {"add_gate", "insert_researcher", "prompt_verification", "crossover"} <= set(kinds)
    # effect 0.25 on the gate contrast, but one gated candidate: one comparison, half support
    assert kinds["add_gate"].confidence == 0.5
    assert kinds["add_gate"].evidence.candidates == ["plus_gate"]
    assert kinds["add_gate"].max_loops == 3 and kinds["insert_researcher"].max_loops is None
    first, second = report.prompt_improvements  # the two kinds the seed's runs show
    assert (first.target, first.kind, second.kind) == ("builder", "verification", "signatures")
    assert first.text.startswith("Earlier runs had failed assertions") and "(2 runs" in first.text
    assert "`AssertionError: assert <s> == <s>` in test_fold" in first.text  # from the exhaust
    assert "unexpected keyword argument" in second.text
    helped = [p for p in report.success_patterns if p.kind == "reloop_helped"]
    assert helped and helped[0].evidence.candidates == ["plus_gate"]
    assert OfflineReflector(VOCAB).reflect(0, generation()) == report  # deterministic


def _contrast(n_with: int, n_without: int, effect: float) -> Contrast:
    return Contrast(
        feature="reloop_gate", text="gate", with_ids=[f"w{i}" for i in range(n_with)],
        without_ids=[f"o{i}" for i in range(n_without)], with_mean=0.5 + effect,
        without_mean=0.5, with_runs=3 * n_with, without_runs=3 * n_without,
    )  # fmt: skip


def test_confidence_in_a_contrast_grows_with_the_candidates_behind_it() -> None:
    one_vs_one = contrast_confidence(_contrast(1, 1, 0.25))
    assert one_vs_one == 0.5  # a large gap between two candidates is still one comparison
    assert contrast_confidence(_contrast(1, 5, 0.25)) == one_vs_one  # the smaller side counts
    ladder = [contrast_confidence(_contrast(m, m, 0.25)) for m in (1, 2, 3, 9)]
    assert ladder == sorted(ladder) and ladder[-1] == 0.9
    assert contrast_confidence(_contrast(3, 3, 0.05)) < contrast_confidence(_contrast(3, 3, 0.25))


def test_the_prompt_template_ships_with_the_package() -> None:
    text = prompt_template().template
    for field in ("$digest", "$operators", "$roles", "$generation"):
        assert field in text
    assert "$error" in prompt_template("retry.md").template


def test_a_lesson_that_helped_is_proposed_to_the_best_and_a_held_kind_is_not_repeated() -> None:
    seed, study, gate = generation()
    lesson = "Read the failing test before you change the code."
    builder = gate.workflow.nodes[0]
    assert isinstance(builder, AgentNode)
    taught = builder.model_copy(update={"prompt": add_lesson(builder.prompt, lesson)})
    study = replace(study, workflow=study.workflow.model_copy(
        update={"nodes": tuple(taught if n.id == "builder" else n for n in study.workflow.nodes)}
    ))  # fmt: skip
    report = OfflineReflector(VOCAB).reflect(0, [seed, study, gate])
    measured = [p for p in report.prompt_improvements if p.kind == "measured"]
    assert [(p.target, p.text) for p in measured] == [("builder", lesson)]
    assert measured[0].evidence.candidates == ["plus_study"]
    # the best (plus_gate) already holds a lesson on verification: none is written again
    held = add_lesson(builder.prompt, write_lesson("verification", 1, "", ""))
    gate = replace(gate, workflow=gate.workflow.model_copy(
        update={"nodes": (builder.model_copy(update={"prompt": held}), *gate.workflow.nodes[1:])}
    ))  # fmt: skip
    kinds = [p.kind for p in OfflineReflector(VOCAB).reflect(0, [seed, gate]).prompt_improvements]
    assert "verification" not in kinds and "signatures" in kinds


def test_lessons_quote_the_exhaust_without_braces() -> None:
    text = write_lesson("edge_cases", 3, "KeyError: {'a': 1}", "tests/t.py::test_empty")
    assert "{" not in text and "}" not in text
    assert "`KeyError: ('a': 1)` in test_empty" in text and "(3 runs" in text
