"""No HTTP connection crosses a fork: a process forked after the parent called a real provider
(reflection, mutation) opens its own connections. Before the fix, LiteLLM's cached client (with
its pool of keep-alive connections) was inherited by every forked worker, so two processes
wrote requests onto one socket: bodies the server could not parse, replies read by the wrong
process. The loopback server's log names the pids holding each request's connection."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from loopwright.models import (
    LEDGER_FILE,
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    Message,
    import_litellm,
    label_scope,
    read_ledger,
)
from loopwright.models._per_process import fresh_litellm_clients
from tests.models.loopback import LoopbackServer, role_answers
from tests.models.test_gateway_server import DUMMY_KEY

CALLS_PER_CHILD = 6


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(role_answers).serving() as running:
        yield running


def _gateway(url: str, ledger: CostLedger) -> LiteLLMGateway:
    settings = GatewaySettings(api_base=url, timeout_s=5, max_attempts=1)
    return LiteLLMGateway("openai/loopback-coder", settings, api_key=DUMMY_KEY, ledger=ledger)


def _child(url: str, ledger_path: Path, name: str) -> None:
    gateway = _gateway(url, CostLedger(ledger_path))
    with label_scope(role=name):
        for _ in range(CALLS_PER_CHILD):
            gateway.chat([Message("user", f"{name} says hi")], [])


def test_a_forked_worker_never_writes_on_the_parents_connection(
    server: LoopbackServer, tmp_path: Path
) -> None:
    ledger = CostLedger(tmp_path / LEDGER_FILE)
    with label_scope(role="meta:reflector"):  # the parent's own call, as reflection makes
        _gateway(server.url, ledger).chat([Message("user", "reflect")], [])
    ctx = multiprocessing.get_context("fork")  # as the local executor starts its workers
    children = [
        ctx.Process(target=_child, args=(server.url, tmp_path / LEDGER_FILE, f"w{i}"))
        for i in range(2)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=30)
    for child in children:  # before the fix: a child waiting for a reply its sibling read
        if child.exitcode is None:
            child.kill()
            child.join()
    assert server.log.shared() == []  # no connection was held by two processes
    assert server.log.unparsed() == []
    assert [c.exitcode for c in children] == [0, 0]
    records = read_ledger(tmp_path / LEDGER_FILE)
    assert len(server.log.snapshot()) == len(records) == 1 + 2 * CALLS_PER_CHILD
    assert all(r.ok for r in records)


def _idle_child(ready: Connection, go: Connection) -> None:
    ready.send(True)  # forked: LiteLLM's inherited sockets are closed here already
    go.recv()  # alive while the parent calls again on its own connection; makes no call


def test_a_forked_worker_closes_its_copy_of_the_parents_connection_at_the_fork(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """Before, the child dropped LiteLLM's clients without closing them: it kept the parent's
    idle keep-alive socket open for its whole life (the server saw the parent's next request
    on a connection two processes held, and the connection could never end while it lived)."""
    gateway = _gateway(server.url, CostLedger(tmp_path / LEDGER_FILE))
    gateway.chat([Message("user", "before the fork")], [])
    ctx = multiprocessing.get_context("fork")
    ready_recv, ready_send = ctx.Pipe(duplex=False)
    go_recv, go_send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_idle_child, args=(ready_send, go_recv))
    child.start()
    try:
        assert ready_recv.poll(30) and ready_recv.recv()
        gateway.chat([Message("user", "while the child lives")], [])
    finally:
        go_send.send(True)
        child.join(timeout=30)
    first, second = server.log.snapshot()
    assert second.port == first.port  # the parent's kept-alive connection, used again
    assert server.log.shared() == []
    assert child.exitcode == 0


def test_a_forked_process_drops_litellms_clients_and_litellm_makes_new_ones() -> None:
    litellm = import_litellm()
    cache = litellm.in_memory_llm_clients_cache
    assert litellm.module_level_client is not None  # made (lazily) in this process
    assert not fresh_litellm_clients(litellm)  # the process that made them keeps them
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        dropped_again, same_cache, client_ok = pool.apply(_in_child, (id(cache),))
    assert not dropped_again and not same_cache and client_ok


def _in_child(parent_cache: int) -> tuple[bool, bool, bool]:
    litellm = import_litellm()
    dropped_again = fresh_litellm_clients(litellm)  # nothing left: dropped at the fork
    client = litellm.module_level_client  # made again, lazily, in this process
    return dropped_again, id(litellm.in_memory_llm_clients_cache) == parent_cache, bool(client)
