"""The run directory seam (`RunDir`, `RunMeta`, typed `EventLog`s), the one run lifecycle every
loop's directory goes through (`RunSpec`, `RunLifecycle`: claim, lock, resume, state, scratch), and the run index: a SQLite file (`runs.db`, WAL) holding individuals, evaluations, per-test
outcomes, failed executor attempts, generation summaries, the cost ledger and the fitness cache,
written as results arrive so that status commands and reports query instead of rescanning
run directories. See docs/store.md for the schema and its version."""

from __future__ import annotations

from loopwright.store._cache import (
    CLAIMS_SCHEMA_VERSION,
    CacheEntry,
    CacheTable,
    ClaimState,
    claim_owner,
)
from loopwright.store._faults import (
    DiskFullError,
    disk_full_cause,
    disk_full_error,
    disk_full_text,
    out_of_space,
    refuse_disk_full,
)
from loopwright.store._index import RunIndex
from loopwright.store._lifecycle import RunLifecycle, RunSpec, RunStatus
from loopwright.store._lock import DirLock, lock_holder
from loopwright.store._paths import (
    check_cache_file,
    check_new_dir,
    check_output_file,
    os_error_text,
    read_text_input,
)
from loopwright.store._rows import (
    EvaluationRow,
    FailedAttemptRow,
    FailureRow,
    GenerationRow,
    IndividualRow,
    LedgerRow,
    Spend,
    StageRow,
    TestOutcomeRow,
    ledger_rows,
    utc_now,
)
from loopwright.store._rundir import (
    META_FILE,
    RUN_META_VERSION,
    EventLog,
    RunDir,
    RunKind,
    RunMeta,
    default_run_path,
    is_simulated,
    read_json_mapping,
    read_yaml_mapping,
    source_commit,
)
from loopwright.store._schema import INDEX_FILE, INDEX_SCHEMA_VERSION, connect

__all__ = [
    "CLAIMS_SCHEMA_VERSION",
    "INDEX_FILE",
    "INDEX_SCHEMA_VERSION",
    "META_FILE",
    "RUN_META_VERSION",
    "CacheEntry",
    "CacheTable",
    "ClaimState",
    "DirLock",
    "DiskFullError",
    "EvaluationRow",
    "EventLog",
    "FailedAttemptRow",
    "FailureRow",
    "GenerationRow",
    "IndividualRow",
    "LedgerRow",
    "RunDir",
    "RunIndex",
    "RunKind",
    "RunLifecycle",
    "RunMeta",
    "RunSpec",
    "RunStatus",
    "Spend",
    "StageRow",
    "TestOutcomeRow",
    "check_cache_file",
    "check_new_dir",
    "check_output_file",
    "claim_owner",
    "connect",
    "default_run_path",
    "disk_full_cause",
    "disk_full_error",
    "disk_full_text",
    "is_simulated",
    "ledger_rows",
    "lock_holder",
    "os_error_text",
    "out_of_space",
    "read_json_mapping",
    "read_text_input",
    "read_yaml_mapping",
    "refuse_disk_full",
    "source_commit",
    "utc_now",
]
