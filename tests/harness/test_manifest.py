"""The manifest is validated against the live loop registry in both directions, and `ab plan`
prints the matrix and the run count without spending anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.harness import BriefSuite, Manifest, live_loops, load_manifest, make_plan

TIERS = {"small": "openai/a", "medium": "openai/b", "large": "anthropic/c"}
REGISTERED = ("hybrid", "plan_execute", "react")


def manifest(**fields: object) -> Manifest:
    return Manifest.model_validate({"tiers": TIERS, **fields})


def test_an_unknown_loop_is_refused_with_its_name(suite: BriefSuite) -> None:
    with pytest.raises(ConfigError) as err:
        make_plan(
            manifest(loops=["react", "plan_execute", "hybrid", "reactt"]),
            registered=REGISTERED,
            suite=suite,
        )
    assert "names loops that are not registered: reactt" in err.value.what
    assert "leaves out" not in err.value.what


def test_a_registered_loop_left_out_is_refused_with_its_name(suite: BriefSuite) -> None:
    with pytest.raises(ConfigError) as err:
        make_plan(manifest(loops=["react", "hybrid"]), registered=REGISTERED, suite=suite)
    assert "leaves out registered loops: plan_execute" in err.value.what


def test_both_directions_are_reported_together(suite: BriefSuite) -> None:
    with pytest.raises(ConfigError) as err:
        make_plan(manifest(loops=["react", "ghost"]), registered=REGISTERED, suite=suite)
    assert err.value.what == (
        "the manifest names loops that are not registered: ghost; and leaves out registered "
        "loops: hybrid, plan_execute"
    )


def test_all_expands_to_every_registered_loop_and_counts_runs(suite: BriefSuite) -> None:
    plan = make_plan(manifest(), registered=REGISTERED, suite=suite)
    assert plan.loops == REGISTERED
    assert [b.id for b in plan.briefs] == ["simple-wordfreq", "medium-units", "complex-calc"]
    assert plan.run_count == 3 * 3 * 3 * 3 == len(list(plan.cells()))
    # Every loop of one (brief, tier, repetition) shares its seed: common random numbers.
    first = list(plan.cells())[:3]
    assert {c.seed for c in first} == {first[0].seed} and {c.loop for c in first} == set(REGISTERED)
    explicit = make_plan(manifest(loops=list(REGISTERED)), registered=REGISTERED, suite=suite)
    assert explicit.digest == plan.digest


def test_tiers_bind_explicit_provider_models(suite: BriefSuite) -> None:
    plan = make_plan(
        manifest(), registered=REGISTERED, suite=suite, tier_overrides=["small=openai/qwen-7b"]
    )
    assert dict(plan.tiers)["small"] == "openai/qwen-7b"
    assert {c.model for c in plan.cells() if c.tier == "small"} == {"openai/qwen-7b"}
    with pytest.raises(ConfigError, match="names no provider"):
        make_plan(manifest(), registered=REGISTERED, suite=suite, tier_overrides=["large=gpt4"])
    with pytest.raises(ConfigError, match="unknown brief"):
        make_plan(manifest(briefs=["nope"]), registered=REGISTERED, suite=suite)


def test_the_bundled_manifest_measures_every_live_loop(suite: BriefSuite) -> None:
    loaded, source = load_manifest(None)
    plan = make_plan(loaded, registered=live_loops(), suite=suite)
    assert source == "bundled"
    assert plan.loops == live_loops() and len(plan.tiers) == 3 and plan.repetitions == 3
    assert plan.run_count == len(live_loops()) * 27


def test_a_missing_manifest_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_manifest(tmp_path / "nope.yaml")


def test_ab_plan_prints_the_matrix_and_run_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.yaml"
    loops = "\n".join(f"  - {name}" for name in live_loops())
    path.write_text(
        f"schema_version: 1\nloops:\n{loops}\ntiers:\n  small: openai/a\n  large: openai/b\n"
        "briefs: [complex-calc]\nrepetitions: 2\n",
        encoding="utf-8",
    )
    assert main(["ab", "plan", "--manifest", str(path)]) == 0
    out = capsys.readouterr().out
    runs = len(live_loops()) * 2 * 1 * 2
    assert f"{len(live_loops())} loops x 2 tiers x 1 briefs x 2 repetitions = {runs} runs" in out
    assert "complex-calc" in out and "openai/b" in out
    path.write_text(path.read_text().replace("  - react\n", "  - reakt\n"), encoding="utf-8")
    assert main(["ab", "plan", "--manifest", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not registered: reakt" in err and "leaves out registered loops: react" in err
