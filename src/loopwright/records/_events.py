"""The exhaust: typed events written to `events.jsonl`, one JSON object per line.

Every run of a workflow on a task writes these, in order, as they happen (each line flushed,
so a crash loses nothing already written). `run_start` carries the schema version. Readers
use `read_events`, which validates each line against the union below.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from loopwright._fs import atomic_write, drop_torn_tail, open_append, write_all
from loopwright.errors import ConfigError

__all__ = [
    "EVENTS_FILE",
    "EVENTS_SCHEMA_VERSION",
    "ErrorEvent",
    "Event",
    "EventWriter",
    "GateDecision",
    "GradeEvent",
    "ModelCall",
    "NodeEnd",
    "NodeStart",
    "NodeStatus",
    "NotesWritten",
    "RunEnd",
    "RunStart",
    "ToolCallEvent",
    "iter_events",
    "read_events",
]

EVENTS_FILE = "events.jsonl"
EVENTS_SCHEMA_VERSION: Literal[1] = 1


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    t: float = Field(ge=0, description="seconds since the run started (monotonic clock)")


class RunStart(_Event):
    type: Literal["run_start"] = "run_start"
    schema_version: Literal[1] = EVENTS_SCHEMA_VERSION
    run_id: str
    task_id: str
    task_digest: str
    workflow_name: str
    workflow_hash: str
    model: str
    simulated: bool
    seed: int
    repetition: int = 0
    loopwright_version: str
    started_at: str = Field(description="wall-clock start, ISO 8601 UTC")


class NodeStart(_Event):
    type: Literal["node_start"] = "node_start"
    node_id: str
    kind: Literal["agent", "fn", "gate"]
    role: str = ""
    attempt: int = Field(ge=1, description="1 on the first visit; +1 on each RELOOP back to it")


NodeStatus = Literal["ok", "failed", "error", "timeout", "max_turns", "skipped"]


class NodeEnd(_Event):
    type: Literal["node_end"] = "node_end"
    node_id: str
    attempt: int = Field(ge=1)
    status: NodeStatus
    duration_s: float = Field(ge=0)
    error: str | None = None
    produced: list[str] = Field(default_factory=list, description="files changed by this node")
    summary: str = ""


class ModelCall(_Event):
    type: Literal["model_call"] = "model_call"
    node_id: str
    attempt: int = Field(ge=1)
    turn: int = Field(ge=1)
    model: str
    simulated: bool
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int = Field(ge=0)
    latency_s: float = Field(ge=0)
    cost_usd: float | None = Field(description="None when the model is not in the price table")
    price_table: str
    tool_calls: int = Field(ge=0)
    error: str | None = None


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    node_id: str
    attempt: int = Field(ge=1)
    turn: int = Field(ge=1)
    tool: str
    arguments: str = Field(description="the raw arguments, truncated to 2,000 characters")
    ok: bool
    error: str | None = None
    output_chars: int = Field(ge=0)
    duration_s: float = Field(ge=0)


class GateDecision(_Event):
    type: Literal["gate_decision"] = "gate_decision"
    node_id: str
    decision: Literal["proceed", "reloop", "exhausted"]
    target: str | None = Field(description="the RELOOP target, None on proceed")
    loop_count: int = Field(
        ge=0, description="RELOOPs taken by this gate so far, this one included"
    )
    max_loops: int = Field(ge=1)
    passed: bool
    reason: str = ""


class NotesWritten(_Event):
    type: Literal["notes_written"] = "notes_written"
    node_id: str
    chars: int = Field(ge=0)


class GradeEvent(_Event):
    type: Literal["grade"] = "grade"
    score: float = Field(ge=0, le=1)
    resolved: bool
    invalid: bool
    invalid_reason: str | None = None
    f2p_passed: int
    f2p_total: int
    p2p_passed: int
    p2p_total: int
    duration_s: float = Field(ge=0)


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    node_id: str | None = None
    where: str = Field(description="what was being done: model_call, tool, node, runner, grade")
    message: str


class RunEnd(_Event):
    type: Literal["run_end"] = "run_end"
    status: Literal["completed", "error", "timeout", "interrupted"]
    duration_s: float = Field(ge=0)
    error: str | None = None


Event = Annotated[
    RunStart
    | NodeStart
    | NodeEnd
    | ModelCall
    | ToolCallEvent
    | GateDecision
    | NotesWritten
    | GradeEvent
    | ErrorEvent
    | RunEnd,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


class EventWriter:
    """Appends events to `events.jsonl`, one line each, written through at once. `now()` gives
    the `t` to stamp.

    The file is opened once, never through a symlink (one at the path is replaced, see
    `open_append`), and every line goes to that file whatever happens to its name meanwhile.
    Reopening a log whose last line a kill cut off drops that partial line first
    (`drop_torn_tail`), so the file stays readable after the next append.
    On `close()`, if the name no longer leads to it (an agent removed or replaced it, or put a
    symlink there), what was written is put back under the name as a regular file. Use as a
    context manager or call `close()`. Not thread-safe: one writer per run.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = open_append(path)
        drop_torn_tail(self._fd)  # a reopened log (a resumed outer loop) killed mid-line
        self._start = time.monotonic()

    def now(self) -> float:
        """Seconds since this writer was opened (the run's clock)."""
        return round(time.monotonic() - self._start, 6)

    def write(self, event: _Event) -> None:
        write_all(self._fd, (event.model_dump_json() + "\n").encode("utf-8"))

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            self._put_back()
        finally:
            os.close(self._fd)
            self._fd = -1

    def _put_back(self) -> None:
        mine = os.fstat(self._fd)
        try:
            there = os.lstat(self.path)
            if (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
                return
        except FileNotFoundError:
            pass
        chunks, offset = [], 0
        while chunk := os.pread(self._fd, 1 << 20, offset):
            chunks.append(chunk)
            offset += len(chunk)
        atomic_write(self.path, b"".join(chunks))

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def iter_events(path: Path) -> Iterator[Event]:
    """Yield validated events from an events.jsonl file. A truncated last line (a crash while
    writing) is skipped; any other bad line raises ConfigError naming the file and line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield _ADAPTER.validate_python(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            if number == len(lines):
                return  # the run died mid-write; everything before it stands
            raise ConfigError(f"{path}:{number} is not a valid event", got=str(exc)[:500]) from None


def read_events(path: Path) -> list[Event]:
    """All events of a run, in order. See `iter_events`."""
    return list(iter_events(path))
