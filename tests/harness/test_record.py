"""Recording is resumable, refuses to mix recordings, recreates every workspace, gives each
run a fresh cost tracker, and turns a loop that cannot run into an unavailable row."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import UsageError
from loopwright.harness import (
    BriefSuite,
    Cell,
    CellResult,
    Manifest,
    Provenance,
    build_scoreboard,
    load_results,
    make_plan,
    record,
)
from loopwright.models import (
    ChatModel,
    ScriptedModel,
    ToolCall,
    read_ledger,
)
from loopwright.runtime import default_registries
from loopwright.sandbox import Sandbox
from tests.harness.conftest import (
    BINDINGS,
    PROVENANCE,
    hostile_after_first_write,
    native_plan,
    offline_options,
    scripted_source,
)


def good(cell: Cell) -> tuple[str | None, bool]:
    del cell
    return None, False


def test_an_interrupted_recording_resumes_without_rerunning_finished_cells(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=2)
    options = offline_options(tmp_path / "r", local, scripted_source(suite, good, None))
    ran: list[str] = []

    def stop_after_four(cell: Cell, result: CellResult | None) -> None:
        ran.append(cell.id)
        if len(ran) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        record(plan, suite, options, on_cell=stop_after_four)
    assert len(load_results(options.out)) == 4
    # A cell that was cut short (no result.json) starts over.
    half = options.out / "cells" / list(plan.cells())[4].id
    half.mkdir(parents=True)
    (half / "events.jsonl").write_text("partial", encoding="utf-8")

    seen: dict[str, bool] = {}
    record(plan, suite, options, on_cell=lambda c, r: seen.update({c.id: r is None}))
    assert list(seen.values()) == [True] * 4 + [False] * 2
    results = load_results(options.out)
    assert len(results) == 6 and all(r.correctness == 1.0 for r in results)
    # Each run had its own tracker: every cell counts only its own calls.
    ledger = read_ledger(options.out / "ledger.jsonl")
    for result in results:
        cell_id = next(c.id for c in plan.cells() if c.loop == result.cell.loop
                       and c.repetition == result.cell.repetition)  # fmt: skip
        mine = [r for r in ledger if r.labels.run == cell_id]
        assert result.turns == len(mine) and result.tokens == sum(
            r.input_tokens + r.output_tokens for r in mine
        )
    assert build_scoreboard(options.out, PROVENANCE).complete


def test_a_record_directory_of_another_commit_is_not_resumed(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    options = offline_options(tmp_path / "r", local, scripted_source(suite, good, None))
    record(plan, suite, options)
    moved = dataclasses.replace(
        options, provenance=Provenance(commit="f" * 40, dirty=False, loopwright_version="x")
    )
    with pytest.raises(UsageError, match="another commit"):
        record(plan, suite, moved)
    other = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=2)
    with pytest.raises(UsageError, match="another manifest"):
        record(other, suite, options)


def test_every_cell_recreates_its_workspace(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    """The first loop writes the solution; the next ones do nothing. If a workspace were
    reused, they would inherit the solution and pass."""
    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    source = scripted_source(suite, good, None)

    def lazy_after_first(cell: Cell) -> ChatModel:
        if cell.loop == plan.loops[0]:
            return source.factory(cell)
        return ScriptedModel(["nothing to do"] * 3)

    options = offline_options(
        tmp_path / "r", local, dataclasses.replace(source, factory=lazy_after_first)
    )
    record(plan, suite, options)
    scores = {r.cell.loop: r.correctness for r in load_results(options.out)}
    assert scores == {plan.loops[0]: 1.0, plan.loops[1]: 0.0, plan.loops[2]: 0.0}


def test_an_unavailable_loop_becomes_an_unavailable_row(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    options = dataclasses.replace(
        offline_options(tmp_path / "r", local, scripted_source(suite, good, None)),
        unavailable=lambda loop: "unavailable: no GPU here" if loop == "hybrid" else None,
    )
    record(plan, suite, options)
    rows = {r.cell.loop: r for r in load_results(options.out)}
    assert (
        rows["hybrid"].status == "unavailable"
        and rows["hybrid"].reason == "unavailable: no GPU here"
    )
    assert rows["hybrid"].correctness is None and rows["react"].correctness == 1.0
    sb = build_scoreboard(options.out, PROVENANCE)
    hybrid = next(r for r in sb.cells if r.loop == "hybrid")
    assert hybrid.unavailable == "unavailable: no GPU here" and hybrid.composite is None
    standing = next(s for s in sb.buckets[0].standings if s.loop == "hybrid")
    assert standing.disqualified == "unavailable: no GPU here (simple-wordfreq, small)"


def test_external_agents_without_the_relay_are_unavailable(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    """Without a gateway URL there is no relay to meter an external agent, so it is not run."""
    registries = default_registries()
    external = next(n for n in registries.loops.names() if n.startswith("external:"))
    manifest = Manifest(
        loops="all", tiers={"small": BINDINGS["small"]}, briefs=["simple-wordfreq"], repetitions=1
    )
    plan = make_plan(manifest, registered=(external, "react"), suite=suite)
    options = dataclasses.replace(
        offline_options(tmp_path / "r", local, scripted_source(suite, good, None)),
        registries=registries,
    )
    record(plan, suite, options)
    rows = {r.cell.loop: r for r in load_results(options.out)}
    assert rows[external].status == "unavailable"
    assert "only through the metering relay" in (rows[external].reason or "")
    assert rows["react"].correctness == 1.0


def test_a_cell_whose_agent_deletes_git_is_a_tamper_row_and_the_others_still_run(
    suite: BriefSuite, local: Sandbox, tmp_path: Path
) -> None:
    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    hostile_loop = plan.loops[0]
    rm_git = ToolCall.make("rm", "run_command", command="rm -rf .git")
    source = hostile_after_first_write(scripted_source(suite, good, None), hostile_loop, rm_git)
    options = offline_options(tmp_path / "r", local, source)
    record(plan, suite, options)
    rows = {r.cell.loop: r for r in load_results(options.out)}
    bad = rows[hostile_loop]
    assert bad.status == "tamper" and (bad.reason or "").startswith("tamper:")
    assert bad.correctness == 0.0 and all(not c.passed for c in bad.checks)
    assert all(c.error == bad.reason for c in bad.checks)
    others = [r.correctness for loop, r in rows.items() if loop != hostile_loop]
    assert others and all(c == 1.0 for c in others)


def test_recording_goes_through_the_run_lifecycle(
    suite: BriefSuite, local: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loopwright.harness import AB_RUN
    from loopwright.store import RunLifecycle

    plan = native_plan(suite, briefs=["simple-wordfreq"], tiers=["small"], repetitions=1)
    options = offline_options(tmp_path / "r", local, scripted_source(suite, good, None))
    busy = pytest.raises(UsageError, match="another process is running this A/B recording")
    with AB_RUN.at(options.out).lock(), busy:  # another recorder holds the directory: refused
        record(plan, suite, options)
    assert not (options.out / "record.json").exists()
    used: list[tuple[str, str]] = []
    for step in ("create", "reopen"):
        real = getattr(RunLifecycle, step)

        def spy(self: RunLifecycle, _real: Any = real, _step: str = step) -> Any:
            used.append((self.spec.kind, _step))
            return _real(self)

        monkeypatch.setattr(RunLifecycle, step, spy)
    record(plan, suite, options)
    record(plan, suite, options)  # again: resumed (nothing left to run), under the lock
    assert used == [("ab", "create"), ("ab", "reopen")]
