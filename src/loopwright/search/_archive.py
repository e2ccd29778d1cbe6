"""The MAP-Elites archive: one elite per cell of a grid of workflow descriptors.

The archive only stores and compares; it never evaluates (the engine does, then calls `add`).
Descriptors are plain values, so a run can choose them by name (`descriptors_by_name`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright.errors import ConfigError
from loopwright.search._individual import Individual
from loopwright.workflow import AgentNode, GateNode

__all__ = [
    "ARCHIVE_SCHEMA_VERSION",
    "AddOutcome",
    "ArchiveSnapshot",
    "Descriptor",
    "MapElitesArchive",
    "default_descriptors",
    "descriptor_names",
    "descriptors_by_name",
]

ARCHIVE_SCHEMA_VERSION = 1

Cell = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Descriptor:
    """One axis of the grid: `bin(ind)` maps an individual to 0 .. bins - 1; `labels[i]`
    names bin i in reports. `bin` must be deterministic and cheap (it runs on every add)."""

    name: str
    bin: Callable[[Individual], int]
    labels: tuple[str, ...]

    @property
    def bins(self) -> int:
        return len(self.labels)


@dataclass(frozen=True, slots=True)
class AddOutcome:
    """What `add` did: whether `ind` became the elite of `cell`, and the id it displaced."""

    inserted: bool
    replaced: str | None
    cell: Cell


def _agents(ind: Individual) -> int:
    count = sum(isinstance(n, AgentNode) for n in ind.workflow.nodes)
    return min(max(count, 1), 5) - 1


def _reloop(ind: Individual) -> int:
    # Every gate names a reloop_to; it counts when that node exists (a valid workflow's does).
    ids = set(ind.workflow.node_ids)
    return int(any(isinstance(n, GateNode) and n.reloop_to in ids for n in ind.workflow.nodes))


_PROMPT_EDGES = (1_500, 3_000, 6_000, 12_000)
_COST_EDGES = (0.01, 0.05, 0.20, 1.00)


def _bucket(value: float, edges: Sequence[float]) -> int:
    return next((i for i, edge in enumerate(edges) if value < edge), len(edges))


def _prompt_len(ind: Individual) -> int:
    total = 0
    for n in ind.workflow.nodes:
        if isinstance(n, AgentNode):
            total += len(n.prompt)
        elif isinstance(n, GateNode) and n.judge is not None:
            total += len(n.judge)
    return _bucket(total, _PROMPT_EDGES)


def _cost(ind: Individual) -> int:
    """Mean cost per result (bin 0 when unknown or not evaluated yet)."""
    cost = ind.cost_usd
    if cost is None or not ind.results:
        return 0
    return 1 + _bucket(cost / len(ind.results), _COST_EDGES)


_KNOWN: dict[str, Descriptor] = {
    "agents": Descriptor("agents", _agents, ("1", "2", "3", "4", "5+")),
    "reloop": Descriptor("reloop", _reloop, ("no RELOOP", "RELOOP")),
    "prompt_len": Descriptor(
        "prompt_len", _prompt_len, ("<1.5k chars", "1.5k-3k", "3k-6k", "6k-12k", "12k+")
    ),
    "cost": Descriptor(
        "cost", _cost, ("unknown", "<$0.01", "$0.01-0.05", "$0.05-0.20", "$0.20-1", "$1+")
    ),
}


def descriptor_names() -> list[str]:
    """The names `descriptors_by_name` knows, sorted."""
    return sorted(_KNOWN)


def descriptors_by_name(names: Iterable[str]) -> list[Descriptor]:
    """The built-in descriptors named, in that order. ConfigError on an unknown or repeated one.

    agents: agent nodes 1..5+; reloop: has a gate that RELOOPs; prompt_len: total prompt
    characters (<1.5k, 1.5k-3k, 3k-6k, 6k-12k, 12k+); cost: mean USD per result (unknown first).
    """
    chosen = list(names)
    for name in chosen:
        if name not in _KNOWN:
            raise ConfigError(
                f"unknown archive descriptor {name!r}",
                got=name,
                fix=f"use one of: {', '.join(descriptor_names())}",
            )
    if len(set(chosen)) != len(chosen) or not chosen:
        raise ConfigError(
            "archive descriptors must be a non-empty list without repeats",
            got=", ".join(chosen) or "(none)",
            fix=f"name each of {', '.join(descriptor_names())} at most once",
        )
    return [_KNOWN[name] for name in chosen]


def default_descriptors() -> list[Descriptor]:
    """agents x reloop x prompt_len: 5 x 2 x 5 = 50 cells."""
    return descriptors_by_name(["agents", "reloop", "prompt_len"])


class MapElitesArchive:
    """A grid of cells, one per combination of descriptor bins, each holding its best individual.

    `add` is O(1) in the archive's size. An individual without fitness is never stored; a
    strictly higher fitness replaces a cell's elite, a tie keeps the incumbent. Deterministic.
    """

    def __init__(self, descriptors: Sequence[Descriptor]) -> None:
        if not descriptors:
            raise ValueError("a MAP-Elites archive needs at least one descriptor")
        self.descriptors: tuple[Descriptor, ...] = tuple(descriptors)
        self._cells: dict[Cell, Individual] = {}

    def __len__(self) -> int:
        return len(self._cells)

    @property
    def total_cells(self) -> int:
        total = 1
        for d in self.descriptors:
            total *= d.bins
        return total

    def cell_of(self, ind: Individual) -> Cell:
        """The cell `ind` falls in. ValueError if a descriptor returns a bin out of range."""
        cell = tuple(d.bin(ind) for d in self.descriptors)
        for d, index in zip(self.descriptors, cell, strict=True):
            if not 0 <= index < d.bins:
                raise ValueError(
                    f"descriptor {d.name!r} gave bin {index}; expected 0..{d.bins - 1}"
                )
        return cell

    def add(self, ind: Individual) -> AddOutcome:
        """Offer `ind` to its cell; see the class docstring for the replacement rule."""
        cell = self.cell_of(ind)
        fitness = ind.fitness
        if fitness is None:
            return AddOutcome(False, None, cell)
        incumbent = self._cells.get(cell)
        if incumbent is None:
            self._cells[cell] = ind
            return AddOutcome(True, None, cell)
        best = incumbent.fitness
        if best is not None and fitness <= best:
            return AddOutcome(False, None, cell)
        self._cells[cell] = ind
        return AddOutcome(True, incumbent.id, cell)

    def elites(self) -> list[Individual]:
        """The elites in cell order (lexicographic by bin indices)."""
        return [self._cells[c] for c in sorted(self._cells)]

    def cells(self) -> dict[Cell, Individual]:
        """A copy of the grid: cell -> elite, in cell order."""
        return {c: self._cells[c] for c in sorted(self._cells)}

    def coverage(self) -> float:
        """Filled cells / total cells, in [0, 1]."""
        return len(self._cells) / self.total_cells

    def to_json(self) -> str:
        """The archive as JSON (schema_version, descriptor names, cells with their elites)."""
        head = json.dumps({"schema_version": ARCHIVE_SCHEMA_VERSION, "descriptors": self._names()})[
            :-1
        ]
        # Each elite is dumped by pydantic straight to JSON (faster than dict -> json.dumps).
        cells = ",".join(
            f'{{"cell":{json.dumps(list(c))},"individual":{ind.model_dump_json()}}}'
            for c, ind in self.cells().items()
        )
        return f'{head},"cells":[{cells}]}}'

    @classmethod
    def from_json(
        cls, text: str, descriptors: Sequence[Descriptor] | None = None
    ) -> MapElitesArchive:
        """Rebuild an archive from `to_json` output. Built-in descriptors are found by name;
        pass `descriptors` for custom ones (their names must match). ConfigError otherwise."""
        snapshot = ArchiveSnapshot.parse(text)
        names = list(snapshot.descriptors)
        descs = list(descriptors) if descriptors is not None else descriptors_by_name(names)
        if [d.name for d in descs] != names:
            raise ConfigError(
                "archive descriptors do not match the checkpoint",
                got=", ".join(d.name for d in descs),
                fix=f"pass descriptors named {', '.join(names)}",
            )
        archive = cls(descs)
        for row in snapshot.cells:
            archive._cells[row.cell] = row.individual
        return archive

    def _names(self) -> list[str]:
        return [d.name for d in self.descriptors]


class ArchiveCell(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cell: tuple[int, ...]
    individual: Individual


class ArchiveSnapshot(BaseModel):
    """An archive as `MapElitesArchive.to_json` wrote it (the checkpoint's `archive_json`),
    readable without its descriptors (a report of a run with custom ones)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int
    descriptors: tuple[str, ...]
    cells: tuple[ArchiveCell, ...]

    @classmethod
    def parse(cls, text: str) -> ArchiveSnapshot:
        """ConfigError when `text` is not an archive of this schema version."""
        try:
            snapshot = cls.model_validate_json(text)
        except ValidationError as exc:
            raise ConfigError("archive checkpoint is malformed", got=str(exc.errors()[0])) from None
        if snapshot.schema_version != ARCHIVE_SCHEMA_VERSION:
            raise ConfigError(
                "archive checkpoint has an unknown schema_version",
                got=repr(snapshot.schema_version),
                fix=f"use a checkpoint written by this version (schema {ARCHIVE_SCHEMA_VERSION})",
            )
        return snapshot
