"""`loopwright bench list|add|remove|prepare|validate`: the benchmarks (bundled, and registered by
path), building their task environments and container images, and checking a benchmark's tasks."""

from __future__ import annotations

import json
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from loopwright.cli._app import EXIT_FAILED, app, progress_bar
from loopwright.errors import ConfigError
from loopwright.sandbox import (
    BuiltImage,
    ContainerSettings,
    DockerSandbox,
    Engine,
    EnvImageBuilder,
    EnvironmentCache,
    ImageBuilder,
    Prepared,
    default_sandbox,
    needs_environment,
    needs_image_build,
    prepare_env_images,
    prepare_environments,
    prepare_images,
)
from loopwright.scoring import (
    PytestGrader,
    VariantCheck,
    failing_tests,
    missing_tests,
    needs_network,
    output_tail,
    task_variants,
    validate_benchmark,
)
from loopwright.tasks import (
    Benchmark,
    RegisteredBenchmark,
    Task,
    benchmark_names,
    load_benchmark,
    register_benchmark_dir,
    remove_user_benchmark,
    user_benchmarks,
    user_benchmarks_path,
)

bench_app = typer.Typer(
    help="Benchmarks: list them, build their task environments, and check that their tasks "
    "grade as they should."
)
app.add_typer(bench_app, name="bench")

# Piped output is not cut to 80 columns: task and variant names must stay whole.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)

SandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox",
        help="Where tests run: auto (bubblewrap when it works), bubblewrap, local, docker.",
    ),
]
EnvCacheOption = Annotated[
    Path | None,
    typer.Option(
        "--env-cache",
        help="Where task environments are built and kept "
        "(default: $LOOPWRIGHT_ENV_CACHE, else ~/.cache/loopwright/envs).",
    ),
]


@bench_app.command("list")
def list_benchmarks(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the benchmarks: bundled ones, and those registered by path (`bench add`, the
    importers, `tasks mine`), with their task counts by level. A registered benchmark that
    no longer loads is listed with its problem."""
    sources = {b.name: b for b in user_benchmarks().benchmarks}
    rows = [_listed(name, sources.get(name)) for name in benchmark_names()]
    if as_json:
        typer.echo(json.dumps([row for row, _ in rows], indent=2))
        return
    table = Table("benchmark", "tasks", "by level", "source", "description", box=None)
    for row, bench in rows:
        if bench is None:
            table.add_row(
                str(row["name"]), "-", "-", str(row["source"]), f"[red]{row['problem']}[/]"
            )
            continue
        levels = ", ".join(f"L{k}: {v}" for k, v in _levels(bench).items())
        described = bench.description or str(row.get("path", ""))
        table.add_row(bench.name, str(len(bench.tasks)), levels, str(row["source"]), described)
    console.print(table)


def _listed(
    name: str, entry: RegisteredBenchmark | None
) -> tuple[dict[str, object], Benchmark | None]:
    """A `bench list` row: the benchmark's summary, or (registered by path) its problem."""
    where = {} if entry is None else {"path": entry.path}
    source = "bundled" if entry is None else entry.source
    try:
        bench = load_benchmark(name)
    except ConfigError as exc:
        return {"name": name, "source": source, **where, "problem": exc.what}, None
    return {**_summary(bench), "source": source, **where}, bench


@bench_app.command("add")
def add(
    path: Annotated[Path, typer.Argument(help="A folder of tasks (or one task directory).")],
    name: Annotated[
        str | None, typer.Option("--name", help="The name to register (default: the folder's).")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Re-point a name registered for another folder.")
    ] = False,
) -> None:
    """Register a folder of tasks by name, so `run`, `evolve`, `research` and `bench` take the
    name like `mini` (stored in ~/.loopwright/benchmarks.json, or $LOOPWRIGHT_BENCHMARKS)."""
    entry = register_benchmark_dir(path, name=name, replace=replace)
    console.print(f"registered {entry.name} -> {entry.path} (in {user_benchmarks_path()})")


@bench_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="A registered benchmark's name.")]) -> None:
    """Forget a registered benchmark (its folder is left alone)."""
    entry = remove_user_benchmark(name)
    console.print(f"removed {entry.name} (its folder {entry.path} is left alone)")


def _levels(bench: Benchmark) -> dict[int, int]:
    return dict(sorted(Counter(t.level for t in bench.tasks).items()))


def _summary(bench: Benchmark) -> dict[str, object]:
    return {
        "name": bench.name,
        "tasks": len(bench.tasks),
        "levels": {str(k): v for k, v in _levels(bench).items()},
        "description": bench.description,
        "digest": bench.digest,
    }


@bench_app.command("prepare")
def prepare(
    benchmark: Annotated[
        str, typer.Argument(help="A registered benchmark name or a folder of tasks.")
    ],
    env_cache: EnvCacheOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each environment as JSON.")
    ] = False,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox",
            help="docker: build the Python environments into container images (as `bench "
            "validate --sandbox docker` uses them); anything else: on this machine.",
        ),
    ] = "auto",
) -> None:
    """Build every task environment of a benchmark up front (each once; those already in the
    cache are reused). A failed build names the command and its output, and is not cached."""
    bench = load_benchmark(benchmark)
    cache = EnvironmentCache(env_cache)
    if sandbox == "docker":
        docker = _docker(default_sandbox("docker"))
        done: list[tuple[Task, Prepared]] = []
        images = _prepare_env_images(bench, docker, cache, progress_shown=not as_json)
    else:
        done = _prepare(bench, cache, progress_shown=not as_json)
        images = []
    images += _prepare_images(bench, progress_shown=not as_json)
    if as_json:
        rows = [_prepared_json(t, p) for t, p in done] + [_image_json(t, i) for t, i in images]
        typer.echo(json.dumps(rows, indent=2))
        return
    if images:
        _print_images(bench, images)
    if images and not done:
        return
    table = Table("task", "environment", "builder", "python", "status", box=None)
    for task, prepared in done:
        m = prepared.manifest
        status = f"built in {m.build_s:.1f}s" if prepared.built else "reused"
        table.add_row(task.id, m.key[:12], m.builder, m.python_version, status)
    if done:
        console.print(table)
    built = sum(p.built for _, p in done)
    console.print(
        f"{len(done)} environment(s) of {bench.name} ready: {built} built, "
        f"{len(done) - built} reused (cache {cache.root})"
    )


def _prepare(
    bench: Benchmark, cache: EnvironmentCache, *, progress_shown: bool
) -> list[tuple[Task, Prepared]]:
    """Build or reuse every environment of `bench`, with a progress bar on a terminal."""
    total = sum(needs_environment(t) for t in bench.tasks)
    if not total:
        return []
    shown = progress_shown and err_console.is_terminal
    with progress_bar(err_console, enabled=shown) as progress:
        bar = progress.add_task(f"preparing environments of {bench.name}", total=total)
        return prepare_environments(
            bench.tasks, cache, on_prepared=lambda _t, _p: progress.advance(bar)
        )


def _docker(sandbox: object) -> DockerSandbox:
    assert isinstance(sandbox, DockerSandbox)  # default_sandbox("docker") makes one or raises
    return sandbox


def _prepare_env_images(
    bench: Benchmark, sandbox: DockerSandbox, cache: EnvironmentCache, *, progress_shown: bool
) -> list[tuple[Task, BuiltImage]]:
    """Build or reuse the derived image of every Python environment of `bench` (the container
    sandbox's way to run them), with a progress bar on a terminal."""
    total = sum(needs_environment(t) for t in bench.tasks)
    if not total:
        return []
    builder = EnvImageBuilder.for_sandbox(sandbox, cache.root / "images")
    shown = progress_shown and err_console.is_terminal
    with progress_bar(err_console, enabled=shown) as progress:
        bar = progress.add_task(f"building environment images of {bench.name}", total=total)
        return prepare_env_images(
            bench.tasks, builder, on_built=lambda _t, _i: progress.advance(bar)
        )


def _prepare_images(bench: Benchmark, *, progress_shown: bool) -> list[tuple[Task, BuiltImage]]:
    """Build or reuse every Dockerfile image of `bench` with the container engine of
    LOOPWRIGHT_CONTAINER_* (none needed when no task has a dockerfile), with a progress bar."""
    total = sum(needs_image_build(t) for t in bench.tasks)
    if not total:
        return []
    builder = ImageBuilder(Engine.detect(ContainerSettings.from_env()))
    shown = progress_shown and err_console.is_terminal
    with progress_bar(err_console, enabled=shown) as progress:
        bar = progress.add_task(f"building container images of {bench.name}", total=total)
        return prepare_images(bench.tasks, builder, on_built=lambda _t, _i: progress.advance(bar))


def _print_images(bench: Benchmark, images: list[tuple[Task, BuiltImage]]) -> None:
    table = Table("task", "image", "status", box=None)
    for task, image in images:
        table.add_row(
            task.id, image.tag, f"built in {image.build_s:.1f}s" if image.built else "reused"
        )
    console.print(table)
    built = sum(i.built for _, i in images)
    console.print(
        f"{len(images)} container image(s) of {bench.name} ready: {built} built, "
        f"{len(images) - built} reused"
    )


def _image_json(task: Task, image: BuiltImage) -> dict[str, object]:
    return {"task": task.id, "image": image.tag, "built": image.built, "build_s": image.build_s}


def _prepared_json(task: Task, prepared: Prepared) -> dict[str, object]:
    return {
        "task": task.id,
        "built": prepared.built,
        "path": str(prepared.environment.prefix),
        **prepared.manifest.model_dump(mode="json"),
    }


@bench_app.command("validate")
def validate(
    benchmark: Annotated[
        str, typer.Argument(help="A registered benchmark name or a folder of tasks.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print every check as JSON.")] = False,
    sandbox: SandboxOption = "auto",
    env_cache: EnvCacheOption = None,
) -> None:
    """Grade every task's gold (must be 1.0 and resolved), flawed variants and untouched repo (< 1.0).

    Task environments are built when the cache lacks them (as `bench prepare` does); a build
    that fails fails that task's checks and the others go on. Every failed check shows the
    tests that did not pass (those failing for want of a network named apart) and the tail of
    the test run's output. Exits 1 when any check fails, naming the tasks.
    """
    bench = load_benchmark(benchmark)
    grader = PytestGrader(default_sandbox(sandbox))
    cache = EnvironmentCache(env_cache)
    # Environments are built task by task as validation reaches them: a build that fails is
    # recorded for its task (its checks fail, saying why) and the others go on.
    total = sum(len(task_variants(t)) + (t.gold is None) for t in bench.tasks)
    with progress_bar(err_console, enabled=not as_json and err_console.is_terminal) as progress:
        bar = progress.add_task(f"validating {bench.name}", total=total)
        checks = validate_benchmark(
            bench, grader, on_check=lambda _: progress.advance(bar), environments=cache
        )
    failed_tasks = sorted({c.task_id for c in checks if not c.ok})
    if as_json:
        typer.echo(json.dumps([_check_json(c) for c in checks], indent=2))
    else:
        console.print(_table(checks))
        _print_failures(checks)
        _print_verdict(bench, checks, failed_tasks, grader)
    if failed_tasks:
        raise typer.Exit(EXIT_FAILED)


def _table(checks: list[VariantCheck]) -> Table:
    table = Table("task", "variant", "kind", "fail_to_pass", "score", "resolved", "check", box=None)
    for c in checks:
        g = c.grade
        passed = f"{g.f2p_passed}/{g.f2p_total}" if g else "-"
        score = f"{g.score:.2f}" if g and not g.invalid else ("invalid" if g else "-")
        resolved = ("yes" if g.resolved else "no") if g else "-"
        verdict = "[green]ok[/]" if c.ok else f"[bold red]FAIL[/] {c.problem}"
        kind = "" if c.kind == c.variant else c.kind
        table.add_row(c.task_id, c.variant, kind, passed, score, resolved, verdict)
    return table


def _print_verdict(
    bench: Benchmark, checks: list[VariantCheck], failed: list[str], grader: PytestGrader
) -> None:
    where = f"sandboxed with {grader.sandbox.name}" if grader.sandbox.isolated else "UNSANDBOXED"
    if failed:
        console.print(
            f"[bold red]{len(failed)} of {len(bench.tasks)} task(s) failed validation:[/] "
            + ", ".join(failed)
        )
    else:
        console.print(
            f"[green]all {len(bench.tasks)} tasks of {bench.name} valid[/] "
            f"({len(checks)} checks, tests {where})"
        )


def _print_failures(checks: list[VariantCheck], shown: int = 10) -> None:
    """For each failed check: the failing tests (network ones apart) and the output's tail."""
    for c in checks:
        if c.ok or c.grade is None:
            continue
        console.print(
            f"\n[bold]{escape(c.task_id)} / {escape(c.variant)}[/]: {escape(c.problem or '')}"
        )
        failing, network = failing_tests(c.grade), needs_network(c.grade)
        missing = missing_tests(c.grade)
        code = [t for t in failing if t not in network and t not in missing]
        if code:
            more = f" (+{len(code) - shown} more)" if len(code) > shown else ""
            console.print("  failing tests: " + escape(", ".join(code[:shown])) + more)
        if missing:
            console.print(
                "  [yellow]never ran[/] (no test of that id was collected: check the id in "
                "task.toml's fail_to_pass / pass_to_pass): " + escape(", ".join(missing[:shown]))
            )
        if network:
            console.print(
                "  [yellow]need a network[/] (the sandbox has none; a network failure, not the "
                "code's): " + escape(", ".join(network[:shown]))
            )
        tail = output_tail(c.grade)
        if tail:
            console.print("  output's tail:")
            console.print(escape(textwrap.indent(tail, "    ")), highlight=False)


def _check_json(c: VariantCheck) -> dict[str, object]:
    g = c.grade
    return {
        "task": c.task_id,
        "variant": c.variant,
        "kind": c.kind,
        "f2p_passed": g.f2p_passed if g else None,
        "f2p_total": g.f2p_total if g else None,
        "p2p_passed": g.p2p_passed if g else None,
        "p2p_total": g.p2p_total if g else None,
        "score": g.score if g else None,
        "resolved": g.resolved if g else False,
        "invalid": g.invalid if g else False,
        "invalid_reason": g.invalid_reason if g else None,
        "ok": c.ok,
        "problem": c.problem,
        "failing_tests": failing_tests(g) if g else [],
        "needs_network": needs_network(g) if g else [],
        "missing_tests": missing_tests(g) if g else [],
        "output_tail": output_tail(g) if g and not c.ok else "",
    }
