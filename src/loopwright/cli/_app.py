"""The typer application and the process entry point with loopwright's exit-code contract."""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from loopwright._caller import called_from_cli
from loopwright._scratch import process_scratch
from loopwright._version import __version__
from loopwright.errors import LoopwrightError, RunAbortedError, UsageError, UserError
from loopwright.store import os_error_text
from loopwright.workflow import WORKFLOWS_PATH_ENV

app = typer.Typer(
    name="loopwright",
    help="Find better LLM agent workflows by measurement: run, grade and evolve agent graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

err_console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def progress_bar(console: Console, *, enabled: bool) -> Progress:
    """The progress bar of every long command: description, bar, done/total, elapsed.

    Transient (it disappears when done) and drawn on `console`, normally stderr, so that
    stdout stays clean for tables and --json."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not enabled,
    )


@contextmanager
def resume_hint(command: str) -> Iterator[None]:
    """Ctrl-C (or SIGTERM) in the block says how to continue (`command`), then exits 130."""
    try:
        yield
    except KeyboardInterrupt:
        err_console.print(
            f"interrupted: the run stopped; continue it with\n  {command}", soft_wrap=True
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loopwright {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    workflows_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--workflows-dir",
            help="A directory of workflows to use by name, in every command (repeatable; added "
            "to $LOOPWRIGHT_WORKFLOWS_PATH; see `workflow list`).",
        ),
    ] = None,
) -> None:
    """loopwright: find better LLM agent workflows by measurement."""
    workflows_dir = workflows_dir or []
    missing = [str(p) for p in workflows_dir if not p.is_dir()]
    if missing:
        raise UsageError(
            "--workflows-dir takes an existing directory",
            got=", ".join(missing),
            fix="create it, or check the path",
        )
    if workflows_dir:
        given = [str(p.expanduser().absolute()) for p in workflows_dir]
        known = [p for p in os.environ.get(WORKFLOWS_PATH_ENV, "").split(os.pathsep) if p]
        # Through the environment so that worker processes and library calls see it too.
        os.environ[WORKFLOWS_PATH_ENV] = os.pathsep.join([*given, *known])


def _register_commands() -> None:
    # Imported for their side effect of adding sub-apps to `app`.
    from loopwright.cli import ab as _ab  # noqa: F401
    from loopwright.cli import bench as _bench  # noqa: F401
    from loopwright.cli import evolve as _evolve  # noqa: F401
    from loopwright.cli import export as _export  # noqa: F401
    from loopwright.cli import models as _models  # noqa: F401
    from loopwright.cli import report as _report  # noqa: F401
    from loopwright.cli import research as _research  # noqa: F401
    from loopwright.cli import run as _run  # noqa: F401
    from loopwright.cli import tasks as _tasks  # noqa: F401
    from loopwright.cli import workflow as _workflow  # noqa: F401


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM ends a command like Ctrl-C (KeyboardInterrupt: cleanup runs, exit 130, and a
    resumable command says how to resume); the previous handler is restored after. Only in
    the main thread (signal handlers can be set nowhere else)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 1 failed check, 2 user error, 130 interrupted)."""
    _register_commands()
    before = os.environ.get(WORKFLOWS_PATH_ENV)
    try:
        with _terminate_as_interrupt(), process_scratch(), called_from_cli():
            app(args=argv, prog_name="loopwright")
    except SystemExit as exc:  # typer's standalone mode always ends this way
        code = exc.code
        if code is None:
            return EXIT_OK
        return code if isinstance(code, int) else EXIT_USER_ERROR
    except UserError as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.render())}")
        return EXIT_USER_ERROR
    except RunAbortedError as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.render())}")
        return EXIT_FAILED
    except LoopwrightError as exc:  # a failed run (a dead provider...): its message, exit 1
        err_console.print(f"[bold red]failed:[/] {escape(str(exc))}")
        return EXIT_FAILED
    except (OSError, sqlite3.Error) as exc:
        # The safety net behind the up-front path checks: an OS error no check could foresee
        # (a full disk, a path that changed meanwhile) is one paragraph naming it, not a traceback.
        err_console.print(f"[bold red]error:[/] {escape(os_error_message(exc))}")
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return EXIT_INTERRUPTED
    finally:
        _restore(WORKFLOWS_PATH_ENV, before)
    return EXIT_OK


def _restore(name: str, value: str | None) -> None:
    """Put an environment variable a command set back as it was (main() may run many times in
    one process, as in the tests)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def os_error_message(exc: OSError | sqlite3.Error) -> str:
    """What an OS or SQLite error escaping a command means to a person: the cause, the path
    and the fix (as a UserError renders)."""
    if isinstance(exc, OSError):
        what = os_error_text(exc)
        if exc.errno == errno.ENOSPC:
            fix = "free space on that file system (or pass paths on another one), then --resume"
        else:
            fix = "check that the path exists, is of the right kind, and that you can write there"
        return UserError(f"cannot use a path: {what}", fix=fix).render()
    if "full" in str(exc):
        return UserError(
            f"the disk is full: {exc}", fix="free space on that file system, then --resume"
        ).render()
    return UserError(
        f"a SQLite file could not be used: {exc}",
        fix="check --cache and the run directory: a writable directory, a loopwright runs.db",
    ).render()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
