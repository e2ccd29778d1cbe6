"""Gates: evaluating a check or an LLM judge, and the PROCEED / RELOOP / exhausted decision."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from loopwright.models import Message
from loopwright.runtime._context import StepResult
from loopwright.runtime._loops import LoopContext, call_model
from loopwright.runtime._prompts import JUDGE_PREAMBLE
from loopwright.workflow import GateNode

__all__ = ["GateVerdict", "decide", "judge", "parse_verdict"]

_VERDICT = re.compile(r"\b(PASS|FAIL)(?:ED|ES|S)?\b", re.IGNORECASE)


def parse_verdict(text: str) -> bool | None:
    """True for PASS, False for FAIL, None when the reply has neither. The first non-empty
    line decides when it holds a verdict; otherwise the first verdict word anywhere."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    match = _VERDICT.search(first) or _VERDICT.search(text)
    return None if match is None else match.group(1).upper() == "PASS"


def judge(prompt: str, ctx: LoopContext) -> StepResult:
    """Ask the model to judge (no tools, one call, recorded as a ModelCall with turn 1).
    Passed on PASS; the detail is the judge's reply. Raises ModelError when the call fails."""
    messages = [Message("system", JUDGE_PREAMBLE), Message("user", prompt)]
    reply = call_model(ctx, messages, [], turn=1).text
    verdict = parse_verdict(reply)
    if verdict is None:
        return StepResult(False, f"The judge gave no PASS or FAIL verdict:\n{reply}")
    return StepResult(verdict, reply)


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """What a gate decided: `decision`, the RELOOP `target` (None on proceed) and the
    gate's RELOOP count after this decision."""

    decision: Literal["proceed", "reloop", "exhausted"]
    target: str | None
    loop_count: int


def decide(gate: GateNode, passed: bool, loops_taken: int) -> GateVerdict:
    """PROCEED when passed; else RELOOP to `reloop_to` while fewer than `max_loops` RELOOPs
    were taken (counting this one), else exhausted (the run goes on). Pure."""
    if passed:
        return GateVerdict("proceed", None, loops_taken)
    if loops_taken < gate.max_loops:
        return GateVerdict("reloop", gate.reloop_to, loops_taken + 1)
    return GateVerdict("exhausted", gate.reloop_to, loops_taken)
