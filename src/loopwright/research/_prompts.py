"""The instructions each phase sends the meta model, followed by its context as JSON.

Layout of every prompt (the offline meta model relies on the last two parts):

    <instructions for the phase, with the reply format>
    PHASE: <think|critic|distill|reflect|repair>
    <<<CONTEXT
    {...the phase's context as JSON...}
    CONTEXT>>>
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel

from loopwright.errors import ConfigError

__all__ = ["CONTEXT_END", "CONTEXT_START", "INSTRUCTIONS", "parse_prompt", "render"]

CONTEXT_START = "<<<CONTEXT"
CONTEXT_END = "CONTEXT>>>"

_PATCH_FORMAT = """A patch is null (measure the workspace as it is) or a list of operations applied in order:
  {"op": "mutation", "operator": NAME, "seed": INT}     a library operator (see taxonomy operators)
  {"op": "set_node", "node": ID, "fields": {...}}       agent: prompt, model, loop, max_turns,
                                                        timeout_s, tools, role; gate: max_loops...
  {"op": "append_prompt", "node": ID, "text": TEXT}     add lines to an agent's prompt
  {"op": "replace_workflow", "workflow": {...}}         a whole workflow document
Every prompt must keep {instruction_file}; frozen and protected nodes must stay unchanged."""

INSTRUCTIONS: Mapping[str, str] = {
    "think": f"""You are THINK, the proposer of a research loop that improves an LLM agent workflow
(a graph of agents, gates and prompts) measured on a coding benchmark. Read the working
memory in the context: the goal, constraints, knowledge, the workspace workflow and its score
and failures, past experiments (experience), open hypotheses, the taxonomy of intervention
axes with their status, and REFLECT's ranked frontier.

Propose 1 to max_specs experiment specs, each testing ONE mechanism, preferably on the
frontier's first axes. Multi-spec breadth is for two genuinely different mechanisms. A
promising probe should be confirmed at "perf" scale before new ideas on its axis.
Axis-jump rule: when shared_axes is not empty (the last axis_window committed iterations all
used those axes), no spec may use a shared axis unless you write a top-level "rebuttal".
If "revise" is set, CRITIC sent that spec back: reply with exactly one spec with the same
spec_id, changed to avoid the refuted pathology, or with a "rebuttal" inside the spec saying
why the critique does not apply. If nothing is worth testing, reply status SKIP_THINK_EMPTY.

{_PATCH_FORMAT}

Reply with one JSON object only:
{{"status": "OK" | "SKIP_THINK_EMPTY", "reasoning": str, "rebuttal": str | null,
 "specs": [{{"spec_id": "s1", "title": str, "intervention_axis": AXIS, "hypothesis": str,
            "prediction": str, "scale": "probe" | "perf", "patch": PATCH | null,
            "rebuttal": str | null, "confirms": {{"iter": N, "spec_id": str}} | null}}],
 "hypotheses_add": [{{"text": str, "axis": str | null, "spec_id": str | null}}],
 "knowledge_add": [{{"text": str, "supersedes": ["K3"]}}],
 "experiment_design": str | null, "tools": [{{"name": "file.py", "content": str}}]}}""",
    "critic": """You are CRITIC. Predict whether this one spec repeats a pathology that past
experiments already refuted. `pattern` is the change signature of its patch (the same
mechanism has the same pattern); experience lists every past spec with its pattern and verdict
(refuted, no_effect, not_confirmed, implementer_skip and critic_block are refutations).
Verdicts: OK (no known pathology), WARN (related refutations, proceed), REVISE (a close
repeat: send it back to THINK once), BLOCK (a repeat of a refuted pattern). Judge this spec
alone. A spec carrying a rebuttal should be blocked only if the rebuttal does not answer the
evidence.

Reply with one JSON object only:
{"verdict": "OK" | "WARN" | "REVISE" | "BLOCK", "reason": str, "matches": [str]}""",
    "distill": """You are DISTILL. You see every spec of this iteration side by side with its
measured outcome: score and baseline are mean partial credit on the same (task, repetition)
pairs, delta = score - baseline. Give each spec a verdict:
  probe: "promising" (delta >= escalation.escalate_gain), "inconclusive" (0 < delta < that),
         "no_effect" (delta = 0), "refuted" (delta < 0);
  perf:  "confirmed" (delta > escalation.adopt_gain); else "not_confirmed" for a spec that
         confirms a promising probe, and inconclusive / no_effect / refuted for a new idea;
  a spec that did not run keeps its outcome_class (implementer_skip or critic_block).
"adopt" names at most one confirmed spec to become the new workspace (the loop checks its
delta). Write the cross-spec lesson, the milestone after this iteration, knowledge bullets
(a correction supersedes the bullet it corrects: never contradict silently), and which
hypotheses to add or remove (with the reason).

Reply with one JSON object only:
{"specs": [{"spec_id": str, "verdict": VERDICT, "lesson": str}], "cross_spec_lesson": str,
 "milestone": str, "adopt": str | null, "knowledge_add": [{"text": str, "supersedes": []}],
 "hypotheses_add": [{"text": str, "axis": str | null, "spec_id": str | null}],
 "hypotheses_remove": [{"id": "H3", "reason": str}]}""",
    "reflect": """You are REFLECT, the cartographer of the intervention space. Audit which
axes the committed experiments used and what they showed. Give every axis of the taxonomy a
status: open (untried changes remain worth testing), exhausted (its levers no longer give an
untried change on this workflow, or its recent experiments were all refuted) or closed (the
constraints forbid it). Rank the open axes into a frontier, least explored and most promising
first; put a concentrated (shared) axis last. You may add new axes (taxonomy_add). Say
SPACE_EXHAUSTED only when no axis is open.

Reply with one JSON object only:
{"verdict": "FRONTIER" | "SPACE_EXHAUSTED",
 "axes": [{"axis": str, "status": "open" | "exhausted" | "closed", "note": str}],
 "frontier": [AXIS], "taxonomy_add": [{"axis": str, "description": str}], "notes": str}""",
    "repair": f"""You are the editor of an experiment. The spec's patch could not be realised or
failed its smoke run; `error` says why. Reply with a corrected patch that tests the same idea,
or null to give up (the spec then commits as implementer_skip).

{_PATCH_FORMAT}

Reply with one JSON object only: {{"patch": PATCH | null, "note": str}}""",
}


def render(phase: str, context: BaseModel) -> str:
    """The full prompt of `phase` with `context` as its JSON block."""
    if phase not in INSTRUCTIONS:
        raise ConfigError(
            f"unknown research phase {phase!r}", fix=f"use one of {list(INSTRUCTIONS)}"
        )
    body = context.model_dump_json(indent=1)
    return f"{INSTRUCTIONS[phase]}\n\nPHASE: {phase}\n{CONTEXT_START}\n{body}\n{CONTEXT_END}\n"


_PHASE = re.compile(r"^PHASE: ([a-z]+)$", re.MULTILINE)


def parse_prompt(text: str) -> tuple[str, str]:
    """(phase, context JSON) of a prompt made by `render`. ValueError when it is not one."""
    phase = _PHASE.search(text)
    start, end = text.rfind(CONTEXT_START), text.rfind(CONTEXT_END)
    if phase is None or start < 0 or end <= start:
        raise ValueError("not a research-loop prompt (no PHASE line or CONTEXT block)")
    return phase.group(1), text[start + len(CONTEXT_START) : end].strip()
