"""The fitness cache table: finished evaluations stored by key, in any run index file."""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from pathlib import Path
from types import TracebackType

from loopwright.store._schema import connect

__all__ = ["CacheEntry", "CacheTable"]


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
    ignored, so concurrent runs agree on one record per key. Not thread-safe.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)

    def get(self, key: str) -> CacheEntry | None:
        """The entry stored under `key` (counting the hit), or None."""
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM fitness_cache WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        self._conn.execute("UPDATE fitness_cache SET hits = hits + 1 WHERE key = ?", (key,))
        return CacheEntry(*row)

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
