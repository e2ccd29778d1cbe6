"""`tasks mine --env-spec FILE`: one `[environment]` table that every mined task gets instead of
the inferred one, checked whole before anything is mined.

The file's directory stands for the task directory: its paths are written as in task.toml. A
path under `environment/` names a file beside the spec (`<spec dir>/environment/...`); that
directory is copied whole into every task written, so the task is self-contained (a wheels
folder for `--no-index --find-links wheels` included). A path under `repo/` names a file of the
mined repository, as each commit's base has it. Runs no test and imports no sandbox.
See docs/importing.md, "Your own environment: --env-spec".
"""

from __future__ import annotations

import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.tasks import ENV_DIR, Environment, pydantic_problems

__all__ = ["ENV_DIR", "MineEnvSpec", "load_mine_env_spec"]

"""The directory beside the spec file that is copied into every mined task."""
_DOC = "docs/importing.md, 'Your own environment: --env-spec'"
_EXAMPLE = (
    "an [environment] table with the keys of task.toml's (docs/task-format.md), e.g. "
    '[environment] then requirements_files = ["environment/requirements.txt"], that file beside '
    f"the spec in environment/ ({_DOC})"
)
# pip options in a requirements file whose value is a path relative to the file.
_PATH_OPTIONS = ("-r", "--requirement", "-c", "--constraint", "-f", "--find-links")


@dataclass(frozen=True, slots=True)
class MineEnvSpec:
    """A checked `--env-spec` file: its `[environment]` table and the `environment/` directory
    beside it (None when there is none) that goes into every task."""

    path: Path
    environment: Environment
    directory: Path | None

    def copy_into(self, task_root: Path) -> None:
        """Copy the `environment/` directory into the task folder `task_root` (replacing one)."""
        if self.directory is None:
            return
        dest = task_root / ENV_DIR
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(self.directory, dest, symlinks=False)


def load_mine_env_spec(path: Path) -> MineEnvSpec:
    """Read and check an `--env-spec` file. Deterministic; reads only. Raises ConfigError (what,
    got, fix) for an unreadable file, bad TOML, a key other than `[environment]`, an unknown or
    malformed key in the table, a path outside `environment/` and `repo/`, or a file it names
    (or a relative `-r`, `-c`, `--find-links` path in a requirements file) that is missing."""
    raw = _read(path)
    table = _table(path, raw)
    root = path.expanduser().resolve().parent
    directory = root / ENV_DIR
    for rel in table.files:
        _check_file(path, root, rel, requirements=rel in table.requirements_files)
    return MineEnvSpec(
        path=path.expanduser().resolve(),
        environment=table,
        directory=directory if directory.is_dir() else None,
    )


def _read(path: Path) -> dict[str, object]:
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"--env-spec {path} cannot be read",
            got=f"{type(exc).__name__}: {exc}",
            fix="give the path of a TOML file holding an [environment] table",
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"--env-spec {path} is not valid TOML", got=str(exc), fix=f"write {_EXAMPLE}"
        ) from None


def _table(path: Path, raw: dict[str, object]) -> Environment:
    others = sorted(k for k in raw if k != "environment")
    if others or "environment" not in raw:
        raise ConfigError(
            f"--env-spec {path} must hold one [environment] table and nothing else",
            got=f"top-level keys {sorted(raw)}" if raw else "an empty file",
            fix=f"write {_EXAMPLE}",
        )
    try:
        return Environment.model_validate(raw["environment"])
    except ValidationError as exc:
        problems = "; ".join(f"environment.{p}" for p in pydantic_problems(exc))
        raise ConfigError(
            f"--env-spec {path} has an invalid [environment] table",
            got=problems,
            fix="use only the keys of task.toml's [environment] (python, requirements, "
            "requirements_files, install, env, image, dockerfile, workdir, scratch; "
            "docs/task-format.md)",
        ) from None


def _check_file(path: Path, root: Path, rel: str, *, requirements: bool) -> None:
    """`rel` (a requirements file or the dockerfile) is under environment/ and exists beside the
    spec, or is under repo/ (a file of the mined repository, read at each commit)."""
    top = PurePosixPath(rel).parts[0]
    if top == "repo":
        return
    if top != ENV_DIR:
        raise ConfigError(
            f"--env-spec {path} names {rel!r}, which would not be inside the mined tasks",
            got=f"a path outside {ENV_DIR}/ and repo/",
            fix=f"put the file in {root / ENV_DIR}/ and write {ENV_DIR}/{PurePosixPath(rel).name} "
            f"(that directory is copied into every task), or name a file of the repository as "
            f"repo/<path> ({_DOC})",
        )
    target = root / rel
    if not target.is_file():
        raise ConfigError(
            f"--env-spec {path} names {rel!r}, which does not exist",
            got=f"no file {target}",
            fix=f"create it, or correct the path (relative to {root}, as in task.toml)",
        )
    if requirements:
        _check_references(path, root / ENV_DIR, target)


def _check_references(
    path: Path, env_dir: Path, requirements: Path, seen: frozenset[Path] = frozenset()
) -> None:
    """Every relative path a requirements file gives to `-r`, `-c` or `--find-links` exists and
    stays inside `env_dir` (pip resolves them against the file's own directory); the files
    named by `-r` and `-c` are checked in turn."""
    seen = seen | {requirements.resolve()}
    for line in requirements.read_text(encoding="utf-8", errors="replace").splitlines():
        for option, value in _path_values(line):
            if "://" in value or value.startswith("$"):
                continue  # a URL or an environment variable: not a file of the spec
            target = (requirements.parent / value).resolve()
            inside = target == env_dir.resolve() or env_dir.resolve() in target.parents
            if not target.exists() or not inside:
                shown = requirements.relative_to(env_dir.parent)
                raise ConfigError(
                    f"--env-spec {path}: {shown} refers to {value!r}, which "
                    + ("is not inside environment/" if target.exists() else "does not exist"),
                    got=f"{line.strip()!r} -> {target}",
                    fix=f"put it in {env_dir}/ and write the path relative to {shown.parent}/ "
                    "(only environment/ is copied into the tasks)",
                )
            if option not in ("-f", "--find-links") and target.is_file() and target not in seen:
                _check_references(path, env_dir, target, seen)


def _path_values(line: str) -> list[tuple[str, str]]:
    """(option, value) of the path options on one requirements-file line (comments dropped)."""
    text = line.split(" #", 1)[0].strip()
    if text.startswith("#") or not text:
        return []
    try:
        words = shlex.split(text)
    except ValueError:
        return []
    found = []
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in _PATH_OPTIONS and eq:
            found.append((name, value))
        elif word in _PATH_OPTIONS and i + 1 < len(words):
            found.append((word, words[i + 1]))
        elif word[:2] in ("-f", "-r", "-c") and len(word) > 2 and not word.startswith("--"):
            found.append((word[:2], word[2:]))
    return found
