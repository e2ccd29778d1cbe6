"""The building block of a forge task: one function to add (an `Op`), with its gold code, two
flawed versions and its test cases. A family is a package of five modules, each holding two ops
(`FAMILIES`); a task asks for one op in each of 1-5 of its modules (generate.py).

Every code string is a complete `def` (with its imports listed in `imports`). Cases are Python
source: `args` is what goes between the call's parentheses, `expected` the value it must return,
or `raises:ValueError` for an exception. `main` cases state the behaviour the instruction always
spells out; `edge` cases the behaviour it spells out or only hints at (the task's `edges` axis).
The `edge_flaw` must fail at least one edge case and pass every main case; the `logic_flaw`
must fail at least one main case (checked by `bench validate` on the generated tasks).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Op:
    """One function a task asks for. `kwarg` names a parameter some case passes by keyword
    (the wrong_signature flaw renames it to `kwarg_alt`); empty when there is none."""

    name: str
    module: str
    sig: str
    does: str
    edges: str
    hint: str
    gold: str
    edge_flaw: str
    logic_flaw: str
    main: tuple[tuple[str, str], ...]
    edge: tuple[tuple[str, str], ...]
    imports: tuple[str, ...] = ()
    kwarg: str = ""
    kwarg_alt: str = ""


@dataclass(frozen=True)
class Family:
    """A package: its name, what it is, and its five modules (name -> docstring) with their ops."""

    package: str
    about: str
    modules: tuple[tuple[str, str], ...]
    ops: tuple[Op, ...]

    def ops_of(self, module: str) -> tuple[Op, ...]:
        return tuple(op for op in self.ops if op.module == module)
