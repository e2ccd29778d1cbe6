"""Importers: external benchmark formats (SWE-bench, FeatureBench, Harbor) written into
loopwright's one task directory format (docs/task-format.md, docs/importing.md)."""

from __future__ import annotations

from loopwright.tasks.importers._common import (
    REPORT_FILE,
    ConvertedTask,
    ImportProgress,
    ImportReport,
    SkippedInstance,
    TaskParts,
    run_import,
    write_task,
)
from loopwright.tasks.importers._gitrepo import SkipInstance
from loopwright.tasks.importers.featurebench import import_featurebench
from loopwright.tasks.importers.swebench import (
    EnvSpec,
    ImportOptions,
    import_swebench,
    load_env_spec,
)

__all__ = [
    "REPORT_FILE",
    "ConvertedTask",
    "EnvSpec",
    "ImportOptions",
    "ImportProgress",
    "ImportReport",
    "SkipInstance",
    "SkippedInstance",
    "TaskParts",
    "import_featurebench",
    "import_swebench",
    "load_env_spec",
    "run_import",
    "write_task",
]
