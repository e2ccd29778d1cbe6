"""A ledger row is never lost to a kill: the gateway writes an in-flight line before each
request leaves and the attempt's row when its outcome is known, so a worker SIGKILLed in
between (a job timeout kills the worker's tree) leaves an `interrupted` row for a request the
server received. Before, the row was written only after the reply: a kill while the request
was in flight, or between reading the reply and appending its row, lost it (server requests >
ledger rows, and spend the ledger never saw). A request that never left is still no row."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from loopwright.models import (
    INTERRUPTED,
    LEDGER_FILE,
    CostLedger,
    GatewayError,
    GatewaySettings,
    LedgerRecord,
    LiteLLMGateway,
    Message,
    label_scope,
    read_ledger,
)
from tests.models.loopback import Faults, LoopbackServer, role_answers
from tests.models.test_gateway_server import DUMMY_KEY

MODEL = "openai/loopback-coder"


def _call(url: str, ledger_path: Path) -> None:
    settings = GatewaySettings(api_base=url, timeout_s=120, max_attempts=1)
    gateway = LiteLLMGateway(MODEL, settings, api_key=DUMMY_KEY, ledger=CostLedger(ledger_path))
    with label_scope(role="builder", node="builder"):
        gateway.chat([Message("user", "hi")], [])


def _die_before_each_row(url: str, ledger_path: Path) -> None:
    """Killed between reading the reply and appending its row (the window a kill could hit)."""
    record = CostLedger.record

    def record_or_die(self: CostLedger, entry: LedgerRecord) -> None:
        if entry.state == "done":
            os.kill(os.getpid(), signal.SIGKILL)
        record(self, entry)

    CostLedger.record = record_or_die  # type: ignore[method-assign]
    _call(url, ledger_path)


def _wait(condition: object, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _only_row(ledger_path: Path) -> LedgerRecord:
    rows = read_ledger(ledger_path)
    assert len(rows) == 1, rows
    return rows[0]


def test_a_worker_killed_while_its_request_is_in_flight_leaves_an_interrupted_row(
    tmp_path: Path,
) -> None:
    ledger_path = tmp_path / LEDGER_FILE
    hanging = Faults(slow=1.0, slow_s=60)  # the server holds the reply
    with LoopbackServer(role_answers, hanging).serving() as server:
        worker = multiprocessing.get_context("fork").Process(
            target=_call, args=(server.url, ledger_path)
        )
        worker.start()
        _wait(lambda: server.looked_up >= 1)  # the server has the request
        os.kill(worker.pid or 0, signal.SIGKILL)
        worker.join(timeout=30)
    assert worker.exitcode == -signal.SIGKILL
    row = _only_row(ledger_path)  # one request received, one row
    assert not row.ok and row.error_kind == INTERRUPTED and row.cost_usd is None
    assert row.labels.role == "builder" and row.attempt == 1 and row.request_bytes


def test_a_worker_killed_between_the_reply_and_its_row_leaves_an_interrupted_row(
    tmp_path: Path,
) -> None:
    ledger_path = tmp_path / LEDGER_FILE
    with LoopbackServer(role_answers).serving() as server:
        worker = multiprocessing.get_context("fork").Process(
            target=_die_before_each_row, args=(server.url, ledger_path)
        )
        worker.start()
        worker.join(timeout=60)
    assert worker.exitcode == -signal.SIGKILL
    assert [e.status for e in server.log.snapshot()] == [200]  # replied, and billed
    row = _only_row(ledger_path)
    assert row.error_kind == INTERRUPTED and row.labels.role == "builder"


def test_a_request_that_never_left_is_no_row(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ledger_path = tmp_path / LEDGER_FILE
    settings = GatewaySettings(
        api_base=f"http://127.0.0.1:{port}/v1", timeout_s=5, max_attempts=2, backoff_base_s=0.01
    )
    gateway = LiteLLMGateway(MODEL, settings, api_key=DUMMY_KEY, ledger=CostLedger(ledger_path))
    with pytest.raises(GatewayError) as caught:
        gateway.chat([Message("user", "hi")], [])
    assert caught.value.attempts == 2  # retried (LiteLLM calls a refused connection a 500)
    lines = ledger_path.read_text().splitlines()
    assert len(lines) == 4  # each attempt: its in-flight line, then its withdrawal
    assert read_ledger(ledger_path) == [] and gateway.ledger.records() == []  # type: ignore[union-attr]


def test_rows_read_back_in_file_order_with_their_in_flight_lines_folded(tmp_path: Path) -> None:
    """Two calls from one gateway: each a sent line and a row; read back, two rows only."""
    ledger_path = tmp_path / LEDGER_FILE
    with LoopbackServer(role_answers).serving() as server:
        _call(server.url, ledger_path)
        _call(server.url, ledger_path)
    lines = [LedgerRecord.model_validate_json(x) for x in ledger_path.read_text().splitlines()]
    assert [x.state for x in lines] == ["sent", "done", "sent", "done"]
    assert lines[0].request_id == lines[1].request_id != lines[2].request_id
    rows = read_ledger(ledger_path)
    assert rows == [lines[1], lines[3]] and all(r.ok for r in rows)
    assert CostLedger(ledger_path).spent_usd() == sum(r.cost_usd or 0.0 for r in rows)
