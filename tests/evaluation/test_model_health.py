"""A run whose model never answers stops at once with exit 1 and the first error (redacted),
instead of recording every run as agent_error and naming a winner at 0.00: against a loopback
OpenAI-compatible server that answers every call with 401."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ModelUnavailableError
from loopwright.evaluation._health import ModelHealth, model_never_answered
from loopwright.records import CycleRecord
from tests.models.test_gateway_server import DUMMY_KEY, Failure, Loopback, loopback

__all__ = ["loopback"]  # the fixture, re-exported for pytest

TASKS = "l1-slugify,l1-csv-row,l1-rle-decode,l1-roman-numerals,l1-semver-compare"


def deny_every_call(loopback: Loopback, n: int = 40) -> None:
    # The provider echoes the key it was sent, as real ones do in part: it must not reach
    # the message or the disk.
    message = f"Incorrect API key provided: {DUMMY_KEY}"
    loopback.script.answers.extend(Failure(401, message) for _ in range(n))


def test_run_with_a_rejected_key_fails_fast_with_the_first_error(
    loopback: Loopback,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    deny_every_call(loopback)
    run_dir = tmp_path / "run"
    code = main(["run", "builder-only", "--bench", "mini", "--tasks", TASKS, "--sandbox", "local",
                 "--model", "openai/loopback-coder", "--api-base", loopback.url,
                 "--run-dir", str(run_dir), "--no-report"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    assert "no call to the model openai/loopback-coder succeeded" in err
    assert "AuthenticationError" in err and "Traceback" not in err
    assert DUMMY_KEY not in err + out
    # it stopped after the threshold: 3 runs of 5, one (never retried) call each
    assert len(loopback.script.requests) == 3
    assert not (run_dir / "summary.json").exists()  # no table of zeros, no winner
    for path in (p for p in run_dir.rglob("*") if p.is_file()):
        assert DUMMY_KEY not in path.read_text(encoding="utf-8", errors="replace"), path


def test_a_single_run_with_a_rejected_key_exits_1_not_0(
    loopback: Loopback,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    deny_every_call(loopback)
    code = main(["run", "builder-only", "--bench", "mini", "--tasks", "l1-slugify",
                 "--sandbox", "local", "--model", "openai/loopback-coder",
                 "--api-base", loopback.url, "--run-dir", str(tmp_path / "r"), "--no-report"])  # fmt: skip
    assert code == 1 and "first 1 run" in capsys.readouterr().err


def test_evolve_with_a_rejected_key_names_no_winner(
    loopback: Loopback,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    # evolve has no --api-base: LiteLLM's environment variable points it at the loopback server
    monkeypatch.setenv("OPENAI_API_BASE", loopback.url)
    monkeypatch.setenv("OPENAI_BASE_URL", loopback.url)
    deny_every_call(loopback)
    code = main(["evolve", "--bench", "mini", "--seed-workflow", "builder-only",
                 "--model", "openai/loopback-coder", "--sandbox", "local", "--workers", "1",
                 "--run-dir", str(tmp_path / "e"), "--no-report"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    assert "no call to the model" in err and "winner" not in out
    assert len(loopback.script.requests) == 3


def _record(turns: int, errors: int, *, simulated: bool = False) -> CycleRecord:
    step = {
        "node_id": "builder", "role": "builder", "attempt": 1, "started_t": 0.0,
        "duration_s": 0.0, "status": "error" if errors else "ok", "succeeded": not errors,
        "error": "openai/x (auth): AuthenticationError: nope" if errors else None,
        "turns": turns, "model_errors": errors, "tool_calls": 0, "tool_errors": 0,
        "input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "cost_usd": None,
        "notes_chars": 0, "read_instruction": False, "produced": [], "summary": "",
    }  # fmt: skip
    return CycleRecord.model_validate(
        {
            "run_id": "r", "task_id": "t", "task_digest": "d", "workflow_name": "w",
            "workflow_hash": "h", "model": "openai/x", "simulated": simulated, "seed": 0,
            "repetition": 0, "started_at": "", "run_status": "completed", "run_error": None,
            "score_start": 0.0, "score_end": 0.0, "score_delta": 0.0, "steps": [step],
            "node_trace": {}, "gate_loops": {}, "grade": None, "failure_category": "agent_error",
            "read_instruction": False, "diff_files": [], "errors": [], "eval_artifacts": [],
            "input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "total_cost_usd": None,
            "cost_by_agent": {}, "duration_s": 0.0,
            "experiments": [], "frozen_nodes": [], "mutable_node_ids": [],
        }
    )  # fmt: skip


def test_health_stops_at_the_threshold_of_dead_runs() -> None:
    health = ModelHealth(threshold=3)
    health.see(_record(1, 1))
    health.see(_record(2, 2))
    with pytest.raises(ModelUnavailableError, match=r"first 3 runs.*AuthenticationError"):
        health.see(_record(1, 1))


def test_one_answered_call_disarms_the_watch_for_good() -> None:
    health = ModelHealth(threshold=2)
    health.see(_record(1, 1))
    health.see(_record(3, 2))  # one call of three answered: the model works
    for _ in range(5):
        health.see(_record(1, 1))
    health.check_finished()


def test_simulated_and_call_free_runs_are_no_evidence() -> None:
    health = ModelHealth(threshold=1)
    health.see(_record(1, 1, simulated=True))  # a script that fails on purpose
    health.see(_record(0, 0))  # no model call at all
    health.check_finished()
    assert model_never_answered(_record(2, 2)) and not model_never_answered(_record(2, 1))
    with pytest.raises(ModelUnavailableError):
        health.see(_record(1, 1))
