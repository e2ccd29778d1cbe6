"""Export a workflow as a SKILL.md playbook that an agent (Claude Code, Codex...) can follow.

Each node becomes a numbered step: an agent node says which role to play, with which tools and
prompt; a function node and a gate's check say which command to run; a gate says when to
PROCEED and where to go back on failure, and how many times at most. Pure text, deterministic.
"""

from __future__ import annotations

from loopwright.workflow._graph import topological_order
from loopwright.workflow._model import PLACEHOLDERS, AgentNode, FnNode, GateNode, Workflow
from loopwright.workflow._render import to_mermaid

__all__ = ["COMMANDS", "to_skill_md"]

# What a person or agent runs by hand for each registered function and check.
COMMANDS: dict[str, str] = {
    "run_visible_tests": "python -m pytest -q tests",
    "visible_tests_pass": "python -m pytest -q tests  (passes when the exit code is 0)",
    "check_diff_nonempty": "git status --porcelain  (passes when it prints something)",
    "diff_nonempty": "git status --porcelain  (passes when it prints something)",
    "collect_notes": "gather every note written so far into one notes file",
    "outer_seed": "loopwright outer-loop calibrate --run-dir RUN --bench BENCH --seed-workflow WF"
    "  (calibrates the seed, chooses the train/holdout split, builds generation 0)",
    "outer_evaluate": "loopwright outer-loop evaluate --run-dir RUN",
    "outer_reflect": "loopwright outer-loop reflect --run-dir RUN",
    "outer_evolve": "loopwright outer-loop evolve --run-dir RUN",
    "outer_converged": "loopwright outer-loop status --run-dir RUN  (passes when it prints a stop"
    " reason other than '(still running)')",
    "outer_finalize": "loopwright outer-loop finalize --run-dir RUN  (writes result.json and"
    " report.html), then, if the holdout gain's interval excludes zero, loopwright outer-loop"
    " promote --run-dir RUN NAME",
}


def to_skill_md(wf: Workflow) -> str:
    """The SKILL.md text for `wf`: front matter, how to run it, one section per node in
    execution order, the placeholders, and the graph in Mermaid."""
    order = topological_order(wf)
    number = {node_id: i for i, node_id in enumerate(order, 1)}
    steps = [_step(wf.node(node_id), number) for node_id in order]
    description = wf.description or f"The {wf.name} workflow."
    lines = [
        "---",
        f"name: {wf.name}",
        f"description: {_one_line(description)}",
        "---",
        "",
        f"# {wf.name}",
        "",
        description,
        "",
        "Follow the steps in order. A gate either PROCEEDs to the next step or sends you back",
        "(RELOOP) to an earlier step with its feedback, at most the number of times it states;",
        "after that, proceed anyway. Never modify or delete the task's existing tests, and do",
        "not use the internet.",
        "",
        *steps,
        "## Placeholders",
        "",
        *(f"- `{{{name}}}`: {meaning}" for name, meaning in PLACEHOLDERS.items()),
        "",
        "## Graph",
        "",
        "```mermaid",
        to_mermaid(wf).rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def _step(node: AgentNode | FnNode | GateNode, number: dict[str, int]) -> str:
    head = f"## Step {number[node.id]}: `{node.id}`"
    if isinstance(node, AgentNode):
        tools = ", ".join(node.tools) or "none"
        return (
            f"{head} (agent: {node.role})\n\n"
            f"Act as the **{node.role}** ({node.loop} loop, {node.model} model, at most "
            f"{node.max_turns} turns and {node.timeout_s:g} s). Tools: {tools}. Prompt:\n\n"
            + _quote(node.prompt)
            + "\n"
        )
    if isinstance(node, FnNode):
        command = COMMANDS.get(node.fn, f"the registered function `{node.fn}`")
        args = ", ".join(f"{k}={v}" for k, v in node.args.items())
        return f"{head} (function: {node.fn})\n\nRun: {command}{f' with {args}' if args else ''}.\n"
    target = number.get(node.reloop_to, "?")
    if node.check is not None:
        test = f"Run the check `{node.check}`: {COMMANDS.get(node.check, node.check)}."
    else:
        test = "Judge the work so far against this question, answering PASS or FAIL:\n\n" + _quote(
            node.judge or ""
        )
    return (
        f"{head} (gate)\n\n{test}\n\n"
        f"- PASS: PROCEED to the next step.\n"
        f"- FAIL: go back to step {target} (`{node.reloop_to}`) with the failure output as its "
        f"feedback; at most {node.max_loops} time(s), then proceed.\n"
    )


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.rstrip().splitlines())


def _one_line(text: str) -> str:
    return " ".join(text.split())
