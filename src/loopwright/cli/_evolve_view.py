"""What `loopwright evolve` and the `outer-loop` steps print: the live display, the tables
and the end-of-run summary."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from loopwright.cli.report import report_at_end
from loopwright.models import (
    LEDGER_FILE,
    LedgerTotals,
    group_totals,
    read_ledger,
    role_kind,
)
from loopwright.search import (
    Calibration,
    CalibrationFinished,
    CalibrationRunFinished,
    CreditRow,
    DesignEvaluated,
    EvaluationFinished,
    EvolutionEngine,
    EvolveResult,
    GenerationFinished,
    GenerationStarted,
    GenerationSummary,
    ProgressEvent,
    RunResumed,
    Spent,
    StageVerdict,
    load_checkpoint,
)
from loopwright.stats import BootstrapCI
from loopwright.store import INDEX_FILE, RunIndex, is_simulated
from loopwright.workflow import to_mermaid

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


err_console = Console(stderr=True, highlight=False)


_SIM_BANNER = (
    "[bold yellow]SIMULATED[/] results: the offline `sim` model stands in for an LLM "
    "(docs/sim-model.md). Scores show how workflows fare against the simulator, not a real model."
)


def _banner(model: str) -> None:
    if is_simulated(model):
        err_console.print(_SIM_BANNER)


def _simulated(engine: EvolutionEngine) -> bool:
    return is_simulated(engine.config.model)


def _index_line(run_dir: Path) -> str:
    """What the run index says the run paid (queried, not rescanned: docs/store.md)."""
    if not (run_dir / INDEX_FILE).is_file():
        return "run index: none (a run from before the index)"
    with RunIndex.of_run(run_dir) as index:
        s = index.spend(index.run_id_of(run_dir))
    return (
        f"run index: {s.evaluations} evaluations ({s.cached} from the cache), paid "
        f"${s.paid_usd:.2f}, saved ${s.saved_usd:.2f}, {s.failed_attempts} failed attempts"
    )


class _Display:
    """The live progress of a run, fed by its progress events: one bar per phase (calibration,
    then each generation's evaluations) with done/total, elapsed time, ETA, the best training
    fitness so far and the spend so far; the calibration table and one summary line per
    generation. On a terminal the bar is live (rich); elsewhere (a log file, CI: `live` False)
    a plain line at each quarter of a phase and at its end."""

    def __init__(self, *, live: bool | None = None) -> None:
        self.live = err_console.is_terminal if live is None else live
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=24),
            MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=err_console, transient=True, disable=not self.live,
        )  # fmt: skip
        self.bar = self.progress.add_task("starting", total=None, status="")
        self.phase = _Phase("starting", None, 0)
        self.best: float | None = None
        self.spent: Spent | None = None

    def __enter__(self) -> _Display:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def __call__(self, event: ProgressEvent) -> None:
        if isinstance(event, RunResumed) and event.model is not None:
            _banner(event.model)
        elif isinstance(event, CalibrationRunFinished):
            if self.phase.name != "calibration":
                self._begin("calibration", event.total, event.done - 1)
            self._advance(event.done)
        elif isinstance(event, CalibrationFinished):
            console.print(_calibration_table(event.calibration))
            for warning in event.calibration.warnings:
                err_console.print(f"[bold yellow]warning:[/] {escape(warning)}")
        elif isinstance(event, GenerationStarted):
            self._begin(f"generation {event.generation}", event.planned, 0)
        elif isinstance(event, EvaluationFinished):
            self.spent = event.spent or self.spent
            self._advance(self.phase.done + 1)
        elif isinstance(event, GenerationFinished):
            self.spent = event.spent
            if event.train_best is not None:
                self.best = max(self.best or 0.0, event.train_best)
            self._plain(final=True)
            self.progress.console.print(_summary_line(event))
        elif isinstance(event, DesignEvaluated):
            self.progress.console.print(
                f"hand design {event.done}/{event.total} {escape(event.name)}: holdout "
                f"{_fmt3(event.holdout)} ({event.runs} runs, {event.cached} from the cache)"
            )

    def _begin(self, name: str, total: int | None, done: int) -> None:
        self.phase = _Phase(name, total, done)
        self.progress.reset(self.bar, total=total, completed=done)
        self._show()

    def _advance(self, done: int) -> None:
        before = self.phase.quarter()
        self.phase.done = done
        if self.phase.total is not None and done > self.phase.total:
            self.phase.total = done  # an estimate the run outgrew (never shown as over 100%)
        self._show()
        if self.phase.quarter() > before:
            self._plain()

    def _show(self) -> None:
        self.progress.update(self.bar, description=self.phase.name, completed=self.phase.done,
                             total=self.phase.total, status=self._status())  # fmt: skip

    def _status(self) -> str:
        best = "-" if self.best is None else f"{self.best:.2f}"
        spent = "-" if self.spent is None else self.spent.dollars()
        return f"best {best} · spent {spent}"

    def _plain(self, *, final: bool = False) -> None:
        """The phase as one line, when the display is not live (a log keeps every line); at
        the end of a phase its total is what it ran (staging and budgets may run fewer)."""
        if final:
            self.phase.total = self.phase.done
        if self.live or self.phase.printed == self.phase.done:
            return
        self.phase.printed = self.phase.done
        err_console.print(f"{escape(self.phase.line())} · {escape(self._status())}")


class _Phase:
    """What a phase has done of its total (None: unknown), and since when."""

    def __init__(self, name: str, total: int | None, done: int) -> None:
        self.name, self.total, self.done = name, total, done
        self.start, self.start_done = time.monotonic(), done
        self.printed: int | None = done if done == 0 else None

    def quarter(self) -> int:
        return 0 if not self.total else (4 * self.done) // self.total

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        total = "?" if self.total is None else str(self.total)
        text = f"{self.name}: {self.done}/{total} evaluations, {_clock(elapsed)} elapsed"
        ran = self.done - self.start_done
        if self.total is not None and ran > 0 and self.done < self.total:
            text += f", ETA {_clock(elapsed / ran * (self.total - self.done))}"
        return text


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _calibration_table(result: Calibration) -> Table:
    table = Table(title="calibration (pass rate of the seed)", title_justify="left", box=None)
    for col in ("task", "level", "pass rate", "score", "split"):
        table.add_column(col)
    for row in result.rows:
        table.add_row(row.task_id, str(row.level), _fmt(row.pass_rate), _fmt(row.mean_score),
                      row.verdict)  # fmt: skip
    return table


def _summary_line(s: GenerationSummary) -> str:
    alarm = " [bold red]OVERFIT[/]" if s.overfit.alarm else ""
    return (
        f"gen {s.generation}: train best {_fmt(s.train_best)} mean {_fmt(s.train_mean)}"
        f" holdout {_fmt(s.holdout_best)}{alarm} coverage {s.archive_coverage:.2f}"
        f" spent {s.spent.evaluations} evals {s.spent.dollars()}"
    )


def resume_line(run_dir: Path) -> str | None:
    """Where `evolve --resume` picks the run up: the generations already done, the evaluations
    kept and the phase; calibration when no generation was made yet; None when `run_dir` holds
    no run (the resume itself then says why)."""
    if (run_dir / "checkpoint.json").is_file():
        cp = load_checkpoint(run_dir)
        if cp.stop_reason is not None:
            return f"{run_dir} has finished ({cp.stop_reason}): nothing left to run"
        done = ", ".join(str(s.generation) for s in cp.summaries) or "none"
        return (
            f"resuming {run_dir} at generation {cp.generation} ({cp.phase}): generations done: "
            f"{done}; {cp.spent.evaluations} evaluations kept, none is run again"
        )
    if (run_dir / "config.yaml").is_file():
        return f"resuming {run_dir} in calibration (no generation made yet; finished runs kept)"
    return None


def _finish(result: EvolveResult, model: str, run_dir: Path, *, report: bool) -> None:
    """The summary of a finished run, where it is, and its report."""
    _report(result, simulated=is_simulated(model))
    _print_spend(run_dir)
    console.print(f"run written to {run_dir}")
    if report:
        report_at_end(run_dir, console)


def _report(result: EvolveResult, *, simulated: bool) -> None:
    console.print(_generation_table(result, simulated=simulated))
    console.print(_holdout_line(result, simulated=simulated))
    if result.designs:
        console.print(_designs_table(result))
        for line in _design_lines(result, simulated=simulated):
            console.print(line, markup=False)
    console.print(f"stop reason: {result.stop_reason or '(still running)'}")
    spent = result.spent
    meta = (
        f" (agents {_part(spent.usd - spent.meta_usd, spent.unpriced_evaluations)}, "
        f"meta {_part(spent.meta_usd, spent.unpriced_meta_calls)})"
        if spent.meta_usd or spent.unpriced_meta_calls
        else ""
    )
    console.print(
        f"spent: {spent.evaluations} evaluations, {spent.dollars()}{meta}, {spent.wall_s:.0f}s"
    )
    if spent.unpriced:
        console.print(
            f"[yellow]unknown cost:[/] {spent.unpriced_evaluations} evaluation(s) and "
            f"{spent.unpriced_meta_calls} meta call(s) used a model without a price, so the "
            "dollars above are a lower bound; give the model a price (docs/models.md, prices)"
        )
    if result.points:
        console.print(_front_table(result))
    w = result.winner
    console.print(f"winner {w.mode} ({w.lineage.operator}), {len(w.workflow.nodes)} nodes:")
    console.print(to_mermaid(w.workflow, title=f"winner {w.mode}"), markup=False)


def _front_table(result: EvolveResult) -> Table:
    """Holdout score against mean dollars per task for every holdout-evaluated individual,
    cheapest first: on the Pareto front or not, tying the best or not (`within_best`), the
    winner."""
    title = f"holdout vs cost (objective: {result.objective}; * on the front)"
    table = Table(title=title, title_justify="left", box=None)
    for col in ("individual", "gen", "holdout", "$/task", "front", "within best", ""):
        table.add_column(col, justify="left" if col in ("individual", "") else "right")
    for p in result.points:
        usd = "unpriced" if p.usd_per_task is None else f"{p.usd_per_task:.4f}"
        table.add_row(
            p.individual_id[:8], str(p.generation), f"{p.holdout:.3f}", usd,
            "*" if p.on_front else "", "yes" if p.within_best else "no",
            "winner" if p.individual_id == result.winner.id else "",
        )  # fmt: skip
    return table


def _print_spend(run_dir: Path) -> None:
    """The run ledger's spend by role, agents apart from the meta roles (nothing when no
    gateway call was made: the sim and scripted models make none)."""
    path = run_dir / LEDGER_FILE
    records = read_ledger(path, torn_tail=True) if path.is_file() else []
    if not records:
        return
    table = Table(title="model calls by role (ledger.jsonl)", title_justify="left", box=None)
    for col in ("role", "kind", "calls", "failed", "tokens in", "tokens out", "cost $"):
        table.add_column(col, justify="left" if col in ("role", "kind") else "right")
    roles = group_totals(records, "role")
    order = sorted(roles, key=lambda r: (role_kind(r) == "meta", r or ""))
    for role in order:
        table.add_row(role or "(none)", role_kind(role), *_totals_cells(roles[role]))
    for kind, totals in sorted(group_totals(records, "kind").items(), key=lambda kv: kv[0] or ""):
        table.add_row(f"all {kind}", "", *_totals_cells(totals), style="bold")
    console.print(table)
    malformed = [r for r in records if r.error_kind == "client"]
    if malformed:  # a bug to report, never a fault of the provider or the settings
        seen = "; ".join(
            f"{r.labels.role or '(none)'} attempt {r.attempt}, {r.request_bytes} bytes"
            for r in malformed[:5]
        )
        console.print(
            f"[red]{len(malformed)} malformed request(s)[/red] the server could not parse "
            f"(client errors, not retried; a loopwright bug, please report it): {escape(seen)}"
        )


def _totals_cells(t: LedgerTotals) -> tuple[str, ...]:
    cost = "unpriced" if t.cost_usd is None else f"{t.cost_usd:.4f}"
    return (str(t.calls), str(t.failed_calls), str(t.input_tokens), str(t.output_tokens), cost)


def _holdout_line(result: EvolveResult, *, simulated: bool = False) -> str:
    """The winner's and the seed's holdout scores and the gain with its interval, saying
    whether the interval excludes zero (what `promote` asks for)."""
    if result.gain is None:
        return "best vs seed on holdout: no holdout scores"
    scores = (result.winner.mean_score("holdout"), result.seed.mean_score("holdout"))
    line = f"holdout{' [SIMULATED]' if simulated else ''}: " + ", ".join(
        f"{who} {'-' if v is None else format(v, '.3f')}"
        for who, v in zip(("winner", "seed"), scores, strict=True)
    )
    line += f"; gain {result.gain.describe()}"
    if result.gain.includes_zero:
        return line + ": the interval includes zero (not significant; promote needs --force)"
    return line + ": significant"


def _design_lines(result: EvolveResult, *, simulated: bool) -> list[str]:
    """With `--compare-designs`: who made the winner, and its paired gain over the seed and
    over the best hand design on the same holdout runs, each with its interval and verdict."""
    best = result.best_design
    if best is None:
        return []
    sim = " [SIMULATED]" if simulated else ""
    lines = [f"winner vs seed and hand designs{sim}: the winner is {result.winner_origin}"]
    for label, gain in (("over the seed", result.gain),
                        (f"over the best hand design ({best.name}, holdout "
                         f"{_fmt3(best.holdout)})", result.design_gain)):  # fmt: skip
        lines.append(f"  gain {label}: {_verdict(gain)}")
    return lines


def _verdict(gain: BootstrapCI | None) -> str:
    if gain is None:
        return "no holdout task in common"
    if gain.low > 0:
        return f"{gain.describe()}: better, the interval excludes zero"
    if gain.high < 0:
        return f"{gain.describe()}: worse, the interval excludes zero"
    return f"{gain.describe()}: the interval includes zero (no difference shown)"


def _designs_table(result: EvolveResult) -> Table:
    """Every hand design on the holdout runs: its score, $/task, runs (from the cache) and the
    winner's paired gain over it."""
    runs = sum(d.runs for d in result.designs)
    cached = sum(d.cached for d in result.designs)
    title = (f"hand designs on the same holdout runs ({runs} task runs, {cached} from the "
             "cache; not counted in the search's spend)")  # fmt: skip
    table = Table(title=title, title_justify="left", box=None)
    for col in ("design", "holdout", "$/task", "runs", "cached", "winner's gain (95% CI)", ""):
        table.add_column(col, justify="left" if col in ("design", "") else "right")
    best = result.best_design
    for d in result.designs:
        usd = "unpriced" if d.usd_per_task is None else f"{d.usd_per_task:.4f}"
        g = d.winner_gain
        gain = "-" if g is None else f"{g.gain:+.3f} ({g.low:+.3f} .. {g.high:+.3f})"
        table.add_row(d.name, _fmt3(d.holdout), usd, str(d.runs), str(d.cached), gain,
                      "best" if best is not None and d.name == best.name else "")  # fmt: skip
    return table


def _fmt3(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _generation_table(result: EvolveResult, *, simulated: bool = True) -> Table:
    sim = " [SIMULATED]" if simulated else ""
    table = Table(title=f"generations{sim}", title_justify="left", box=None)
    for col in ("gen", "train best", "train mean", "holdout best", "gap", "diversity",
                "coverage", "evals", "spent $"):  # fmt: skip
        table.add_column(col, justify="right")
    for s in result.summaries:
        gap = _fmt(s.overfit.gap) + (" ALARM" if s.overfit.alarm else "")
        table.add_row(
            str(s.generation), _fmt(s.train_best), _fmt(s.train_mean), _fmt(s.holdout_best),
            gap, str(s.diversity), f"{s.archive_coverage:.2f}", str(s.spent.evaluations),
            s.spent.dollars().removeprefix("$"),
        )  # fmt: skip
    return table


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _part(usd: float, unpriced: int) -> str:
    """One part of the spend: "$X", or "$X + N unpriced" / "unpriced (N)"."""
    if not unpriced:
        return f"${usd:.2f}"
    return f"${usd:.2f} + {unpriced} unpriced" if usd else f"unpriced ({unpriced})"


def _stage_table(verdicts: Sequence[StageVerdict]) -> Table:
    """Staged evaluation: each child's minibatch mean against its parent's, and the verdict."""
    table = Table(title="staged evaluation (children on their minibatch)", title_justify="left",
                  box=None)  # fmt: skip
    for col in ("child", "parent", "stage", "tasks", "child mean", "parent mean", "verdict"):
        table.add_column(col)
    for v in verdicts:
        table.add_row(
            v.individual_id[:8], v.parent_id[:8], str(v.stage), str(len(v.tasks)),
            _fmt(v.child_mean), _fmt(v.parent_mean), "stopped" if v.stopped else "goes on",
        )  # fmt: skip
    return table


def _credit_table(rows: Sequence[CreditRow]) -> Table:
    table = Table(title="credit (children that beat their parents)", title_justify="left", box=None)
    for col in ("suggestion kind", "operator", "children", "evaluated", "beat parent",
                "win rate", "mean delta", "weight"):  # fmt: skip
        table.add_column(col, justify="left" if col in ("suggestion kind", "operator") else "right")
    for r in sorted(rows, key=lambda r: (-r.evaluated, r.kind, r.operator)):
        table.add_row(r.kind, r.operator, str(r.children), str(r.evaluated), str(r.beat_parent),
                      _fmt(r.win_rate), _fmt(r.mean_delta), f"{r.factor:.2f}")  # fmt: skip
    return table


def _generation_of(path: Path) -> int:
    digits = path.stem.removeprefix("reflection_gen")
    return int(digits) if digits.isdigit() else -1
