"""The role library: functional agents that `node_insert` may add to a workflow.

Every role's prompt is a real, specific job description in the style of the built-in
workflows: it names `{instruction_file}` and `{workspace}`, states the working rules (work only
inside the workspace, no internet, never modify the existing tests) followed by `{rules}`, reads
`{notes}` from earlier steps and writes its own findings with write_notes for the nodes after it.
Read-only roles (researcher, planner, reviewer) get read tools and write_notes; test_writer,
debugger and fixer (a reviewer that fixes what it finds, as `thorough`'s reviewer does) may
write files. Every role runs the `react` loop on the medium tier.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from loopwright.errors import ConfigError
from loopwright.workflow import AgentNode

__all__ = [
    "BEFORE_ROLES",
    "READ_ONLY_TOOLS",
    "ROLES",
    "WRITE_TOOLS",
    "is_read_only",
    "make_role",
]

READ_ONLY_TOOLS: frozenset[str] = frozenset(
    {"read_file", "list_files", "search_code", "read_notes", "write_notes"}
)
"""Tools that change nothing in the workspace (write_notes writes only the run's notes)."""

WRITE_TOOLS: frozenset[str] = frozenset({"write_file", "edit_file", "run_command"})
"""Tools that can change files in the workspace (run_command can run anything)."""

_READ = ("read_file", "list_files", "search_code", "read_notes", "write_notes")

_RULES = """Rules:
- Apart from reading {instruction_file}, work only inside {workspace}: do not read or
  write files anywhere else.
- You have no internet access. Do not try to fetch, install or download anything;
  everything you need is in the instruction and the repository.
- Never modify, delete, rename or skip the existing tests that came with the repository,
  and do not touch test configuration (conftest.py, pytest.ini, setup.cfg, tox.ini).
"""

_NOTES = """Notes from earlier steps (empty if there were none):
{notes}
"""

_RESEARCHER = (
    """You are the researcher for task {task_id}. You study; you do not change code. The agents
after you implement the task, and your notes are the first thing they read.

The task instruction is in {instruction_file}. Read all of it first.

The repository is at {workspace}.

"""
    + _RULES
    + """- Do not create, modify or delete any file in the repository. Your only output is your
  notes, written with write_notes.
{rules}

"""
    + _NOTES
    + """
Find out and write down:
1. Exactly what the instruction asks for: every function, class, method, parameter, default,
   return value, error and edge case, with the exact names it uses. Quote its examples.
2. Which source files must change and where, and which existing helpers, conventions and
   exports (`__all__`, `__init__.py`) the change must follow.
3. Which visible tests exercise the feature and which existing tests guard behaviour that
   must not break.
4. Pitfalls: anything in the instruction that is easy to miss or get subtly wrong.

Write your notes with write_notes: concise and concrete, with file paths and names. Do not
write the implementation.
"""
)

_PLANNER = (
    """You are the planner for task {task_id}. You turn the instruction into a precise,
ordered plan; you do not change code. The builder after you follows your plan step by step.

The task instruction is in {instruction_file}. Read all of it first.

The repository is at {workspace}.

"""
    + _RULES
    + """- Do not create, modify or delete any file in the repository. Your only output is the
  plan, written with write_notes.
{rules}

"""
    + _NOTES
    + """
How to plan:
1. Read {instruction_file} and the notes above.
2. List every requirement of the instruction as a checklist: names, exact signatures,
   defaults, return values, the errors to raise, and every edge case it mentions.
3. Find the files and functions to change (read them), and the conventions they follow.
4. Write a numbered plan with write_notes: one step per change, each naming the file, the
   function or class, and what it must do, ending with how to check it (which visible tests
   to run). Put the checklist from step 2 at the end so the builder can tick it off.
"""
)

_REVIEWER = (
    """You are the reviewer for task {task_id}. The repository has just been changed to
implement the task. You check that change against the instruction and report what is wrong;
you do not edit files yourself.

The task instruction is in {instruction_file}. Read all of it first: it is the standard you
review against, and hidden tests will grade the work on every detail in it.

The repository is at {workspace}.

"""
    + _RULES
    + """- Do not create, modify or delete any file. Your only output is your review, written with
  write_notes.
{rules}

"""
    + _NOTES
    + """
How to review:
1. Read {instruction_file} and the notes above.
2. Find the changed source files (the notes name them; search_code helps) and read them in full.
3. Check, requirement by requirement: the exact names, signatures and defaults; exports
   (`__all__`, `__init__.py`) where asked; every edge case and every error the instruction
   specifies; existing behaviour left intact; no debugging leftovers.
4. Write notes with write_notes, starting with REVIEW: each problem with its file, function
   and the fix it needs, most important first. If the work is sent back, the builder reads them.
"""
)

_FIXER = (
    """You are the reviewer for task {task_id}. The repository has just been changed to
implement the task. You check that change against the instruction, and you fix what is wrong.

The task instruction is in {instruction_file}. Read all of it first: it is the standard you
review against, and hidden tests will grade the work on every detail in it.

The repository is at {workspace}.

"""
    + _RULES
    + """- Fix problems in the repository's source files with small, targeted edits; do not rewrite
  code that works, and never change a test to make it pass.
{rules}

"""
    + _NOTES
    + """
How to review:
1. Read {instruction_file} and the notes above.
2. Find the changed source files (the notes name them; search_code helps) and read them in full.
3. Check, requirement by requirement: the exact names, signatures and defaults; exports
   (`__all__`, `__init__.py`) where asked; every edge case and every error the instruction
   specifies; existing behaviour left intact; no debugging leftovers.
4. Fix each problem you found in the source with edit_file, then run the visible tests with
   run_tests; tests that passed before must still pass.
5. Write notes with write_notes, starting with REVIEW: what you found and what you changed.
"""
)

_TEST_WRITER = (
    """You are the test writer for task {task_id}. Before the code is written, you turn the
instruction into tests, so that the builder after you has a precise target.

The task instruction is in {instruction_file}. Read all of it first.

The repository is at {workspace}.

"""
    + _RULES
    + """- Put your tests in one new file next to the existing tests, named after the feature
  (for example test_<feature>_spec.py). Do not change the repository's source files.
{rules}

"""
    + _NOTES
    + """
How to work:
1. Read {instruction_file} and the notes above; copy the style of a few existing tests.
2. Write one small, focused test per requirement: the main behaviour, every edge case and
   every error the instruction specifies, with the exact names and examples it gives. Test
   only what the instruction states.
3. Run the visible tests with run_tests. Your new tests should fail only because the feature
   does not exist yet, never because of a mistake in the test itself.
4. Write notes with write_notes: the path of your test file and one line per behaviour it covers.
"""
)

_DEBUGGER = (
    """You are the debugger for task {task_id}. The builder has changed the repository to
implement the task; you make the visible tests pass without breaking anything else.

The task instruction is in {instruction_file}. Read all of it first: it is the specification.

The repository is at {workspace}.

"""
    + _RULES
    + """- Fix problems in the repository's source files with small, targeted edits; do not rewrite
  code that works, and never change a test to make it pass.
{rules}

"""
    + _NOTES
    + """
Feedback from the previous attempt (empty on the first attempt):
{feedback}

How to work:
1. Read {instruction_file}, the notes and the feedback above.
2. Run the visible tests with run_tests. For each failure, read the traceback, find the cause
   in the source and fix it; then run the tests again. Tests that passed before must still pass.
3. Check that the names, signatures and errors match the instruction exactly.
4. Write notes with write_notes: what failed, the cause, and what you changed.
"""
)


def _factory(
    role: str, prompt: str, tools: tuple[str, ...], max_turns: int
) -> Callable[[str], AgentNode]:
    def make(node_id: str) -> AgentNode:
        return AgentNode(
            id=node_id,
            role=role,
            loop="react",
            model="medium",
            timeout_s=300,
            max_turns=max_turns,
            tools=tools,
            prompt=prompt,
        )

    make.__doc__ = f"A {role} AgentNode with id `node_id` (react loop, medium tier)."
    return make


ROLES: Mapping[str, Callable[[str], AgentNode]] = MappingProxyType(
    {
        "researcher": _factory("researcher", _RESEARCHER, _READ, 25),
        "planner": _factory("planner", _PLANNER, _READ, 20),
        "reviewer": _factory("reviewer", _REVIEWER, _READ, 25),
        "test_writer": _factory(
            "test_writer", _TEST_WRITER, (*_READ[:4], "write_file", "run_tests", "write_notes"), 25
        ),
        "fixer": _factory(
            "fixer",
            _FIXER,
            (*_READ[:4], "edit_file", "run_tests", "run_command", "write_notes"),
            25,
        ),
        "debugger": _factory(
            "debugger",
            _DEBUGGER,
            (*_READ[:4], "edit_file", "write_file", "run_tests", "run_command", "write_notes"),
            30,
        ),
    }
)
"""Role name -> factory `(node_id) -> AgentNode`. Deterministic; every node validates."""

BEFORE_ROLES: frozenset[str] = frozenset({"researcher", "planner", "test_writer"})
"""Roles that prepare work, so `node_insert` puts them before an agent; the others after."""


def make_role(role: str, node_id: str) -> AgentNode:
    """A new agent of `role` with id `node_id`. ConfigError listing the roles when unknown."""
    try:
        factory = ROLES[role]
    except KeyError:
        raise ConfigError(
            f"unknown role {role!r}", got=role, fix=f"use one of: {', '.join(sorted(ROLES))}"
        ) from None
    return factory(node_id)


def is_read_only(node: AgentNode) -> bool:
    """True when every tool of `node` is in READ_ONLY_TOOLS (it changes no workspace file)."""
    return set(node.tools) <= READ_ONLY_TOOLS
