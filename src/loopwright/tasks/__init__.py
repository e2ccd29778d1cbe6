"""Tasks and benchmarks: the directory format (docs/task-format.md), loading, and the registry."""

from __future__ import annotations

from loopwright.tasks._hidden import HIDDEN_LAYOUTS, place_hidden, read_hidden_sources
from loopwright.tasks._loader import load_benchmark_dir, load_task, node_files
from loopwright.tasks._mine import (
    Candidate,
    Skip,
    extract_candidate,
    flawed_drafts,
    infer_environment,
    instruction_draft,
    task_id_for,
    task_toml,
    write_task,
)
from loopwright.tasks._mine_git import GitRepo
from loopwright.tasks._mine_spec import ENV_DIR, MineEnvSpec, load_mine_env_spec
from loopwright.tasks._model import (
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
    "Candidate",
    "Environment",
    "FailureKind",
    "FlawedVariant",
    "GitRepo",
    "GradingTable",
    "MineEnvSpec",
    "RegisteredBenchmark",
    "Skip",
    "Task",
    "TaskSpec",
    "Timeouts",
    "UserBenchmarks",
    "apply_overlay",
    "benchmark_names",
    "extract_candidate",
    "flawed_drafts",
    "infer_environment",
    "instruction_draft",
    "load_benchmark",
    "load_benchmark_dir",
    "load_mine_env_spec",
    "load_task",
    "node_files",
    "node_id_file",
    "place_hidden",
    "read_hidden_sources",
    "register_benchmark",
    "register_benchmark_dir",
    "remove_user_benchmark",
    "task_id_for",
    "task_toml",
    "tree_digest",
    "user_benchmarks",
    "user_benchmarks_path",
    "write_task",
]
