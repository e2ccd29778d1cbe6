"""Task environments: built once per content, graded and run in, never shadowed by the workspace.

The environment task (tests/sandbox/envfactory.py) depends on a distribution the test builds as
a wheel and installs offline; its own package is installed editable (src layout), so a gold grade
of 1.0 needs both the dependency and the workspace's code."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.evaluation import EvalSettings, Evaluator, TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, ScriptedModel, ToolCall
from loopwright.sandbox import (
    ENV_MANIFEST,
    WORKDIR,
    EnvironmentBuildError,
    EnvironmentCache,
    LocalSandbox,
    Sandbox,
    bubblewrap_available,
    default_sandbox,
    environment_key,
    find_uv,
)
from loopwright.sandbox._envsetup import find_interpreter
from loopwright.scoring import GradeResult, PytestGrader, grade_variant, validate_benchmark
from loopwright.tasks import Task, load_benchmark_dir, load_task
from loopwright.workflow import workflow_from_text
from tests.containers import docker_sandbox_or_skip
from tests.taskfactory import make_calc_task

from .envfactory import PTH_INSTALL, make_env_task

needs_bwrap = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap (CI has it)")
SANDBOXES = [pytest.param("bubblewrap", marks=needs_bwrap), "local"]
# The hostile-agent tests also run under the container sandbox (the environment's derived image).
WITH_DOCKER = [*SANDBOXES, pytest.param("docker", marks=pytest.mark.docker)]


def sandbox_of(kind: str) -> Sandbox:
    return docker_sandbox_or_skip() if kind == "docker" else default_sandbox(kind)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Task, EnvironmentCache]:
    """One environment task and a cache holding its environment (built once for the module)."""
    root = tmp_path_factory.mktemp("envtask")
    task = make_env_task(root / "bench")
    # pip: the offline editable install needs the setuptools a venv comes with (uv's has none).
    cache = EnvironmentCache(root / "cache", builder="pip")
    assert cache.ensure(task).built
    return task, cache


@pytest.mark.parametrize("kind", SANDBOXES)
def test_a_task_with_a_dependency_validates_in_its_environment(
    built: tuple[Task, EnvironmentCache], kind: str
) -> None:
    task, cache = built
    bench = load_benchmark_dir(task.root)
    checks = {
        c.variant: c
        for c in validate_benchmark(bench, PytestGrader(default_sandbox(kind)), environments=cache)
    }
    gold, flawed = checks["gold"].grade, checks["adds"].grade
    assert gold is not None and flawed is not None
    assert (gold.score, gold.resolved, gold.invalid) == (1.0, True, False), gold.output_tail
    assert flawed.score < 1.0 and not flawed.invalid
    assert all(c.ok for c in checks.values()), [c.problem for c in checks.values()]


@pytest.mark.skipif(find_uv() is None, reason="uv is not installed (pip install 'loopwright[uv]')")
@pytest.mark.parametrize("kind", SANDBOXES)
def test_an_environment_built_with_uv_validates(tmp_path: Path, kind: str) -> None:
    task = make_env_task(tmp_path / "bench", install=(PTH_INSTALL,))
    cache = EnvironmentCache(tmp_path / "cache", builder="uv")
    assert cache.ensure(task).manifest.builder == "uv"
    checks = validate_benchmark(
        load_benchmark_dir(task.root), PytestGrader(default_sandbox(kind)), environments=cache
    )
    assert all(c.ok for c in checks), [c.problem for c in checks]


def test_without_the_environment_the_same_gold_does_not_pass(
    built: tuple[Task, EnvironmentCache], tmp_path: Path
) -> None:
    """The environment is what makes gold pass: loopwright's own Python lacks `units`."""
    task, _ = built
    grade = grade_variant(task, task.solution_dir, PytestGrader(LocalSandbox()), tmp_path)
    assert grade.score < 1.0


def test_the_key_follows_the_files_the_environment_reads(tmp_path: Path) -> None:
    task = make_env_task(tmp_path)
    interpreter = find_interpreter(None)
    before = environment_key(task, interpreter)
    (task.root / "tests" / "test_scaled_hidden.py").write_text("def test_x():\n    pass\n")
    assert environment_key(load_task(task.root), interpreter) == before  # hidden tests: not read
    requirements = task.root / "environment" / "requirements.txt"
    requirements.write_text(requirements.read_text() + "# pinned\n")
    assert environment_key(load_task(task.root), interpreter) != before
    edited = environment_key(load_task(task.root), interpreter)
    # The repo is read because the table has install commands.
    (task.root / "repo" / "setup.py").write_text("from setuptools import setup\nsetup()\n# x\n")
    assert environment_key(load_task(task.root), interpreter) not in (before, edited)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_second_validate_builds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_env_task(tmp_path / "bench", install=(PTH_INSTALL,))
    bench, cache_dir = str(tmp_path / "bench"), tmp_path / "cache"
    argv = ["bench", "validate", bench, "--env-cache", str(cache_dir), "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, out + err
    (env_dir,) = [p for p in cache_dir.iterdir() if p.is_dir()]
    manifest = (env_dir / ENV_MANIFEST).read_text()
    inode = env_dir.stat().st_ino
    code, out, err = run(capsys, *argv)
    assert code == 0, out + err
    assert [p for p in cache_dir.iterdir() if p.is_dir()] == [env_dir]
    assert (env_dir / ENV_MANIFEST).read_text() == manifest and env_dir.stat().st_ino == inode
    code, out, _ = run(capsys, "bench", "prepare", bench, "--env-cache", str(cache_dir), "--json")
    assert code == 0
    assert [e["built"] for e in json.loads(out)] == [False]


def test_concurrent_builds_of_one_key_build_once(tmp_path: Path) -> None:
    task = make_env_task(tmp_path, install=())
    cache = EnvironmentCache(tmp_path / "cache")
    results: list[bool] = []
    errors: list[BaseException] = []

    def ensure() -> None:
        try:
            results.append(EnvironmentCache(cache.root).ensure(task).built)
        except BaseException as exc:  # noqa: BLE001  reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=ensure) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and sorted(results) == [False, False, True]
    assert [p.name for p in cache.root.iterdir() if p.is_dir()] == [cache.path(task).name]


def test_a_failed_build_names_the_command_and_is_not_cached(tmp_path: Path) -> None:
    task = make_env_task(tmp_path, install=("echo the-build-broke >&2; exit 3",))
    cache = EnvironmentCache(tmp_path / "cache")
    stale = cache.root / f".build-{cache.path(task).name}-killed"  # left by a killed builder
    stale.mkdir(parents=True)
    with pytest.raises(EnvironmentBuildError) as caught:
        cache.ensure(task)
    message = str(caught.value)
    assert "echo the-build-broke >&2; exit 3" in message and "exited 3" in message
    assert "the-build-broke" in (caught.value.got or "")
    assert [p for p in cache.root.iterdir() if p.is_dir()] == []  # no env, no temp, no stale
    assert cache.lookup(task) is None


def test_a_failed_build_fails_validate_with_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_env_task(tmp_path / "bench", install=("exit 4",))
    bench, cache = str(tmp_path / "bench"), str(tmp_path / "c")
    code, out, err = run(capsys, "bench", "validate", bench, "--env-cache", cache)
    # Recorded for the task (its checks fail, saying why), not a stop of the whole validate.
    assert code == 1 and "`exit 4` exited 4" in out and "Traceback" not in out + err


def _finishing_model(seed: int) -> ScriptedModel:
    return ScriptedModel([ToolCall.make("done", "finish", summary="nothing")])


def test_a_shipped_evaluator_builds_in_the_cache_of_the_machine_it_runs_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a Ray worker: the evaluator was made where the cache is `head/`; where it runs the
    cache is `worker/`, and that is where the environment is built (`head/` never appears)."""
    cloudpickle = pytest.importorskip("ray.cloudpickle")  # how Ray ships an evaluator
    task = make_env_task(tmp_path / "bench", install=())
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "head"))
    evaluator = Evaluator(_finishing_model, LocalSandbox(), DEFAULT_PRICES)
    shipped = cloudpickle.dumps(evaluator)
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "worker"))
    worker = cloudpickle.loads(shipped)
    record = worker.run_one(
        workflow_from_text(WORKFLOW, "yaml"), task, 0, tmp_path / "runs", run_id="r"
    )
    assert record.run_status == "completed", record.errors
    assert not (tmp_path / "head").exists()
    assert EnvironmentCache(tmp_path / "worker").lookup(task) is not None


@pytest.mark.parametrize("given", ["absent", "impossible"])
def test_a_shipped_job_given_the_heads_cache_path_builds_on_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """`--env-cache DIR` on a Ray head: DIR travels with the evaluator's settings but need not
    exist on the worker. Absent there, it is made there; impossible there (under a file), the
    worker builds in its own default cache. Either way the job builds and completes."""
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    task = make_env_task(tmp_path / "bench", install=())
    head = tmp_path / "head" / "envs"
    head.mkdir(parents=True)
    settings = EvalSettings(sandbox="local", env_cache=str(head))
    shipped = cloudpickle.dumps(
        Evaluator(_finishing_model, LocalSandbox(), DEFAULT_PRICES, settings=settings)
    )
    shutil.rmtree(tmp_path / "head")  # the worker's machine has no such directory...
    if given == "impossible":
        (tmp_path / "head").write_text("a file: nothing can be made under it")  # ...nor can it
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "worker"))
    worker = cloudpickle.loads(shipped)
    record = worker.run_one(
        workflow_from_text(WORKFLOW, "yaml"), task, 0, tmp_path / "runs", run_id="r"
    )
    assert record.run_status == "completed", record.errors
    built_in = head if given == "absent" else tmp_path / "worker"
    assert EnvironmentCache(built_in).lookup(task) is not None
    if given == "impossible":
        assert EnvironmentCache(head).root == (tmp_path / "worker").resolve()


WORKFLOW = """
schema_version: 1
name: probe
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [write_file, run_command]
    max_turns: 6
    prompt: "Do the task in {instruction_file} in {workspace}. {notes} {feedback} {rules}"
edges: []
"""

PROBE = (
    "python -c 'import sys, os, units; print(sys.prefix); print(os.getcwd()); "
    'print(os.environ["ENVCALC_MODE"]); print(units.FACTOR)\' > probe.txt; '
    'touch "$VIRTUAL_ENV/written" 2>/dev/null && echo writable >> probe.txt || echo read-only >> probe.txt'
)


def _run(
    task: Task, cache: EnvironmentCache, sandbox: Sandbox, steps: list[ToolCall], run_dir: Path
) -> GradeResult:
    replies = [*steps, ToolCall.make("done", "finish", summary="done")]
    spec = TaskRunSpec(
        workflow=workflow_from_text(WORKFLOW, "yaml"),
        task=task,
        model=ScriptedModel(replies),
        sandbox=sandbox,
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id=run_dir.name,
        seed=0,
        environments=cache,
    )
    run_task(spec)
    return GradeResult.model_validate_json((run_dir / "grade.json").read_text())


@pytest.mark.parametrize("kind", SANDBOXES)
def test_agent_commands_run_in_the_environment(
    built: tuple[Task, EnvironmentCache], kind: str, tmp_path: Path
) -> None:
    task, cache = built
    assert task.solution_dir is not None
    gold = (task.solution_dir / "src/envcalc/core.py").read_text()
    steps = [
        ToolCall.make("p", "run_command", command=PROBE),
        ToolCall.make("w", "write_file", path="src/envcalc/core.py", content=gold),
    ]
    grade = _run(task, cache, default_sandbox(kind), steps, tmp_path / "run")
    assert (grade.score, grade.resolved) == (1.0, True), grade.invalid_reason
    patch = (tmp_path / "run" / "diff.patch").read_text()
    prefix = str(cache.path(task))
    cwd = str(WORKDIR) if kind == "bubblewrap" else "lw-"
    probe = [
        line[1:]
        for line in patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    assert probe[0] == prefix and cwd in probe[1] and probe[2:4] == ["test", "10"]
    if kind == "bubblewrap":
        assert probe[4] == "read-only" and not (cache.path(task) / "written").exists()


# The code under test writes bytecode compiled from a correct `scaled` for a top-level module of
# the editable root (src/helper.py, whose source is wrong), its header matching that source, then
# imports it: read through a finder made before the grader's hooks, the forgery would pass.
FORGE = """
import importlib._bootstrap_external as _external
import importlib.util, os

_source = os.path.join(os.path.dirname(os.path.dirname(__file__)), "helper.py")
_info = os.stat(_source)
_code = compile("import units\\ndef scaled(x):\\n    return units.FACTOR * x\\n", _source, "exec")
_pyc = importlib.util.cache_from_source(_source)
os.makedirs(os.path.dirname(_pyc), exist_ok=True)
with open(_pyc, "wb") as out:
    out.write(_external._code_to_timestamp_pyc(_code, _info.st_mtime, _info.st_size))

from helper import scaled
"""


@pytest.mark.parametrize("kind", WITH_DOCKER)
def test_bytecode_forged_in_an_editable_root_is_never_read(
    built: tuple[Task, EnvironmentCache], kind: str, tmp_path: Path
) -> None:
    """The environment's .pth puts the workspace's src/ on sys.path; it must still be read from
    source only (the grader adds site-packages only once its import hooks are in place)."""
    task, cache = built
    core = (task.root / "repo/src/envcalc/core.py").read_text() + FORGE
    steps = [
        ToolCall.make(
            "h", "write_file", path="src/helper.py", content="def scaled(x):\n    return x\n"
        ),
        ToolCall.make("c", "write_file", path="src/envcalc/core.py", content=core),
    ]
    grade = _run(task, cache, sandbox_of(kind), steps, tmp_path / "run")
    assert (grade.score, grade.resolved) == (0.5, False), grade.invalid_reason  # the source's


@pytest.mark.parametrize("kind", WITH_DOCKER)
def test_the_workspace_cannot_shadow_an_installed_dependency(
    built: tuple[Task, EnvironmentCache], kind: str, tmp_path: Path
) -> None:
    """A `units` of the agent's, in the workspace root and in the editable root, would make a
    wrong `scaled` pass: the environment's distribution is imported instead."""
    task, cache = built
    wrong = (
        task.root / "repo/src/envcalc/core.py"
    ).read_text() + "\n\ndef scaled(x):\n    return x\n"
    steps = [
        ToolCall.make("a", "write_file", path="units.py", content="FACTOR = 1\n"),
        ToolCall.make("b", "write_file", path="src/units.py", content="FACTOR = 1\n"),
        ToolCall.make("c", "write_file", path="src/envcalc/core.py", content=wrong),
    ]
    grade = _run(task, cache, sandbox_of(kind), steps, tmp_path / "run")
    assert grade.score < 1.0 and not grade.resolved, grade.invalid_reason


def test_a_task_without_an_environment_grades_with_loopwrights_python(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    assert task.spec.environment is None
    sandbox = LocalSandbox()
    assert sandbox.environment is None and PytestGrader(sandbox).python == sys.executable
