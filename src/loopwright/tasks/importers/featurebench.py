"""`loopwright tasks import featurebench`: FeatureBench instances written as task folders, with
the FeatureBench harness's semantics (docs/importing.md, "FeatureBench").

The id's suffix gives the level (`pypa__packaging.013f3b03.test_metadata.e00b5801.lv1`). The
original repository is the clone at `base_commit`, else `/testbed` of the instance's image
(`_fbrepo`). FAIL_TO_PASS and PASS_TO_PASS name test files.

Level 1 (implement a feature inside the existing code): the harness applies `patch` (a masking
patch that removes the feature) and deletes the FAIL_TO_PASS files; the agent starts there.
For grading it applies `test_patch` *reversed* (the patch that deleted those files), so the
hidden tests are that reversal; the gold is `patch` reversed.

Level 2 (the feature from scratch): the agent starts from an empty repository; the harness then
`pip install .`s what it built, restores the original repository and applies `test_patch`
*forward*. Here the hidden tests are the FAIL_TO_PASS files after `test_patch`; the gold is the
original repository (all but those files).

Grading, `--grading tests` (the default): the test files expanded into their test functions
(a parametrised one listed once, standing for all its cases), graded by loopwright's pytest
grader. `--grading files`: as the harness grades, each file run with `repo_settings.test_cmd`
(`--timeout=<timeout_one>` appended, `uv run` before it with `use_uv`) and judged by its exit
code (level 2: after `pip install .`), through the command grader with one junit case per file.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from loopwright.tasks._hidden import patch_paths
from loopwright.tasks._model import Environment, GradingTable, TaskSpec, Timeouts
from loopwright.tasks.importers._common import ImportProgress, ImportReport, TaskParts
from loopwright.tasks.importers._fbrepo import OriginalRepo, original_repo
from loopwright.tasks.importers._gitrepo import SkipInstance, apply_patch_to, file_diff
from loopwright.tasks.importers._source import Instance, parse_instance, read_records
from loopwright.tasks.importers._testids import MappedTests, TreeView, map_test_ids
from loopwright.tasks.importers.swebench import (
    ImportOptions,
    choose_environment,
    dropped_notes,
    import_records,
    instruction_text,
    task_spec,
)

__all__ = [
    "DEFAULT_TEST_CMD",
    "JUNIT_FILE",
    "feature_parts",
    "harness_test_command",
    "import_featurebench",
    "level_of",
]

DEFAULT_TEST_CMD = "pytest -rA -p no:cacheprovider --color=no"  # the harness's default
_DEFAULT_TIMEOUT_RUN = 600.0  # seconds, per test command (the harness's default)
_DEFAULT_TIMEOUT_ONE = 10.0  # seconds, per test (the harness's default)
JUNIT_FILE = "featurebench-files.xml"  # per-file grading's junit, under $LOOPWRIGHT_OUTPUT
_LEVEL2_README = b"# Build the package here\n\nThe task is in the instruction.\n"
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
        grading=options.grading,
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
    if not inst.FAIL_TO_PASS:
        raise SkipInstance("FAIL_TO_PASS is empty: there is nothing to grade")
    repo = original_repo(inst, options.repos)
    if level == 1:
        return _level1(inst, repo, options)
    return _level2(inst, repo, options)


def _files(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(i.split("::", 1)[0] for i in ids))


def _paths(patch: str, label: str) -> list[str]:
    if not patch.strip():
        return []
    try:
        return patch_paths(patch.encode())
    except ValueError as exc:
        raise SkipInstance(f"{label}: {exc}") from None


def _level1(inst: Instance, repo: OriginalRepo, options: ImportOptions) -> TaskParts:
    if not inst.patch.strip():
        raise SkipInstance("patch (the masking patch) is empty: nothing is masked, no gold")
    f2p, p2p = _files(inst.FAIL_TO_PASS), _files(inst.PASS_TO_PASS)
    masked_paths, test_paths = _paths(inst.patch, "patch"), _paths(inst.test_patch, "test_patch")
    orig = repo.read({*masked_paths, *test_paths, *f2p, *p2p})
    masked = {**orig, **apply_patch_to(orig, inst.patch, "patch (the masking patch)")}
    start: dict[str, bytes | None] = {**masked, **dict.fromkeys(f2p)}  # F2P files deleted
    graded = {**start, **_restored_tests(start, inst.test_patch, test_paths, orig, f2p)}
    missing = [rel for rel in f2p if graded.get(rel) is None]
    if missing:
        raise SkipInstance(f"test_patch reversed does not bring back FAIL_TO_PASS {missing}")
    present = {k: v for k, v in masked.items() if v is not None and k not in f2p}
    ungold = apply_patch_to(
        {k: v for k, v in present.items() if k in masked_paths}, inst.patch, "patch", reverse=True
    )
    gold = "".join(file_diff(rel, masked.get(rel), ungold.get(rel)) for rel in sorted(ungold))
    touched = sorted({*masked_paths, *f2p, *test_paths})
    tree = TreeView(
        patched={rel: graded.get(rel) for rel in touched}, exists=repo.exists, read=_reader(repo)
    )
    spec, notes = _spec(inst, repo, options, tree, level=1, f2p=f2p, p2p=p2p)
    return TaskParts(
        spec=spec,
        notes=repo.notes + notes,
        instruction=instruction_text(inst, hints=options.hints),
        clone=repo.clone,
        commit=repo.commit,
        tests_patch="".join(file_diff(rel, start.get(rel), graded.get(rel)) for rel in touched),
        gold_patch=gold,
        files=_environment_files(inst, repo, options, level=1),
        start_patch="".join(file_diff(rel, orig.get(rel), start.get(rel)) for rel in touched),
    )


def _restored_tests(
    start: dict[str, bytes | None],
    test_patch: str,
    test_paths: list[str],
    orig: dict[str, bytes],
    f2p: list[str],
) -> dict[str, bytes | None]:
    """The test files as grading sees them: `test_patch` applied reversed to the starting tree
    (the harness's restore); without a test_patch, the FAIL_TO_PASS files as in the original."""
    if not test_patch.strip():
        return {rel: orig.get(rel) for rel in f2p}
    present = {rel: c for rel in test_paths if (c := start.get(rel)) is not None}
    label = "test_patch (undone to restore the FAIL_TO_PASS files, as the harness does)"
    return apply_patch_to(present, test_patch, label, reverse=True)


def _level2(inst: Instance, repo: OriginalRepo, options: ImportOptions) -> TaskParts:
    f2p = _files(inst.FAIL_TO_PASS)
    test_paths = _paths(inst.test_patch, "test_patch")
    orig = repo.all_files()
    adjusted: dict[str, bytes | None] = {rel: orig[rel] for rel in test_paths if rel in orig}
    if inst.test_patch.strip():
        present = {rel: c for rel, c in adjusted.items() if c is not None}
        adjusted = {**adjusted, **apply_patch_to(present, inst.test_patch, "test_patch")}
    graded = {rel: adjusted.get(rel, orig.get(rel)) for rel in f2p}
    missing = [rel for rel, content in graded.items() if content is None]
    if missing:
        raise SkipInstance(f"FAIL_TO_PASS {missing} is neither in the repository nor test_patch")
    tree = TreeView(patched=graded, exists=lambda rel: rel in graded, read=graded.get)
    spec, notes = _spec(inst, repo, options, tree, level=2, f2p=f2p, p2p=[])
    # At grading the harness has the whole original repository back: its test directory (the
    # FAIL_TO_PASS files as test_patch left them, their conftest.py and data) is hidden here;
    # the rest of it is the gold, which the agent builds from nothing.
    in_tests = {rel: graded.get(rel, c) for rel, c in orig.items() if _under(rel, spec.test_dir)}
    hidden = {**in_tests, **graded}
    return TaskParts(
        spec=spec,
        instruction=instruction_text(inst, hints=options.hints),
        clone=repo.clone,
        commit=repo.commit,
        tests_patch="".join(file_diff(rel, None, hidden[rel]) for rel in sorted(hidden)),
        gold_patch="",
        files=_environment_files(inst, repo, options, level=2),
        repo_files={"README.md": _LEVEL2_README},
        notes=repo.notes + notes,
        gold_files={rel: content for rel, content in orig.items() if rel not in hidden},
    )


def _under(rel: str, directory: str) -> bool:
    return Path(rel).parts[: len(Path(directory).parts)] == Path(directory).parts


def _reader(repo: OriginalRepo) -> Any:
    return lambda rel: repo.read([rel]).get(rel)


def _spec(
    inst: Instance,
    repo: OriginalRepo,
    options: ImportOptions,
    tree: TreeView,
    *,
    level: int,
    f2p: list[str],
    p2p: list[str],
) -> tuple[TaskSpec, tuple[str, ...]]:
    environment = _environment(inst, repo, options, level=level)
    if options.grading == "files":
        test_dir = map_test_ids(f2p, [], tree).test_dir
        mapped = MappedTests("command", test_dir, f2p, p2p)
        command = _files_command(inst, f2p, p2p, level=level)
        grading = GradingTable(runner="command", command=command, junit=JUNIT_FILE)
        timeouts = _timeouts(inst, runs=len(f2p) + len(p2p))
        spec = task_spec(
            inst, mapped, level=level, environment=environment, timeouts=timeouts, grading=grading
        )
        return spec, ()
    mapped = map_test_ids(f2p, p2p, tree)
    spec = task_spec(inst, mapped, level=level, environment=environment, timeouts=_timeouts(inst))
    return spec, dropped_notes(mapped)


def _environment(
    inst: Instance, repo: OriginalRepo, options: ImportOptions, *, level: int
) -> Environment | None:
    environment, _ = _chosen(inst, repo, options, level=level)
    return _with_variables(inst, environment)


def _environment_files(
    inst: Instance, repo: OriginalRepo, options: ImportOptions, *, level: int
) -> dict[str, bytes]:
    return _chosen(inst, repo, options, level=level)[1]


def _chosen(
    inst: Instance, repo: OriginalRepo, options: ImportOptions, *, level: int
) -> tuple[Environment | None, dict[str, bytes]]:
    """The environment as for SWE-bench (env-spec, image, Dockerfile, the repo's packaging);
    at level 2 without an image or env-spec, none: the agent's empty repository has nothing
    to install."""
    update: dict[str, str] = {"base_commit": repo.commit}
    if repo.image:  # the image the repository came from (maybe built here) is the environment
        update["image_name"] = repo.image
    at_commit = inst.model_copy(update=update)
    if level == 2 and not (
        options.env_spec or at_commit.image_name or inst.image or inst.dockerfile
    ):
        return None, {}
    return choose_environment(at_commit, repo.clone, options)


def _timeouts(inst: Instance, *, runs: int = 1) -> Timeouts:
    settings = inst.repo_settings
    try:
        run = float(settings.get("timeout_run", _DEFAULT_TIMEOUT_RUN))
        one = float(settings.get("timeout_one", _DEFAULT_TIMEOUT_ONE))
        return Timeouts(grade=run * runs, per_test=one)
    except (TypeError, ValueError):
        raise SkipInstance(
            f"repo_settings timeout_run / timeout_one are not positive numbers: {settings}"
        ) from None


def harness_test_command(settings: dict[str, Any]) -> str:
    """The harness's test command from `repo_settings`: `test_cmd` (default: its own),
    `--timeout=<timeout_one>` appended when positive, `uv run` before it with `use_uv`. A
    leading `pytest` / `python -m pytest` runs as `"$PYTHON" -m pytest` (the sandbox's
    interpreter: the task environment's)."""
    command = str(settings.get("test_cmd") or DEFAULT_TEST_CMD).strip()
    one = settings.get("timeout_one", _DEFAULT_TIMEOUT_ONE)
    if isinstance(one, int | float) and one > 0:
        command += f" --timeout={one:g}"
    if settings.get("use_uv"):
        return command if command.startswith("uv run") else f"uv run {command}"
    return re.sub(r"^(?:python3? -m )?pytest(?=\s|$)", '"$PYTHON" -m pytest', command)


def _files_command(inst: Instance, f2p: list[str], p2p: list[str], *, level: int) -> str:
    """A shell script: each test file run with the test command, its exit code written as one
    junit case (named by the file) into `$LOOPWRIGHT_OUTPUT`."""
    command = harness_test_command(inst.repo_settings)
    out = f'"$LOOPWRIGHT_OUTPUT"/{JUNIT_FILE}'
    lines = []
    if level == 2:
        site = '"$LOOPWRIGHT_OUTPUT"/installed'
        lines += [
            f'"$PYTHON" -m pip install -q --no-deps --no-build-isolation --target {site} . '
            '|| echo "pip install . failed; going on, as the FeatureBench harness does"',
            f'PYTHONPATH={site}"${{PYTHONPATH:+:$PYTHONPATH}}"; export PYTHONPATH',
        ]
    lines.append(f"echo '<testsuite name=\"featurebench\">' > {out}")
    files = " ".join(shlex.quote(rel) for rel in [*f2p, *p2p])
    lines += [
        f"for f in {files}; do",
        '  echo "== $f"',
        f'  if {command} "$f"; then r=""; else r="<failure message=\\"exit code $?\\"/>"; fi',
        f'  echo "<testcase name=\\"$f\\">$r</testcase>" >> {out}',
        "done",
        f"echo '</testsuite>' >> {out}",
    ]
    return "\n".join(lines)


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
