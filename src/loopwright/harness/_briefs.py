"""The brief suite: one committed seed fixture per complexity, with hidden checks.

A brief is a directory:

    <id>/brief.toml      id, complexity, max_turns, timeouts, visible test ids, flawed variants
    <id>/instruction.md  what the loop is told
    <id>/repo/           the seed workspace, recreated for every cell
    <id>/checks.py       hidden checks: `check_*` functions that import the produced code and
                         call it; never copied into the workspace
    <id>/solution/       a known-good overlay onto repo/
    <id>/flawed/<name>/  known-bad overlays, one per `[[flawed]]` entry

The suite is a folder of briefs plus `suite.toml` (its `version`). Loading reads only.
"""

from __future__ import annotations

import ast
import hashlib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright.errors import ConfigError
from loopwright.tasks import Task, TaskSpec, Timeouts

__all__ = [
    "BUNDLED_BRIEFS",
    "COMPLEXITIES",
    "LEVEL_OF",
    "Brief",
    "BriefSpec",
    "BriefSuite",
    "Complexity",
    "FlawedBrief",
    "check_names",
    "load_brief_suite",
]

Complexity = Literal["simple", "medium", "complex"]
COMPLEXITIES: tuple[Complexity, ...] = ("simple", "medium", "complex")
LEVEL_OF: dict[Complexity, int] = {"simple": 1, "medium": 2, "complex": 3}
"""A complexity bucket as the task level the runtime routes `loop_complexity_overrides` on."""

BUNDLED_BRIEFS = Path(__file__).parent / "briefs"
BRIEF_FILE = "brief.toml"
SUITE_FILE = "suite.toml"
CHECK_PREFIX = "check_"
_DOC = "docs/ab.md"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FlawedBrief(_Strict):
    """A known-bad overlay in `flawed/<name>/` and what is wrong with it."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    description: str = Field(min_length=1)


class BriefSpec(_Strict):
    """The contents of `brief.toml`."""

    schema_version: Literal[1] = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    complexity: Complexity
    summary: str = ""
    max_turns: int = Field(ge=1)
    timeout_s: float = Field(gt=0)
    check_timeout_s: float = Field(default=60.0, gt=0)
    visible_tests: list[str] = Field(min_length=1)
    flawed: list[FlawedBrief] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Brief:
    """A loaded brief. Paths are absolute; nothing here is ever written."""

    spec: BriefSpec
    root: Path
    checks: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def complexity(self) -> Complexity:
        return self.spec.complexity

    @property
    def repo_dir(self) -> Path:
        return self.root / "repo"

    @property
    def instruction_file(self) -> Path:
        return self.root / "instruction.md"

    @property
    def checks_file(self) -> Path:
        return self.root / "checks.py"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    def flawed_dir(self, name: str) -> Path:
        return self.root / "flawed" / name

    def task(self) -> Task:
        """The brief as the Task a Runner needs: level from the complexity, the agent timeout
        from `timeout_s`, the check timeout as its grade timeout, the visible tests as its test
        ids. The pytest grader never runs on it: `BriefGrader`, the hidden checks, grades it."""
        spec = TaskSpec(
            id=self.id,
            level=LEVEL_OF[self.complexity],
            summary=self.spec.summary,
            fail_to_pass=list(self.spec.visible_tests),
            timeouts=Timeouts(agent=self.spec.timeout_s, grade=self.spec.check_timeout_s),
        )
        instruction = self.instruction_file.read_text(encoding="utf-8")
        return Task(spec=spec, root=self.root, instruction=instruction)


@dataclass(frozen=True, slots=True)
class BriefSuite:
    """The briefs in id order, the suite's declared `version` and the digest of its files."""

    root: Path
    version: int
    digest: str
    briefs: tuple[Brief, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.briefs)

    def get(self, brief_id: str) -> Brief:
        """The brief named `brief_id`; ConfigError listing the known ones otherwise."""
        for brief in self.briefs:
            if brief.id == brief_id:
                return brief
        raise ConfigError(
            f"unknown brief {brief_id!r}",
            got=brief_id,
            fix=f"use one of: {', '.join(self.names())}",
        )


def load_brief_suite(root: Path | None = None) -> BriefSuite:
    """Load the suite at `root` (default: the bundled one). Raises ConfigError naming every
    problem: a missing or invalid suite.toml or brief.toml, a missing file, a checks.py that
    does not parse or defines no `check_*` function, an undeclared or missing overlay."""
    base = (root or BUNDLED_BRIEFS).resolve()
    version = _suite_version(base)
    dirs = sorted(p for p in base.iterdir() if (p / BRIEF_FILE).is_file())
    if not dirs:
        raise ConfigError(f"brief suite {base} holds no brief", fix=f"see {_DOC}")
    briefs, problems = [], []
    for path in dirs:
        try:
            briefs.append(_load_brief(path))
        except ConfigError as exc:
            problems.append(exc.render())
    if problems:
        raise ConfigError(f"invalid brief suite {base}:\n" + "\n".join(problems), fix=f"see {_DOC}")
    briefs.sort(key=lambda b: (LEVEL_OF[b.complexity], b.id))
    return BriefSuite(base, version, _tree_digest(base), tuple(briefs))


def _suite_version(base: Path) -> int:
    path = base / SUITE_FILE
    if not path.is_file():
        raise ConfigError(f"brief suite {base} has no {SUITE_FILE}", fix=f"see {_DOC}")
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ConfigError(f"{path}: version must be a positive integer", got=repr(version))
    return version


def _load_brief(path: Path) -> Brief:
    toml_path = path / BRIEF_FILE
    try:
        spec = BriefSpec.model_validate(tomllib.loads(toml_path.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"{toml_path} is invalid", got=str(exc)) from None
    if spec.id != path.name:
        raise ConfigError(f"{toml_path}: id {spec.id!r} differs from the directory {path.name!r}")
    problems = list(_layout_problems(path, spec))
    checks_file = path / "checks.py"
    checks = (
        check_names(checks_file.read_text(encoding="utf-8"), checks_file)
        if checks_file.is_file()
        else ()
    )
    if not checks:
        problems.append("checks.py is missing or defines no check_* function")
    if problems:
        raise ConfigError(f"brief {spec.id}: " + "; ".join(problems))
    return Brief(spec, path, checks)


def _layout_problems(path: Path, spec: BriefSpec) -> Iterable[str]:
    for name in ("instruction.md", "repo", "solution"):
        if not (path / name).exists():
            yield f"{name} is missing"
    declared = {f.name for f in spec.flawed}
    flawed_root = path / "flawed"
    present = (
        {p.name for p in flawed_root.iterdir() if p.is_dir()} if flawed_root.is_dir() else set()
    )
    for name in sorted(declared - present):
        yield f"flawed/{name}/ is declared in brief.toml but missing"
    for name in sorted(present - declared):
        yield f"flawed/{name}/ has no [[flawed]] entry in brief.toml"


def check_names(source: str, checks_file: Path) -> tuple[str, ...]:
    """The `check_*` functions a checks.py `source` defines at top level, in file order (read
    statically, so a run that dies before reporting still knows which checks it owed).
    ConfigError naming `checks_file` when it does not parse."""
    try:
        tree = ast.parse(source, str(checks_file))
    except SyntaxError as exc:
        raise ConfigError(f"{checks_file} does not parse", got=str(exc)) from None
    return tuple(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith(CHECK_PREFIX)
    )


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or rel.suffix == ".pyc":
            continue
        h.update(rel.as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
