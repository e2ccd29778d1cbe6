"""Grading overhead: loopwright's workspace + gold + grade time as a ratio to plain pytest.

For each task of a benchmark (default: mini) and each repetition, in one process run:
  - baseline: `python -m pytest -q -p pytest_timeout <test files>` with plugin autoload off (as
    the grader runs it) in a directory already prepared with the gold solution and the hidden
    tests (what a person would run by hand);
  - loopwright: create a fresh workspace from the task's repo (git init + commit), apply the gold
    overlay, and grade it (restore tests, sandboxed pytest with junit, parse, score).
Both arms keep what they compile across repetitions, as they would across runs: plain pytest
writes its rewritten test modules' bytecode to `__pycache__` on its first run and reads it after;
loopwright's grader compiles the task's test files (and pytest-timeout) on the host once per
content and process and hands that code to the guard in the kit (scoring/_precompile.py), never
reading bytecode from the workspace. The first, compiling run of either arm is one repetition of
several, which the median leaves aside.
Prints the median of each per task and the ratio of the sums, for each sandbox available. The
arms (plain, each sandbox) are interleaved in one loop, so that the machine's drift hits all
of them alike, in a balanced order (`balanced`: each sandbox arm runs right after plain pytest
as often as another, since that run pays more). Targets: at most 1.3 with bubblewrap (aim 1.10), 1.15 without. It also prints the
ratio of CPU time, which a loaded machine stretches much less than wall time: for the local
sandbox always (this process and its waited-for children), and for bubblewrap too where the
bench can make a cgroup of its own to count all it starts (`CgroupClock`: root or a delegated
cgroup; bwrap's processes are reaped inside its PID namespace, out of `getrusage`'s sight).

Then the same on a task with an `[environment]` (the test suite's `envcalc`: a dependency
installed from a local wheel, the task's package installed editable): its environment is built
once (not timed), and plain pytest runs with the environment's interpreter (PATH, VIRTUAL_ENV,
the editable root on PYTHONPATH) against loopwright's grade in that environment. Target: at most
1.15 with bubblewrap.

The container sandbox is measured too when an image is at hand: `--docker-image`, else
LOOPWRIGHT_CONTAINER_IMAGE, else the test image built from this machine (tests/containers.py, run
from a checkout), in three arms of the same interleaved loop:
  - `docker` (warm): the workspace's container is already running when the timed gold + grade
    starts (an untimed `true` started it, as the agent's first command does in a real run;
    the workspace's creation is timed as in the other arms). This is what grading adds to a run,
    and the figure the issue's target (at most 1.5 times plain pytest on the host) is judged on:
    a run starts its container once, for the agent, whether or not it is graded.
  - `docker cold`: the grade starts the workspace's container itself (what a grade of a
    workspace no command ran in costs; `bench validate` grades a gold workspace that way). Shown
    beside the warm figure, never instead of it.
  - `plain in container`: plain pytest, `exec`'d straight into a running container of the
    prepared directory (one `exec`, no wrapper): the floor for anything that runs tests in a
    container. The warm grade is also given as a ratio to it.
With `--engine-exec`, the warm and cold arms are timed a second time with the container
sandbox's fast exec path off (`docker engine-exec`, `docker cold engine-exec`: every command a
`podman exec`, as with LOOPWRIGHT_CONTAINER_FAST_EXEC=0), in the same interleaved loop, so the
two paths are compared at the same moment; the first lines say which path each pair of arms
takes (`DockerSandbox.exec_path`: `runc exec` where the fast path applies).
Ratios are to plain pytest on the host unless said (the image's Python is the system one, the
same version). In the task environment the container grades in the environment's derived image
(built once, not timed; see docs/sandbox.md), against plain pytest on the host in the host's
build of the same environment. `bench/container_profile.py` splits a container grade into its
steps.

After the arms on the benchmark, the local grade's test command alone is timed the same way, in
CPU time against plain pytest: as the grader runs it and without the guard plugin, so that what
the guard costs and what the rest of the command costs are ratios from the same run.

    python bench/grading_overhead.py [--benchmark mini] [--repeat 5] [--environment-only]
                                     [--docker-image TAG] [--no-docker] [--no-environment]
                                     [--engine-exec] [--plain-no-bytecode]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import LoopwrightError
from loopwright.sandbox import (
    ContainerSettings,
    DockerSandbox,
    EnvImageBuilder,
    EnvironmentCache,
    Sandbox,
    TaskEnvironment,
    bubblewrap_available,
    create_workspace,
    default_sandbox,
    remove_workspace,
)
from loopwright.scoring import PytestGrader, TaskTests, restore_tests
from loopwright.scoring._kit import BOOT  # the bootstrap, to run the grader's command without it
from loopwright.tasks import Task, apply_overlay, load_benchmark, node_files


def prepare(task: Task, dest: Path) -> Path:
    shutil.copytree(task.repo_dir, dest)
    assert task.solution_dir is not None
    apply_overlay(task.solution_dir, dest)
    apply_overlay(task.hidden_tests_dir, dest / task.spec.test_dir)
    return dest


# Like for like: the grader turns plugin autoload off and loads pytest-timeout itself, so the
# baseline does the same (with autoload on, every installed plugin - hypothesis, anyio - loads).
# And plain pytest caches bytecode as it does by default, whatever this process was started with
# (a PYTHONDONTWRITEBYTECODE=1 inherited from the shell had it compile every file on every run,
# while the grader keeps the test files it compiled: see the module docstring).
PLAIN_ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
}


class CgroupClock:
    """CPU time of this process and every process it starts, waited for or not, read from a
    cgroup of its own (cgroup v2 `cpu.stat`, or v1 `cpuacct.usage`) that this process moves
    into: bubblewrap's processes, which `RUSAGE_CHILDREN` never sees (bwrap's init reaps them
    in its PID namespace), are counted too. Only where this process may make a cgroup (root, or
    a delegated subtree); `open()` returns None elsewhere. A container's processes run in the
    engine's cgroups and are never counted."""

    def __init__(self, group: Path, usage: Path, scale: float, parent_procs: Path) -> None:
        self.group, self.usage, self.scale, self.parent_procs = group, usage, scale, parent_procs

    @classmethod
    def open(cls) -> CgroupClock | None:
        name = f"lw-bench-{os.getpid()}"
        mounts = [  # (hierarchy root, usage file, its unit in seconds)
            (Path("/sys/fs/cgroup/cpuacct"), "cpuacct.usage", 1e-9),
            (Path("/sys/fs/cgroup/unified"), "cpu.stat", 1e-6),
            (Path("/sys/fs/cgroup"), "cpu.stat", 1e-6),
        ]
        for root, usage, scale in mounts:
            own = _own_cgroup(root)
            if own is None or not (root / own.lstrip("/") / "cgroup.procs").is_file():
                continue
            parent = root / own.lstrip("/")
            group = parent / name
            try:
                group.mkdir()
                (group / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                with contextlib.suppress(OSError):
                    group.rmdir()
                continue
            clock = cls(group, group / usage, scale, parent / "cgroup.procs")
            try:
                clock.seconds()
            except (OSError, ValueError):
                clock.close()
                continue
            return clock
        return None

    def seconds(self) -> float:
        text = self.usage.read_text()
        if self.usage.name == "cpu.stat":
            fields = dict(line.split() for line in text.splitlines() if line.strip())
            return int(fields["usage_usec"]) * self.scale
        return int(text) * self.scale

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.parent_procs.write_text(str(os.getpid()))
        for _ in range(50):  # empty once every process that was started here has exited
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def _own_cgroup(root: Path) -> str | None:
    """This process's cgroup path under the hierarchy mounted at `root` (from /proc/self/cgroup)."""
    if not root.is_dir():
        return None
    controller = "cpuacct" if root.name == "cpuacct" else ""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if (controller and controller in controllers.split(",")) or (
            not controller and controllers == ""
        ):
            return path
    return None


CLOCK: CgroupClock | None = None  # set by main() where a cgroup can be made


def cpu_s() -> float:
    """CPU seconds used so far: with a cgroup clock (`CgroupClock`), by this process and everything
    it started; else by this process (every thread) and its waited-for children, which leaves
    out what a sandbox does not wait for itself (bubblewrap's processes, a container's): the CPU
    figure is then reported for the local sandbox only. On a loaded machine wall time stretches
    with the load, CPU time much less."""
    if CLOCK is not None:
        return CLOCK.seconds()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def plain_argv(task: Task, python: str = sys.executable) -> list[str]:
    """Plain pytest on the task's test files, as a person would run it (the baseline)."""
    return [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "pytest_timeout",
            *node_files(task.test_ids)]  # fmt: skip


def time_plain_pytest(
    prepared: Path, task: Task, environment: TaskEnvironment | None = None
) -> tuple[float, float]:
    """Plain pytest on the prepared directory, with loopwright's Python or the environment's:
    (wall seconds, CPU seconds)."""
    env = PLAIN_ENV
    if environment is not None:
        env = {
            **PLAIN_ENV,
            "PATH": f"{environment.prefix}/bin:{PLAIN_ENV.get('PATH', '/usr/bin:/bin')}",
            "VIRTUAL_ENV": str(environment.prefix),
            "PYTHONPATH": ":".join(environment.import_paths(str(prepared))[1:]),
            **dict(environment.variables),
        }
    argv = plain_argv(task, environment.python if environment is not None else sys.executable)
    start, cpu = time.perf_counter(), cpu_s()
    proc = subprocess.run(argv, cwd=prepared, capture_output=True, check=False, env=env)
    elapsed, cpu = time.perf_counter() - start, cpu_s() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"plain pytest failed on {task.id}:\n{proc.stdout.decode()[-2000:]}")
    return elapsed, cpu


def time_loopwright(
    task: Task,
    grader: PytestGrader,
    parent: Path,
    environment: TaskEnvironment | None = None,
    *,
    warm: bool = False,
) -> tuple[float, float, float]:
    """(the whole: workspace, gold, grade; the sandboxed test command alone; CPU of the whole).
    `warm`: the workspace's sandbox has run a command (`true`, untimed) before the gold and the
    grade, as the agent's commands do in a real run (a container is then running)."""
    start, cpu = time.perf_counter(), cpu_s()
    workspace = create_workspace(task.repo_dir, parent)
    made, made_cpu = time.perf_counter() - start, cpu_s() - cpu
    if warm:
        if environment is not None:
            grader = grader.within(environment, workspace.path)
        grader.sandbox.run(["true"], cwd=workspace.path, timeout_s=60)
    start, cpu = time.perf_counter(), cpu_s()
    assert task.solution_dir is not None
    apply_overlay(task.solution_dir, workspace.path)
    if environment is not None and not warm:
        grader = grader.within(environment, workspace.path)
    grade = grader.grade(workspace.path, task)
    elapsed, cpu = made + time.perf_counter() - start, made_cpu + cpu_s() - cpu
    grader.sandbox.release(workspace.path)
    remove_workspace(workspace)
    if grade.score != 1.0:
        raise SystemExit(
            f"gold did not score 1.0 on {task.id}: {grade.invalid_reason or grade.score}"
        )
    return elapsed, grade.pytest_duration_s, cpu


class InContainer:
    """Plain pytest `exec`'d straight into a running container of a prepared directory (no
    sandbox wrapper, no kill passes): one container per prepared directory, kept for the run."""

    def __init__(self, docker: DockerSandbox) -> None:
        self.docker = docker
        self.started: dict[Path, tuple[str, str]] = {}  # prepared dir -> (container id, workdir)

    def time(
        self, prepared: Path, task: Task, environment: TaskEnvironment | None
    ) -> tuple[float, float]:
        if prepared not in self.started:
            image = environment.image if environment is not None else None
            workdir = environment.workdir if environment is not None else None
            cid = self.docker.attach(prepared, image=image, workdir=workdir)
            self.started[prepared] = (cid, workdir or self.docker.settings.workdir)
        cid, workdir = self.started[prepared]
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HOME": "/tmp", "LANG": "C.UTF-8"}
        python = self.docker.settings.python
        if environment is not None:
            roots = environment.import_paths(workdir)[1:]
            env |= {"PATH": f"{environment.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
                    "VIRTUAL_ENV": str(environment.prefix), "PYTHONPATH": ":".join(roots),
                    **dict(environment.variables)}  # fmt: skip
            python = environment.python
        flags = [f for key, value in env.items() for f in ("--env", f"{key}={value}")]
        argv = self.docker.engine.argv(
            "exec", "-w", workdir, *flags, cid, *plain_argv(task, python)
        )
        start, cpu = time.perf_counter(), cpu_s()
        proc = subprocess.run(argv, capture_output=True, check=False)
        elapsed, cpu = time.perf_counter() - start, cpu_s() - cpu
        if proc.returncode != 0:
            raise SystemExit(
                f"pytest in the container failed on {task.id}:\n{proc.stdout[-2000:]!r}"
            )
        return elapsed, cpu

    def close(self) -> None:
        for prepared in self.started:
            self.docker.release(prepared)
        self.started = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="mini")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--environment-only", action="store_true", help="Only the task with an environment."
    )
    parser.add_argument("--docker-image", default="")
    parser.add_argument("--no-docker", action="store_true", help="Leave out the container arm.")
    parser.add_argument(
        "--engine-exec",
        action="store_true",
        help="Also time the container arms with the fast exec path off (`podman exec`, as "
        "LOOPWRIGHT_CONTAINER_FAST_EXEC=0), interleaved with the others.",
    )
    parser.add_argument(
        "--no-environment", action="store_true", help="Leave out the task with an environment."
    )
    parser.add_argument(
        "--plain-no-bytecode",
        action="store_true",
        help="Plain pytest writes no bytecode (PYTHONDONTWRITEBYTECODE=1): it compiles every test "
        "and workspace file on every run (the baseline of this bench's figures before "
        "2026-12-07's host-compiled test files, where the shell set it).",
    )
    args = parser.parse_args()
    if args.plain_no_bytecode:
        PLAIN_ENV["PYTHONDONTWRITEBYTECODE"] = "1"
    print(
        "plain pytest: "
        + ("no bytecode written (compiles every run)" if args.plain_no_bytecode else
           "bytecode cached in __pycache__ (pytest's default)")
    )  # fmt: skip
    global CLOCK
    CLOCK = CgroupClock.open()
    print(
        f"CPU time from the cgroup {CLOCK.group} (this process and all it starts)"
        if CLOCK is not None
        else "CPU time from getrusage (this process and its waited-for children: local only)"
    )
    try:
        measure_all(args)
    finally:
        if CLOCK is not None:
            CLOCK.close()


def measure_all(args: argparse.Namespace) -> None:
    sandboxes: dict[str, Sandbox] = {"local": default_sandbox("local")}
    if bubblewrap_available():
        sandboxes = {"bubblewrap": default_sandbox("bubblewrap"), **sandboxes}
    with tempfile.TemporaryDirectory(prefix="lw-bench-") as tmp:
        root = Path(tmp)
        if not args.environment_only:
            bench = load_benchmark(args.benchmark)
            print(
                f"grading overhead on {bench.name}: {len(bench.tasks)} tasks x "
                f"{args.repeat} repetitions"
            )
        docker = None if args.no_docker else docker_sandbox(args.docker_image)
        arms = {**sandboxes, **({"docker": docker, "docker cold": docker} if docker else {})}
        if docker is not None:
            print(f"docker arms: {exec_path(docker, root)}")
        if docker is not None and args.engine_exec:
            engine = DockerSandbox(docker.settings.model_copy(update={"fast_exec": False}))
            print(f"docker engine-exec arms: {exec_path(engine, root)}")
            arms |= {"docker engine-exec": engine, "docker cold engine-exec": engine}
        if not args.environment_only:
            rows = measure(list(bench.tasks), arms, args.repeat, root, {})
            for kind in arms:
                report(kind, rows[kind])
            command_profile(list(bench.tasks), args.repeat, root)
        if args.no_environment:
            return
        task = env_task(root / "envtask")
        built = EnvironmentCache(root / "envs").ensure(task).environment
        placed = {kind: {task.id: built} for kind in ["plain", *sandboxes]}
        if docker is not None:
            builder = EnvImageBuilder.for_sandbox(docker, root / "locks")
            image = {task.id: builder.environment(task)}
            placed |= {arm: image for arm in arms if arm.startswith("docker")}
        print(f"\ngrading overhead in a task environment ({task.id}): {args.repeat} repetitions")
        rows = measure([task], arms, args.repeat, root, placed)
        for kind in arms:
            report(f"{kind}, in the task's environment", rows[kind])


def child_cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process and what it waited for (`wait4`)."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({proc.returncode}):\n{output.decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def command_profile(tasks: list[Task], repeat: int, root: Path) -> None:
    """The local grade's test command alone, started directly (no reaper, no workspace, no
    host-side work), in CPU time against plain pytest (the baseline above): as the grader runs it,
    and the same command without the guard plugin (`BOOT` given no guard: the rest is the
    bootstrap, `-I -B`, the grader's flags and junit). Interleaved like the arms above."""
    grader = PytestGrader(default_sandbox("local"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8"}
    runs: dict[str, dict[str, list[float]]] = {"plain": {}, "guard": {}, "no guard": {}}
    for task in tasks:
        workspace = create_workspace(task.repo_dir, root / "cmd")
        assert task.solution_dir is not None
        apply_overlay(task.solution_dir, workspace.path)
        path = workspace.path.resolve()
        restored = restore_tests(path, task, TaskTests.capture(task))
        private = Path(tempfile.mkdtemp(prefix="kit-", dir=root))
        step = grader._step(path, task, private, restored.conftests)  # the grader's command
        at = step.argv.index(BOOT) + 3  # BOOT KIT WORKSPACE GUARD pytest-args
        variants = {
            "plain": (plain_argv(task), root / "prepared" / task.id, PLAIN_ENV),
            "guard": (step.argv, path, {**env, **step.env}),
            "no guard": ([*step.argv[:at], "", *step.argv[at + 1 :]], path, {**env, **step.env}),
        }
        for rep in range(repeat + 1):  # the first round warms the caches, untimed
            for name in balanced(list(variants), rep):
                cpu = child_cpu(*variants[name])
                if rep:
                    runs[name].setdefault(task.id, []).append(cpu)
        remove_workspace(workspace)
    plain = sum(statistics.median(v) for v in runs["plain"].values())
    print("\nthe graded command alone (local, started directly), CPU time, sum of medians:")
    for name, by_task in runs.items():
        total = sum(statistics.median(v) for v in by_task.values())
        print(f"  {name:9} {total:7.3f} s  ratio {total / plain:.2f}")


def env_task(parent: Path) -> Task:
    """The test suite's environment task (tests/sandbox/envfactory.py), written under `parent`."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.sandbox.envfactory import make_env_task

    return make_env_task(parent)


def measure(
    tasks: list[Task],
    sandboxes: dict[str, Sandbox],
    repeat: int,
    root: Path,
    environments: dict[str, dict[str, TaskEnvironment]],
) -> dict[str, list[Row]]:
    """Per sandbox kind, one Row per task: the arms interleaved, `repeat` times each.
    `environments`: per arm ("plain" or a sandbox kind), the environment of each task in one."""
    prepared = {t.id: prepare(t, root / "prepared" / t.id) for t in tasks}
    kinds = list(sandboxes)
    graders = {kind: PytestGrader(sandbox) for kind, sandbox in sandboxes.items()}
    docker = sandboxes.get("docker")
    in_container = InContainer(docker) if isinstance(docker, DockerSandbox) else None
    extra = ["plain in container"] if in_container is not None else []
    warm = tasks[0]  # one untimed round so imports and disk caches are warm for all

    def env(arm: str, task: Task) -> TaskEnvironment | None:
        return environments.get(arm, {}).get(task.id)

    def run(arm: str, task: Task) -> tuple[float, float, float]:
        """One timed run of `arm` on `task`: (wall, command or 0, CPU)."""
        if arm == "plain":
            wall, cpu = time_plain_pytest(prepared[task.id], task, env("plain", task))
            return wall, 0.0, cpu
        if arm == "plain in container":
            assert in_container is not None
            wall, cpu = in_container.time(prepared[task.id], task, env("docker", task))
            return wall, 0.0, cpu
        warm = arm.startswith("docker") and "cold" not in arm
        return time_loopwright(task, graders[arm], root / "ws", env(arm, task), warm=warm)

    for arm in ["plain", *extra, *kinds]:
        run(arm, warm)
    rows: dict[str, list[Row]] = {kind: [] for kind in kinds}
    for task in tasks:
        times: dict[str, list[tuple[float, float, float]]] = {}
        arms = ["plain", *extra, *kinds]
        for rep in range(repeat):
            # Interleaved, in an order that rotates, so drift hits every arm alike.
            for arm in balanced(arms, rep):
                times.setdefault(arm, []).append(run(arm, task))
        for kind in kinds:
            rows[kind].append(
                Row(task.id, _median(times, "plain", 0), _median(times, kind, 0),
                    _median(times, kind, 1), _median(times, "plain", 2), _median(times, kind, 2),
                    _median(times, "plain in container", 0) if kind.startswith("docker") else 0.0)
            )  # fmt: skip
        if in_container is not None:
            in_container.close()
    return rows


def balanced(arms: list[str], rep: int) -> list[str]:
    """Round `rep`'s order of `arms` (the first is the baseline): rotated by one each round, and
    every other round with the arms after the baseline reversed, so that each arm runs right
    after the baseline as often as another (2 rounds in 5 for each of two sandboxes; a plain
    rotation gave the first 3 and the second 1). The run right after plain pytest seems to pay
    more, in the caches its process evicted: with the two host sandboxes' arms swapped, local's
    CPU ratio rose from 1.15 to 1.18 (one run; bench/results/grading-overhead-2026-12-07b)."""
    order = arms if rep % 2 == 0 else [arms[0], *reversed(arms[1:])]
    k = rep % len(order)
    return order[k:] + order[:k]


def _median(times: dict[str, list[tuple[float, float, float]]], arm: str, i: int) -> float:
    return statistics.median(t[i] for t in times[arm]) if arm in times else 0.0


def exec_path(docker: DockerSandbox, root: Path) -> str:
    """How `docker` reaches a running container here (`DockerSandbox.exec_path`)."""
    probe = root / "exec-path"
    probe.mkdir(exist_ok=True)
    docker.run(["true"], cwd=probe, timeout_s=60)
    try:
        return docker.exec_path(probe)
    finally:
        docker.release(probe)


def docker_sandbox(image: str) -> DockerSandbox | None:
    """The container sandbox on `image` (see the module docstring), or None, saying why."""
    try:
        if image or os.environ.get("LOOPWRIGHT_CONTAINER_IMAGE"):
            base = ContainerSettings.from_env()
            return DockerSandbox(base.model_copy(update={"image": image or base.image}))
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.containers import engine_problem, image_tag, settings

        problem = engine_problem()
        if problem is not None:
            print(f"docker sandbox not measured: {problem}")
            return None
        return DockerSandbox(settings(image_tag()))
    except (LoopwrightError, ImportError) as exc:
        print(f"docker sandbox not measured: {exc}")
        return None


@dataclass(frozen=True)
class Row:
    task_id: str
    plain: float  # plain pytest, median
    ours: float  # workspace + gold + grade, median
    command: float  # the grader's sandboxed test command alone, median
    plain_cpu: float = 0.0  # CPU seconds of plain pytest, median
    ours_cpu: float = 0.0  # CPU seconds of workspace + gold + grade (local; bubblewrap: cgroup)
    plain_ctr: float = 0.0  # plain pytest exec'd into a running container, median (docker arms)


def report(kind: str, rows: list[Row]) -> None:
    print(f"\nsandbox: {kind}")
    print(f"{'task':28} {'pytest s':>9} {'loopwright s':>13} {'ratio':>6}")
    for row in rows:
        print(f"{row.task_id:28} {row.plain:9.3f} {row.ours:13.3f} {row.ours / row.plain:6.2f}")
    plain = sum(r.plain for r in rows)
    ours = sum(r.ours for r in rows)
    command = sum(r.command for r in rows)
    print(f"{'all tasks (sum of medians)':28} {plain:9.3f} {ours:13.3f} {ours / plain:6.2f}")
    n = len(rows)
    print(
        f"overhead a task: {1000 * (ours - plain) / n:.0f} ms, of which "
        f"{1000 * (command - plain) / n:.0f} ms in the sandboxed test command (sandbox, guard, "
        f"canaries, junit) and {1000 * (ours - command) / n:.0f} ms outside it (workspace, "
        "restoration, kit, parsing)"
    )
    in_container = sum(r.plain_ctr for r in rows)
    if in_container:
        print(
            f"plain pytest exec'd into a running container (sum of medians): {in_container:.3f} s "
            f"({in_container / plain:.2f} times plain pytest on the host); loopwright's grade "
            f"here is {ours / in_container:.2f} times it"
        )
    if kind.startswith("local") or (CLOCK is not None and kind.startswith("bubblewrap")):
        plain_cpu = sum(r.plain_cpu for r in rows)
        ours_cpu = sum(r.ours_cpu for r in rows)
        print(
            f"CPU time (sum of medians): pytest {plain_cpu:.3f} s, loopwright {ours_cpu:.3f} s, "
            f"ratio {ours_cpu / plain_cpu:.2f}"
        )


if __name__ == "__main__":
    main()
