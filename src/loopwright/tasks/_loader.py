"""Load task directories and benchmark folders, checking everything that can be checked statically."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.tasks._hidden import PATCH_FILE, place_hidden, read_hidden_sources
from loopwright.tasks._model import Benchmark, Task, TaskSpec, node_id_file
from loopwright.tasks._overlay import patch_changes

__all__ = ["load_benchmark_dir", "load_task", "node_files", "pydantic_problems"]

TASK_FILE = "task.toml"
SOLUTION_PATCH = "solution.patch"
BENCHMARK_FILE = "benchmark.toml"
FORMAT_DOC = "docs/task-format.md"
_STDLIB_MODULES = sys.stdlib_module_names | {"test"}  # the list leaves out the `test` package


def pydantic_problems(exc: ValidationError) -> list[str]:
    """One readable line per pydantic error: `field.path: message`."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"])
        lines.append(f"{loc.replace('.[', '[')}: {err['msg']}")
    return lines


def load_task(path: Path) -> Task:
    """Load and validate one task directory.

    Raises ConfigError listing every problem found (missing files, a malformed task.toml, test ids
    outside test_dir, overlays that touch tests, untagged flawed variants, ...). Reads only.
    """
    root = path.resolve()
    if not root.is_dir():
        raise ConfigError(
            f"task directory {path} does not exist",
            fix=f"point at a folder laid out as in {FORMAT_DOC}",
        )
    spec = _read_spec(root)
    problems = list(_layout_problems(root, spec))
    if problems:
        raise ConfigError(
            f"task {spec.id} ({root}) is not a valid task:\n"
            + "\n".join(f"  - {p}" for p in problems),
            fix=f"see {FORMAT_DOC}",
        )
    instruction = (root / "instruction.md").read_text(encoding="utf-8")
    return Task(spec=spec, root=root, instruction=instruction)


def _read_spec(root: Path) -> TaskSpec:
    toml_path = root / TASK_FILE
    if not toml_path.is_file():
        raise ConfigError(
            f"{root} has no {TASK_FILE}",
            fix=f"every task directory needs a {TASK_FILE}; see {FORMAT_DOC}",
        )
    try:
        raw = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{toml_path} is not valid TOML", got=str(exc)) from None
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        problems = "\n".join(f"  - {p}" for p in pydantic_problems(exc))
        raise ConfigError(f"{toml_path} is invalid:\n{problems}", fix=f"see {FORMAT_DOC}") from None
    if spec.id != root.name:
        raise ConfigError(
            f"{toml_path}: id {spec.id!r} does not match the directory name {root.name!r}",
            fix=f"rename the directory or set id = {root.name!r}",
        )
    return spec


def _layout_problems(root: Path, spec: TaskSpec) -> Iterable[str]:
    instruction = root / "instruction.md"
    if not instruction.is_file():
        yield "instruction.md is missing (it is what the agent is told)"
    elif not instruction.read_text(encoding="utf-8").strip():
        yield "instruction.md is empty"
    if not (root / "repo").is_dir():
        yield "repo/ is missing (the starting repository)"
    placed, problem = _placed_hidden(root, spec)
    if problem is not None:
        yield problem
    yield from _test_id_problems(spec, placed, root / "repo")
    yield from _module_name_problems(spec, placed, root / "repo")
    yield from _environment_problems(root, spec)
    if spec.hidden_tests_layout == "test_dir":
        yield from _collision_problems(root, spec)
    yield from _overlay_problems(root, spec, placed)


def _placed_hidden(root: Path, spec: TaskSpec) -> tuple[dict[str, bytes | None], str | None]:
    """Where the hidden tests land in the workspace, or why that cannot be worked out."""
    layout = spec.hidden_tests_layout
    if layout == "patch":
        if not (root / PATCH_FILE).is_file():
            return {}, f"{PATCH_FILE} is missing (hidden_tests_layout = 'patch')"
    else:
        hidden = root / "tests"
        if spec.grading.runner == "function" and not hidden.exists():
            return {}, None  # graded by a Python function: no hidden tests to restore
        if not hidden.is_dir() or not any(p.is_file() for p in hidden.rglob("*")):
            return {}, "tests/ is missing or empty (the hidden tests run at grading)"
    try:
        sources = read_hidden_sources(root, layout)
        return place_hidden(layout, spec.test_dir, sources, root / "repo"), None
    except (OSError, ValueError) as exc:
        return {}, f"hidden tests: {exc}"


def _test_id_problems(spec: TaskSpec, placed: dict[str, bytes | None], repo: Path) -> Iterable[str]:
    both = set(spec.fail_to_pass) & set(spec.pass_to_pass)
    if both:
        yield f"test ids in both fail_to_pass and pass_to_pass: {sorted(both)}"
    if spec.grading.runner in ("command", "function"):
        return  # the command (the function) names its own tests; its files are restored from test_dir
    prefix = spec.test_dir.rstrip("/") + "/"
    ids = (*spec.fail_to_pass, *spec.pass_to_pass)
    if spec.grading.runner == "unittest":
        prefix = prefix.replace("/", ".")  # tests/unit -> tests.unit.<module>.<Class>.<test>
        outside = [t for t in ids if not t.startswith(prefix)]
    else:
        restored = {path for path, content in placed.items() if content is not None}
        outside = [
            t
            for t in ids
            if not t.startswith(prefix)
            and node_id_file(t) not in restored
            and not (repo / node_id_file(t)).is_file()
        ]
    if outside:
        yield (
            f"test ids outside test_dir {spec.test_dir!r} in files that are neither hidden "
            f"tests nor files of repo/ (the grader restores only those): {outside}"
        )


def _module_name_problems(
    spec: TaskSpec, placed: dict[str, bytes | None], repo: Path
) -> Iterable[str]:
    """pytest test files whose module name starts with a standard-library module's (`test.py`,
    a `test/` package): the grader puts the workspace last on sys.path, so those cannot be
    collected."""
    if spec.grading.runner != "pytest":
        return
    for rel in sorted({node_id_file(t) for t in (*spec.fail_to_pass, *spec.pass_to_pass)}):
        module = _pytest_module(rel, placed, repo)
        top = module.split(".")[0]
        if top in _STDLIB_MODULES:
            yield (
                f"test file {rel} is imported as module {module!r}, and {top!r} is a "
                "standard-library module: the grader runs pytest with the workspace last on "
                "sys.path (--import-mode=append, so task code cannot shadow the standard "
                f"library), where the standard library's {top!r} wins and {rel} is never "
                f"collected; rename the file or its package directory (test.py -> "
                "test_<project>.py)"
            )


def _pytest_module(rel: str, placed: dict[str, bytes | None], repo: Path) -> str:
    """The module name pytest gives test file `rel` (its import modes other than importlib):
    the dotted path from the nearest directory up without an `__init__.py`."""
    parts = PurePosixPath(rel).with_suffix("").parts
    depth = len(parts) - 1
    while depth > 0 and _has_file("/".join([*parts[:depth], "__init__.py"]), placed, repo):
        depth -= 1
    return ".".join(parts[depth:])


def _has_file(rel: str, placed: dict[str, bytes | None], repo: Path) -> bool:
    """Whether the workspace has `rel` at grading (hidden tests placed over repo/)."""
    if rel in placed:
        return placed[rel] is not None
    return (repo / rel).is_file()


def _environment_problems(root: Path, spec: TaskSpec) -> Iterable[str]:
    if spec.environment is None:
        return
    for rel in spec.environment.files:
        if not (root / rel).is_file():
            yield f"[environment] names {rel}, which is not a file of the task"


def _collision_problems(root: Path, spec: TaskSpec) -> Iterable[str]:
    visible = root / "repo" / spec.test_dir
    hidden = root / "tests"
    if not (visible.is_dir() and hidden.is_dir()):
        return
    for path in sorted(hidden.rglob("*")):
        rel = path.relative_to(hidden)
        if path.is_file() and (visible / rel).is_file() and "__pycache__" not in rel.parts:
            yield f"hidden test {rel} has the same path as a visible test in repo/{spec.test_dir}"


def _solution_patch_problems(
    root: Path, spec: TaskSpec, placed: dict[str, bytes | None]
) -> Iterable[str]:
    patch = root / SOLUTION_PATCH
    if not patch.is_file():
        return
    if (root / "solution").is_dir():
        yield f"both solution/ and {SOLUTION_PATCH}: give the gold one way"
        return
    try:
        changed = patch_changes(patch, root / "repo")
    except (OSError, ValueError) as exc:
        yield str(exc) if SOLUTION_PATCH in str(exc) else f"{SOLUTION_PATCH}: {exc}"
        return
    test_dir = Path(spec.test_dir).parts
    for rel in changed:
        if Path(rel).parts[: len(test_dir)] == test_dir or rel in placed:
            yield f"{SOLUTION_PATCH} changes the test file {rel}; the gold must not"


def _overlay_problems(root: Path, spec: TaskSpec, placed: dict[str, bytes | None]) -> Iterable[str]:
    yield from _solution_patch_problems(root, spec, placed)
    overlays = [root / "solution"] if (root / "solution").is_dir() else []
    tagged = {v.name for v in spec.flawed}
    flawed_root = root / "flawed"
    present = (
        {p.name for p in flawed_root.iterdir() if p.is_dir()} if flawed_root.is_dir() else set()
    )
    for name in sorted(tagged - present):
        yield f"flawed variant {name!r} is declared in task.toml but flawed/{name}/ is missing"
    for name in sorted(present - tagged):
        yield f"flawed/{name}/ has no [[flawed]] entry in task.toml (give it a name, kind, description)"
    overlays += [flawed_root / n for n in sorted(tagged & present)]
    test_dir = Path(spec.test_dir)
    for overlay in overlays:
        for path in overlay.rglob("*"):
            rel = path.relative_to(overlay)
            in_tests = rel.parts[: len(test_dir.parts)] == test_dir.parts
            if path.is_file() and (in_tests or rel.as_posix() in placed):
                yield f"{overlay.relative_to(root)}/{rel} changes a test file; overlays must not"


def load_benchmark_dir(path: Path, *, name: str | None = None) -> Benchmark:
    """Load every task under `path` (each child directory with a task.toml), sorted by id.

    A path that is itself a task directory loads as a one-task benchmark. Raises ConfigError
    naming every invalid task, or when the folder holds no task at all.
    """
    root = path.resolve()
    if not root.is_dir():
        raise ConfigError(f"benchmark folder {path} does not exist")
    if (root / TASK_FILE).is_file():
        task_dirs = [root]
    else:
        task_dirs = sorted(p for p in root.iterdir() if (p / TASK_FILE).is_file())
    if not task_dirs:
        raise ConfigError(
            f"{path} holds no task",
            fix=f"a benchmark is a folder of task directories, each with a {TASK_FILE} ({FORMAT_DOC})",
        )
    tasks, errors = [], []
    for task_dir in task_dirs:
        try:
            tasks.append(load_task(task_dir))
        except ConfigError as exc:
            errors.append(exc.render())
    if errors:
        raise ConfigError(f"{len(errors)} invalid task(s) in {path}:\n" + "\n".join(errors))
    description = _benchmark_description(root)
    return Benchmark(name=name or root.name, root=root, tasks=tuple(tasks), description=description)


def _benchmark_description(root: Path) -> str:
    meta = root / BENCHMARK_FILE
    if not meta.is_file():
        return ""
    try:
        raw = tomllib.loads(meta.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{meta} is not valid TOML", got=str(exc)) from None
    description = raw.get("description", "")
    return description if isinstance(description, str) else ""


def node_files(ids: Iterable[str]) -> list[str]:
    """The distinct test files of these node ids, in first-seen order."""
    return list(dict.fromkeys(node_id_file(i) for i in ids))
