"""Reading instance files: JSON, JSONL, parquet, or a SWE-bench v5 task repository, into
`Instance` models (docs/importing.md, "Source fields")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loopwright.errors import ConfigError, MissingDependencyError
from loopwright.tasks._loader import pydantic_problems
from loopwright.tasks.importers._gitrepo import SkipInstance

__all__ = ["Instance", "parse_instance", "read_records"]

Record = dict[str, Any]
V5_FILE = "sweb.yaml"
ERROR_KEY = "__loopwright_error__"  # a v5 folder that could not be read: reported, not dropped
# v5 task folder file -> the instance field it holds
_V5_TEXT = {
    "problem_statement.md": "problem_statement",
    "gold.patch": "patch",
    "test.patch": "test_patch",
    "eval.sh": "eval_script",
    "Dockerfile": "dockerfile",
}


class Instance(BaseModel):
    """One SWE-bench-style instance. Unknown fields are ignored (datasets carry many);
    FAIL_TO_PASS / PASS_TO_PASS may be JSON-encoded string lists or real lists, and
    `repo_settings` (FeatureBench) a JSON-encoded object or a real one."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    instance_id: str = Field(min_length=1)
    repo: str = Field(pattern=r"^\w[\w.-]*/\w[\w.-]*$")  # owner/name; no "..", so no escape
    base_commit: str = ""  # required by SWE-bench; FeatureBench may take the repo from its image
    patch: str = ""
    test_patch: str = ""
    problem_statement: str = ""
    hints_text: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    version: str | None = None
    environment_setup_commit: str | None = None
    created_at: str | None = None
    image: str | None = None
    image_name: str | None = None
    eval_script: str | None = None
    log_parser: str | None = None
    eval_type: str | None = None
    dockerfile: str | None = None
    instance_dockerfile: str | None = None  # FeatureBench: the instance image's recipe
    base_dockerfile: str | None = None  # FeatureBench: its base image's recipe
    build_setup_env_sh: str | None = None  # FeatureBench: the setup_env.sh it runs
    repo_settings: dict[str, Any] = Field(default_factory=dict)

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else []
            except json.JSONDecodeError:
                raise ValueError("a JSON-encoded list of test ids was expected") from None
        return [] if value is None else value

    @field_validator("repo_settings", mode="before")
    @classmethod
    def _json_object(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else {}
            except json.JSONDecodeError:
                raise ValueError("a JSON-encoded object was expected") from None
        return {} if value is None else value

    @field_validator("version", "created_at", "environment_setup_commit", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        return None if value is None else str(value)

    @field_validator("patch", "test_patch", "problem_statement", "hints_text", mode="before")
    @classmethod
    def _no_null(cls, value: object) -> object:
        return "" if value is None else value


def parse_instance(record: Record) -> Instance:
    """`record` as an Instance; SkipInstance listing what is wrong with it otherwise."""
    if ERROR_KEY in record:
        raise SkipInstance(str(record[ERROR_KEY]))
    try:
        return Instance.model_validate(record)
    except ValidationError as exc:
        raise SkipInstance("malformed instance: " + "; ".join(pydantic_problems(exc))) from None


def read_records(source: Path) -> list[Record]:
    """The instance records of `source`: a `.json` file (a list, or one object), `.jsonl` (one
    object a line), `.parquet` (needs pyarrow), or a SWE-bench v5 task repository (a folder
    with `sweb.yaml` and `tasks/<id>/`). Raises ConfigError for an unreadable source."""
    if source.is_dir():
        return _v5_records(source)
    if not source.is_file():
        raise ConfigError(f"instance source {source} does not exist")
    suffix = source.suffix.lower()
    if suffix == ".parquet":
        return _parquet_records(source)
    text = source.read_text(encoding="utf-8")
    try:
        if suffix == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif suffix == ".json":
            loaded = json.loads(text)
            records = loaded if isinstance(loaded, list) else [loaded]
        else:
            raise ConfigError(
                f"{source}: unknown instance file type {suffix!r}",
                fix="give a .json, .jsonl or .parquet file, or a SWE-bench v5 task repository",
            )
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source} is not valid JSON", got=str(exc)) from None
    if not all(isinstance(r, dict) for r in records):
        raise ConfigError(f"{source}: every instance must be a JSON object")
    return records


def _parquet_records(source: Path) -> list[Record]:
    try:
        import pyarrow.parquet as pq  # an optional dependency: only parquet sources need it
    except ImportError:
        raise MissingDependencyError(
            f"reading {source} needs pyarrow, which is not installed",
            fix="pip install 'loopwright[parquet]' (or convert the file to JSONL)",
        ) from None
    try:
        rows: list[Record] = pq.read_table(source).to_pylist()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{source} is not a readable parquet file", got=str(exc)) from None
    return rows


def _v5_records(root: Path) -> list[Record]:
    if not (root / V5_FILE).is_file() or not (root / "tasks").is_dir():
        raise ConfigError(
            f"{root} is not a SWE-bench v5 task repository",
            fix=f"a task repository holds {V5_FILE} and tasks/<id>/task.yaml",
        )
    return [_v5_record(task) for task in sorted((root / "tasks").iterdir()) if task.is_dir()]


def _v5_record(folder: Path) -> Record:
    """One v5 task folder as a record: task.yaml's fields, tests.json's lists, and the text
    files. A folder that cannot be read gives a record the instance model rejects, so that it
    is reported, not dropped."""
    record: Record = {"instance_id": folder.name}
    try:
        meta = yaml.safe_load((folder / "task.yaml").read_text(encoding="utf-8"))
        record.update(meta if isinstance(meta, dict) else {})
        tests_file = folder / "tests.json"
        if tests_file.is_file():
            tests = json.loads(tests_file.read_text(encoding="utf-8"))
            for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                record[key] = tests.get(key, tests.get(key.lower(), []))
        for name, key in _V5_TEXT.items():
            if (folder / name).is_file():
                record[key] = (folder / name).read_text(encoding="utf-8")
    except (
        OSError,
        UnicodeDecodeError,
        yaml.YAMLError,
        json.JSONDecodeError,
        AttributeError,
    ) as exc:
        record[ERROR_KEY] = f"unreadable task folder {folder}: {exc}"
    return record
