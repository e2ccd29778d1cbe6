"""The run index: a SQLite file (`runs.db`, WAL) holding individuals, evaluations, per-test
outcomes, failed executor attempts, generation summaries, the cost ledger and the fitness cache,
written as results arrive so that status commands and reports query instead of rescanning
run directories. See docs/store.md for the schema and its version."""

from __future__ import annotations

from loopwright.store._cache import CacheEntry, CacheTable
from loopwright.store._index import RunIndex
from loopwright.store._lock import DirLock
from loopwright.store._rows import (
    EvaluationRow,
    FailedAttemptRow,
    FailureRow,
    GenerationRow,
    IndividualRow,
    LedgerRow,
    Spend,
    TestOutcomeRow,
    ledger_rows,
    utc_now,
)
from loopwright.store._schema import INDEX_FILE, INDEX_SCHEMA_VERSION, connect

__all__ = [
    "INDEX_FILE",
    "INDEX_SCHEMA_VERSION",
    "CacheEntry",
    "CacheTable",
    "DirLock",
    "EvaluationRow",
    "FailedAttemptRow",
    "FailureRow",
    "GenerationRow",
    "IndividualRow",
    "LedgerRow",
    "RunIndex",
    "Spend",
    "TestOutcomeRow",
    "connect",
    "ledger_rows",
    "utc_now",
]
