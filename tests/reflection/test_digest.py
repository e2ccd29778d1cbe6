"""The exhaust digest: grouped errors, RELOOP help, contrasts, the size cap, the taxonomy."""

from __future__ import annotations

from dataclasses import replace

from loopwright.reflection import (
    build_digest,
    digest_chars,
    fit_digest,
    message_kind,
    normalise_message,
    workflow_features,
)
from loopwright.workflow import add_lesson
from tests.reflection.records import SEED, generation, with_gate, with_study


def test_error_messages_are_grouped_by_normalised_text() -> None:
    seed = build_digest(0, generation()).candidate("seed")
    assert seed is not None
    builder = next(n for n in seed.nodes if n.node_id == "builder")
    top = builder.errors[0]
    assert top.text == "TypeError: Machine.fire() got an unexpected keyword argument <s>"
    assert (top.count, top.tasks, top.kind) == (2, ["t1"], "signatures")
    assert builder.failure_categories == {"tests_failing": 2}


def test_reloop_usage_says_whether_it_helped() -> None:
    gate = build_digest(0, generation()).candidate("plus_gate")
    assert gate is not None
    (loop,) = gate.reloops
    assert (loop.runs, loop.runs_with_reloop, loop.helped, loop.exhausted) == (2, 1, 1, 0)
    builder = next(n for n in gate.nodes if n.node_id == "builder")
    assert any("unexpected keyword argument" in e.text for e in builder.errors)
    assert not any(e.text.startswith("- diff") for e in builder.errors)


def test_contrasts_state_means_with_and_without_a_feature() -> None:
    digest = build_digest(0, generation())
    study = next(c for c in digest.contrasts if c.feature == "study")
    assert (study.with_ids, study.with_mean, study.without_mean) == (["plus_study"], 0.875, 0.8125)
    assert study.text.startswith("candidates with a study node")
    assert "(n=1 candidates, 2 runs)" in study.text and "without: 0.81 (n=2" in study.text


def test_per_test_outcomes_across_candidates_and_cost_per_role() -> None:
    digest = build_digest(0, generation())
    t2 = next(t for t in digest.tasks if t.task_id == "t2")
    fold = t2.failing_tests[0]
    assert (fold.test_id, fold.failed, fold.runs) == ("tests/b.py::test_fold", 2, 2)
    assert fold.candidates == ["plus_study", "seed"] and fold.kind == "verification"
    study = digest.candidate("plus_study")
    assert study is not None and set(study.cost_by_role) == {"builder"}
    assert study.tokens_by_role == {"builder": 240, "researcher": 240}


def test_the_digest_is_deterministic() -> None:
    assert build_digest(0, generation()) == build_digest(0, generation())


def test_the_size_cap_is_kept_and_says_what_it_left_out() -> None:
    many = [replace(c, id=f"{c.id}_{i}") for i in range(4) for c in generation()]
    full = build_digest(0, many)
    cap = digest_chars(full) // 3
    small = fit_digest(full, cap)
    assert digest_chars(small) <= cap
    assert small.omitted and all(isinstance(n, str) and n for n in small.omitted)
    assert small.contrasts == full.contrasts[: len(small.contrasts)]
    assert fit_digest(full, 10 * digest_chars(full)) == full


def test_a_cap_too_small_to_reach_says_so() -> None:
    small = fit_digest(build_digest(0, generation()), 500)
    assert small.omitted[-1] == "the digest still exceeds the cap of 500 characters"


def test_features_come_from_structure_not_ids() -> None:
    assert workflow_features(SEED) == ()
    assert "study" in workflow_features(with_study())
    assert "reloop_gate" in workflow_features(with_gate())


def test_taxonomy_kinds_and_normalisation() -> None:
    assert message_kind("ModuleNotFoundError: No module named 'x'") == "imports"
    assert message_kind("TypeError: f() missing 1 required positional argument") == "signatures"
    assert message_kind("assert 0 == 1", "t.py::test_empty_input") == "edge_cases"
    assert message_kind("AssertionError: assert 2 == 3", "t.py::test_sum") == "verification"
    assert message_kind("all good") is None
    assert normalise_message("E  KeyError at /tmp/x/y/z.py line 12: 'k'") == (
        "E KeyError at <path> line <n>: <s>"
    )


def test_a_lesson_every_writer_holds_is_a_feature_and_gets_a_contrast() -> None:
    builder = SEED.nodes[0]
    taught = builder.model_copy(update={"prompt": add_lesson(builder.prompt, "Run the tests.")})
    lesson_wf = SEED.model_copy(update={"nodes": (taught, *SEED.nodes[1:])})
    assert workflow_features(lesson_wf) == ("lesson:Run the tests.",)
    cands = generation()
    cands = [cands[0], replace(cands[1], workflow=lesson_wf)]
    contrast = build_digest(0, cands).contrasts
    lesson = next(c for c in contrast if c.feature == "lesson:Run the tests.")
    assert lesson.with_ids == [cands[1].id] and lesson.without_ids == [cands[0].id]
    assert 'the lesson "Run the tests." in every writer prompt' in lesson.text
