"""`tasks mine`, the part that needs no test run: a commit's change split into hidden tests (a
`tests.patch`) and gold (a `solution/` overlay), the instruction draft, the inferred
`[environment]`, flawed variants made by reverting half of the gold's hunks, and the task folder
written to disk. Running the tests to find FAIL_TO_PASS is _mining.py's; this module runs no
test and imports no sandbox. See docs/importing.md, "Mining a repository".
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from loopwright.scoring._mine_git import GitRepo
from loopwright.tasks import Environment, TaskSpec

__all__ = [
    "Candidate",
    "FlawedDraft",
    "Skip",
    "extract_candidate",
    "flawed_drafts",
    "infer_environment",
    "instruction_draft",
    "is_source_path",
    "is_test_path",
    "task_id_for",
    "write_task",
]

SOURCE_SUFFIXES = frozenset({".py", ".pyx", ".pxd", ".pyi"})
"""The files whose change makes a commit a code change (the repositories mined are Python)."""
_TEST_DIRS = frozenset({"tests", "test", "testing"})
_SIGNATURE = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z]\w*)")
_TRAILER = re.compile(
    r"^(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by|"
    r"Helped-by|Change-Id|Cc):\s",
    re.IGNORECASE,
)


def is_test_path(path: str) -> bool:
    """True for a test file: under a `tests`/`test`/`testing` directory, or named `test_*.py`,
    `*_test.py` or `conftest.py`."""
    p = PurePosixPath(path)
    return (
        bool(_TEST_DIRS & set(p.parts[:-1]))
        or p.name == "conftest.py"
        or (p.suffix == ".py" and (p.name.startswith("test_") or p.stem.endswith("_test")))
    )


def is_source_path(path: str) -> bool:
    """True for a code file that is not a test (SOURCE_SUFFIXES)."""
    return PurePosixPath(path).suffix in SOURCE_SUFFIXES and not is_test_path(path)


@dataclass(frozen=True, slots=True)
class Skip:
    """A commit that is not a candidate, and why."""

    sha: str
    subject: str
    reason: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A commit that changes both code and tests, split against its first parent `base`.

    `gold` holds the commit's version of every non-test file it adds or modifies (the
    `solution/` overlay); `deleted` the non-test files it removes, which an overlay cannot
    express (they stay in the gold workspace: FAIL_TO_PASS is measured that way, so the lists
    hold for `bench validate`). `base_files` holds the base version of each gold path that
    existed there. `test_patch` is the diff of the test files (`tests.patch`)."""

    sha: str
    base: str
    subject: str
    message: str
    merged: tuple[str, ...]  # for a merge commit: the subjects of the commits it merged
    test_patch: bytes
    test_files: tuple[str, ...]  # test files the patch leaves in place (.py), to run
    gold: dict[str, bytes]
    base_files: dict[str, bytes]
    deleted: tuple[str, ...]
    sources: tuple[str, ...]  # changed code files (SOURCE_SUFFIXES), for the level

    @property
    def level(self) -> int:
        """1 when the change touches one source file, 2 when several."""
        return 1 if len(self.sources) <= 1 else 2

    @property
    def test_dir(self) -> str:
        """The test directory most of the changed test files sit in (default "tests")."""
        tops = [
            PurePosixPath(p).parts[0] for p in self.test_files if len(PurePosixPath(p).parts) > 1
        ]
        known = [t for t in tops if t in _TEST_DIRS]
        return max(sorted(set(known)), key=known.count) if known else "tests"


def extract_candidate(git: GitRepo, sha: str) -> Candidate | Skip:
    """`sha` split into hidden tests and gold against its first parent, or why it is no
    candidate (no code change, no test change, no test file left to run). Deterministic."""
    parents = git.parents(sha)
    message = git.message(sha)
    subject = message.split("\n", 1)[0]
    changes = git.changes(parents[0], sha)
    tests = [c for c in changes if is_test_path(c.path)]
    code = [c for c in changes if not is_test_path(c.path)]
    sources = sorted(c.path for c in code if is_source_path(c.path))
    if not sources:
        return Skip(sha, subject, "no code change (tests or other files only)")
    if not tests:
        return Skip(sha, subject, "no test change")
    runnable = sorted(
        c.path
        for c in tests
        if c.status != "D"
        and c.path.endswith(".py")
        and PurePosixPath(c.path).name != "conftest.py"
    )
    if not runnable:
        return Skip(sha, subject, "its test changes leave no test file to run")
    kept = [c for c in code if c.status != "D"]
    gold = {c.path: git.show(sha, c.path) for c in kept}
    base_files = {c.path: git.show(parents[0], c.path) for c in kept if c.status != "A"}
    return Candidate(
        sha=sha,
        base=parents[0],
        subject=subject,
        message=message,
        merged=tuple(git.merged_subjects(sha)) if len(parents) > 1 else (),
        test_patch=git.diff(parents[0], sha, [c.path for c in tests]),
        test_files=tuple(runnable),
        gold=gold,
        base_files=base_files,
        deleted=tuple(sorted(c.path for c in code if c.status == "D")),
        sources=tuple(sources),
    )


def task_id_for(candidate: Candidate) -> str:
    """`<slug of the subject>-<sha[:8]>`: readable, unique per commit, a valid task id."""
    slug = re.sub(r"[^a-z0-9]+", "-", candidate.subject.lower()).strip("-")[:40].strip("-")
    return f"{slug}-{candidate.sha[:8]}" if slug else candidate.sha[:12]


def signatures(candidate: Candidate) -> list[str]:
    """The public `def`/`class` lines the gold adds or changes (stripped, in file order)."""
    found = []
    for path, after in sorted(candidate.gold.items()):
        if not is_source_path(path):
            continue
        before = set(_lines(candidate.base_files.get(path, b"")))
        for line in _lines(after):
            if _SIGNATURE.match(line) and line not in before:
                found.append(f"{path}: {line.strip()}")
    return found


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines()


def instruction_draft(candidate: Candidate) -> str:
    """What the agent is told when no model rewrites it: the commit message (trailers such as
    `Signed-off-by:` left out; issue references kept), a merge's merged commit subjects, and the
    public signatures the change adds or changes. Deterministic."""
    lines = [line for line in candidate.message.splitlines() if not _TRAILER.match(line)]
    text = "\n".join(lines).strip()
    parts = [text]
    if candidate.merged:
        parts.append(
            "It brings in these changes:\n" + "\n".join(f"- {s}" for s in candidate.merged)
        )
    found = signatures(candidate)
    if found:
        parts.append("Public signatures to add or change:\n" + "\n".join(f"- `{s}`" for s in found))
    return "\n\n".join(parts) + "\n"


def infer_environment(repo: Path) -> tuple[Environment | None, str]:
    """The `[environment]` a mined task gets from its repository at base, and why.

    A repository that declares dependencies (pyproject `[project] dependencies`, a setup.py,
    or a requirements.txt) or keeps its package under `src/` needs an install:
    `pip install -e .` (which installs the dependencies too; offline, they must be available
    locally, else the build fails and the commit is dropped saying so). Otherwise the tests run
    with loopwright's own interpreter and the workspace root on `sys.path`, as the bundled
    benchmark's do (no environment to build)."""
    pyproject = repo / "pyproject.toml"
    declared: list[str] = []
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            project = {}
        deps = project.get("dependencies", []) if isinstance(project, dict) else []
        declared = [str(d) for d in deps] if isinstance(deps, list) else []
    if declared:
        return _install(), f"pyproject.toml declares dependencies ({', '.join(declared[:3])})"
    if (repo / "setup.py").is_file():
        return _install(), "setup.py (its install_requires are installed by pip install -e .)"
    if (repo / "requirements.txt").is_file():
        return _install(["-r requirements.txt"]), "requirements.txt"
    if (pyproject.is_file() or (repo / "setup.cfg").is_file()) and (repo / "src").is_dir():
        return _install(), "a package under src/ (importable only once installed)"
    return None, "no declared dependencies and no src/ layout: loopwright's interpreter"


def _install(requirements: list[str] | None = None) -> Environment:
    installs = ["pip install " + r for r in requirements or []] + ["pip install -e ."]
    return Environment(install=installs)


@dataclass(frozen=True, slots=True)
class FlawedDraft:
    """A flawed variant before it is graded: its overlay files and how it was made."""

    name: str
    description: str
    files: dict[str, bytes]


def flawed_drafts(candidate: Candidate) -> list[FlawedDraft]:
    """Two variants, each keeping one half of the gold's hunks (in file then line order) and
    reverting the other; none when the gold has fewer than two hunks. A variant equal to the
    gold or to the base is left out. Deterministic."""
    hunks = _hunks(candidate)
    if len(hunks) < 2:
        return []
    half = (len(hunks) + 1) // 2
    drafts = []
    for name, kept, what in (
        ("first-half", set(range(half)), f"the first {half} of {len(hunks)} hunks"),
        (
            "second-half",
            set(range(half, len(hunks))),
            f"the last {len(hunks) - half} of {len(hunks)} hunks",
        ),
    ):
        files = _apply(candidate, hunks, kept)
        if files and files != candidate.gold:
            drafts.append(
                FlawedDraft(name, f"Only {what} of the gold change; the rest reverted.", files)
            )
    return drafts


@dataclass(frozen=True, slots=True)
class _Hunk:
    path: str
    start: int  # in the base's lines
    end: int
    replacement: tuple[str, ...]


def _hunks(candidate: Candidate) -> list[_Hunk]:
    hunks = []
    for path, after in sorted(candidate.gold.items()):
        before_lines = _keep_ends(candidate.base_files.get(path))
        after_lines = _keep_ends(after)
        matcher = difflib.SequenceMatcher(None, before_lines, after_lines, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op != "equal":
                hunks.append(_Hunk(path, i1, i2, tuple(after_lines[j1:j2])))
    return hunks


def _keep_ends(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", errors="surrogateescape").splitlines(True)


def _apply(candidate: Candidate, hunks: list[_Hunk], kept: set[int]) -> dict[str, bytes]:
    """The overlay with only the hunks numbered in `kept` applied to the base; a file none of
    whose hunks are kept is left out (the repo's own version, or absent for a new file)."""
    files = {}
    for path in sorted(candidate.gold):
        mine = [(i, h) for i, h in enumerate(hunks) if h.path == path]
        if not any(i in kept for i, _ in mine):
            continue
        lines = _keep_ends(candidate.base_files.get(path))
        for i, hunk in reversed(mine):  # from the bottom, so earlier offsets hold
            if i in kept:
                lines[hunk.start : hunk.end] = hunk.replacement
        files[path] = "".join(lines).encode("utf-8", errors="surrogateescape")
    return files


def write_task(dest: Path, spec: TaskSpec, instruction: str, repo_src: Path, test_patch: bytes,
               gold: dict[str, bytes], flawed: dict[str, dict[str, bytes]]) -> None:  # fmt: skip
    """Write the task folder `dest` (replaced if present): task.toml from `spec`,
    instruction.md, repo/ (moved from `repo_src`, or copied when it is not a directory of its
    own), tests.patch, solution/ and flawed/<name>/ overlays."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.move(str(repo_src), dest / "repo")
    (dest / "task.toml").write_text(task_toml(spec), encoding="utf-8")
    (dest / "instruction.md").write_text(instruction, encoding="utf-8")
    (dest / "tests.patch").write_bytes(test_patch)
    _write_overlay(dest / "solution", gold)
    for name, files in flawed.items():
        _write_overlay(dest / "flawed" / name, files)


def _write_overlay(root: Path, files: dict[str, bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def task_toml(spec: TaskSpec) -> str:
    """`spec` as task.toml text (a JSON string or list is a TOML one). Deterministic."""
    data = spec.model_dump(mode="json", exclude_defaults=True)
    data["schema_version"] = spec.schema_version
    lines = []
    for key in ("schema_version", "id", "level", "summary", "test_dir", "hidden_tests_layout"):
        if key in data:
            lines.append(f"{key} = {_toml_value(data.pop(key))}")
    for key in ("fail_to_pass", "pass_to_pass"):
        ids = data.pop(key, [])
        lines.append(f"{key} = [" + "".join(f"\n  {_toml_value(i)}," for i in ids) + "\n]")
    for table in ("timeouts", "environment", "grading"):
        value = data.pop(table, None)
        if value:
            lines.append(f"\n[{table}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in value.items()]
    for variant in data.pop("flawed", []):
        lines.append("\n[[flawed]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in variant.items()]
    if data:
        raise ValueError(f"task_toml: fields not written: {sorted(data)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: object) -> str:
    """A JSON value as TOML: strings, numbers, booleans, lists of those, one-level tables."""
    if isinstance(value, dict):
        items = ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }"
    return json.dumps(value, ensure_ascii=False)
