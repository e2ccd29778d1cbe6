"""The Ray executor on a real local cluster: a head and one more worker node started with
`ray start` on loopback, a small `loopwright evolve --executor ray --ray-address`, and the same
checkpoint and records as the local executor gives for the same seed.

Skipped when ray is not installed (`pip install 'loopwright[ray]'`). The cluster is stopped by
killing the processes this test started (the two `ray start` processes and everything under
them), never with `ray stop`, which would stop every Ray on the machine."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loopwright.store import RunIndex
from loopwright.workflow import builtin_workflow, workflow_to_yaml
from tests.evaluation.test_executor_engine import records, state

pytest.importorskip("ray", reason="ray is not installed: pip install 'loopwright[ray]'")

RAY = str(Path(sys.executable).with_name("ray"))
# No token authentication on this throwaway loopback cluster: Ray 2.5x turns it on when a
# ~/.ray/auth_token exists, and the nodes and the driver must agree.
ENV = {**os.environ, "RAY_AUTH_MODE": "disabled"}
CLI = "import sys; from loopwright.cli import main; sys.exit(main(sys.argv[1:]))"
ARGS = [
    "evolve", "--bench", "mini", "--model", "sim",
    "--train", "l1-slugify", "--holdout", "l1-rle-decode", "--population", "2",
    "--generations", "1", "--holdout-reps", "1", "--seed", "3", "--sandbox", "local",
    "--no-report",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def up(log: Path, proc: subprocess.Popen[bytes]) -> bool:
    """True once `ray start` says the node runs; fails the test at once if it exited."""
    if "Ray runtime started" in log.read_text(errors="replace"):
        return True
    if proc.poll() is not None:
        pytest.fail(
            f"ray start exited {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
        )
    return False


def wait_for(what: str, ready: Callable[[], bool], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen in {timeout:.0f}s:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def tree(pid: int) -> list[int]:
    """`pid` and every process under it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                parent = int(stat[stat.rfind(")") + 2 :].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        queue.extend(children.get(current, ()))
    return found


@contextlib.contextmanager
def cluster() -> Iterator[str]:
    """A Ray head and one more worker node (1 CPU, 100 MB object store each) on 127.0.0.1;
    yields the address once both nodes are up."""
    temp = Path(tempfile.mkdtemp(prefix="lwray-", dir="/tmp"))  # short: Ray's socket paths
    port = free_port()
    address = f"127.0.0.1:{port}"
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats",
              "--object-store-memory=100000000"]  # fmt: skip
    head_args = ["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for name, extra in (("head", head_args), ("worker", [f"--address={address}"])):
            log = temp / f"{name}.log"
            with log.open("wb") as out:
                proc = subprocess.Popen([RAY, "start", *common, *extra], stdout=out, env=ENV,
                                        stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
            procs.append(proc)
            wait_for(f"the {name} node up", lambda: up(log, proc), log)  # noqa: B023
        yield address
    finally:
        victims = [pid for proc in procs for pid in tree(proc.pid)]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for proc in procs:
            proc.wait(timeout=30)
        shutil.rmtree(temp, ignore_errors=True)


def seed_file(tmp: Path) -> Path:
    """research-build-verify without its gate: a study node and a builder (cheap to run; its
    minimal design, the builder alone, is another workflow)."""
    rbv = builtin_workflow("research-build-verify")
    wf = rbv.model_copy(
        update={
            "name": "study-build",
            "nodes": tuple(n for n in rbv.nodes if n.id != "gate_verify"),
            "edges": tuple(e for e in rbv.edges if "gate_verify" not in (e.source, e.target)),
            "frozen": (),
        }
    )
    path = tmp / "study-build.yaml"
    path.write_text(workflow_to_yaml(wf), encoding="utf-8")
    return path


def evolve(run_dir: Path, seed: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *ARGS, "--seed-workflow", str(seed), "--run-dir", str(run_dir),
         *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )  # fmt: skip


def finish(proc: subprocess.Popen[bytes]) -> None:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (out + err).decode(errors="replace")[-3000:]


def test_evolve_on_a_ray_cluster_gives_the_local_executors_records(tmp_path: Path) -> None:
    seed = seed_file(tmp_path)
    local = evolve(tmp_path / "run-loc", seed, "--executor", "local", "--workers", "2")
    with cluster() as address:  # the local run goes on while the cluster starts
        on_ray = evolve(tmp_path / "run-ray", seed, "--executor", "ray", "--ray-address", address)
        finish(on_ray)
    finish(local)

    reference = state(tmp_path / "run-loc")
    assert sum(len(i["results"]) for i in reference["individuals"].values()) >= 3
    assert state(tmp_path / "run-ray") == reference
    assert records(tmp_path / "run-ray") == records(tmp_path / "run-loc")
    with RunIndex.of_run(tmp_path / "run-ray") as index:
        assert {row.executor for row in index.evaluations("run-ray")} == {"ray"}
