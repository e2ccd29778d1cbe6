"""The catalog: the tool, function, check and loop names a workflow may use.

The workflow package runs nothing, so it only knows names. The runtime, which registers the
real implementations, builds its own catalog (`default_catalog().extended(...)`) and passes it
to validation; nothing here is global or mutable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from loopwright.workflow._model import EXTERNAL_LOOP_PREFIX

__all__ = ["OUTER_LOOP_FUNCTIONS", "Catalog", "default_catalog"]

# The steps of the `outer-loop` workflow. Implemented by `loopwright.search.OuterLoop`, bound to
# one run: the default registries leave them unimplemented, so elsewhere they fail as node errors.
OUTER_LOOP_FUNCTIONS = ("outer_seed", "outer_evaluate", "outer_reflect", "outer_evolve",
                        "outer_finalize")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Catalog:
    """Known names: agent `tools`, FnNode `functions`, GateNode `checks` and agent `loops`.

    `external:NAME` loops are accepted when NAME is non-empty and has no whitespace, unless
    `closed_external` is set: then only the `external:NAME` loops listed in `loops` are (the
    runtime's catalog, which knows its registered adapters, is closed).
    """

    tools: frozenset[str]
    functions: frozenset[str]
    checks: frozenset[str]
    loops: frozenset[str]
    closed_external: bool = False

    def extended(
        self,
        *,
        tools: Iterable[str] = (),
        functions: Iterable[str] = (),
        checks: Iterable[str] = (),
        loops: Iterable[str] = (),
        closed_external: bool | None = None,
    ) -> Catalog:
        """A new catalog holding these names as well as this catalog's (`closed_external`:
        None keeps this catalog's)."""
        return Catalog(
            tools=self.tools | frozenset(tools),
            functions=self.functions | frozenset(functions),
            checks=self.checks | frozenset(checks),
            loops=self.loops | frozenset(loops),
            closed_external=self.closed_external if closed_external is None else closed_external,
        )

    def knows_loop(self, loop: str) -> bool:
        """True for a listed loop name, or `external:NAME` with a non-empty NAME (a listed one,
        when `closed_external`)."""
        if loop.startswith(EXTERNAL_LOOP_PREFIX) and not self.closed_external:
            name = loop.removeprefix(EXTERNAL_LOOP_PREFIX)
            return bool(name) and not any(c.isspace() for c in name)
        return loop in self.loops


def default_catalog() -> Catalog:
    """The names loopwright ships with. Deterministic; returns a new (immutable) catalog."""
    return Catalog(
        tools=frozenset(
            {
                "read_file",
                "write_file",
                "edit_file",
                "list_files",
                "search_code",
                "run_tests",
                "run_command",
                "write_notes",
                "read_notes",
            }
        ),
        functions=frozenset(
            {"run_visible_tests", "check_diff_nonempty", "collect_notes", *OUTER_LOOP_FUNCTIONS}
        ),
        checks=frozenset({"visible_tests_pass", "diff_nonempty", "outer_converged"}),
        loops=frozenset({"react", "plan_execute", "hybrid"}),
    )
