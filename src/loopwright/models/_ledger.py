"""The cost ledger: one record per model call attempt, with raw tokens, latency, derived cost and
the labels (run, candidate, node, role) the caller attached; totals by any label; JSONL on disk.

Records keep raw token counts and the price-table version that priced them, so a ledger can be
re-priced later. Cost is None when the table does not know the model: unknown, never guessed.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._fs import drop_torn_tail, open_append
from loopwright.models._per_process import PerProcess

__all__ = [
    "INTERRUPTED",
    "LEDGER_FILE",
    "LEDGER_SCHEMA_VERSION",
    "META_ROLES",
    "CallLabels",
    "CostLedger",
    "LedgerRecord",
    "LedgerTotals",
    "current_labels",
    "group_totals",
    "label_scope",
    "read_ledger",
    "role_kind",
    "sum_records",
]

LEDGER_FILE = "ledger.jsonl"
LEDGER_SCHEMA_VERSION = 4
"""2 added `source`; 3 added `error_kind` and `request_bytes` on failed attempts; 4 added
`request_id` and `state` (the in-flight line written before a request is sent, see
`LedgerRecord`). Older lines still read (version 1 as source "gateway"; versions 1-2 with
neither error field; versions 1-3 as state "done" without a request id)."""

INTERRUPTED = "interrupted"
"""The `error_kind` of a request whose process ended between sending it and writing its row."""

META_ROLES: tuple[str, ...] = (
    "meta:reflector",
    "meta:mutator",
    "meta:crossover",
    "meta:designer",
    "meta:judge",
    "meta:think",
    "meta:critic",
    "meta:distill",
    "meta:reflect",
    "meta:repair",
)
"""The `role` labels of meta-model calls: the outer loop's reflector, prompt mutator, crossover
and designer, an LLM-judge gate, and the research loop's THINK, CRITIC, DISTILL, REFLECT and EXPERIMENT's repair.
Any other role (an agent node's role, e.g. "builder") is an agent call."""

SpendKind = Literal["agents", "meta"]
RowState = Literal["done", "sent", "withdrawn"]

LabelName = Literal["run", "candidate", "node", "role"]
GroupKey = Literal["run", "candidate", "node", "role", "provider", "model", "source", "kind"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CallLabels(_Strict):
    """Who a call was made for. Every field is optional; the caller fills what it knows."""

    run: str | None = None
    candidate: str | None = None
    node: str | None = None
    role: str | None = None

    def merged(self, other: CallLabels) -> CallLabels:
        """These labels with every field `other` sets taken from `other`."""
        return self.model_copy(update=other.model_dump(exclude_none=True))


class LedgerRecord(_Strict):
    """One request the provider received: one call attempt (a retry is a row of its own). `ok`
    is False for an attempt that failed (its tokens are then 0, `error` holds the redacted
    message, `error_kind` the gateway's kind of error, e.g. "rate_limit" or "client" for a body
    the server could not parse, and `request_bytes` the size of the JSON body sent). An attempt
    that never reached the server (the connection could not be made) is no row. `cost_usd` is
    None when the model is unpriced. See docs/models.md, "The ledger".

    `source` says who made the call: "gateway" (LiteLLMGateway, one record per attempt) or
    "external:NAME" (an external agent CLI's own calls, as it reported them: one record per
    reported model turn, see docs/external-agents.md).

    In the file (schema 4), the gateway writes a `state: "sent"` line (zero tokens, cost 0,
    `t` the attempt's start) with a fresh `request_id` before each request leaves, and the
    attempt's row (`state: "done"`, same id) when its outcome is known, or a `"withdrawn"`
    line when the request never left. `read_ledger` folds them: a sent line with its row is
    that row, a withdrawn one is nothing, and a sent line with neither (the process was killed
    in between: the server may have received, and billed, the request) is a failed row of kind
    `interrupted` with an unknown cost (`cost_usd` None)."""

    schema_version: int = LEDGER_SCHEMA_VERSION
    source: str = "gateway"
    t: float = Field(description="Unix time the attempt ended")
    provider: str
    model: str
    attempt: int = Field(ge=1)
    ok: bool
    error: str | None = None
    error_kind: str | None = None
    request_bytes: int | None = Field(default=None, ge=0)
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_read_tokens: int = Field(ge=0)
    cache_write_tokens: int = Field(ge=0)
    latency_s: float = Field(ge=0.0)
    cost_usd: float | None
    price_table: str
    labels: CallLabels = Field(default_factory=CallLabels)
    request_id: str | None = None
    state: RowState = "done"


class LedgerTotals(_Strict):
    """Sums over a group of records. `cost_usd` is None when any priced-in call was unpriced
    (a partial sum would understate the spend); `unpriced_calls` counts those."""

    calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = 0.0
    unpriced_calls: int = 0


_LABELS: contextvars.ContextVar[CallLabels | None] = contextvars.ContextVar(
    "loopwright_call_labels", default=None
)


def role_kind(role: str | None) -> SpendKind:
    """ "meta" for a meta role (a label starting with "meta:", see META_ROLES), else "agents"."""
    return "meta" if role is not None and role.startswith("meta:") else "agents"


def current_labels() -> CallLabels:
    """The labels set by the innermost `label_scope` in this context (empty outside any)."""
    return _LABELS.get() or CallLabels()


@contextlib.contextmanager
def label_scope(
    *,
    run: str | None = None,
    candidate: str | None = None,
    node: str | None = None,
    role: str | None = None,
) -> Iterator[CallLabels]:
    """Label every gateway call made inside the block (in this thread or context). Nested
    scopes add to the outer one; a field given here overrides the outer value."""
    labels = current_labels().merged(CallLabels(run=run, candidate=candidate, node=node, role=role))
    token = _LABELS.set(labels)
    try:
        yield labels
    finally:
        _LABELS.reset(token)


class CostLedger:
    """A thread-safe, append-only list of LedgerRecords, optionally mirrored to a JSONL file
    (one record a line, flushed per record so a crash keeps what was written). The file and its
    directory are created by the first record (or by `touch`), not when the ledger is made.

    `max_usd` is the run's dollar budget: once `spent_usd()` reaches it, `exhausted()` is True
    and the gateway makes no further call. With a file, the spend is read from the file, so
    calls appended by other processes of the run (forked evaluation workers sharing the file)
    count too. Its lock is per process (a forked worker never inherits one held at the fork),
    and each append holds an exclusive flock on the file, so appends from the processes of a
    run never cut or interleave each other's lines."""

    def __init__(self, path: Path | None = None, *, max_usd: float | None = None) -> None:
        self.path = path
        self.max_usd = max_usd
        self._records: list[LedgerRecord] = []
        self._locks: PerProcess[threading.Lock] = PerProcess(threading.Lock)
        self._read_offset = 0  # bytes of the file already summed into _read_usd
        self._read_usd = 0.0

    def __getstate__(self) -> dict[str, object]:
        """Pickled (shipped to a Ray worker) without its lock; the copy appends to the same
        file path and keeps the records held so far."""
        with self._lock:
            state = dict(self.__dict__)
        del state["_locks"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._locks = PerProcess(threading.Lock)

    @property
    def _lock(self) -> threading.Lock:
        return self._locks.get()

    def record(self, entry: LedgerRecord) -> None:
        """Append one record (and its line to the file, when the ledger has one). A "sent" or
        "withdrawn" line (see LedgerRecord) goes to the file only: `records()` holds rows."""
        with self._lock:
            if entry.state == "done":
                self._records.append(entry)
            if self.path is not None:
                _append(self.path, entry.model_dump_json() + "\n")

    def write_to(self, path: Path) -> None:
        """Mirror the ledger to `path` from now on, writing the records held so far first (so a
        ledger made before its run directory existed loses nothing)."""
        with self._lock:
            self.path = path
            _append(path, "".join(entry.model_dump_json() + "\n" for entry in self._records))

    def touch(self) -> None:
        """Create the file (empty) if the ledger has one and it does not exist yet, so that a
        run without any gateway call still leaves its (empty) ledger.jsonl."""
        with self._lock:
            if self.path is not None:
                _append(self.path, "")

    def spent_usd(self) -> float:
        """The priced cost of every call so far (unpriced calls count 0): of the file's records
        when the ledger has a file (read incrementally: only lines added since the last call),
        else of the records held in memory."""
        with self._lock:
            if self.path is None:
                return sum(r.cost_usd or 0.0 for r in self._records)
            try:
                with self.path.open("rb") as fh:
                    fh.seek(self._read_offset)
                    data = fh.read()
            except FileNotFoundError:
                return self._read_usd
            done = data.rfind(b"\n") + 1  # a line still being written is read next time
            for line in data[:done].splitlines():
                if line.strip():
                    self._read_usd += LedgerRecord.model_validate_json(line).cost_usd or 0.0
            self._read_offset += done
            return self._read_usd

    def exhausted(self) -> bool:
        """True when the ledger has a dollar budget and the spend has reached it."""
        return self.max_usd is not None and self.spent_usd() >= self.max_usd

    def records(self) -> list[LedgerRecord]:
        """A copy of every record, in the order they were recorded."""
        with self._lock:
            return list(self._records)

    def totals(self, by: GroupKey | None = None) -> dict[str | None, LedgerTotals]:
        """Sums over all records (`by=None`: one entry under the key None) or grouped by a
        label (`run`, `candidate`, `node`, `role`), by `provider`, `model` or `source`, or by
        `kind` ("agents" or "meta", see `role_kind`)."""
        return group_totals(self.records(), by)


def group_totals(
    records: Sequence[LedgerRecord], by: GroupKey | None = None
) -> dict[str | None, LedgerTotals]:
    """LedgerTotals of `records` grouped as `CostLedger.totals` groups them, groups in order of
    first appearance (`by=None`: one entry under the key None). Deterministic."""
    groups: dict[str | None, list[LedgerRecord]] = {}
    for entry in records:
        groups.setdefault(_group_key(entry, by), []).append(entry)
    if not groups:
        groups[None] = []
    return {key: sum_records(items) for key, items in groups.items()}


def _group_key(entry: LedgerRecord, by: GroupKey | None) -> str | None:
    if by is None:
        return None
    if by == "kind":
        return role_kind(entry.labels.role)
    if by in ("provider", "model", "source"):
        return str(getattr(entry, by))
    value: str | None = getattr(entry.labels, by)
    return value


def sum_records(records: Sequence[LedgerRecord]) -> LedgerTotals:
    """LedgerTotals of `records` (see LedgerTotals for how unknown costs count)."""
    cost: float | None = 0.0
    unpriced = 0
    for r in records:
        if r.cost_usd is None:
            unpriced += 1
            cost = None
        elif cost is not None:
            cost += r.cost_usd
    return LedgerTotals(
        calls=len(records),
        failed_calls=sum(1 for r in records if not r.ok),
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        cache_read_tokens=sum(r.cache_read_tokens for r in records),
        cache_write_tokens=sum(r.cache_write_tokens for r in records),
        latency_s=sum(r.latency_s for r in records),
        cost_usd=cost,
        unpriced_calls=unpriced,
    )


def read_ledger(path: Path, *, torn_tail: bool = False) -> list[LedgerRecord]:
    """Every row of a ledger.jsonl file, validated, with the in-flight lines folded (see
    LedgerRecord: a request sent and never recorded is an `interrupted` row; read while a run
    is going, a request still in flight reads so too, until its row is written). A last line
    without its newline (cut off by a kill: it held no whole record) is left out. With
    `torn_tail`, a malformed last line is dropped too (a writer still appending it, read by
    another process). Raises pydantic.ValidationError on any other malformed line and
    FileNotFoundError when the file does not exist."""
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()  # torn: the next append drops it from the file too (drop_torn_tail)
    lines = [line for line in lines if line.strip()]
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(LedgerRecord.model_validate_json(line))
        except ValidationError:
            if torn_tail and number == len(lines):
                break
            raise
    return fold_in_flight(records)


def fold_in_flight(lines: Sequence[LedgerRecord]) -> list[LedgerRecord]:
    """The rows of a ledger's lines in file order: a sent line is replaced by its row (where
    the row is) or dropped with its withdrawal; a sent line left alone is an interrupted row
    (where it is)."""
    rows: list[LedgerRecord | None] = []
    sent: dict[str, int] = {}
    for line in lines:
        if line.state == "sent" and line.request_id is not None:
            sent[line.request_id] = len(rows)
            rows.append(line)
            continue
        if line.request_id is not None and line.request_id in sent:
            rows[sent.pop(line.request_id)] = None
        if line.state == "done":
            rows.append(line)
    return [_interrupted(r) if r.state == "sent" else r for r in rows if r is not None]


def _interrupted(line: LedgerRecord) -> LedgerRecord:
    message = (
        "the process ended after sending this request and before recording its outcome "
        "(killed?): the server may have received and billed it; its tokens and cost are unknown"
    )
    update = {"state": "done", "ok": False, "error": message, "error_kind": INTERRUPTED}
    return line.model_copy(update=update | {"cost_usd": None})


def _append(path: Path, text: str) -> None:
    """Append `text` to `path` (created with its directory), never through a symlink there: a
    ledger may live in a run directory an agent can write to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_append(path)
    try:
        # Another process of the run may be appending: without the lock, its line could be
        # seen half-written here and cut off as a torn tail.
        fcntl.flock(fd, fcntl.LOCK_EX)
        drop_torn_tail(fd)  # a line a kill cut off: the next record starts on its own line
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
