"""A forge task's instruction.md, written from its plan along its axes (docs/forge.md):
`locate` names each module's path or only a neighbouring function; `edges` spells out the edge
cases or only hints at them; `visible_tests` says which tests the repository has."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from layout import Plan
    from ops import Op


def _where(plan: Plan, op: Op) -> str:
    pkg = plan.family.package
    if plan.axes.locate == "named":
        return f"In `{pkg}/{op.module}.py`, add"
    neighbour = plan.existing(op.module)[0].name
    return (
        f"Add to the module of `{pkg}` that already defines `{neighbour}` (it belongs next to it)"
    )


def _section(plan: Plan, op: Op) -> str:
    behaviour = op.edges if plan.axes.edges == "spelled" else op.hint
    heading = (
        f"## `{plan.family.package}/{op.module}.py`"
        if plan.axes.locate == "named"
        else f"## `{op.name}`"
    )
    return (
        f"{heading}\n\n{_where(plan, op)}:\n\n```python\n{op.sig}\n```\n\n"
        f"It {op.does}. {behaviour}\n"
    )


def _tests_paragraph(plan: Plan) -> str:
    pkg = plan.family.package
    if not plan.axes.visible_tests:
        return (
            "The repository has no tests for the new functions: the tests under `tests/` cover "
            "the existing behaviour and must keep passing. Hidden tests check the new functions "
            "at grading."
        )
    if plan.axes.misleading_failure:
        where = "`tests/test_report.py` checks the package's self-check report"
    else:
        where = f"`tests/test_{pkg}_new.py` checks the main path of each new function"
    return (
        f"{where}; the other tests under `tests/` cover the existing behaviour and must keep "
        "passing. More tests run at grading."
    )


def render_instruction(plan: Plan) -> str:
    """The instruction text. Deterministic."""
    pkg = plan.family.package
    names = ", ".join(f"`{n}`" for n in plan.targets)
    count = len(plan.targets)
    intro = (
        f"`{pkg}` (in this repository) is a package of {plan.family.about}. Add "
        f"{'one function' if count == 1 else f'{count} functions'} to it: {names}."
    )
    if plan.axes.edges == "hinted":
        intro += " The hidden tests also check edge cases that are only hinted at below."
    sections = "\n".join(_section(plan, op) for op in plan.target_ops)
    return (
        f"# Add {names} to `{pkg}`\n\n{intro}\n\n{sections}\n"
        "Use the standard library only. Do not change the existing functions.\n\n"
        f"## Tests\n\n{_tests_paragraph(plan)} Run the tests with `python -m pytest` from the "
        "repository root.\n"
    )
