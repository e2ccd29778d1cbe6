"""`loopwright report RUN --watch`: a loopback web server that shows an evolve run's report
and refreshes it in the browser as progress.jsonl grows, telling a live run (a process holds
its lock) from one that finished or died. Reads only; the run never notices it is watched.

Routes: `/` the live page, `/report` the report alone (what the page swaps in), `/state` the
run's state as JSON, `POST /stop` ends the watcher (not the run).
"""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from loopwright.errors import LoopwrightError, UsageError
from loopwright.report._kind import detect_kind
from loopwright.report._watch_page import LIVE_CSP, live_page, state_json
from loopwright.report._write import render_report
from loopwright.search import RunFinished, evolve_run, read_progress

__all__ = ["STOP_HEADER", "RunState", "Watcher", "check_watchable", "run_state"]

PROGRESS_FILE = "progress.jsonl"  # search's progress log (read through read_progress)
STOP_HEADER = "X-Loopwright-Watch"
_WRITER = {"ab": "ab record", "research": "research init"}
"""The header a stop request carries the page's nonce in."""


@dataclass(frozen=True, slots=True)
class RunState:
    """What the watcher knows of a run at one moment. `state` is `live` (a process holds the
    lock and progress was logged), `waiting` (held, no progress yet), `finished` (the run
    logged run_finished) or `interrupted` (no holder, not finished). `token` changes whenever
    progress.jsonl or checkpoint.json changes, and when the holder comes or goes."""

    state: str
    text: str
    token: str
    holder: int | None
    events: int


def _stat_key(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_size}.{st.st_mtime_ns}"


def run_state(run_dir: Path) -> RunState:
    """Read the state of the evolve run at `run_dir` (cheap: two stats, /proc/locks, and the
    progress log). Deterministic for the same files and holder."""
    holder = evolve_run(run_dir).holder()
    token = "|".join(
        [_stat_key(run_dir / PROGRESS_FILE), _stat_key(run_dir / "checkpoint.json"), str(holder)]
    )
    events = read_progress(run_dir)
    done = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    count = f"{len(events)} progress events"
    if holder is not None:
        state = "live" if events else "waiting"
        text = (
            f"LIVE: pid {holder} holds the run's lock · {count} · refreshing as it grows"
            if events
            else f"LIVE: pid {holder} holds the run's lock · no progress yet (calibrating)"
        )
    elif done is not None:
        state = "finished"
        text = (
            f"FINISHED: stopped with {done.stop_reason} after {done.generations} generations "
            f"· {count} · no process holds its lock"
        )
    else:
        state = "interrupted"
        text = (
            f"NOT RUNNING: no process holds the run's lock and it did not finish (interrupted) "
            f"· {count} · resume with: loopwright evolve --resume --run-dir {run_dir}"
        )
    return RunState(state, text, token, holder, len(events))


def check_watchable(run_dir: Path) -> None:
    """UsageError unless `run_dir` is an evolve run with progress or a live holder."""
    kind = detect_kind(run_dir)  # UsageError for a directory that is no run
    if kind != "evolve":
        raise UsageError(
            f"--watch follows evolve runs as their progress.jsonl grows; {run_dir} is not one",
            got=f"a directory of `loopwright {_WRITER.get(kind, kind)}` (kind {kind!r})",
            fix=f"write its report once with `loopwright report {run_dir}` (without --watch)",
        )
    if not (run_dir / PROGRESS_FILE).is_file() and evolve_run(run_dir).holder() is None:
        raise UsageError(
            f"nothing to watch in {run_dir}: it has no progress yet and no process is running it",
            got=f"no {PROGRESS_FILE}, and no process holds {evolve_run(run_dir).lock_path.name}",
            fix="start the run first (`loopwright evolve --run-dir DIR`, or `--resume`), then "
            "watch it; `loopwright report DIR` writes the page of what is there",
        )


class Watcher:
    """The watch server of one evolve run on `host:port` (port 0: a free one). `serve()` blocks
    until `stop()` is called, the page's Stop button is pressed, or the process is interrupted.
    UsageError from the constructor when the run cannot be watched or the port is taken."""

    def __init__(
        self, run_dir: str | os.PathLike[str], *, host: str = "127.0.0.1", port: int = 0,
        interval_s: float = 2.0,
    ) -> None:  # fmt: skip
        self.run_dir = Path(run_dir)
        if not interval_s > 0:
            raise UsageError(
                "the refresh interval must be a positive number of seconds",
                got=str(interval_s),
                fix="pass --interval 2 (the default), or any value above 0",
            )
        check_watchable(self.run_dir)
        self.interval_s = interval_s
        self.stopped_from_page = False
        self._nonce = secrets.token_urlsafe(16)  # the page's script runs only with this
        try:
            self._server = ThreadingHTTPServer((host, port), _handler(self))
        except OSError as exc:
            raise UsageError(
                f"the watcher cannot listen on {host}:{port}",
                got=str(exc),
                fix="pass another --port, or --port 0 for any free one",
            ) from exc
        self._server.daemon_threads = True

    @property
    def nonce(self) -> str:
        """This watcher's page token (its script nonce, and what a stop request carries)."""
        return self._nonce

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def serve(self) -> None:
        """Serve until stopped; closes the socket on the way out."""
        try:
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._server.server_close()

    def stop(self) -> None:
        """End `serve()` (from another thread)."""
        threading.Thread(target=self._server.shutdown, daemon=True).start()

    def page(self, *, live: bool) -> bytes:
        """The report, made live (`/`) or bare (`/report`). LoopwrightError passes through."""
        if not live:
            return render_report(self.run_dir).html.encode("utf-8")
        state = run_state(self.run_dir)  # before rendering: a page is never older than its token
        report = render_report(self.run_dir).html
        html = live_page(
            report, state=state.state, text=state.text, token=state.token,
            interval_s=self.interval_s, nonce=self.nonce,
        )  # fmt: skip
        return html.encode("utf-8")

    def authorised(self, header: str | None) -> bool:
        """A stop request carries the page's nonce (a page of another site cannot send it)."""
        return header is not None and secrets.compare_digest(header, self._nonce)


def _handler(watcher: Watcher) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return  # the terminal shows the URL and the state, not every poll

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            if ctype.startswith("text/html"):
                csp = LIVE_CSP.format(nonce=watcher.nonce)
                self.send_header("Content-Security-Policy", csp)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            try:
                if path == "/":
                    self._send(200, watcher.page(live=True), "text/html; charset=utf-8")
                elif path == "/report":
                    self._send(200, watcher.page(live=False), "text/html; charset=utf-8")
                elif path == "/state":
                    s = run_state(watcher.run_dir)
                    body = state_json(s.state, s.text, s.token, s.holder, s.events)
                    self._send(200, body, "application/json")
                else:
                    self._send(404, b"not found", "text/plain; charset=utf-8")
            except LoopwrightError as exc:  # a file caught mid-change: the page keeps the last
                self._send(503, str(exc).encode("utf-8"), "text/plain; charset=utf-8")

        def do_POST(self) -> None:
            if self.path != "/stop":
                self._send(404, b"not found", "text/plain; charset=utf-8")
                return
            if not watcher.authorised(self.headers.get(STOP_HEADER)):
                self._send(403, b"a stop needs the page's token", "text/plain; charset=utf-8")
                return
            watcher.stopped_from_page = True  # before the reply: whoever reads it sees the flag
            self._send(200, b"stopped", "text/plain; charset=utf-8")
            watcher.stop()

    return Handler
