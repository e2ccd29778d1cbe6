"""The SQLite run index on disk: its file name, its schema (version 1) and how it is opened.

One file (`runs.db`) can hold the index of several runs (rows carry `run_id`) and the fitness
cache, so a cache can be shared between runs by pointing them at the same file. The database
is opened in WAL mode: readers (a `status` command, a report) never block the one writer, and
two processes sharing a cache wait for each other (busy timeout) instead of failing.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from loopwright._caller import spoken
from loopwright._version import __version__
from loopwright.errors import ConfigError
from loopwright.store._paths import check_output_file

__all__ = ["INDEX_FILE", "INDEX_SCHEMA_VERSION", "connect"]

INDEX_FILE = "runs.db"
INDEX_SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0

_DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS individuals (
    run_id        TEXT NOT NULL,
    individual_id TEXT NOT NULL,
    generation    INTEGER NOT NULL,
    workflow_hash TEXT NOT NULL,
    workflow_name TEXT NOT NULL,
    operator      TEXT NOT NULL,
    parents_json  TEXT NOT NULL,
    target        TEXT,
    reason        TEXT NOT NULL,
    mode          TEXT NOT NULL,
    PRIMARY KEY (run_id, individual_id)
);
CREATE TABLE IF NOT EXISTS evaluations (
    evaluation_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id           TEXT NOT NULL,
    individual_id    TEXT NOT NULL,
    generation       INTEGER,
    split            TEXT NOT NULL,
    task_id          TEXT NOT NULL,
    task_digest      TEXT NOT NULL,
    repetition       INTEGER NOT NULL,
    workflow_hash    TEXT NOT NULL,
    model            TEXT NOT NULL,
    simulated        INTEGER NOT NULL,
    seed             INTEGER NOT NULL,
    score            REAL NOT NULL,
    resolved         INTEGER NOT NULL,
    invalid          INTEGER NOT NULL,
    failure_category TEXT NOT NULL,
    run_status       TEXT NOT NULL,
    input_tokens     INTEGER NOT NULL,
    output_tokens    INTEGER NOT NULL,
    cached_tokens    INTEGER NOT NULL,
    cost_usd         REAL,
    duration_s       REAL NOT NULL,
    record_path      TEXT NOT NULL,
    cached           INTEGER NOT NULL,
    attempts         INTEGER NOT NULL,
    executor         TEXT NOT NULL,
    finished_at      TEXT NOT NULL,
    UNIQUE (run_id, individual_id, split, task_id, repetition)
);
CREATE INDEX IF NOT EXISTS evaluations_by_task ON evaluations (run_id, task_id);
CREATE TABLE IF NOT EXISTS test_outcomes (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations (evaluation_id) ON DELETE CASCADE,
    test_id       TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    fail_to_pass  INTEGER NOT NULL,
    passed        INTEGER NOT NULL,
    PRIMARY KEY (evaluation_id, test_id)
);
CREATE TABLE IF NOT EXISTS job_failures (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations (evaluation_id) ON DELETE CASCADE,
    attempt       INTEGER NOT NULL,
    status        TEXT NOT NULL,
    message       TEXT NOT NULL,
    duration_s    REAL NOT NULL,
    kept_at       TEXT,
    PRIMARY KEY (evaluation_id, attempt)
);
CREATE TABLE IF NOT EXISTS cost_ledger (
    entry_id      INTEGER PRIMARY KEY,
    evaluation_id INTEGER NOT NULL REFERENCES evaluations (evaluation_id) ON DELETE CASCADE,
    run_id        TEXT NOT NULL,
    node_id       TEXT NOT NULL,
    role          TEXT NOT NULL,
    attempt       INTEGER NOT NULL,
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cost_usd      REAL,
    paid          INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS cost_ledger_by_run ON cost_ledger (run_id);
CREATE TABLE IF NOT EXISTS generation_summaries (
    run_id           TEXT NOT NULL,
    generation       INTEGER NOT NULL,
    best_id          TEXT NOT NULL,
    best_hash        TEXT NOT NULL,
    train_best       REAL,
    train_mean       REAL,
    holdout_best     REAL,
    overfit_gap      REAL,
    overfit_alarm    INTEGER NOT NULL,
    diversity        INTEGER NOT NULL,
    population_size  INTEGER NOT NULL,
    archive_coverage REAL NOT NULL,
    evaluations      INTEGER NOT NULL,
    spent_usd        REAL NOT NULL,
    spent_wall_s     REAL NOT NULL,
    summary_json     TEXT NOT NULL,
    PRIMARY KEY (run_id, generation)
);
CREATE TABLE IF NOT EXISTS stage_verdicts (
    run_id        TEXT NOT NULL,
    individual_id TEXT NOT NULL,
    generation    INTEGER NOT NULL,
    stage         INTEGER NOT NULL,
    parent_id     TEXT NOT NULL,
    tasks_json    TEXT NOT NULL,
    child_mean    REAL,
    parent_mean   REAL,
    margin        REAL NOT NULL,
    stopped       INTEGER NOT NULL,
    reason        TEXT NOT NULL,
    PRIMARY KEY (run_id, individual_id, stage)
);
CREATE TABLE IF NOT EXISTS fitness_cache (
    key           TEXT PRIMARY KEY,
    workflow_hash TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    task_digest   TEXT NOT NULL,
    model         TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    repetition    INTEGER NOT NULL,
    record_json   TEXT NOT NULL,
    source_run_id TEXT NOT NULL,
    source_path   TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    hits          INTEGER NOT NULL DEFAULT 0
);
"""


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating when missing) the index at `path`: WAL, foreign keys on, schema checked.

    Autocommit mode: callers group writes with `BEGIN IMMEDIATE ... COMMIT` (see RunIndex).
    Raises ConfigError when the file holds another schema version or is not an index.
    """
    check_output_file(
        path, "the run index"
    )  # a directory, a read-only place: named, not "unable to open"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _ensure_schema(conn, path)
    except sqlite3.OperationalError as exc:
        conn.close()
        if "locked" not in str(exc):
            raise _not_an_index(path, exc) from None
        raise ConfigError(
            f"{path} stayed locked by another process for {BUSY_TIMEOUT_S:.0f} s",
            got=str(exc),
            fix="wait for the other loopwright run to finish, or give this run its own "
            + spoken("cache (Execution.cache)", "--cache"),
        ) from None
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _not_an_index(path, exc) from None
    except ConfigError:
        conn.close()
        raise
    return conn


def _not_an_index(path: Path, exc: sqlite3.DatabaseError) -> ConfigError:
    return ConfigError(
        f"{path} is not a loopwright run index",
        got=str(exc),
        fix=f"point {spoken('Execution.cache', '--cache')} (or the run directory) at a runs.db "
        "written by loopwright",
    )


def _enable_wal(conn: sqlite3.Connection) -> None:
    # Switching a new file to WAL takes an exclusive lock and SQLite does not call the busy
    # handler for it: two processes opening one fresh cache at once got "database is locked"
    # (10 races in 60 with three openers). Retry it within the busy timeout instead.
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    # One writer creates the tables; a second process opening the same file meanwhile waits.
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = _schema_version(conn)
        if found is None or found == INDEX_SCHEMA_VERSION:
            # Every table is IF NOT EXISTS: an index written before a table was added to
            # this schema version gains it here (tables are only ever added within a version).
            for statement in _DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
        if found is None:
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(INDEX_SCHEMA_VERSION)),
                    ("created_by", f"loopwright {__version__}"),
                ],
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if found is not None and found != INDEX_SCHEMA_VERSION:
        raise ConfigError(
            f"{path} is a run index of another schema version",
            got=f"schema_version {found}",
            fix=f"this loopwright ({__version__}) reads schema_version {INDEX_SCHEMA_VERSION}: "
            "use the loopwright that wrote it, or point at a new file",
        )


def _schema_version(conn: sqlite3.Connection) -> int | None:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if exists is None:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return None
    try:
        return int(row[0])
    except ValueError:
        return -1
