"""Scoreboards are stamped with the commit and dirty flag they were measured at; one from a
dirty tree says so, and one from another commit is labelled stale."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from loopwright.harness import (
    BriefSuite,
    Cell,
    Provenance,
    build_scoreboard,
    current_provenance,
    record,
    scoreboard_markdown,
    staleness,
)
from loopwright.sandbox import Sandbox
from tests.harness.conftest import native_plan, offline_options, scripted_source


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout holding a stand-in package directory with one committed file."""
    repo = tmp_path / "repo"
    package = repo / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "loops.py").write_text("LOOPS = 3\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    return package


def test_provenance_reads_the_commit_and_the_dirty_flag(checkout: Path) -> None:
    clean = current_provenance(checkout)
    assert clean.commit == git(checkout, "rev-parse", "HEAD") and clean.dirty is False
    (checkout / "loops.py").write_text("LOOPS = 4\n", encoding="utf-8")
    assert current_provenance(checkout).dirty is True
    (checkout / "loops.py").write_text("LOOPS = 3\n", encoding="utf-8")
    (checkout / "new_loop.py").write_text("", encoding="utf-8")  # untracked counts too
    assert current_provenance(checkout).dirty is True


def test_outside_a_checkout_provenance_is_unknown(tmp_path: Path) -> None:
    unknown = current_provenance(tmp_path)
    assert unknown.commit is None and unknown.dirty is None
    assert staleness(unknown, unknown) is not None


def good(cell: Cell) -> tuple[str | None, bool]:
    del cell
    return None, False


def test_a_scoreboard_from_a_dirty_tree_says_so_and_another_commit_makes_it_stale(
    suite: BriefSuite, local: Sandbox, tmp_path: Path, checkout: Path
) -> None:
    (checkout / "loops.py").write_text("LOOPS = 5\n", encoding="utf-8")
    dirty = current_provenance(checkout)
    assert dirty.dirty is True
    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    options = offline_options(tmp_path / "r", local, scripted_source(suite, good, None))
    options = dataclasses.replace(options, provenance=dirty)
    record(plan, suite, options)

    same = build_scoreboard(options.out, dirty)
    assert same.provenance == dirty and same.stale is None
    markdown = scoreboard_markdown(same)
    assert "**DIRTY TREE**" in markdown and "(dirty: yes (uncommitted changes))" in markdown
    assert f"`{dirty.commit}`" in markdown and "STALE" not in markdown

    git(checkout.parent.parent, "commit", "-q", "-am", "next")
    later = current_provenance(checkout)
    stale = build_scoreboard(options.out, later)
    assert stale.stale == (
        f"stale: recorded at commit {dirty.commit[:12]}, the code is now at {later.commit[:12]}"  # type: ignore[index]
    )
    assert stale.checked_against == later.commit
    assert "> **STALE**: stale: recorded at commit" in scoreboard_markdown(stale)


def test_stamps_carry_manifest_suite_and_rubric(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    from loopwright.harness import RUBRIC

    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    options = offline_options(tmp_path / "r", local, scripted_source(suite, good, None))
    record(plan, suite, options)
    clean = Provenance(commit=options.provenance.commit, dirty=False, loopwright_version="t")  # type: ignore[union-attr]
    sb = build_scoreboard(options.out, clean)
    assert sb.manifest_digest == plan.digest and sb.manifest == plan.describe()
    assert (sb.brief_suite.version, sb.brief_suite.digest) == (suite.version, suite.digest)
    assert sb.rubric == RUBRIC and sum(sb.rubric.weights.values()) == pytest.approx(1.0)
    assert sb.schema_version == 1 and sb.kind == "loop-ab-scoreboard"
