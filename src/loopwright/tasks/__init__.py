"""Tasks and benchmarks: the directory format (docs/task-format.md), loading, and the registry."""

from __future__ import annotations

from loopwright.tasks._hidden import HIDDEN_LAYOUTS, place_hidden, read_hidden_sources
from loopwright.tasks._loader import load_benchmark_dir, load_task, node_files, pydantic_problems
from loopwright.tasks._model import (
    ENV_DIR,
    SCHEMA_VERSION,
    AuditFamily,
    Benchmark,
    Environment,
    FailureKind,
    FlawedVariant,
    GradingTable,
    Task,
    TaskSpec,
    Timeouts,
    node_id_file,
    tree_digest,
)
from loopwright.tasks._overlay import apply_overlay
from loopwright.tasks._registry import (
    benchmark_names,
    load_benchmark,
    register_benchmark,
    register_benchmark_dir,
)
from loopwright.tasks._user_registry import (
    BENCHMARKS_FILE_VARIABLE,
    RegisteredBenchmark,
    UserBenchmarks,
    remove_user_benchmark,
    user_benchmarks,
    user_benchmarks_path,
)

__all__ = [
    "BENCHMARKS_FILE_VARIABLE",
    "ENV_DIR",
    "HIDDEN_LAYOUTS",
    "SCHEMA_VERSION",
    "AuditFamily",
    "Benchmark",
    "Environment",
    "FailureKind",
    "FlawedVariant",
    "GradingTable",
    "RegisteredBenchmark",
    "Task",
    "TaskSpec",
    "Timeouts",
    "UserBenchmarks",
    "apply_overlay",
    "benchmark_names",
    "load_benchmark",
    "load_benchmark_dir",
    "load_task",
    "node_files",
    "node_id_file",
    "place_hidden",
    "pydantic_problems",
    "read_hidden_sources",
    "register_benchmark",
    "register_benchmark_dir",
    "remove_user_benchmark",
    "tree_digest",
    "user_benchmarks",
    "user_benchmarks_path",
]
