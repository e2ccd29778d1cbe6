"""Where a container grade's time goes: each step of a mini task's workspace + gold + grade under
the container sandbox (docker or Podman), in wall and CPU time.

For each task and repetition, one cold grade (the workspace's container is started by the grade,
as `bench/grading_overhead.py`'s cold arm) and one warm grade (the container already running, as
in a real run, where the agent's commands started it), with the grader's and the sandbox's steps
timed by wrapping them in this process (nothing in loopwright is changed); then, in the warm
container, bare `exec`s (`sh -c true`, the sandbox's per-command wrapper around `true`,
`python3 -c pass`, plain pytest) and plain pytest on the host, for scale.

CPU time is counted in three places, since a container's work is not this process's child:
this process and its waited-for children (the engine's CLI: `client`), the container's own cgroup
(`container`: what runs inside it) and the engine's `conmon` cgroup (`conmon`: the monitor and the
OCI runtime it runs for each `exec`; shared by every container on the host, so other work's
containers count too). The cgroup figures need cgroup v1's cpuacct under `libpod_parent` (Podman
with the cgroupfs manager, as in .ci/run); elsewhere they are left out.

Prints, per step, the mean over tasks of each task's median, in milliseconds. Steps nest (the
grade holds the restore, the exec...): the indented ones are parts of the one above.

    python bench/container_profile.py [--benchmark mini] [--repeat 3] [--tasks N]
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import loopwright.sandbox._docker as docker_module
import loopwright.sandbox._staging as staging_module
import loopwright.scoring._frame as frame_module
import loopwright.scoring._grader as grader_module
from loopwright.sandbox import DockerSandbox, create_workspace, remove_workspace
from loopwright.scoring import PytestGrader
from loopwright.tasks import Task, apply_overlay, load_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grading_overhead import PLAIN_ENV, docker_sandbox, plain_argv, prepare

CGROUP = Path("/sys/fs/cgroup/cpuacct/libpod_parent")
COUNTED = {"podman", "docker", "runc", "crun", "nsenter"}
VERBS = {"run", "exec", "inspect", "rm", "state", "ps", "version", "image"}
Sample = tuple[float, float, float, float]  # wall, client CPU, container CPU, conmon CPU (s)


class Clock:
    """Wall and CPU of named steps; `samples[step][task]` lists (wall, client, container, conmon)."""

    def __init__(self, sandbox: DockerSandbox) -> None:
        self.sandbox = sandbox
        self.samples: dict[str, dict[str, list[Sample]]] = {}
        self.made: dict[str, dict[str, list[Counter[str]]]] = {}
        self.task = ""
        self.phase = ""  # appended to the names of wrapped steps
        self.calls: list[str] = []  # every container CLI / runtime / nsenter started, by name

    def now(self) -> Sample:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = time.process_time() + children.ru_utime + children.ru_stime
        inside = sum(_usage(CGROUP / f"libpod-{c.id}") for c in self._containers())
        return time.perf_counter(), client, inside, _usage(CGROUP / "conmon")

    def _containers(self) -> list[Any]:
        return list(self.sandbox._containers.values())

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        before, calls = self.now(), len(self.calls)
        try:
            yield
        finally:
            after = self.now()
            delta = (after[0] - before[0], after[1] - before[1],
                     max(0.0, after[2] - before[2]), after[3] - before[3])  # fmt: skip
            self.samples.setdefault(name, {}).setdefault(self.task, []).append(delta)
            made = Counter(self.calls[calls:])
            self.made.setdefault(name, {}).setdefault(self.task, []).append(made)

    def count_calls(self) -> None:
        """Record every process this process starts whose program is a container CLI, an OCI
        runtime or `nsenter` (by the program's name), so each step says what it called."""
        original = subprocess.Popen.__init__
        clock = self

        def counting(popen: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
            argv = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
            # the first counted program anywhere in the argv: a command can be wrapped (the
            # outcome channel is moved to descriptor 3 by a `bash -c` in front of the CLI)
            at = next((i for i, a in enumerate(argv) if Path(a).name in COUNTED), None)
            if at is not None:
                verb = next((a for a in argv[at + 1 :] if a in VERBS), "")
                clock.calls.append(f"{Path(argv[at]).name} {verb}".strip())
            original(popen, args, *rest, **kwargs)

        subprocess.Popen.__init__ = counting  # type: ignore[method-assign]

    def wrap(self, owner: Any, attribute: str, name: str) -> None:
        """Time every call of `owner.attribute` as the step `name`."""
        original: Callable[..., Any] = getattr(owner, attribute)

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.step(f"{name}{self.phase}"):
                return original(*args, **kwargs)

        setattr(owner, attribute, timed)


def _usage(group: Path) -> float:
    try:
        return int((group / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return 0.0


def instrument(clock: Clock) -> None:
    """Wrap the steps of a grade (the names are what the report prints)."""
    clock.wrap(DockerSandbox, "_start", "  container start (`run -d`)")
    clock.wrap(frame_module.TaskTests, "capture", "  read the task's tests (host)")
    clock.wrap(frame_module, "audit_change", "  audit the diff (host)")
    clock.wrap(frame_module, "restore_tests", "  restore the tests (host)")
    clock.wrap(grader_module, "write_kit", "  write the kit (host)")
    clock.wrap(staging_module, "_stage_one", "  stage kit paths (copy in)")
    clock.wrap(docker_module, "run_process", "  the graded exec (wrapper + pytest)")
    clock.wrap(DockerSandbox, "_kill_all", "  the kill after it (host-side, else an exec)")
    clock.wrap(grader_module, "parse_junit", "  parse junit (host)")
    clock.wrap(grader_module, "guard_verdict", "  the guard's verdict (host)")


def one_task(clock: Clock, task: Task, grader: PytestGrader, root: Path, prepared: Path) -> None:
    sandbox = clock.sandbox
    for warm in (False, True):
        clock.phase = " [warm]" if warm else " [cold]"
        with clock.step("workspace (host git)"):
            workspace = create_workspace(task.repo_dir, root / "ws")
        if warm:  # the agent's command that started the container in a real run
            clock.phase = " [agent]"
            with clock.step("agent command `true` (starts the container)"):
                sandbox.run(["true"], cwd=workspace.path, timeout_s=60)
            clock.phase = " [warm]"
        with clock.step("gold overlay (host)"):
            assert task.solution_dir is not None
            apply_overlay(task.solution_dir, workspace.path)
        with clock.step("grade, warm container" if warm else "grade, cold (starts the container)"):
            grade = grader.grade(workspace.path, task)
        if grade.score != 1.0:
            raise SystemExit(f"gold did not score 1.0 on {task.id}: {grade.invalid_reason}")
        if warm:
            clock.phase = " [bare]"
            bare_execs(clock, task, workspace.path)
        with clock.step("release (`rm -f`)"):
            sandbox.release(workspace.path)
        remove_workspace(workspace)
    clock.phase = ""
    with clock.step("plain pytest on the host"):
        subprocess.run(plain_argv(task), cwd=prepared, env=PLAIN_ENV, capture_output=True,
                       check=True)  # fmt: skip


def bare_execs(clock: Clock, task: Task, workspace: Path) -> None:
    """`exec`s straight into the workspace's running container (no sandbox wrapper)."""
    sandbox = clock.sandbox
    container = sandbox._containers[workspace.resolve()]
    base = sandbox.engine.argv("exec", "-w", container.shape.workdir,
                               "--env", "HOME=/tmp", "--env", "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1",
                               container.id)  # fmt: skip
    commands = {
        "bare exec `sh -c true`": ["sh", "-c", "true"],
        "bare exec of the wrapper around `true`": [
            "sh",
            "-c",
            docker_module._WRAPPER,
            "sh",
            "true",
        ],
        "bare exec `python3 -c pass`": ["python3", "-c", "pass"],
        "bare exec of plain pytest (gold)": plain_argv(task, "python3"),
    }
    for name, argv in commands.items():
        with clock.step(name):
            subprocess.run([*base, *argv], capture_output=True, check=False)
    with clock.step("sandbox.run(`true`): wrapper exec + the kill"):
        sandbox.run(["true"], cwd=workspace, timeout_s=60)


def report(clock: Clock) -> None:
    print(f"{'step (mean over tasks of the median, ms)':58} {'wall':>7} {'client':>7} "
          f"{'in ctr':>7} {'conmon':>7}  processes started (median a run)")  # fmt: skip
    for name, by_task in clock.samples.items():
        means = [
            1000
            * statistics.mean(statistics.median(s[i] for s in runs) for runs in by_task.values())
            for i in range(4)
        ]
        print(f"{name:58} " + " ".join(f"{m:7.0f}" for m in means) + f"  {_calls(clock, name)}")


def _calls(clock: Clock, name: str) -> str:
    """The processes one run of the step started, e.g. `podman exec x1, nsenter x1` (the most
    common count over its runs, per program)."""
    runs = [c for by_task in clock.made.get(name, {}).values() for c in by_task]
    if not runs:
        return ""
    kinds = sorted({k for c in runs for k in c})
    typical = {k: statistics.median_low([c[k] for c in runs]) for k in kinds}
    return ", ".join(f"{k} x{n}" for k, n in typical.items() if n) or "no CLI call"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="mini")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=0, help="Only the first N tasks.")
    parser.add_argument("--docker-image", default="")
    args = parser.parse_args()
    sandbox = docker_sandbox(args.docker_image)
    if sandbox is None:
        raise SystemExit(1)
    tasks = list(load_benchmark(args.benchmark).tasks)[: args.tasks or None]
    clock = Clock(sandbox)
    grader = PytestGrader(sandbox)
    with tempfile.TemporaryDirectory(prefix="lw-profile-") as tmp:
        root = Path(tmp)
        prepared = {t.id: prepare(t, root / "prepared" / t.id) for t in tasks}
        clock.task = "warm-up"
        one_task(clock, tasks[0], grader, root, prepared[tasks[0].id])
        clock.samples, clock.made = {}, {}
        instrument(clock)
        clock.count_calls()
        for _ in range(args.repeat):
            for task in tasks:
                clock.task = task.id
                one_task(clock, task, grader, root, prepared[task.id])
        sandbox.close()
    print(f"container grade profile: {len(tasks)} tasks x {args.repeat}, {sandbox.engine.kind}")
    report(clock)


if __name__ == "__main__":
    main()
