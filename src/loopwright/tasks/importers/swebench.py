"""`loopwright tasks import swebench`: SWE-bench instances (a JSON, JSONL or parquet file, or a
v5 task repository) written as task folders, from local clones (docs/importing.md).

Each instance becomes: `repo/` exported at `base_commit`; `tests.patch` from `test_patch`
(`hidden_tests_layout = "patch"`); `solution/` from `patch`; `instruction.md` from
`problem_statement` (and `hints_text` with `hints`); fail_to_pass / pass_to_pass mapped to the
grader's ids (`_testids`); `[grading] rules = "swebench"`; an `[environment]` from the
instance's image or Dockerfile, an `--env-spec` file, or the repo's Python packaging.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from loopwright.errors import ConfigError
from loopwright.tasks._hidden import patch_paths
from loopwright.tasks._loader import pydantic_problems
from loopwright.tasks._model import ENV_DIR, Environment, GradingTable, TaskSpec, Timeouts
from loopwright.tasks.importers._common import (
    ImportProgress,
    ImportReport,
    TaskParts,
    run_import,
    task_id_for,
)
from loopwright.tasks.importers._gitrepo import (
    SkipInstance,
    apply_patch_to,
    commit_time,
    exists_at,
    find_clone,
    read_at,
    require_commit,
)
from loopwright.tasks.importers._source import Instance, parse_instance, read_records
from loopwright.tasks.importers._testids import MappedTests, TreeView, map_test_ids

__all__ = [
    "EnvSpec",
    "ImportOptions",
    "import_swebench",
    "instance_parts",
    "load_env_spec",
]

DOCKERFILE = "environment/Dockerfile"
_TEST_EXTRAS = ("test", "tests", "testing")
_TEST_REQUIREMENTS = (
    "requirements-test.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
)


class _VersionEnv(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    environment: Environment


class _RepoEnv(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    environment: Environment | None = None
    versions: dict[str, _VersionEnv] = Field(default_factory=dict)


class EnvSpec(BaseModel):
    """An `--env-spec` TOML file: an `[environment]` table for every task,
    `[repos."owner/name".environment]` tables for the tasks of one repository, and
    `[repos."owner/name".versions."X.Y".environment]` tables for those of one repository whose
    row's `version` is X.Y (as SWE-bench's own specs are keyed). The most specific wins; it
    replaces the environment the importer would have chosen."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    environment: Environment | None = None
    repos: dict[str, _RepoEnv] = Field(default_factory=dict)
    _directory: Path | None = PrivateAttr(default=None)  # the `environment/` beside the file

    def environment_files(self) -> dict[str, bytes]:
        """The files of the `environment/` directory beside the spec file (wheels, a
        requirements file), as task files under `environment/`, as `tasks mine --env-spec`
        copies them; none when there is no such directory."""
        root = self._directory
        if root is None:
            return {}
        return {f"{ENV_DIR}/{p.relative_to(root).as_posix()}": p.read_bytes()
                for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip

    def for_repo(self, repo: str, version: str | None = None) -> Environment | None:
        """The environment for tasks of `repo` at `version`, or None when the file gives none."""
        chosen = self.repos.get(repo)
        if chosen is None:
            return self.environment
        if version is not None and version in chosen.versions:
            return chosen.versions[version].environment
        return chosen.environment if chosen.environment is not None else self.environment


def load_env_spec(path: Path) -> EnvSpec:
    """Read an `--env-spec` file. Raises ConfigError saying what is wrong with it."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read --env-spec {path}", got=str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--env-spec {path} is not valid TOML", got=str(exc)) from None
    try:
        spec = EnvSpec.model_validate(raw)
    except ValidationError as exc:
        problems = "\n".join(f"  - {p}" for p in pydantic_problems(exc))
        raise ConfigError(
            f"--env-spec {path} is invalid:\n{problems}",
            fix='give [environment], [repos."owner/name".environment] and/or '
            '[repos."owner/name".versions."X.Y".environment] tables '
            "(docs/importing.md, 'Environments')",
        ) from None
    directory = path.expanduser().resolve().parent / ENV_DIR
    spec._directory = directory if directory.is_dir() else None
    return spec


@dataclass(frozen=True)
class ImportOptions:
    """How instances are imported: where the clones are, whether the instruction carries the
    hints, an environment override, and which instance ids (empty: all)."""

    repos: Path
    hints: bool = False
    env_spec: EnvSpec | None = None
    ids: tuple[str, ...] = ()
    fmt: str = "swebench"
    grading: Literal["tests", "files"] = "tests"  # FeatureBench: per test id, or per file


def import_swebench(
    source: Path, out: Path, options: ImportOptions, *, progress: ImportProgress | None = None
) -> ImportReport:
    """Import every instance of `source` (or those of `options.ids`) into `out`; write and
    return the report. Raises ConfigError for an unreadable source; an instance that cannot be
    converted is in the report's `skipped` with its reason, never raised."""
    return import_records(read_records(source), out, options, source, instance_parts, progress)


def import_records(
    records: list[dict[str, Any]],
    out: Path,
    options: ImportOptions,
    source: Path,
    convert: Callable[[dict[str, Any], ImportOptions], TaskParts],
    progress: ImportProgress | None,
) -> ImportReport:
    """Drive `records` (those of `options.ids` when given) through `convert`; an id asked for
    that the source lacks is reported as skipped."""
    jobs = []
    seen = set()
    for index, record in enumerate(records):
        source_id = str(record.get("instance_id") or f"#{index + 1}")
        if options.ids and source_id not in options.ids:
            continue
        seen.add(source_id)
        jobs.append((source_id, partial(convert, record, options)))
    for missing in [i for i in options.ids if i not in seen]:
        jobs.append((missing, partial(_absent, missing, source)))
    return run_import(jobs, out, format=options.fmt, source=str(source), progress=progress)


def _absent(source_id: str, source: Path) -> TaskParts:
    raise SkipInstance(f"--ids names {source_id}, which {source} does not hold")


def instance_parts(record: dict[str, Any], options: ImportOptions) -> TaskParts:
    """One SWE-bench record as the parts of a task. Raises SkipInstance saying why it cannot
    be converted (malformed, no clone, missing commit, a test patch that does not apply, an
    unknown test id form, an unsupported eval_type)."""
    inst = parse_instance(record)
    if len(inst.base_commit) < 4:
        raise SkipInstance("malformed instance: base_commit is missing or too short")
    if (inst.eval_type or "pass_and_fail").lower() not in ("pass_and_fail", ""):
        raise SkipInstance(
            f"eval_type {inst.eval_type!r} is not supported (only pass_and_fail: a test counts "
            "as passed only when it is reported passed)"
        )
    if not inst.test_patch.strip():
        raise SkipInstance("test_patch is empty: there are no hidden tests")
    clone = find_clone(options.repos, inst.repo)
    require_commit(clone, inst.base_commit)
    tree = patched_tree(clone, inst.base_commit, inst.test_patch, "test patch")
    mapped = map_test_ids(inst.FAIL_TO_PASS, inst.PASS_TO_PASS, tree)
    level = 1 if len(_source_files(inst.patch)) == 1 else 2
    environment, files = choose_environment(inst, clone, options)
    return TaskParts(
        spec=task_spec(inst, mapped, level=level, environment=environment),
        instruction=instruction_text(inst, hints=options.hints),
        clone=clone,
        commit=inst.base_commit,
        tests_patch=inst.test_patch,
        gold_patch=inst.patch,
        files=files,
        notes=dropped_notes(mapped),
    )


def dropped_notes(mapped: MappedTests) -> tuple[str, ...]:
    """The import report's notes on the ids `map_test_ids` left out."""
    return tuple(f"test id left out: {note}" for note in mapped.dropped)


def patched_tree(clone: Path, commit: str, patch: str, label: str) -> TreeView:
    """The tree of `commit` with `patch` applied to the files it touches (read from git)."""
    try:
        touched = patch_paths(patch.encode())
    except ValueError as exc:
        raise SkipInstance(f"{label}: {exc}") from None
    base = read_at(clone, commit, touched)
    patched = apply_patch_to(base, patch, label)
    return TreeView(
        patched=patched,
        exists=partial(exists_at, clone, commit),
        read=lambda rel: read_at(clone, commit, [rel]).get(rel),
    )


def _source_files(patch: str) -> list[str]:
    try:
        return patch_paths(patch.encode()) if patch.strip() else []
    except ValueError:
        return []


def task_spec(
    inst: Instance,
    mapped: MappedTests,
    *,
    level: int,
    environment: Environment | None,
    timeouts: Timeouts | None = None,
    grading: GradingTable | None = None,
) -> TaskSpec:
    """The task.toml of an instance (graded by `mapped.runner` under SWE-bench's rules unless
    `grading` is given). Raises SkipInstance when it does not validate."""
    try:
        return TaskSpec(
            id=task_id_for(inst.instance_id),
            level=level,
            summary=_summary(inst),
            test_dir=mapped.test_dir,
            hidden_tests_layout="patch",
            fail_to_pass=mapped.fail_to_pass,
            pass_to_pass=mapped.pass_to_pass,
            timeouts=timeouts or Timeouts(),
            environment=environment,
            grading=grading or GradingTable(runner=mapped.runner, rules="swebench"),
        )
    except ValidationError as exc:
        raise SkipInstance(
            "task.toml would be invalid: " + "; ".join(pydantic_problems(exc))
        ) from None


def _summary(inst: Instance) -> str:
    first = next((ln.strip() for ln in inst.problem_statement.splitlines() if ln.strip()), "")
    text = first or inst.instance_id
    return text if len(text) <= 100 else text[:97] + "..."


def instruction_text(inst: Instance, *, hints: bool) -> str:
    """The problem statement, and the hints under their own heading when asked for."""
    if not inst.problem_statement.strip():
        raise SkipInstance("problem_statement is empty: the agent would be told nothing")
    text = inst.problem_statement.strip()
    if hints and inst.hints_text.strip():
        text += "\n\n## Hints\n\n" + inst.hints_text.strip()
    return text


def choose_environment(
    inst: Instance, clone: Path, options: ImportOptions
) -> tuple[Environment | None, dict[str, bytes]]:
    """The task's `[environment]` and the task files it needs, in this order of preference:
    the `--env-spec` file; the instance's `image` (or FeatureBench `image_name`); its
    Dockerfile (v5); for a Python package at the base commit, `pip install -e .` with its test
    extra and test requirements file; else none (loopwright's own interpreter)."""
    if options.env_spec is not None:
        chosen = options.env_spec.for_repo(inst.repo, inst.version)
        if chosen is not None:
            return chosen, options.env_spec.environment_files()
    image = inst.image or inst.image_name
    if image:
        return Environment(image=image), {}
    if inst.dockerfile:
        return Environment(dockerfile=DOCKERFILE), {DOCKERFILE: inst.dockerfile.encode()}
    return python_environment(clone, inst.base_commit), {}


def python_environment(clone: Path, commit: str) -> Environment | None:
    """`pip install -e .[<test extra>]` plus a test requirements file when the commit holds a
    Python package (pyproject.toml, setup.py or setup.cfg), pinned to the commit's era: only
    packages uploaded before its committer time (`packages_before`); None otherwise."""
    found = read_at(clone, commit, ["pyproject.toml", "setup.py", "setup.cfg"])
    if not found:
        return None
    extra = _test_extra(found)
    requirements = next((r for r in _TEST_REQUIREMENTS if exists_at(clone, commit, r)), None)
    return Environment(
        install=[f"pip install -e '.[{extra}]'" if extra else "pip install -e ."],
        requirements_files=[f"repo/{requirements}"] if requirements else [],
        packages_before=commit_time(clone, commit),
    )


def _test_extra(files: dict[str, bytes]) -> str | None:
    extras: Iterable[str] = ()
    if "pyproject.toml" in files:
        try:
            project = tomllib.loads(files["pyproject.toml"].decode()).get("project", {})
            extras = project.get("optional-dependencies", {}).keys()
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
            extras = ()
    if not extras and "setup.cfg" in files:
        parser = configparser.ConfigParser()
        try:
            parser.read_string(files["setup.cfg"].decode())
            extras = parser["options.extras_require"].keys()
        except (configparser.Error, UnicodeDecodeError, KeyError):
            extras = ()
    return next((e for e in _TEST_EXTRAS if e in set(extras)), None)
