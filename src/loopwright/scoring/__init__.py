"""Grading with partial credit: the Grader protocol (one implementation per grader kind: pytest, the
default; unittest; command; function: a Python evaluator registered with `register_evaluator`), test restoration, pytest junit parsing, benchmark validation, the static
audit of an agent's change (`suspect:` grades), and mining a repository's history into validated
tasks (`tasks mine`)."""

from __future__ import annotations

from loopwright.scoring._audit import (
    FAMILIES as AUDIT_FAMILIES,
)
from loopwright.scoring._audit import (
    Finding,
    audit_change,
    audit_source,
    mark_suspect,
)
from loopwright.scoring._diagnose import failing_tests, missing_tests, needs_network, output_tail
from loopwright.scoring._function import (
    FUNCTION_GRADER,
    Assessment,
    Check,
    EvaluatorFn,
    EvaluatorSnapshot,
    FunctionGrader,
    Submission,
    check_evaluators,
    evaluator_key,
    evaluator_snapshot,
    install_evaluators,
    register_evaluator,
    registered_evaluators,
    resolve_evaluator,
    unregister_evaluator,
)
from loopwright.scoring._grader import PytestGrader, PytestGrading
from loopwright.scoring._guard import mark_tampered
from loopwright.scoring._junit import JunitCase, JunitReport, Outcome, parse_junit
from loopwright.scoring._mine_extract import (
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
from loopwright.scoring._mine_git import GitRepo
from loopwright.scoring._mine_runs import Split, TestRun, run_test_files, split_outcomes
from loopwright.scoring._mine_spec import ENV_DIR, MineEnvSpec, load_mine_env_spec
from loopwright.scoring._mine_statement import statement_rewriter
from loopwright.scoring._mining import (
    MINE_REPORT_FILE,
    MINE_SCHEMA_VERSION,
    MinedCommit,
    MineOptions,
    MineReport,
    Rewrite,
    mine_repository,
)
from loopwright.scoring._protocol import Grader, Grading
from loopwright.scoring._restore import HOOK_FILES, RestoreReport, TaskTests, restore_tests
from loopwright.scoring._result import (
    GRADE_SCHEMA_VERSION,
    SUSPECT_PREFIX,
    TAMPER_PREFIX,
    GradeResult,
    TestResult,
)
from loopwright.scoring._runners import (
    OUTPUT_ENV,
    CommandGrader,
    RunnerGrading,
    UnittestGrader,
    grader_for,
)
from loopwright.scoring._validate import (
    GOLD,
    UNTOUCHED,
    VariantCheck,
    grade_variant,
    task_variants,
    validate_benchmark,
)

__all__ = [
    "AUDIT_FAMILIES",
    "ENV_DIR",
    "FUNCTION_GRADER",
    "GOLD",
    "GRADE_SCHEMA_VERSION",
    "HOOK_FILES",
    "MINE_REPORT_FILE",
    "MINE_SCHEMA_VERSION",
    "OUTPUT_ENV",
    "SUSPECT_PREFIX",
    "TAMPER_PREFIX",
    "UNTOUCHED",
    "Assessment",
    "Candidate",
    "Check",
    "CommandGrader",
    "EvaluatorFn",
    "EvaluatorSnapshot",
    "Finding",
    "FunctionGrader",
    "GitRepo",
    "GradeResult",
    "Grader",
    "Grading",
    "JunitCase",
    "JunitReport",
    "MineEnvSpec",
    "MineOptions",
    "MineReport",
    "MinedCommit",
    "Outcome",
    "PytestGrader",
    "PytestGrading",
    "RestoreReport",
    "Rewrite",
    "RunnerGrading",
    "Skip",
    "Split",
    "Submission",
    "TaskTests",
    "TestResult",
    "TestRun",
    "UnittestGrader",
    "VariantCheck",
    "audit_change",
    "audit_source",
    "check_evaluators",
    "evaluator_key",
    "evaluator_snapshot",
    "extract_candidate",
    "failing_tests",
    "flawed_drafts",
    "grade_variant",
    "grader_for",
    "infer_environment",
    "install_evaluators",
    "instruction_draft",
    "load_mine_env_spec",
    "mark_suspect",
    "mark_tampered",
    "mine_repository",
    "missing_tests",
    "needs_network",
    "output_tail",
    "parse_junit",
    "register_evaluator",
    "registered_evaluators",
    "resolve_evaluator",
    "restore_tests",
    "run_test_files",
    "split_outcomes",
    "statement_rewriter",
    "task_id_for",
    "task_toml",
    "task_variants",
    "unregister_evaluator",
    "validate_benchmark",
    "write_task",
]
