"""run_state.json, the run lock, resuming an interrupted iteration, and reconciling workspace/.

Resume: when `run` finds an iteration that started and never committed (run_state says it was
running, or its `.staging/iter_N` exists), the attempt is discarded (`discard_attempt`): the
staging directory is removed, the journal lines that iteration wrote are dropped, and, since
knowledge.md is append-only, one bullet is appended superseding the bullets that attempt wrote.
The iteration then runs again as attempt k+1. A run the dollar budget stopped has discarded
its unfinished attempt already; run_state (status `budget`) names the attempt to run next.
Reconcile: after a commit (and on every start), workspace/ is brought up to the last
committed record; it is idempotent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loopwright._fs import atomic_write
from loopwright.research._config import WorkDir
from loopwright.research._journal import drop_iterations_from
from loopwright.research._knowledge import Knowledge
from loopwright.research._record import ReflectBlock, load_iter_record
from loopwright.research._workspace import Workspace
from loopwright.workflow import load_workflow

__all__ = [
    "RunState",
    "discard_attempt",
    "read_run_state",
    "reconcile",
    "recover",
    "write_run_state",
]

Status = Literal["initialized", "running", "paused", "terminated", "saturated", "stalled", "budget"]


class RunState(BaseModel):
    """run_state.json: where the run is and why it stopped."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    status: Status
    reason: str = ""
    iteration: int = 0
    attempt: int = 1
    updated_at: str = ""
    saturated_by: ReflectBlock | None = None


def read_run_state(wd: WorkDir) -> RunState:
    if not wd.run_state.is_file():
        return RunState(status="initialized")
    return RunState.model_validate_json(wd.run_state.read_text(encoding="utf-8"))


def write_run_state(wd: WorkDir, state: RunState) -> None:
    stamped = state.model_copy(
        update={"updated_at": datetime.now(UTC).isoformat(timespec="seconds")}
    )
    atomic_write(wd.run_state, stamped.model_dump_json(indent=2) + "\n")


def reconcile(wd: WorkDir) -> bool:
    """Bring workspace/ up to the last committed record; True when it changed anything."""
    committed = wd.committed()
    if not committed:
        return False
    workspace = Workspace(wd.workspace)
    if workspace.state().iteration >= committed[-1]:
        return False
    record = load_iter_record(wd.iter_dir(committed[-1]) / "record.json")
    workflow = None
    if record.adopted_workflow:
        workflow = load_workflow(wd.iter_dir(record.iter) / record.adopted_workflow)
    workspace.write(workflow, record.workspace_next)
    return True


def recover(wd: WorkDir) -> tuple[int, int, str | None]:
    """Prepare the next iteration: (its number, its attempt, what was cleaned up or None)."""
    reconcile(wd)
    committed = wd.committed()
    pending = (committed[-1] + 1) if committed else 1
    state = read_run_state(wd)
    stale = sorted(wd.staging_root.glob("iter_*")) if wd.staging_root.is_dir() else []
    interrupted = state.status == "running" and state.iteration == pending
    if not stale and not interrupted:
        resumed = state.status == "budget" and state.iteration == pending
        return pending, state.attempt if resumed else 1, None
    attempt = state.attempt + 1 if state.iteration == pending else 1
    return pending, attempt, discard_attempt(wd, pending, attempt - 1)


def discard_attempt(wd: WorkDir, pending: int, attempt: int) -> str:
    """Undo what attempt `attempt` of the uncommitted iteration `pending` wrote: remove every
    staging directory, drop the journal lines of `pending` and later, and append one knowledge
    bullet superseding the bullets it wrote. Returns what was done, as one sentence."""
    stale = sorted(wd.staging_root.glob("iter_*")) if wd.staging_root.is_dir() else []
    wd.lifecycle.sweep(stale)  # the cut-off attempt's scratch
    dropped = drop_iterations_from([wd.experience, wd.hypotheses], pending)
    book = Knowledge(wd.knowledge)
    current = {b.id for b in book.current()}
    orphans = tuple(
        b.id for b in book.bullets()
        if b.iteration is not None and b.iteration >= pending and b.id in current
        and "resume" not in b.origin
    )  # fmt: skip
    if orphans:
        book.append(
            f"Attempt {attempt} of iteration {pending} stopped before its commit; the "
            f"bullets it wrote ({', '.join(orphans)}) are backed by no committed experiment.",
            origin=f"iter {pending}, resume",
            supersedes=orphans,
        )
    return (
        f"iteration {pending} attempt {attempt} never committed: removed its staging, "
        f"dropped {dropped} journal line(s), superseded {len(orphans)} knowledge bullet(s)"
    )
