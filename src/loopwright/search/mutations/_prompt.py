"""prompt_mutate: rewrite one agent's prompt, with the meta model or offline.

With `ctx.meta_model` set, the model is asked once (`models.ask_structured` for a text reply, a
code fence around it removed; no retry) for a new prompt, with `META_PROMPT` (the task kind,
the node's role and current prompt, that node's failures, and the rule that every placeholder
it had must stay); its reply is taken when it keeps every placeholder, adds no unknown one
and the child validates. Otherwise, or with no meta model, the offline rewrite runs:

1. The node's failures (`ctx.failures[node_id]`) are matched against `FAILURE_SIGNS` to find
   the failure kinds seen (missed edge cases, exact signatures, imports, completeness,
   regressions, verifying results); a kind is drawn with `ctx.rng`, weighted by how often it
   was seen. With no failures, a kind is drawn uniformly.
2. One sentence of `GUIDANCE[kind]` that the prompt does not hold yet is added as a bullet
   under "Lessons from earlier attempts:" (the section is created before the prompt's first
   "How to" line, or at the end). If the kind's sentences are all present, the other kinds
   are tried in turn; when every sentence is present the operator does not apply.

The offline rewrite only adds text without braces, so it never drops or adds a placeholder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from string import Template
from types import MappingProxyType

from loopwright.errors import ConfigError
from loopwright.models import ChatModel, ask_structured, label_scope
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import (
    Operator,
    Proposal,
    Skip,
    agents,
    contract_violation,
    mutation,
    replace_node,
)
from loopwright.workflow import (
    PLACEHOLDERS,
    AgentNode,
    Catalog,
    Workflow,
    add_lesson,
    prompt_placeholders,
)

__all__ = [
    "FAILURE_SIGNS",
    "GUIDANCE",
    "META_PROMPT",
    "PromptMutate",
    "failure_kinds",
    "offline_rewrite",
]

GUIDANCE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "edge_cases": (
            "Before you finish, list the unusual inputs the instruction mentions (nothing at "
            "all, the smallest and largest allowed values, None, repeats) and make sure each "
            "one is handled.",
            "Treat odd inputs as belonging to the feature: try no items, one item and the extreme "
            "values the instruction allows.",
        ),
        "signatures": (
            "Use the names the instruction gives, spelled as written, with its arguments in "
            "its order; do not rename, reorder or add required arguments.",
            "Compare every new function and class with the instruction: its name, its "
            "argument names, the values they take when omitted, and what it returns.",
        ),
        "imports": (
            "After each edit, check that the package still loads: use the module paths the "
            "instruction gives, make new names reachable from the package where it asks, and "
            "leave the code parseable.",
        ),
        "completeness": (
            "Implement each requirement of the feature, not only the first: the change is done "
            "only when each requirement of the instruction is covered.",
            "Make a checklist of the feature's requirements first and tick each one off before "
            "you finish, so that nothing is left out.",
        ),
        "regressions": (
            "Keep what already works working: run the whole visible test suite before you "
            "finish and fix any test your change made fail.",
        ),
        "verification": (
            "Test your work: for each sample call in the instruction, run it and compare what "
            "you get with what the instruction says before you finish.",
        ),
    }
)
"""Failure kind -> guidance sentences the offline rewrite may add (no braces in any). Written as
generic advice to a coding agent, in words of their own: no sentence holds a phrase of the
offline simulator's tables (what it reacts to), so a sim figure for prompt mutation measures
the mutation, not a lookup of the sim's trigger words (tests/test_layers.py pins it)."""

FAILURE_SIGNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "edge_cases": ("edge case", "edge_case", "boundary", "corner case", "empty input"),
        "signatures": (
            "signature",
            "unexpected keyword",
            "positional argument",
            "has no attribute",
            "attributeerror",
            "typeerror",
        ),
        "imports": ("import", "modulenotfound", "syntax"),
        "completeness": (
            "partial",
            "incomplete",
            "not implemented",
            "notimplementederror",
            "no_change",
            "max_turns",
            "timeout",
        ),
        "regressions": ("regression", "previously passing", "broke"),
        "verification": ("tests_failing", "assert", "expected", "wrong", "mismatch"),
    }
)
"""Failure kind -> substrings (lower case) of a failure message that show that kind."""

META_PROMPT = Template(
    """You improve the prompt of one agent in a workflow of LLM agents that solves $task_kind.

The agent's role is $role. Its current prompt template is between the markers:
<<<PROMPT
$prompt
PROMPT>>>

Failures seen at this agent in recent runs (may be empty):
$failures

Rewrite the prompt so that the agent avoids these failures and does its job better.
Rules for the rewrite:
- Keep every placeholder the current prompt uses, spelled exactly: $placeholders.
  {instruction_file} must stay: it is where the agent reads its task.
- Use no other placeholder. Write a literal brace as {{ or }}.
- Keep the working rules: work only inside the workspace, no internet access, never modify
  the existing tests.
- Be specific and concrete; do not pad.
Reply with the new prompt only: no commentary, no markers, no code fences."""
)
"""The meta model's instruction (string.Template: `$name` fields, braces are literal)."""


def failure_kinds(messages: Sequence[str]) -> Counter[str]:
    """How many failure messages show each kind of `FAILURE_SIGNS` (case-insensitive)."""
    seen: Counter[str] = Counter()
    for message in messages:
        text = message.lower()
        for kind, signs in FAILURE_SIGNS.items():
            if any(s in text for s in signs):
                seen[kind] += 1
    return seen


def offline_rewrite(
    prompt: str, failures: Sequence[str], rng_pick: _Picker
) -> tuple[str, str] | None:
    """The prompt with one guidance sentence added, and the kind it targets; None when every
    sentence is present. Deterministic given `rng_pick`."""
    seen = failure_kinds(failures)
    kinds = list(GUIDANCE)
    if seen:
        first = rng_pick.weighted(
            [k for k in kinds if k in seen], [seen[k] for k in kinds if k in seen]
        )
    else:
        first = rng_pick.choice(kinds)
    order = [
        first,
        *(k for k in kinds if k in seen and k != first),
        *(k for k in kinds if k not in seen and k != first),
    ]
    for kind in order:
        fresh = [s for s in GUIDANCE[kind] if s not in prompt]
        if fresh:
            return add_lesson(prompt, rng_pick.choice(fresh)), kind
    return None


class _Picker:
    """The two draws the offline rewrite makes, from the run's random stream."""

    def __init__(self, ctx: MutationContext) -> None:
        self._rng = ctx.rng

    def choice(self, items: Sequence[str]) -> str:
        return self._rng.choice(list(items))

    def weighted(self, items: Sequence[str], weights: Sequence[int]) -> str:
        return self._rng.choices(list(items), weights=list(weights), k=1)[0]


@mutation("prompt_mutate", axis="prompt")
class PromptMutate(Operator):
    """Rewrite one non-frozen agent's prompt (an agent with failures recorded is preferred):
    by the meta model when there is one and its reply is acceptable, else offline."""

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        candidates = agents(parent)
        if not candidates:
            return Skip("every agent is frozen")
        failing = [a for a in candidates if ctx.failures.get(a.id)]
        node: AgentNode = ctx.rng.choice(failing or candidates)
        failures = list(ctx.failures.get(node.id, ()))
        note = ""
        if ctx.meta_model is not None:
            rewritten, problem = self._ask(ctx.meta_model, parent, node, failures, ctx.task_kind)
            if rewritten is not None:
                return Proposal(rewritten, node.id, f"meta model rewrote the prompt of {node.id!r}")
            note = f"meta model reply rejected ({problem}); "
        result = offline_rewrite(node.prompt, failures, _Picker(ctx))
        if result is None:
            return Skip(
                f"{note}the prompt of {node.id!r} already holds every guidance sentence", node.id
            )
        prompt, kind = result
        child = replace_node(parent, node.model_copy(update={"prompt": prompt}))
        return Proposal(
            child, node.id, f"{note}offline rewrite of {node.id!r}: added {kind} guidance"
        )

    def _ask(
        self,
        model: ChatModel,
        parent: Workflow,
        node: AgentNode,
        failures: list[str],
        task_kind: str,
    ) -> tuple[Workflow | None, str]:
        had = prompt_placeholders(node.prompt)
        text = META_PROMPT.substitute(
            task_kind=task_kind,
            role=node.role,
            prompt=node.prompt,
            failures="\n".join(f"- {f}" for f in failures[-20:]) or "(none recorded)",
            placeholders=", ".join(f"{{{p}}}" for p in sorted(had)),
        )
        with label_scope(role="meta:mutator"):
            answer = ask_structured(
                model, text, str, 0, check=lambda reply: _refusal(parent, node, reply, self.catalog)
            )
        if answer.value is None:
            return None, answer.problem or "no reply"
        return replace_node(parent, node.model_copy(update={"prompt": answer.value})), ""


def _refusal(parent: Workflow, node: AgentNode, reply: str, catalog: Catalog) -> str | None:
    """Why `reply` cannot be `node`'s new prompt, or None."""
    had = prompt_placeholders(node.prompt)
    try:
        got = prompt_placeholders(reply)
    except ConfigError:
        return "its braces do not balance"
    lost = sorted(had - got)
    if lost:
        return "it drops " + ", ".join(f"{{{p}}}" for p in lost)
    unknown = sorted(got - set(PLACEHOLDERS))
    if unknown:
        return "it uses unknown " + ", ".join(f"{{{p}}}" for p in unknown)
    child = replace_node(parent, node.model_copy(update={"prompt": reply}))
    return contract_violation(parent, child, catalog)
