"""`loopwright tasks import featurebench`: FeatureBench instances written as task folders, by
the SWE-bench path (docs/importing.md, "FeatureBench").

FeatureBench instance ids end in `.lv1` (level 1: implement a feature with its surrounding
code as context) or `.lv2` (level 2: the feature from scratch); the level becomes the task's
`level`. `image_name` is the container image; `repo_settings` (a JSON object) gives
`timeout_run` (the grade timeout), `timeout_one` (per test) and `-e NAME=value` container
variables (`docker_specs.custom_docker_args`). Two instance shapes are read:
- with a `test_patch`: exactly as a SWE-bench instance (`patch` is the gold);
- without one (the released dataset's shape): `patch` removes the feature from `base_commit`
  (the task starts from base + patch), FAIL_TO_PASS lists test files (or node ids) whose
  `base_commit` versions are the hidden tests, and the gold is the reverse of the patch on
  every other file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from loopwright.tasks._hidden import patch_paths
from loopwright.tasks._model import Environment, Timeouts
from loopwright.tasks.importers._common import (
    ImportProgress,
    ImportReport,
    SkipInstance,
    TaskParts,
    apply_patch_to,
    exists_at,
    file_diff,
    find_clone,
    read_at,
    require_commit,
)
from loopwright.tasks.importers._source import Instance, parse_instance, read_records
from loopwright.tasks.importers._testids import TreeView, map_test_ids
from loopwright.tasks.importers.swebench import (
    ImportOptions,
    choose_environment,
    import_records,
    instance_parts,
    instruction_text,
    task_spec,
)

__all__ = ["feature_parts", "import_featurebench", "level_of"]

_LEVEL = re.compile(r"\.lv([12])$")
_RESERVED = ("PATH", "HOME", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "HTTP_PROXY", "HTTPS_PROXY")


def import_featurebench(
    source: Path, out: Path, options: ImportOptions, *, progress: ImportProgress | None = None
) -> ImportReport:
    """Import the FeatureBench instances of `source` (JSON, JSONL or parquet) into `out`, as
    `import_swebench` does; write and return the report."""
    records = read_records(source)
    fb_options = ImportOptions(
        repos=options.repos,
        hints=options.hints,
        env_spec=options.env_spec,
        ids=options.ids,
        fmt="featurebench",
    )
    return import_records(records, out, fb_options, source, feature_parts, progress)


def level_of(instance_id: str) -> int:
    """1 or 2 from the id's `.lv1` / `.lv2` suffix; SkipInstance for any other id."""
    match = _LEVEL.search(instance_id)
    if match is None:
        raise SkipInstance(f"{instance_id!r} does not end in .lv1 or .lv2 (a FeatureBench level)")
    return int(match.group(1))


def feature_parts(record: dict[str, Any], options: ImportOptions) -> TaskParts:
    """One FeatureBench record as the parts of a task. Raises SkipInstance saying why not."""
    inst = parse_instance(record)
    level = level_of(inst.instance_id)
    if inst.test_patch.strip():
        parts = instance_parts(record, options)
        spec = parts.spec.model_copy(
            update={"level": level, "timeouts": _timeouts(inst), "environment": _env(inst, parts)}
        )
        return TaskParts(
            spec=spec,
            instruction=parts.instruction,
            clone=parts.clone,
            commit=parts.commit,
            tests_patch=parts.tests_patch,
            gold_patch=parts.gold_patch,
            files=parts.files,
        )
    return _removal_parts(inst, options, level)


def _removal_parts(inst: Instance, options: ImportOptions, level: int) -> TaskParts:
    """The released shape: `patch` removes the feature; hidden tests and gold come from
    `base_commit` itself."""
    if not inst.patch.strip():
        raise SkipInstance("patch is empty: nothing removes the feature")
    clone = find_clone(options.repos, inst.repo)
    require_commit(clone, inst.base_commit)
    try:
        touched = patch_paths(inst.patch.encode())
    except ValueError as exc:
        raise SkipInstance(f"patch: {exc}") from None
    test_files = sorted({t.split("::", 1)[0] for t in inst.FAIL_TO_PASS})
    base = read_at(clone, inst.base_commit, {*touched, *test_files})
    start = {**base, **apply_patch_to(base, inst.patch, "feature-removal patch")}
    hidden = "".join(file_diff(rel, start.get(rel), base.get(rel)) for rel in test_files)
    if not hidden:
        raise SkipInstance(
            "the FAIL_TO_PASS test files are the same before and after the feature removal: "
            "nothing is hidden from the agent"
        )
    gold = "".join(
        file_diff(rel, start.get(rel), base.get(rel)) for rel in touched if rel not in test_files
    )
    tree = TreeView(
        patched={rel: base.get(rel) for rel in test_files},
        exists=lambda rel: exists_at(clone, inst.base_commit, rel),
        read=lambda rel: read_at(clone, inst.base_commit, [rel]).get(rel),
    )
    mapped = map_test_ids(inst.FAIL_TO_PASS, inst.PASS_TO_PASS, tree)
    environment, files = choose_environment(inst, clone, options)
    environment = _with_variables(inst, environment)
    spec = task_spec(inst, mapped, level=level, environment=environment, timeouts=_timeouts(inst))
    return TaskParts(
        spec=spec,
        instruction=instruction_text(inst, hints=options.hints),
        clone=clone,
        commit=inst.base_commit,
        tests_patch=hidden,
        gold_patch=gold,
        files=files,
        start_patch=inst.patch,
    )


def _env(inst: Instance, parts: TaskParts) -> Environment | None:
    return _with_variables(inst, parts.spec.environment)


def _timeouts(inst: Instance) -> Timeouts:
    settings = inst.repo_settings
    try:
        return Timeouts(
            grade=float(settings.get("timeout_run", Timeouts().grade)),
            per_test=float(settings.get("timeout_one", Timeouts().per_test)),
        )
    except (TypeError, ValueError):
        raise SkipInstance(
            f"repo_settings timeout_run / timeout_one are not positive numbers: {settings}"
        ) from None


def _with_variables(inst: Instance, environment: Environment | None) -> Environment | None:
    """`environment` with the `-e NAME=value` variables of `repo_settings.docker_specs`
    (proxy and loopwright-reserved names left out)."""
    specs = inst.repo_settings.get("docker_specs", {})
    args = specs.get("custom_docker_args", []) if isinstance(specs, dict) else []
    variables = {}
    for arg in args if isinstance(args, list) else []:
        if isinstance(arg, str) and arg.startswith("-e ") and "=" in arg:
            name, value = arg[3:].strip().split("=", 1)
            name = name.strip()
            if (
                re.fullmatch(r"[A-Za-z_]\w*", name)
                and name.upper() not in _RESERVED
                and not name.startswith("LOOPWRIGHT_")
            ):
                variables[name] = value
    if not variables:
        return environment
    base = environment or Environment()
    return base.model_copy(update={"env": {**base.env, **variables}})
