"""Recording: run every cell of a plan into a record directory, resumably.

```
<out>/record.json                 the header: manifest, digests, provenance (written first)
<out>/.ab.lock                    the run lock: one recording process per directory
<out>/ledger.jsonl                every model call of every cell (native and external)
<out>/cells/<cell id>/result.json the cell's figures (written last: present = done)
<out>/cells/<cell id>/events.jsonl, grade.json, record.json, diff.patch, instruction.md:
                                  the cell's run_task directory, plus its ledger.jsonl
```

Running `record` again on the same directory resumes: finished cells are kept, a cell that
was interrupted is wiped and run again. The header must match (manifest digest, brief suite,
commit and dirty flag): a recording never mixes measurements of different code. The directory
goes through the shared run lifecycle (`AB_RUN`, store.RunLifecycle): claimed and locked
before its header is written, locked while a recording runs in it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError, UsageError
from loopwright.harness._briefs import BriefSuite
from loopwright.harness._cell import CELL_RESULT_FILE, CellEnv, CellResult, run_cell
from loopwright.harness._loops import loop_unavailable
from loopwright.harness._manifest import Cell, Plan
from loopwright.harness._models import ModelSource
from loopwright.harness._provenance import Provenance, current_provenance
from loopwright.harness._relay import MeteringRelay, probe_gateway
from loopwright.models import DEFAULT_PRICES, LEDGER_FILE, CostLedger, PriceTable, redact
from loopwright.runtime import Registries, default_registries
from loopwright.sandbox import Sandbox
from loopwright.store import RunLifecycle, RunSpec

__all__ = [
    "AB_RUN",
    "RECORD_FILE",
    "RecordHeader",
    "RecordOptions",
    "SuiteStamp",
    "load_results",
    "read_header",
    "record",
]

RECORD_FILE = "record.json"
RECORD_SCHEMA_VERSION: Literal[1] = 1
CELLS_DIR = "cells"

AB_RUN = RunSpec(
    kind="ab",
    header=RECORD_FILE,
    lock=".ab.lock",
    flag="--out",
    noun="A/B recording",
    resume="loopwright ab record --out {path} --gateway-base-url URL",
    param="RecordOptions.out",
    api_resume="harness.record(plan, suite, RecordOptions(out={path}, ...))",
    busy_fix="wait for it to finish, or stop it; recording again then resumes",
    api_busy_fix="wait for it to finish, or stop it; recording again then resumes",
)
"""An A/B record directory to the shared run lifecycle (store.RunLifecycle); whether every
cell is recorded is the scoreboard's `complete`, so `state` says new or partial."""


class SuiteStamp(BaseModel):
    """Which brief suite was measured: its declared version and the digest of its files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int
    digest: str


class RecordHeader(BaseModel):
    """`record.json`: what a record directory measures, stamped before the first cell runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    kind: Literal["loop-ab-record"] = "loop-ab-record"
    manifest: dict[str, object]
    manifest_digest: str
    manifest_source: str
    brief_suite: SuiteStamp
    provenance: Provenance
    gateway: str | None
    simulated: bool
    run_count: int
    created_at: str


@dataclass(frozen=True)
class RecordOptions:
    """How to record. `gateway` is the gateway URL the relay forwards external agents to
    (None: no relay; only the harness's own tests record without one). `unavailable` says
    why a loop cannot run here (default: `loop_unavailable`). `clock` measures wall clock."""

    out: Path
    sandbox: Sandbox
    models: ModelSource
    gateway: str | None
    registries: Registries = field(default_factory=default_registries)
    prices: PriceTable = DEFAULT_PRICES
    clock: Callable[[], float] = time.monotonic
    unavailable: Callable[[str], str | None] | None = None
    provenance: Provenance | None = None


OnCell = Callable[[Cell, CellResult | None], None]
"""Called after each cell (with its result) and once per cell already done (with None)."""


def record(
    plan: Plan, suite: BriefSuite, options: RecordOptions, on_cell: OnCell | None = None
) -> Path:
    """Run every cell of `plan` not yet done in `options.out`; return the record directory.

    Raises UsageError when nothing answers at `options.gateway` or `options.out` holds a
    recording of another manifest, suite or commit. A loop's failure is data; KeyboardInterrupt propagates (resume by running again).
    """
    out = options.out
    if options.gateway:
        probe_gateway(options.gateway)  # before anything is written
    header = _header(plan, suite, options)
    with _claimed(AB_RUN.at(out), header) as run:
        _record_cells(plan, options, run, on_cell)
    return out


def _record_cells(
    plan: Plan, options: RecordOptions, run: RunLifecycle, on_cell: OnCell | None
) -> None:
    """Every cell not yet done, in order, under the run's lock."""
    out = run.path
    notify = on_cell or (lambda cell, result: None)
    unavailable = options.unavailable or (lambda loop: loop_unavailable(loop, options.registries))
    run_ledger = CostLedger(out / LEDGER_FILE)
    relay = MeteringRelay(options.gateway, prices=options.prices) if options.gateway else None
    env = CellEnv(
        options.sandbox, options.models, options.registries, options.prices, options.clock,
        run_ledger, relay, unavailable,
    )  # fmt: skip
    briefs = {b.id: b for b in plan.briefs}
    with relay if relay is not None else contextlib.nullcontext():
        for cell in plan.cells():
            cell_dir = out / CELLS_DIR / cell.id
            if (cell_dir / CELL_RESULT_FILE).is_file():
                notify(cell, None)
                continue
            run.sweep([cell_dir])  # an interrupted cell starts over
            result = run_cell(cell, briefs[cell.brief], env, cell_dir)
            _write_atomic(cell_dir / CELL_RESULT_FILE, result.model_dump_json(indent=2))
            notify(cell, result)


def _header(plan: Plan, suite: BriefSuite, options: RecordOptions) -> RecordHeader:
    return RecordHeader(
        manifest=plan.describe(),
        manifest_digest=plan.digest,
        manifest_source=plan.source,
        brief_suite=SuiteStamp(version=suite.version, digest=suite.digest),
        provenance=options.provenance or current_provenance(),
        gateway=redact(options.gateway) if options.gateway else None,
        simulated=options.models.simulated,
        run_count=plan.run_count,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


@contextlib.contextmanager
def _claimed(run: RunLifecycle, header: RecordHeader) -> Iterator[RunLifecycle]:
    """The record directory under its lock: a new one claimed and its header written, or the
    one there resumed when its header matches (a UsageError otherwise; a non-empty directory
    without a header is refused, nothing written)."""
    if run.state() == "new":
        with run.create() as made:
            made.write_json(RECORD_FILE, header)
            yield run
        return
    with run.reopen():
        _check_header(run.path, header)
        yield run


def _check_header(out: Path, header: RecordHeader) -> None:
    old = read_header(out)
    mismatches = [
        what
        for what, a, b in (
            ("manifest", old.manifest_digest, header.manifest_digest),
            ("brief suite", old.brief_suite, header.brief_suite),
            ("commit", old.provenance.commit, header.provenance.commit),
            ("dirty flag", old.provenance.dirty, header.provenance.dirty),
            ("models (simulated or not)", old.simulated, header.simulated),
        )
        if a != b
    ]
    if mismatches:
        raise UsageError(
            f"{out} holds a recording of another {', '.join(mismatches)}; "
            "resuming would mix measurements of different things",
            fix="record into a new --out directory",
        )


def read_header(out: Path) -> RecordHeader:
    """The header of a record directory. ConfigError when it is missing or invalid."""
    path = out / RECORD_FILE
    if not path.is_file():
        raise ConfigError(f"{out} is not an A/B record directory (no {RECORD_FILE})")
    try:
        return RecordHeader.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ConfigError(f"{path} is invalid", got=str(exc)) from None


def load_results(out: Path) -> list[CellResult]:
    """Every finished cell's result in the record directory, in cell-id order."""
    root = out / CELLS_DIR
    results = []
    for path in sorted(root.glob(f"*/{CELL_RESULT_FILE}")) if root.is_dir() else []:
        try:
            results.append(CellResult.model_validate_json(path.read_text(encoding="utf-8")))
        except ValidationError as exc:
            raise ConfigError(f"{path} is invalid", got=str(exc)) from None
    return results


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text + ("" if text.endswith("\n") else "\n"))
