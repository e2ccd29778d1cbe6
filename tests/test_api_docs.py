"""docs/api.md's examples run as written, in order, in one namespace, in a scratch directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import loopwright
from loopwright.search import read_progress

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_api_page_has_the_run_evolve_and_resume_examples() -> None:
    text = "\n".join(_blocks())
    for call in ("loopwright.run(", "loopwright.evolve(", "loopwright.resume("):
        assert call in text, call


@pytest.mark.slow
def test_the_api_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in _blocks():
        exec(compile(block, str(DOC), "exec"), namespace)  # our own docs
    events = read_progress(tmp_path / "runs" / "evolve")
    kinds = [e.event for e in events]
    assert kinds[0] == "run_started" and "generation_finished" in kinds
    assert kinds[-1] == "run_resumed"  # the resume of a finished run ran nothing after it
    assert (tmp_path / "runs" / "first" / "config.yaml").is_file()


def test_the_top_level_names_resolve_and_research_is_callable() -> None:
    assert callable(loopwright.run) and callable(loopwright.evolve)
    assert callable(loopwright.resume) and callable(loopwright.research)
    with pytest.raises(AttributeError):
        _ = loopwright.nothing_of_that_name


def test_an_execution_with_a_cache_file_and_no_cache_is_refused(tmp_path: Path) -> None:
    with pytest.raises(loopwright.UsageError, match="contradict"):
        loopwright.Execution(cache=tmp_path / "runs.db", use_cache=False)
    assert loopwright.Execution().use_cache  # the default: a local pool with the run's cache


def test_evolve_refuses_a_run_directory_that_holds_something(tmp_path: Path) -> None:
    from loopwright.search import Budgets, EvolveConfig

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    config = EvolveConfig(
        seed_workflow="builder-only", bench="mini", train_tasks=("l1-slugify",),
        holdout_tasks=("l1-rle-decode",), budgets=Budgets(max_generations=1),
    )  # fmt: skip
    with pytest.raises(loopwright.UsageError, match="not empty"):
        loopwright.evolve(config, tmp_path / "run")
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["notes.txt"]  # nothing written
