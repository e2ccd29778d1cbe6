"""Claims of work in flight in a shared fitness cache: a run does not compute an evaluation that
another live run has claimed; it waits for the result. A claim whose owner died (its lease
expired, or at once for a process on this host) or that ended without a cacheable result is
taken over (issue 21, item 9)."""

from __future__ import annotations

import dataclasses
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.evaluation import CachedExecutor, EvalJob, FitnessCache, SerialExecutor, cache_key
from loopwright.store import CLAIMS_SCHEMA_VERSION, CacheTable, RunIndex
from tests.evaluation.test_cache import Counting
from tests.evaluation.test_executor import evaluator, one_builder, tasks
from tests.evaluation.test_executor_engine import state

CLI = "import sys; from loopwright.cli import main; sys.exit(main(sys.argv[1:]))"
EVOLVE = ["evolve", "--bench", "mini", "--model", "sim?latency=0.05",
          "--seed-workflow", "builder-only", "--train", "l1-slugify,l1-csv-row",
          "--holdout", "l1-rle-decode", "--population", "2", "--generations", "1",
          "--holdout-reps", "1", "--seed", "3", "--sandbox", "local", "--workers", "1",
          "--no-report"]  # fmt: skip


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_claim_holds_until_released_expired_or_its_owner_is_dead(tmp_path: Path) -> None:
    with CacheTable(tmp_path / "runs.db") as table:
        assert table.claim("k", "otherhost:1:a", 60) == "claimed"
        assert table.claim("k", "otherhost:1:a", 60) == "claimed"  # its own again
        assert table.claim("k", "otherhost:2:b", 60) == "taken"
        table.release(["k"], "otherhost:1:a")
        assert table.claim("k", "otherhost:2:b", 0.2) == "claimed"
        assert table.claim("k", "otherhost:1:a", 60) == "taken"
        time.sleep(0.3)  # the lease ran out: its owner stopped renewing it
        assert table.claim("k", "otherhost:1:a", 60) == "claimed"
        here = f"{socket.gethostname()}:{dead_pid()}:c"  # a process of this host, gone
        assert table.claim("j", here, 3600) == "claimed"
        assert table.claim("j", "otherhost:1:a", 60) == "claimed"
        assert table.renew("otherhost:1:a", 60) == 2
        assert [k for k, _, _ in table.claims()] == ["j", "k"]


def test_the_claims_table_is_versioned(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    CacheTable(path).close()
    with sqlite3.connect(path) as conn:
        (found,) = conn.execute(
            "SELECT value FROM meta WHERE key = 'cache_claims_version'"
        ).fetchone()
        assert found == str(CLAIMS_SCHEMA_VERSION)
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'cache_claims_version'")
    with pytest.raises(ConfigError, match="claims of another version"):
        CacheTable(path)


def test_a_claimed_job_waits_for_its_result_and_a_dead_claimers_job_is_run(
    tmp_path: Path,
) -> None:
    ev = evaluator(tmp_path / "marks")
    counter = Counting(ev)
    ev = dataclasses.replace(ev, make_model=counter)
    (task,) = tasks(tmp_path, "calc")
    wf = one_builder()
    shared = tmp_path / "shared.db"
    cache = FitnessCache(shared)
    job = EvalJob(wf, task, 0, tmp_path / "run-b", "run-b")
    key = cache_key(ev, job)

    # another host's run holds the claim for 0.5 s and never renews it: it died
    with CacheTable(shared) as table:
        assert table.claim(key, "otherhost:1:a", 0.5) == "claimed"
    executor = CachedExecutor(SerialExecutor(), cache, poll_s=0.05)
    (result,) = executor.run(ev, [job])
    assert not result.cached and counter.made == 1 and executor.waited == 0
    assert CacheTable(shared).claims() == []  # released once stored

    # a live claimer that stores the result: the waiting run is served from the cache
    other = EvalJob(wf, task, 1, tmp_path / "run-b", "run-b")
    with CacheTable(shared) as table:
        assert table.claim(cache_key(ev, other), "otherhost:1:a", 60) == "claimed"
    record = ev.run_job(dataclasses.replace(other, root=tmp_path / "run-a"))

    def store() -> None:  # the claimer finishing, in another thread: its own connection
        FitnessCache(shared).put(ev, other, record)

    later = threading.Timer(0.3, store)
    later.start()
    (served,) = executor.run(ev, [other])
    later.join()
    assert served.cached and executor.waited == 1 and counter.made == 2
    assert served.record == record


def test_two_processes_sharing_a_cache_compute_each_evaluation_once(tmp_path: Path) -> None:
    shared = tmp_path / "shared.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                CLI,
                *EVOLVE,
                "--cache",
                str(shared),
                "--run-dir",
                str(tmp_path / name),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        for name in ("run-a", "run-b")
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out.decode()[-3000:]
    computed, served = 0, 0
    for name in ("run-a", "run-b"):
        with RunIndex.of_run(tmp_path / name) as index:
            rows = index.evaluations(name)
        computed += sum(not r.cached for r in rows)
        served += sum(r.cached for r in rows)
    with CacheTable(shared) as table:
        stored = len(table)
        assert table.claims() == []
    print(f"{computed} evaluations computed, {served} served from the shared cache")
    assert computed == stored and served >= stored  # each one computed once, by one run
    assert state(tmp_path / "run-a") == state(tmp_path / "run-b")
