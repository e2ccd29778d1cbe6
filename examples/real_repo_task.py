"""Make a loopwright task from a real open-source project: python-slugify 5.0.2.

Run by hand (it needs PyPI; the tests never run it):

    python examples/real_repo_task.py --out my-tasks
    loopwright bench prepare my-tasks
    loopwright bench validate my-tasks

What it does, with the standard library and loopwright only:

1. `pip download` the pinned sdist of python-slugify 5.0.2 (MIT, pure Python, depends on the
   distribution text-unidecode; its sdist ships the project's own test suite, `test.py`) into a
   temporary directory, and checks its sha256.
2. Writes `OUT/slugify-smart-truncate/` in loopwright's task format (docs/task-format.md):
   - `repo/`: the project's source at 5.0.2 (minus the generated `PKG-INFO` and `*.egg-info`),
     with the body of `slugify.slugify.smart_truncate` replaced by `raise NotImplementedError`
     (its signature and docstring kept), and the project's `test.py` renamed `test_slugify.py`
     (see TEST_FILE) without the tests that exercise it. loopwright makes each workspace a git
     repository from `repo/`.
   - `tests/test_slugify.py` (`hidden_tests_layout = "tree"`): the project's own, complete
     `test.py`, which replaces the visible one at grading. fail_to_pass are its tests of
     truncation (direct calls and `slugify(..., max_length=...)`), pass_to_pass every other test
     in it.
   - `solution/slugify/slugify.py`: the released file (the gold).
   - `flawed/<name>/slugify/slugify.py`: three realistic wrong implementations.
   - `task.toml` with an `[environment]`: the project's runtime dependency pinned, pytest for
     the grader, and `pip install -e .`. `loopwright bench prepare` downloads these from PyPI.
     With `--wheels`, the wheels are downloaded into the task now instead (`environment/wheels`
     and `environment/requirements.txt` with `--no-index`), so building the environment needs no
     network: what a container image build (`--sandbox docker`) without PyPI needs.
3. Loads the written task with loopwright's own loader, so a format error shows here.

Nothing of the project is kept in loopwright's repository: the task folder is made on the
user's machine from the sdist.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from loopwright.tasks import load_task

PROJECT = "python-slugify"
VERSION = "5.0.2"
SDIST_SHA256 = "f13383a0b9fcbe649a1892b9c8eb4f8eab1d6d84b84bb7a624317afa98159cab"
TASK_ID = "slugify-smart-truncate"
MODULE = "slugify/slugify.py"
FUNCTION = "smart_truncate"
UPSTREAM_TEST_FILE = "test.py"
# loopwright's grader puts the workspace last on sys.path (pytest --import-mode=append), so a test
# module named `test` would be the standard library's package: the task renames the file.
TEST_FILE = "test_slugify.py"

# The project's tests that exercise smart_truncate (fail_to_pass); every other test of
# the test file is pass_to_pass.
HIDDEN_TESTS = (
    "TestSlugification.test_max_length",
    "TestSlugification.test_max_length_cutoff_not_required",
    "TestSlugification.test_word_boundary",
    "TestSlugification.test_custom_separator",
    "TestSlugification.test_multi_character_separator",
    "TestSlugification.test_save_order",
    "TestUtils.test_smart_truncate_no_max_length",
    "TestUtils.test_smart_truncate_no_seperator",
)

# The project's runtime dependency, pinned, and the grader's pytest.
REQUIREMENTS = ("text-unidecode==1.3", "pytest==9.2.0", "pytest-timeout==2.4.0")
BUILD_REQUIREMENT = "setuptools==80.9.0"  # builds the editable install without build isolation

STUB_BODY = '    raise NotImplementedError("smart_truncate")\n'

# Wrong implementations an engineer could plausibly write (name, kind, description, body).
FLAWED = (
    (
        "plain_cut",
        "partial_feature",
        "Cuts at max_length and strips separators, but ignores word_boundary and save_order.",
        """\
    string = string.strip(separator)
    if not max_length or len(string) < max_length:
        return string
    return string[:max_length].strip(separator)
""",
    ),
    (
        "ignores_save_order",
        "missed_edge_case",
        "Word-boundary truncation always skips a word that does not fit and keeps trying later"
        " ones, even with save_order=True.",
        """\
    string = string.strip(separator)
    if not max_length or len(string) < max_length:
        return string
    if not word_boundary:
        return string[:max_length].strip(separator)
    if separator not in string:
        return string[:max_length]
    truncated = ''
    for word in string.split(separator):
        if word:
            next_len = len(truncated) + len(word)
            if next_len < max_length:
                truncated += '{}{}'.format(word, separator)
            elif next_len == max_length:
                truncated += '{}'.format(word)
                break
    if not truncated:
        truncated = string[:max_length]
    return truncated.strip(separator)
""",
    ),
    (
        "trailing_separator",
        "missed_edge_case",
        "A plain cut keeps a separator left at the end ('jaja-lol-' for max_length=9).",
        """\
    string = string.strip(separator)
    if not max_length or len(string) < max_length:
        return string
    if not word_boundary:
        return string[:max_length]
    if separator not in string:
        return string[:max_length]
    truncated = ''
    for word in string.split(separator):
        if word:
            next_len = len(truncated) + len(word)
            if next_len < max_length:
                truncated += '{}{}'.format(word, separator)
            elif next_len == max_length:
                truncated += '{}'.format(word)
                break
            elif save_order:
                break
    if not truncated:
        truncated = string[:max_length]
    return truncated.strip(separator)
""",
    ),
)

INSTRUCTION = """\
# smart_truncate is not implemented: slugify(max_length=...) raises NotImplementedError

`slugify.smart_truncate` in `slugify/slugify.py` only raises `NotImplementedError`, so every
`slugify(text, max_length=N)` call with `N > 0` fails, and so does calling `smart_truncate`
directly. Please implement it as its docstring describes:

```python
smart_truncate(string, max_length=0, word_boundary=False, separator=' ', save_order=False)
```

- Strip `separator` from both ends of `string`. With no `max_length` (0), or when the string is
  shorter than `max_length`, return it as it is.
- Without `word_boundary`, cut it to `max_length` characters and strip `separator` from the
  ends of the result: `slugify('jaja---lol-méméméoo--a', max_length=9)` is `'jaja-lol'`.
- With `word_boundary`, keep only whole words (split on `separator`) within `max_length`,
  joined by `separator`: `slugify('jaja---lol-méméméoo--a', max_length=15, word_boundary=True)`
  is `'jaja-lol-a'` (a word that does not fit is skipped and later, shorter ones may still be
  kept), and a string without `separator` is cut at `max_length`.
- With `save_order=True` as well, stop at the first word that does not fit, so the words keep
  their order: `slugify('one two three four five', max_length=12, word_boundary=True,
  save_order=True)` is `'one-two'` (and `'one-two-four'` without `save_order`).

`python -m pytest test_slugify.py` runs the project's tests.
"""


def download_sdist(dest: Path) -> Path:
    """Download the pinned sdist with pip into dest and check its sha256."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    cmd += ["-d", str(dest), f"{PROJECT}=={VERSION}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    sdist = dest / f"{PROJECT}-{VERSION}.tar.gz"
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{sdist.name}: sha256 {digest}, expected {SDIST_SHA256}")
    return sdist


def unpack(sdist: Path, dest: Path) -> Path:
    """Extract the sdist into dest; return the project's root directory."""
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(dest, filter="data")
        else:  # pragma: no cover
            tar.extractall(dest)  # a pinned sdist whose sha256 was checked
    return dest / f"{PROJECT}-{VERSION}"


def function_span(source: str, qualname: str) -> tuple[int, int, int]:
    """Return (first line, first body line after the docstring, last line) of a function or
    method (`Class.method`) in source, 1-based."""
    parts = qualname.split(".")
    nodes: list[ast.stmt] = ast.parse(source).body
    for name in parts:
        found = next(
            (n for n in nodes if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name),
            None,
        )
        if found is None:
            raise SystemExit(f"{qualname} not found")
        node, nodes = found, found.body
    assert isinstance(node, ast.FunctionDef) and node.end_lineno is not None
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    body = node.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    after_doc = (body[0].end_lineno or body[0].lineno) + 1 if has_doc else body[0].lineno
    return first, after_doc, node.end_lineno


def with_body(source: str, body: str) -> str:
    """Return source with smart_truncate's body (after its docstring) replaced by body."""
    lines = source.splitlines(keepends=True)
    _, start, end = function_span(source, FUNCTION)
    return "".join([*lines[: start - 1], "\n", body, *lines[end:]])


def without_tests(source: str, qualnames: tuple[str, ...]) -> str:
    """Return source with the given test methods removed."""
    lines = source.splitlines(keepends=True)
    spans = sorted((function_span(source, q) for q in qualnames), reverse=True)
    for first, _, last in spans:
        del lines[first - 1 : last]
        while (
            first - 1 < len(lines) and not lines[first - 1].strip() and not lines[first - 2].strip()
        ):
            del lines[first - 1]  # the blank line that followed the method
    return "".join(lines)


def test_ids(source: str) -> list[str]:
    """Return `Class.method` for every test method of the project's test file, in file order."""
    ids = []
    for cls in ast.parse(source).body:
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test"):
                    ids.append(f"{cls.name}.{fn.name}")
    return ids


def node_id(qualname: str) -> str:
    return f"{TEST_FILE}::" + qualname.replace(".", "::")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def toml_list(items: list[str]) -> str:
    return "[\n" + "".join(f'  "{item}",\n' for item in items) + "]"


def task_toml(tests: list[str], environment: str) -> str:
    """Return task.toml for the task, given every test of the project's test file and its
    [environment] table."""
    pass_to_pass = [node_id(t) for t in tests if t not in HIDDEN_TESTS]
    flawed = "".join(
        f'\n[[flawed]]\nname = "{name}"\nkind = "{kind}"\ndescription = "{text}"\n'
        for name, kind, text, _ in FLAWED
    )
    return f"""\
schema_version = 1
id = "{TASK_ID}"
level = 1
summary = "python-slugify {VERSION}: implement smart_truncate (slugify's max_length)"
hidden_tests_layout = "tree"   # tests/{TEST_FILE} replaces the visible one at grading

fail_to_pass = {toml_list([node_id(t) for t in HIDDEN_TESTS])}
pass_to_pass = {toml_list(pass_to_pass)}
{flawed}
{environment}"""


ONLINE_ENVIRONMENT = f"""\
[environment]
# The project's runtime dependency (setup.py: text-unidecode>=1.3) pinned, and the grader's
# pytest; `loopwright bench prepare` downloads them from PyPI.
requirements = {json.dumps(list(REQUIREMENTS))}
install = ["pip install -e ."]
"""

OFFLINE_ENVIRONMENT = """\
[environment]
# Every wheel is in environment/wheels (requirements.txt: --no-index --find-links wheels), so
# building needs no network (as in a container build); setuptools for the editable install.
requirements_files = ["environment/requirements.txt"]
install = ["pip install --use-pep517 --no-build-isolation --no-deps -e ."]
"""


def download_wheels(task: Path) -> None:
    """Put the wheels of REQUIREMENTS and BUILD_REQUIREMENT (with their dependencies) in
    task/environment/wheels, and a requirements file that installs from there only."""
    wheels = task / "environment" / "wheels"
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary", ":all:", "-d", str(wheels)]
    subprocess.run([*cmd, *REQUIREMENTS, BUILD_REQUIREMENT], check=True, stdout=subprocess.DEVNULL)
    lines = ["--no-index", "--find-links wheels", *REQUIREMENTS, BUILD_REQUIREMENT]
    write(task / "environment" / "requirements.txt", "\n".join(lines) + "\n")


def make_task(out: Path, *, wheels: bool = False) -> Path:
    """Download python-slugify and write the task folder under out; return it. With `wheels`,
    the environment's wheels are downloaded into the task too (an offline environment)."""
    task = out / TASK_ID
    if task.exists():
        raise SystemExit(f"{task} exists; remove it or pass another --out")
    with tempfile.TemporaryDirectory() as tmp:
        root = unpack(download_sdist(Path(tmp)), Path(tmp))
        shutil.copytree(
            root, task / "repo", ignore=shutil.ignore_patterns("PKG-INFO", "*.egg-info")
        )
    original = (task / "repo" / MODULE).read_text(encoding="utf-8")
    tests = (task / "repo" / UPSTREAM_TEST_FILE).read_text(encoding="utf-8")
    (task / "repo" / UPSTREAM_TEST_FILE).unlink()
    write(task / "repo" / MODULE, with_body(original, STUB_BODY))
    write(task / "repo" / TEST_FILE, without_tests(tests, HIDDEN_TESTS))
    write(task / "tests" / TEST_FILE, tests)
    write(task / "solution" / MODULE, original)
    for name, _, _, body in FLAWED:
        write(task / "flawed" / name / MODULE, with_body(original, body))
    write(task / "instruction.md", INSTRUCTION)
    if wheels:
        download_wheels(task)
    environment = OFFLINE_ENVIRONMENT if wheels else ONLINE_ENVIRONMENT
    write(task / "task.toml", task_toml(test_ids(tests), environment))
    load_task(task)
    return task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="benchmark folder to write into")
    parser.add_argument(
        "--wheels",
        action="store_true",
        help="also download the environment's wheels into the task, so building it needs no"
        " network (for --sandbox docker, whose image builds may have none)",
    )
    args = parser.parse_args()
    task = make_task(args.out, wheels=args.wheels)
    print(f"wrote {task} (python-slugify {VERSION}, {FUNCTION} stubbed)")


if __name__ == "__main__":
    main()
