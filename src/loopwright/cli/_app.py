"""The typer application and the process entry point with loopwright's exit-code contract."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from loopwright import __version__
from loopwright._scratch import process_scratch
from loopwright.errors import UserError

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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loopwright {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """loopwright: find better LLM agent workflows by measurement."""


def _register_commands() -> None:
    # Imported for their side effect of adding sub-apps to `app`.
    from loopwright.cli import ab as _ab  # noqa: F401
    from loopwright.cli import bench as _bench  # noqa: F401
    from loopwright.cli import evolve as _evolve  # noqa: F401
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
    try:
        with _terminate_as_interrupt(), process_scratch():
            app(args=argv, prog_name="loopwright")
    except SystemExit as exc:  # typer's standalone mode always ends this way
        code = exc.code
        if code is None:
            return EXIT_OK
        return code if isinstance(code, int) else EXIT_USER_ERROR
    except UserError as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.render())}")
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return EXIT_INTERRUPTED
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
