"""The fitness cache table: finished evaluations stored by key, in any run index file; and
the claims of evaluations in flight (`cache_claims`), so that runs sharing the file wait for
one another's results instead of computing them twice."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from types import TracebackType
from typing import Literal

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.store._schema import connect

__all__ = ["CLAIMS_SCHEMA_VERSION", "CacheEntry", "CacheTable", "ClaimState", "claim_owner"]

CLAIMS_SCHEMA_VERSION = 1
"""The version of the `cache_claims` table (meta key `cache_claims_version`). It is added to
an index file of any version-1 schema on first use; older loopwright versions ignore it."""

_CLAIMS_DDL = """
CREATE TABLE IF NOT EXISTS cache_claims (
    key        TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL
)"""

ClaimState = Literal["done", "claimed", "taken"]
"""What `CacheTable.claim` found: `done` (the result is stored), `claimed` (the caller holds
the claim now) or `taken` (another live process holds an unexpired claim)."""


def claim_owner() -> str:
    """A new claim owner id: `host:pid:random` (the pid lets a process on the same host tell
    that the claimer has died, before its lease expires)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _dead(owner: str) -> bool:
    """True when `owner` names a process of this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's live process
        return False
    return False


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One cached evaluation. `key` is a digest of the identity fields (how it is made is the
    evaluation layer's business: `loopwright.evaluation.cache_key`); they are kept beside it so
    a person can see what a key stands for. `record_json` is the CycleRecord as stored;
    `source_run_id` / `source_path` name the run and run directory that produced it. `hits`
    counts how often it was served."""

    key: str
    workflow_hash: str
    task_id: str
    task_digest: str
    model: str
    settings_json: str
    repetition: int
    record_json: str
    source_run_id: str
    source_path: str
    created_at: str
    hits: int = 0


_COLUMNS = ", ".join(f.name for f in fields(CacheEntry))


class CacheTable:
    """The `fitness_cache` table of the index file at `path` (created when missing).

    Shareable: several runs, even several processes at once, may use one file (WAL, busy
    timeout). The first entry stored under a key stays; a later `put` of the same key is
    ignored, so concurrent runs agree on one record per key. Claims (`claim`, `renew`,
    `release`) mark keys being computed, each with a lease that its owner renews; an expired
    lease, or an owner on this host that has died, frees the key. Not thread-safe.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        try:
            _ensure_claims(self._conn, path)
        except BaseException:
            self._conn.close()
            raise

    def claim(self, key: str, owner: str, lease_s: float) -> ClaimState:
        """Claim `key` for `owner` for `lease_s` seconds unless its result is stored or another
        live owner's lease on it runs; an owner may claim a key it holds again."""
        now = time.time()
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            if self._conn.execute("SELECT 1 FROM fitness_cache WHERE key = ?", (key,)).fetchone():
                state: ClaimState = "done"
            else:
                row = self._conn.execute(
                    "SELECT owner, expires_at FROM cache_claims WHERE key = ?", (key,)
                ).fetchone()
                free = row is None or row[0] == owner or row[1] <= now or _dead(row[0])
                state = "claimed" if free else "taken"
                if free:
                    self._conn.execute(
                        "INSERT OR REPLACE INTO cache_claims VALUES (?, ?, ?, ?)",
                        (key, owner, now, now + lease_s),
                    )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return state

    def renew(self, owner: str, lease_s: float) -> int:
        """Extend every claim `owner` holds to `lease_s` seconds from now; how many."""
        cursor = self._conn.execute(
            "UPDATE cache_claims SET expires_at = ? WHERE owner = ?", (time.time() + lease_s, owner)
        )
        return cursor.rowcount

    def release(self, keys: Iterable[str], owner: str) -> None:
        """Drop `owner`'s claims on `keys` (a result stored, or given up)."""
        self._conn.executemany(
            "DELETE FROM cache_claims WHERE key = ? AND owner = ?", [(k, owner) for k in keys]
        )

    def claims(self) -> list[tuple[str, str, float]]:
        """Every claim as (key, owner, expires_at), by key."""
        rows = self._conn.execute(
            "SELECT key, owner, expires_at FROM cache_claims ORDER BY key"
        ).fetchall()
        return [(str(k), str(o), float(e)) for k, o, e in rows]

    def get(self, key: str) -> CacheEntry | None:
        """The entry stored under `key` (counting the hit), or None."""
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM fitness_cache WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        self._conn.execute("UPDATE fitness_cache SET hits = hits + 1 WHERE key = ?", (key,))
        return CacheEntry(*row)

    def drop(self, key: str) -> None:
        """Forget the entry stored under `key` (one that no longer serves: it is computed again)."""
        self._conn.execute("DELETE FROM fitness_cache WHERE key = ?", (key,))

    def put(self, entry: CacheEntry) -> bool:
        """Store `entry` unless its key is present; True when it was stored."""
        marks = ", ".join("?" for _ in fields(CacheEntry))
        cursor = self._conn.execute(
            f"INSERT OR IGNORE INTO fitness_cache ({_COLUMNS}) VALUES ({marks})", astuple(entry)
        )
        return cursor.rowcount == 1

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM fitness_cache").fetchone()[0])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CacheTable:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _ensure_claims(conn: sqlite3.Connection, path: Path) -> None:
    """Add the claims table (version CLAIMS_SCHEMA_VERSION) when missing; ConfigError for a
    file whose claims table is of another version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'cache_claims_version'").fetchone()
        if row is None:
            conn.execute(_CLAIMS_DDL)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('cache_claims_version', ?)",
                (str(CLAIMS_SCHEMA_VERSION),),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if row is not None and row[0] != str(CLAIMS_SCHEMA_VERSION):
        raise ConfigError(
            f"{path} holds fitness-cache claims of another version",
            got=f"cache_claims_version {row[0]}",
            fix=f"this loopwright reads version {CLAIMS_SCHEMA_VERSION}: use the loopwright "
            f"that wrote it, or point {spoken('Execution.cache', '--cache')} at a new file",
        )
