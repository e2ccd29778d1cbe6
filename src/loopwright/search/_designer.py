"""Initial designs for the population: structurally different, never functionally dead.

Every designed agent prompt carries the benchmark-essential content: it names
`{instruction_file}`, `{workspace}` and `{rules}`, states the no-internet, never-touch-the-tests
and work-inside-the-repository rules, and the builder also gets `{notes}` and `{feedback}`.
The builder's prompt is the seed's when the seed has a builder that carries all of that (the
seed's prompt is the tuned one); the other roles take the prompts of the built-in `thorough`
workflow, the project's tuned role library. Every design is checked against the runtime
catalog before it is returned.
"""

from __future__ import annotations

import itertools

from loopwright.errors import ConfigError
from loopwright.runtime import runtime_catalog
from loopwright.workflow import (
    AgentNode,
    Edge,
    GateNode,
    Workflow,
    builtin_workflow,
    check_workflow,
    prompt_placeholders,
)

__all__ = ["DESIGN_KINDS", "design", "missing_essentials"]

DESIGN_KINDS: tuple[str, ...] = ("minimal", "thorough")

_COMMON = frozenset({"instruction_file", "workspace", "rules"})
_BUILDER = _COMMON | {"notes", "feedback"}
# Phrases that show a prompt states the working rules, not only the placeholders.
_RULE_PHRASES = ("internet", "tests", "only inside {workspace}")

_TEST_WRITER_NOTE = """
A test writer has added new tests for this feature in a new file (the notes name it). Make
them pass too, but the instruction is the authority: if one of those new tests contradicts
the instruction, correct that new test to match the instruction and say so in your summary.
Never modify the existing tests that came with the repository."""


def missing_essentials(node: AgentNode) -> list[str]:
    """What `node`'s prompt lacks of the benchmark-essential content (empty when complete).

    Placeholders {instruction_file}, {workspace}, {rules} (a builder also {notes} and
    {feedback}) and the phrases stating the rules: no internet, the tests, only inside the
    workspace.
    """
    needed = _BUILDER if node.role == "builder" else _COMMON
    present = prompt_placeholders(node.prompt)
    missing = [f"{{{name}}}" for name in sorted(needed - present)]
    text = node.prompt.lower()
    missing += [f"the phrase {p!r}" for p in _RULE_PHRASES if p.lower() not in text]
    return missing


def design(kind: str, seed: Workflow) -> Workflow:
    """A new workflow of design `kind` built around `seed`'s builder, named
    `<seed name>-design-<kind>`.

    minimal: a single builder agent. thorough: researcher -> test writer -> builder ->
    reviewer -> gate_verify (visible_tests_pass, RELOOP to the builder, at most 3 times).
    Deterministic. Raises ConfigError for an unknown kind (listing the known ones) or if the
    design fails validation against `runtime_catalog()`.
    """
    if kind not in DESIGN_KINDS:
        raise ConfigError(
            f"unknown design kind {kind!r}", got=kind, fix=f"use one of: {', '.join(DESIGN_KINDS)}"
        )
    builder = _seed_builder(seed)
    wf = _workflow(seed, kind, (builder,), ()) if kind == "minimal" else _thorough(seed, builder)
    check_workflow(wf, runtime_catalog(), source=f"design {kind}")
    for node in wf.nodes:
        if isinstance(node, AgentNode) and (missing := missing_essentials(node)):
            raise ConfigError(
                f"design {kind!r}: node {node.id!r} lacks benchmark-essential prompt content",
                got=", ".join(missing),
                fix="give the seed's builder a prompt like the built-in builder-only one",
            )
    return wf


def _seed_builder(seed: Workflow) -> AgentNode:
    """The seed's builder (its settings and prompt) if its prompt is complete, else the
    built-in builder-only builder."""
    for node in seed.nodes:
        if isinstance(node, AgentNode) and node.role == "builder" and not missing_essentials(node):
            return node.model_copy(update={"id": "builder"})
    return _agent(builtin_workflow("builder-only"), "builder")


def _thorough(seed: Workflow, builder: AgentNode) -> Workflow:
    library = builtin_workflow("thorough")
    study, test_writer, reviewer = (
        _agent(library, i) for i in ("study", "test_writer", "reviewer")
    )
    if "test writer" not in builder.prompt.lower():
        builder = builder.model_copy(update={"prompt": builder.prompt.rstrip() + _TEST_WRITER_NOTE})
    gate = GateNode(id="gate_verify", check="visible_tests_pass", reloop_to="builder", max_loops=3)
    order = ("study", "test_writer", "builder", "reviewer", "gate_verify")
    edges = tuple(Edge(source=a, target=b) for a, b in itertools.pairwise(order))
    return _workflow(seed, "thorough", (study, test_writer, builder, reviewer, gate), edges)


def _agent(library: Workflow, node_id: str) -> AgentNode:
    node = library.node(node_id)
    if not isinstance(node, AgentNode):
        raise ConfigError(f"built-in workflow {library.name!r} node {node_id!r} is not an agent")
    return node


def _workflow(
    seed: Workflow,
    kind: str,
    nodes: tuple[AgentNode | GateNode, ...],
    edges: tuple[Edge, ...],
) -> Workflow:
    suffix = f"-design-{kind}"
    ids = {n.id for n in nodes}
    return Workflow(
        name=seed.name[: 100 - len(suffix)] + suffix,
        description=f"The {kind} design around the builder of {seed.name!r}.",
        nodes=nodes,
        edges=edges,
        frozen=tuple(f for f in seed.frozen if f in ids),
    )
