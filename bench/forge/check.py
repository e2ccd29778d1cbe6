"""Checks the generator runs before writing anything: every op's versions behave as the task
layout assumes (gold passes every case; the edge flaw passes every main case and fails an edge
case; the logic flaw fails a main case; the renamed signature fails a case), and every Python
file written parses. In-process and fast; `bench validate` then checks the written tasks for real.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ops import Family, Op


def _function(op: Op, code: str) -> Callable[..., object]:
    namespace: dict[str, object] = {}
    exec("\n".join([*op.imports, code]), namespace)  # the generator's own op code
    func = namespace[op.name]
    assert callable(func)
    return func


def _passes(func: Callable[..., object], args: str, expected: str) -> bool:
    call = f"__f({args})"
    env: dict[str, object] = {"__f": func}
    try:
        got = eval(call, env)  # the generator's own case text
    except Exception as exc:  # noqa: BLE001 - any exception is a case outcome here
        return expected.startswith("raises:") and type(exc).__name__ == expected.split(":", 1)[1]
    if expected.startswith("raises:"):
        return False
    if expected.startswith("ordered:"):
        want = eval(expected.split(":", 1)[1])
        return isinstance(got, dict) and list(got.items()) == list(want.items())
    return bool(got == eval(expected, {}))


def _outcomes(op: Op, code: str, cases: Iterable[tuple[str, str]]) -> list[bool]:
    func = _function(op, code)
    return [_passes(func, args, expected) for args, expected in cases]


def op_problems(op: Op) -> list[str]:
    """What is wrong with `op`'s versions and cases (empty when nothing)."""
    problems = []
    if not all(_outcomes(op, op.gold, [*op.main, *op.edge])):
        problems.append(f"{op.name}: the gold fails a case")
    if not all(_outcomes(op, op.edge_flaw, op.main)):
        problems.append(f"{op.name}: the edge flaw fails a main case")
    if all(_outcomes(op, op.edge_flaw, op.edge)):
        problems.append(f"{op.name}: the edge flaw passes every edge case")
    if all(_outcomes(op, op.logic_flaw, op.main)):
        problems.append(f"{op.name}: the logic flaw passes every main case")
    if op.kwarg:
        renamed = re.sub(rf"\b{op.kwarg}\b", op.kwarg_alt, op.gold)
        if all(_outcomes(op, renamed, [*op.main, *op.edge])):
            problems.append(f"{op.name}: renaming {op.kwarg} fails no case")
    return problems


def family_problems(families: Iterable[Family]) -> list[str]:
    """Every op's problems, across families."""
    return [p for fam in families for op in fam.ops for p in op_problems(op)]


def syntax_problems(root: Path) -> list[str]:
    """Every Python file under `root` that does not parse."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        try:
            ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as exc:
            problems.append(f"{path.relative_to(root)}: {exc}")
    return problems
