"""The load tests' "no connection held by two processes" check counts a process that keeps a
client's connection, not one that held a copy of its descriptor for an instant.

Any fork copies the descriptor table. A `subprocess` child started by another thread of the
client's process holds every descriptor of that process from its fork to its exec, then drops
them (close_fds, and sockets are close-on-exec) without ever touching them. Under load that
window is long enough for the server's /proc walk to see it: in the research load test, two
smoke runs in threads of one process (one starting a sandbox command while the other's builder
request arrived) failed a CI run with "a builder request on a connection held by two pids".
These tests make both kinds of second holder on purpose, over a plain keep-alive HTTP/1.1
connection: one that lets go (not sharing) and one that keeps it (sharing)."""

from __future__ import annotations

import http.client
import json
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tests.models.loopback import LoopbackServer, role_answers

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def _post(conn: http.client.HTTPConnection) -> int:
    conn.request("POST", "/v1/chat/completions", BODY, {"Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    return response.status


def _connect(server: LoopbackServer) -> http.client.HTTPConnection:
    host, port = server.url.removeprefix("http://").removesuffix("/v1").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def _wait(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


@contextmanager
def _command_in_its_exec_window() -> Iterator[Callable[[], None]]:
    """A `subprocess` child held between its fork and its exec (by a preexec_fn waiting on a
    pipe) for as long as the block wants; calling the yielded function lets it exec."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()

    def hold() -> None:  # in the child, after the fork, before close_fds and the exec
        os.write(ready_w, b"x")
        select.select([go_r], [], [], 60)

    def start() -> None:
        subprocess.run(["true"], preexec_fn=hold, check=True)  # preexec_fn: on purpose

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    try:
        assert os.read(ready_r, 1) == b"x"  # the child is in its window: it holds our fds
        yield lambda: os.write(go_w, b"x") and None
    finally:
        os.write(go_w, b"x")
        thread.join(timeout=30)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)


def test_a_command_between_its_fork_and_its_exec_does_not_share_the_connection() -> None:
    with LoopbackServer(role_answers).serving() as server:
        conn = _connect(server)
        assert _post(conn) == 200  # the connection is open and kept alive
        with _command_in_its_exec_window() as release:
            reply: list[int] = []
            sender = threading.Thread(target=lambda: reply.append(_post(conn)))
            sender.start()  # the request arrives while the child still holds the descriptor
            _wait(lambda: server.looked_up >= 2, "the second request to arrive")
            release()  # the child execs: its copy is closed, never used
            sender.join(timeout=30)
        conn.close()
    assert reply == [200]
    first, second = server.log.snapshot()
    assert len(first.pids) == 1 and first.kept == first.pids
    assert len(second.pids) == 2  # the check saw the child (the old check failed here)
    assert second.kept == (os.getpid(),)
    assert server.log.glimpsed() == [second]
    assert server.log.shared() == []


def test_a_process_that_keeps_the_connection_shares_it() -> None:
    with LoopbackServer(role_answers, settle_s=0.3).serving() as server:
        conn = _connect(server)
        assert _post(conn) == 200
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child keeps its copy of the connection and never uses it
            try:
                select.select([go_r], [], [], 60)
            finally:
                os._exit(0)
        try:
            assert _post(conn) == 200
        finally:
            os.write(go_w, b"x")
            os.waitpid(pid, 0)
            os.close(go_r)
            os.close(go_w)
        conn.close()
    second = server.log.snapshot()[1]
    assert set(second.kept) == {os.getpid(), pid}
    assert server.log.shared() == [second]
