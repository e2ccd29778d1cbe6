"""Shared pieces for the harness tests: the bundled suite, a sandbox, native-only registries,
a virtual clock, and scripted loop behaviour that writes a brief's good or flawed solution."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright.harness import (
    Brief,
    BriefSuite,
    Cell,
    Manifest,
    OfflineSource,
    Plan,
    Provenance,
    RecordOptions,
    load_brief_suite,
    make_plan,
)
from loopwright.models import (
    ChatModel,
    Message,
    ModelResponse,
    Price,
    PriceTable,
    Reply,
    ScriptedModel,
    ToolCall,
    ToolSpec,
    Usage,
)
from loopwright.runtime import REPLAN, Registries, Registry, default_registries
from loopwright.sandbox import LocalSandbox, Sandbox, default_sandbox

NATIVE_LOOPS = ("hybrid", "plan_execute", "react")
PROVENANCE = Provenance(commit="c0ffee" * 6 + "abcd", dirty=False, loopwright_version="test")

# Fixed usage per kind of call, so that tokens are exact.
PLAN_USAGE = Usage(400, 60)
WRITE_USAGE = Usage(800, 300)
REPLAN_USAGE = Usage(1000, 80)
FINISH_USAGE = Usage(1200, 20)

BINDINGS = {
    "small": "openai/scripted-small",
    "medium": "openai/scripted-medium",
    "large": "anthropic/scripted-large",
}
# Test-only prices of the bound names (not a real provider's), so that money is checkable.
PRICES = PriceTable(
    version="ab-test-prices-1",
    prices={
        "openai/scripted-small": Price(1.0, 2.0, 0.1, simulated=True, note="test"),
        "openai/scripted-medium": Price(3.0, 15.0, 0.3, simulated=True, note="test"),
        "anthropic/scripted-large": Price(15.0, 75.0, 1.5, simulated=True, note="test"),
    },
)


@pytest.fixture(scope="session")
def suite() -> BriefSuite:
    return load_brief_suite()


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    """The sandbox loopwright would pick here (bubblewrap when it works)."""
    return default_sandbox("auto")


@pytest.fixture(scope="session")
def local() -> Sandbox:
    """No isolation, half the time per cell: for the tests whose subject is the harness's
    bookkeeping and the code run is the briefs' own solutions. Isolation is exercised by
    test_briefs.py and test_record_gateway.py."""
    return LocalSandbox()


def native_registries() -> Registries:
    """The default registries with only the native loops (the scripted model drives those)."""
    base = default_registries()
    loops = Registry(base.loops.kind)
    for name in NATIVE_LOOPS:
        loops.add(name, base.loops.get(name))
    return Registries(base.tools, loops, base.functions, base.checks)


@dataclass
class VirtualClock:
    """Wall clock for the regression test: advances only when the scripted model answers."""

    now_s: float = 0.0

    def now(self) -> float:
        return self.now_s

    def tick(self, seconds: float = 1.0) -> None:
        self.now_s += seconds


def solution_files(brief: Brief, variant: str | None) -> dict[str, str]:
    """The files of the brief's solution (variant None) or of a flawed variant."""
    root = brief.solution_dir if variant is None else brief.flawed_dir(variant)
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.py"))
    }


def _reply(usage: Usage, *calls: ToolCall, text: str = "") -> ModelResponse:
    return ModelResponse(text, calls, usage, 0.0, "scripted", simulated=True)


def loop_script(
    files: dict[str, str], *, replan: bool, clock: VirtualClock | None
) -> Callable[[Sequence[Message], Sequence[ToolSpec]], ModelResponse]:
    """A model that plans when asked for a plan (no tools offered), then writes `files`, then
    (when `replan` and the replan tool is offered) revises its plan once, then finishes."""
    work: list[str] = []

    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        if clock is not None:
            clock.tick()
        if not tools:
            if "ran into trouble" in messages[-1].content:
                return _reply(PLAN_USAGE, text="KEEP")
            return _reply(PLAN_USAGE, text="1. Implement what the instruction asks and finish.")
        step = len(work)
        work.append("x")
        if step == 0:
            writes = [
                ToolCall(f"w{i}", "write_file", json.dumps({"path": p, "content": c}))
                for i, (p, c) in enumerate(files.items())
            ]
            return _reply(WRITE_USAGE, *writes)
        if step == 1 and replan and any(t.name == REPLAN for t in tools):
            plan = json.dumps({"plan": "1. Re-check the edge cases.\n2. Finish."})
            return _reply(REPLAN_USAGE, ToolCall("r1", REPLAN, plan))
        return _reply(FINISH_USAGE, ToolCall("f1", "finish", json.dumps({"summary": "done"})))

    return answer


Behaviour = Callable[[Cell], tuple[str | None, bool]]
"""For a cell: which flawed variant the model writes (None: the solution), and whether it
replans once."""


def scripted_source(
    suite: BriefSuite, behaviour: Behaviour, clock: VirtualClock | None
) -> OfflineSource:
    def factory(cell: Cell) -> ScriptedModel:
        variant, replan = behaviour(cell)
        files = solution_files(suite.get(cell.brief), variant)
        return ScriptedModel(loop_script(files, replan=replan, clock=clock))

    return OfflineSource(factory, prices=PRICES, clock=clock.now if clock else _zero)


def hostile_after_first_write(source: OfflineSource, loop: str, call: ToolCall) -> OfflineSource:
    """`source`, except that the cells of `loop` send `call` right after their first tool
    call (writing the solution), then go on honestly."""

    def factory(cell: Cell) -> ChatModel:
        honest = source.factory(cell)
        if cell.loop != loop:
            return honest
        sent: list[str] = []

        def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
            if tools and len(sent) == 1:
                sent.append("hostile")
                return call
            if tools:
                sent.append("honest")
            return honest.chat(messages, tools)

        return ScriptedModel(answer)

    return dataclasses.replace(source, factory=factory)


def _zero() -> float:
    return 0.0


def native_plan(
    suite: BriefSuite,
    *,
    briefs: Sequence[str] | None = None,
    tiers: Sequence[str] = ("small", "medium", "large"),
    repetitions: int = 3,
) -> Plan:
    manifest = Manifest(
        loops="all",
        tiers={t: BINDINGS[t] for t in tiers},  # type: ignore[misc]
        briefs="all" if briefs is None else list(briefs),
        repetitions=repetitions,
        seed=7,
    )
    return make_plan(manifest, registered=NATIVE_LOOPS, suite=suite)


def offline_options(
    out: Path, sandbox: Sandbox, source: OfflineSource, clock: VirtualClock | None = None
) -> RecordOptions:
    return RecordOptions(
        out=out,
        sandbox=sandbox,
        models=source,
        gateway=None,
        registries=native_registries(),
        prices=PRICES,
        clock=clock.now if clock else _zero,
        provenance=PROVENANCE,
    )
