"""`loopwright report RUN --watch`: the loopback watcher of an evolve run. Its state tells a live
run (this test holds the run's lock, standing for the evolve process) from a finished one and
a dead one; its token changes as progress.jsonl grows; a stop needs the page's token; the CLI
prints the URL and how to stop, and ends when the page stops it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.report import Watcher, run_state
from loopwright.report._watch import STOP_HEADER
from loopwright.search import evolve_run
from tests.report.conftest import CLI, CliRun


def young_copy(run: Path, dest: Path) -> tuple[Path, list[str], bytes]:
    """A copy of a finished run taken back to its first progress line and no checkpoint: what
    a run looks like just after it started. Returns the copy, the full progress lines and the
    checkpoint's bytes, to grow it again."""
    shutil.copytree(run, dest)
    lines = (dest / "progress.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    checkpoint = (dest / "checkpoint.json").read_bytes()
    (dest / "checkpoint.json").unlink()
    (dest / "result.json").unlink(missing_ok=True)
    (dest / "progress.jsonl").write_text(lines[0], encoding="utf-8")
    return dest, lines, checkpoint


@pytest.fixture
def served(sim_evolution: CliRun, tmp_path: Path) -> Iterator[tuple[Watcher, Path]]:
    run, _, _ = young_copy(sim_evolution.run_dir, tmp_path / "young")
    watcher = Watcher(run, interval_s=0.2)
    thread = threading.Thread(target=watcher.serve, daemon=True)
    thread.start()
    try:
        yield watcher, run
    finally:
        watcher.stop()
        thread.join(timeout=10)


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as reply:
        return reply.status, reply.read().decode("utf-8")


def test_the_state_tells_a_live_run_from_a_finished_and_a_dead_one(
    sim_evolution: CliRun, tmp_path: Path
) -> None:
    run, lines, checkpoint = young_copy(sim_evolution.run_dir, tmp_path / "r")
    with evolve_run(run).lock():
        live = run_state(run)
        assert live.state == "live" and live.holder == os.getpid()
        assert f"pid {os.getpid()}" in live.text and "LIVE" in live.text
        (run / "progress.jsonl").write_text("".join(lines[:-1]), encoding="utf-8")
        grown = run_state(run)
        assert grown.token != live.token and grown.events == len(lines) - 1
    dead = run_state(run)
    assert dead.state == "interrupted" and dead.holder is None
    assert "NOT RUNNING" in dead.text and "--resume" in dead.text
    assert dead.token != grown.token  # the holder went: the page must learn it
    (run / "progress.jsonl").write_text("".join(lines), encoding="utf-8")
    (run / "checkpoint.json").write_bytes(checkpoint)
    done = run_state(run)
    assert done.state == "finished" and "max_generations" in done.text


def test_the_server_serves_the_live_page_the_report_and_the_state(
    served: tuple[Watcher, Path],
) -> None:
    watcher, _ = served
    code, page = _get(watcher.url)
    assert code == 200 and 'id="live-bar"' in page and f'nonce="{watcher.nonce}"' in page
    assert "https://" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )  # offline: nothing to fetch but the watcher itself
    assert re.search(r"script-src &#x27;nonce-[^&]+&#x27;; connect-src &#x27;self&#x27;", page)
    code, bare = _get(watcher.url + "report")
    assert code == 200 and "live-bar" not in bare and "<script" not in bare
    code, state = _get(watcher.url + "state")
    assert '"state": "interrupted"' in state  # the copy has no live holder
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(watcher.url + "nothing-here")
    assert err.value.code == 404


def test_a_stop_needs_the_pages_token(served: tuple[Watcher, Path]) -> None:
    watcher, _ = served
    forged = urllib.request.Request(watcher.url + "stop", method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(forged, timeout=30)
    assert err.value.code == 403 and not watcher.stopped_from_page
    assert _get(watcher.url + "state")[0] == 200  # still serving
    real = urllib.request.Request(
        watcher.url + "stop", method="POST", headers={STOP_HEADER: watcher.nonce}
    )
    with urllib.request.urlopen(real, timeout=30) as reply:
        assert reply.status == 200
    assert watcher.stopped_from_page


def test_watch_refuses_what_it_cannot_follow(
    sim_evolution: CliRun, sim_run: CliRun, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="not a loopwright run directory"):
        Watcher(tmp_path)
    with pytest.raises(UsageError, match="--watch follows evolve runs"):
        Watcher(sim_run.run_dir)
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(sim_evolution.run_dir / "config.yaml", empty / "config.yaml")
    with pytest.raises(UsageError, match="nothing to watch"):
        Watcher(empty)
    with evolve_run(empty).lock():  # a run just started (no progress yet) is watched, not refused
        Watcher(empty)._server.server_close()


def test_the_cli_prints_the_url_and_how_to_stop_and_ends_on_the_pages_stop(
    sim_evolution: CliRun, tmp_path: Path
) -> None:
    run, _, _ = young_copy(sim_evolution.run_dir, tmp_path / "young")
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "report", str(run), "--watch", "--interval", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/)", first)
        assert url is not None, first + proc.stderr.read() if proc.stderr else first
        status, stop_hint = proc.stdout.readline(), proc.stdout.readline()
        assert "NOT RUNNING" in status and "Ctrl-C" in stop_hint and "Stop watching" in stop_hint
        _, page = _get(url.group(1))
        nonce = re.search(r'<script nonce="([^"]+)"', page)
        assert nonce is not None
        stop = urllib.request.Request(
            url.group(1) + "stop", method="POST", headers={STOP_HEADER: nonce.group(1)}
        )
        urllib.request.urlopen(stop, timeout=30).close()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, err
    assert "stopped watching (from the page)" in out
