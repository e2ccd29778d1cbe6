"""Every bad input a user can give a command: exit 2 (1 for a run that failed) with one clear
paragraph, never a traceback, and nothing left behind. The cases generate docs/bad-inputs.md;
the test fails when the committed page differs. Rewrite it with
`LOOPWRIGHT_WRITE_DOCS=1 pytest tests/cli/test_bad_inputs.py`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main
from loopwright.workflow import resolve_task_workflow
from tests.models.test_gateway_server import DUMMY_KEY, Failure, Loopback, loopback
from tests.taskfactory import make_calc_task

__all__ = ["loopback"]  # the fixture, re-exported for pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "bad-inputs.md"
EVOLVE = ("evolve", "--bench", "mini", "--seed-workflow", "builder-only")
RUN = ("run", "builder-only", "--bench", "mini", "--tasks", "l1-slugify", "--no-report")
RANDOM_AGENT = ("--strategy", "random", "--reflector", "agent", "--meta-model", "openai/gpt-4o")
INIT = ("research", "init", "--workflow", "builder-only", "--bench", "mini")


@dataclass(frozen=True)
class Case:
    """One bad input: the command line (relative to the fixture directory), the exit code it
    must give, a phrase its message must hold, and a path that must not exist afterwards."""

    argv: tuple[str, ...]
    code: int
    says: str
    absent: str | None = None
    needs_ro: bool = False
    env: tuple[tuple[str, str], ...] = ()
    report: str | None = None
    """A command whose failure is a report, not an `error:` line: the table's message is the
    line holding this phrase and the next one."""


CASES: tuple[Case, ...] = (
    # run
    Case((*RUN, "--run-dir", "afile"), 2, "is a file"),
    Case((*RUN, "--run-dir", "afile/run"), 2, "is a file, not a directory"),
    Case((*RUN, "--run-dir", "ro/run"), 2, "read-only file system", needs_ro=True),
    Case((*RUN, "--run-dir", "full"), 2, "not empty"),
    Case((*RUN, "--run-dir", "r", "--model", "gpt-99"), 2, "unknown model", "r"),
    Case((*RUN, "--run-dir", "r", "--model", "nosuchprovider/model"), 2, "provider", "r"),
    Case((*RUN, "--run-dir", "r", "--sandbox", "banana"), 2, "unknown sandbox", "r"),
    Case((*RUN, "--run-dir", "r", "--api-base", "http://127.0.0.1:9/v1"), 2, "api-base", "r"),
    Case((*RUN, "--run-dir", "r", "--reps", "1000000"), 2, "less than or equal to 100", "r"),
    Case((*RUN, "--run-dir", "r", "--reps", "0"), 2, "greater than or equal to 1", "r"),
    Case(("run", "no-such-workflow", "--bench", "mini", "--run-dir", "r"), 2, "builder-only", "r"),
    Case(("run", "builder-only", "--bench", "no-such-bench", "--run-dir", "r"), 2, "no-such", "r"),
    Case(
        ("run", "builder-only", "--bench", "mini", "--tasks", "nope", "--run-dir", "r"),
        2,
        "unknown task",
        "r",
    ),
    Case(
        (
            *RUN,
            "--run-dir",
            "dead",
            "--model",
            "openai/loopback-coder",
            "--api-base",
            "LOOPBACK",
            "--sandbox",
            "local",
        ),
        1,
        "no call to the model",
        env=(("OPENAI_API_KEY", DUMMY_KEY),),
    ),
    Case(("run", "wf-loops.yaml", "--bench", "mini", "--run-dir", "r"), 2, "max_loops", "r"),
    Case(
        ("run", "builder-only", "--bench", "fnbench", "--run-dir", "r"),
        2,
        "cannot be imported",
        "r",
    ),
    Case(
        ("evolve", "--bench", "fnbench", "--seed-workflow", "builder-only", "--run-dir", "e"),
        2,
        "cannot be imported",
        "e",
    ),
    Case((*RUN[:4], "--tasks", ",,,", "--run-dir", "r"), 2, "--tasks names no id", "r"),
    Case((*RUN[:4], "--tasks", "", "--run-dir", "r"), 2, "--tasks names no id", "r"),
    Case((*RUN, "--run-dir", "r", "--model", ""), 2, "model name is empty", "r"),
    Case((*RUN, "--run-dir", "r", "--model", "scripted:binary.md"), 2, "not UTF-8", "r"),
    Case((*RUN, "--run-dir", "r", "--model", "scripted:noreplies.yaml"), 2, "script is empty", "r"),
    # evolve
    Case(("evolve", "--resume", "--run-dir", "typo"), 2, "no run directory", "typo"),
    Case(("evolve", "--resume"), 2, "--resume needs --run-dir"),
    Case(
        ("evolve", "--resume", "--run-dir", "typo", "--generations", "10", "--population", "9"),
        2,
        "would be ignored",
        "typo",
    ),
    Case(
        ("evolve", "--resume", "--run-dir", "empty"),
        2,
        "no evolve checkpoint",
        "empty/.evolve.lock",
    ),
    Case(("evolve", "--resume", "--run-dir", "schema99"), 2, "schema_version"),
    Case((*EVOLVE, "--run-dir", "e", "--sandbox", "banana"), 2, "unknown sandbox", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--cache", "cdir"), 2, "is a directory", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--cache", "ro/c.db"), 2, "read-only", "e", needs_ro=True),
    Case((*EVOLVE, "--run-dir", "e", "--cache", "notdb.txt"), 2, "not a SQLite file", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--cache", "c.db", "--no-cache"), 2, "contradict", "e"),
    Case((*EVOLVE, "--run-dir", "afile"), 2, "is a file"),
    Case((*EVOLVE, "--run-dir", "afile/e"), 2, "is a file, not a directory"),
    Case((*EVOLVE, "--run-dir", "ro/e"), 2, "read-only file system", needs_ro=True),
    Case((*EVOLVE, "--run-dir", "e", "--model", "nosuchprovider/model"), 2, "provider", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--population", "9000000"), 2, "at most", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--reps", "100000"), 2, "at most", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--generations", "1000000000"), 2, "at most", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--generations", "0"), 2, "must be positive", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--population", "1"), 2, "at least 2", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--band", "x"), 2, "LOW,HIGH", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--max-usd", "nan"), 2, "max_usd must be positive", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--overfit-gap", "-1"), 2, "overfit_gap", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--population", "2", "--elitism", "10"), 2, "elitism", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--reflector", "agent"), 2, "calls tools", "e"),
    Case((*EVOLVE, "--run-dir", "e", "--reflector", "mind"), 2, "reflector", "e"),
    Case((*EVOLVE, "--run-dir", "e", *RANDOM_AGENT), 2, "would never run", "e"),
    Case(
        (*EVOLVE, "--run-dir", "e", "--executor", "ray", "--ray-address", "not-an-address"),
        2,
        "not a Ray cluster address",
        "e",
    ),
    Case(("evolve", "--resume", "--run-dir", "badjson"), 2, "not valid JSON"),
    Case(("evolve", "--resume", "--run-dir", "nockpt"), 2, "checkpoint is missing"),
    Case((*EVOLVE, "--run-dir", "e", "--train", "l1-slugify"), 2, "both", "e"),
    Case(
        (*EVOLVE, "--run-dir", "e", "--train", "nope", "--holdout", "l1-csv-row"),
        2,
        "unknown task",
        "e",
    ),
    Case(
        ("evolve", "--bench", "mini", "--seed-workflow", "no-such-wf", "--run-dir", "e"),
        2,
        "no-such-wf",
        "e",
    ),
    Case(("evolve", "--bench", "mini", "--run-dir", "e"), 2, "--seed-workflow", "e"),
    Case(
        ("evolve", "--bench", "mini", "--seed-workflow", "wf-prompt.yaml", "--run-dir", "e"),
        2,
        "100000",
        "e",
    ),
    # outer-loop
    Case(("outer-loop", "status", "--run-dir", "empty"), 2, "no evolve checkpoint"),
    Case(("outer-loop", "status", "--run-dir", "truncated"), 2, "not valid JSON"),
    Case(
        ("outer-loop", "finalize", "--run-dir", "empty"),
        2,
        "no evolve checkpoint",
        "empty/.evolve.lock",
    ),
    Case(("outer-loop", "evaluate", "--run-dir", "typo"), 2, "no evolve checkpoint", "typo"),
    Case(("outer-loop", "reflect", "--run-dir", "typo"), 2, "no evolve checkpoint", "typo"),
    Case(("outer-loop", "evolve", "--run-dir", "typo"), 2, "no evolve checkpoint", "typo"),
    Case(
        (
            "outer-loop",
            "calibrate",
            "--run-dir",
            "e",
            "--bench",
            "mini",
            "--seed-workflow",
            "builder-only",
            "--sandbox",
            "banana",
        ),
        2,
        "unknown sandbox",
        "e",
    ),
    # damaged files beside a finished evolve run's checkpoint (issue 31)
    *(
        Case((*head, name), 2, says)
        for name, says in (
            ("badresult", "the run's result is not valid JSON"),
            ("badcalib", "the run's calibration table is not valid JSON"),
            ("wrongcalib", "does not hold a calibration"),
            ("emptycfg", "config.yaml is empty"),
        )
        for head in (
            ("outer-loop", "status", "--run-dir"),
            ("evolve", "--resume", "--run-dir"),
            ("report",),
        )
    ),
    # research
    Case((*INIT, "--dir", "afile", "--goal", "g"), 2, "is a file"),
    Case((*INIT, "--dir", "ro/v1", "--goal", "g"), 2, "read-only file system", needs_ro=True),
    Case((*INIT, "--dir", "v1", "--goal-file", "binary.md"), 2, "not UTF-8", "v1"),
    Case((*INIT, "--dir", "v1", "--goal-file", "no-goal.md"), 2, "does not exist", "v1"),
    Case((*INIT, "--dir", "v1"), 2, "needs a goal", "v1"),
    Case((*INIT, "--dir", "v1", "--goal", "g", "--sandbox", "banana"), 2, "unknown sandbox", "v1"),
    Case((*INIT, "--dir", "full", "--goal", "g"), 2, "not empty"),
    Case(("research", "run", "--dir", "typo"), 2, "not a research working directory", "typo"),
    # report
    Case(("report", "typo"), 2, "no run directory", "typo"),
    Case(("report", "badjson"), 2, "not valid JSON"),
    Case(("report", "done", "-o", "ro/report.html"), 2, "read-only", needs_ro=True),
    Case(("report", "done", "-o", "cdir"), 2, "is a directory"),
    Case(("report", "done", "-o", "afile/report.html"), 2, "is a file, not a directory"),
    Case(("report", "done", "full"), 2, "not a loopwright run directory", "compare.html"),
    Case(("report", "nockpt", "research"), 2, "cannot mix kinds", "compare.html"),
    Case(("report", "nockpt", "nockpt"), 2, "given twice", "compare.html"),
    Case(("report", "nockpt", "badjson"), 2, "no progress to compare yet", "compare.html"),
    Case(("report", "nockpt", "--watch"), 2, "nothing to watch"),
    Case(("report", "done", "--watch"), 2, "--watch follows evolve runs"),
    Case(("report", "nockpt", "badjson", "--watch"), 2, "--watch follows one run"),
    Case(("report", "nockpt", "--watch", "-o", "x.html"), 2, "writes no file", "x.html"),
    Case(("report", "nockpt", "--watch", "--interval", "0"), 2, "positive number of seconds"),
    Case(("report", "done", "--port", "9000"), 2, "only apply with --watch"),
    # workflow, bench, ab
    Case(("workflow", "validate", "wf-loops.yaml"), 2, "max_loops"),
    Case(("workflow", "validate", "wf-prompt.yaml"), 2, "100000"),
    Case(("workflow", "validate", "no-such-flow"), 2, "builder-only"),
    Case(("workflow", "render", "thorough", "--format", "png"), 2, "png"),
    Case(("bench", "validate", "no-such-bench"), 2, "no-such-bench"),
    Case(
        ("bench", "validate", "typof2p", "--sandbox", "local"),
        1,
        "tests/test_ops_hidden.py::test_nosuch",
        report="typo / gold",
    ),
    Case(("tasks", "mine", "notes", "--out", "mined", "--model", "sim"), 1, "no task kept"),
    Case(("ab", "plan", "--manifest", "no-manifest.yaml"), 2, "no-manifest.yaml"),
    Case(("ab", "plan", "--manifest", "binary.md"), 2, "not UTF-8"),
    Case(("ab", "plan", "--manifest", "badprovider.yaml"), 2, "unknown model provider"),
    Case(("ab", "apply", "cdir"), 2, "scoreboard"),
)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[bool]:
    """`tmp_path/ro`, a directory no write reaches: a read-only tmpfs (root ignores modes),
    else mode 0555. False when neither can be had (those cases are then skipped)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        ro.chmod(0o555)
        yield True
        ro.chmod(0o755)
        return
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)],
                          capture_output=True, check=False)  # fmt: skip
    try:
        yield done.returncode == 0
    finally:
        if done.returncode == 0:
            subprocess.run(["umount", str(ro)], check=False)


def _fixtures(root: Path) -> None:
    """What the cases name: a file, a non-empty and an empty directory, a non-SQLite file, a
    binary goal, an evolve checkpoint of another schema, a finished run, bad workflows."""
    (root / "afile").write_text("x")
    (root / "full").mkdir()
    (root / "full" / "x").write_text("x")
    (root / "empty").mkdir()
    (root / "cdir").mkdir()
    (root / "notdb.txt").write_text("not a database\n")
    (root / "binary.md").write_bytes(bytes(range(256)) * 8)
    (root / "schema99").mkdir()
    (root / "schema99" / "checkpoint.json").write_text('{"schema_version": 99}')
    for name, checkpoint in (("badjson", "garbage"), ("truncated", '{"schema_version": 1, "con')):
        (root / name).mkdir()
        (root / name / "config.yaml").write_text("schema_version: 2\nkind: evolve\n")
        (root / name / "checkpoint.json").write_text(checkpoint)
    (root / "nockpt" / "gen_0").mkdir(parents=True)  # evaluated, then its checkpoint was lost
    (root / "nockpt" / "config.yaml").write_text("schema_version: 2\nkind: evolve\n")
    (root / "research").mkdir()  # what `research init` heads its working directory with
    (root / "research" / "config.yaml").write_text("schema_version: 2\nkind: research\n")
    (root / "noreplies.yaml").write_text("replies: []\n")
    # a task whose fail_to_pass names a test it does not have (a typo in task.toml)
    make_calc_task(root / "typof2p", "typo", extra_f2p=["tests/test_ops_hidden.py::test_nosuch"])
    _notes_repo(root / "notes")
    fn = root / "fnbench" / "greet"  # graded by an evaluator no module provides
    (fn / "repo").mkdir(parents=True)
    (fn / "repo" / "greet.py").write_text("def greet(name):\n    return 'hi'\n")
    (fn / "instruction.md").write_text("Make greet(name) return 'Hello, NAME!'.\n")
    (fn / "task.toml").write_text('schema_version = 1\nid = "greet"\nlevel = 1\n\n[grading]\n'
                                  'runner = "function"\nevaluator = "lwnosuch_metrics:grade"\n')  # fmt: skip
    (root / "badprovider.yaml").write_text(
        "schema_version: 1\nloops: all\ntiers: {small: nosuchprovider/x}\nbriefs: all\n"
    )
    base = resolve_task_workflow("research-build-verify").model_dump(mode="json")
    loops = {**base, "nodes": [_set(n, "max_loops", 1_000_000_000) for n in base["nodes"]]}
    (root / "wf-loops.yaml").write_text(yaml.safe_dump(loops))
    prompt = "{instruction_file}\n" + "x" * 10_000_000
    big = {**base, "nodes": [_set(n, "prompt", prompt) for n in base["nodes"]]}
    (root / "wf-prompt.yaml").write_text(yaml.safe_dump(big, width=10**9))


def _notes_repo(root: Path) -> None:
    """A git repository whose commits change no code: `tasks mine` keeps nothing of it."""
    root.mkdir()
    who = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    for n, text in enumerate(("notes\n", "more notes\n")):
        (root / "README.md").write_text(text)
        subprocess.run(["git", "init", "-q"] if n == 0 else ["true"], cwd=root, check=True)
        subprocess.run(["git", *who, "add", "README.md"], cwd=root, check=True)
        subprocess.run(["git", *who, "commit", "-qm", f"notes {n}"], cwd=root, check=True)


def _set(node: dict[str, object], key: str, value: object) -> dict[str, object]:
    return {**node, key: value} if key in node else node


@dataclass(frozen=True)
class Row:
    argv: str
    code: int
    message: str
    fix: str


def _run(case: Case, capsys: pytest.CaptureFixture[str], url: str) -> tuple[int, str]:
    argv = [url if a == "LOOPBACK" else a for a in case.argv]
    try:
        code = main(argv)
    except BaseException:  # noqa: BLE001  the failure this test exists to catch
        return -1, capsys.readouterr().err + traceback.format_exc()
    out, err = capsys.readouterr()
    return code, err + out


_BOX = str.maketrans("", "", "╭╮╰╯│─")


def _row(case: Case, text: str, code: int, root: Path) -> Row:
    text = text.replace(str(root), ".")
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
    lines = [line.translate(_BOX).strip() for line in text.splitlines()]
    lines = [line for line in lines if line and line != "Error"]  # typer's box title
    if case.report is not None:
        start = next(i for i, ln in enumerate(lines) if case.report in ln)
        return Row(" ".join(("loopwright", *case.argv)), code, " ".join(lines[start : start + 2]),
                   "")  # fmt: skip
    start = next((i for i, ln in enumerate(lines) if ln.startswith(("error:", "failed:"))), None)
    if start is None:  # typer's own usage errors: the box after the usage, its lines joined
        usage = ("Usage:", "Try")
        return Row(" ".join(("loopwright", *(a or "''" for a in case.argv))), code,
                   " ".join(ln for ln in lines if not ln.startswith(usage)), "")  # fmt: skip
    detail = [ln for ln in lines[start + 1 : start + 3] if ln.startswith("- ")]
    message = " ".join(lines[start : start + 1] + detail)
    fix = next((ln.removeprefix("fix:").strip() for ln in lines[start:] if ln.startswith("fix:")),
               "")  # fmt: skip
    return Row(" ".join(("loopwright", *(a or "''" for a in case.argv))), code, message, fix)


def _cell(text: str, limit: int = 240) -> str:
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def render(rows: list[Row]) -> str:
    head = """# Bad inputs

What each command says when it is given something it cannot use. Every case below is run by
`tests/cli/test_bad_inputs.py`, which generated this page (rewrite it with
`LOOPWRIGHT_WRITE_DOCS=1 pytest tests/cli/test_bad_inputs.py`) and checks for each: the exit
code, no traceback, and that a refused command left nothing behind (no run directory, no
`config.yaml`, `runs.db` or lock).

Exit codes: 2 for input the user can fix (the message says what, what was got, and the fix);
1 for a run that failed (a model that answered no call: the first error, redacted). An OS
error no check foresaw (a full disk, a path that changed meanwhile) is also one paragraph
with exit 2: `loopwright` names the path and the fix, never a traceback.

The paths in the cases: `afile` is a file, `full/` a non-empty directory, `empty/` and `cdir/`
empty directories, `ro/` a read-only file system, `notdb.txt` a text file, `binary.md` binary
bytes, `schema99/` an evolve run of another checkpoint schema, `badjson/` and `truncated/`
evolve runs whose checkpoint is garbage or cut short, `nockpt/` an evolve run that evaluated a
generation and lost its checkpoint (it has no progress either), `research/` a research working
directory, `badresult/`, `badcalib/`, `wrongcalib/` and `emptycfg/` finished evolve runs whose
`result.json` is garbage, whose `calibration.json` is cut short or holds another object, and
whose `config.yaml` is empty, `noreplies.yaml` a script file with no reply,
`badprovider.yaml` an A/B manifest naming an unknown provider, `done/` a finished run,
`wf-loops.yaml` a workflow whose gate has `max_loops: 1000000000` and `wf-prompt.yaml` one with
a 10 MB prompt (limits: docs/workflow.md and docs/evolve.md), `typof2p/` a benchmark whose
task lists a fail_to_pass test it does not have (`bench validate` reports it, exit 1), `notes/`
a git repository whose commits change no code (`tasks mine` keeps nothing: exit 1 and what to
try). `LOOPBACK` is an OpenAI-compatible server that answers every call with 401.

| input | exit | message | fix |
| --- | --- | --- | --- |
"""
    body = "".join(
        f"| `{_cell(r.argv, 400)}` | {r.code} | {_cell(r.message, 500)} | {_cell(r.fix)} |\n"
        for r in rows
    )
    return head + body


@pytest.fixture
def damaged_evolve_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finished one-generation evolve run (sim), copied four times, each with one damaged
    file beside its checkpoint: result.json and calibration.json garbage, calibration.json
    another object, config.yaml empty."""
    done = tmp_path / "evdone"
    code = main([*EVOLVE, "--model", "sim", "--sandbox", "local", "--train", "l1-slugify",
                 "--holdout", "l1-roman-numerals", "--population", "2", "--generations", "1",
                 "--max-evaluations", "1", "--workers", "1", "--no-report", "--run-dir", str(done)])  # fmt: skip
    text = capsys.readouterr()
    assert code == 0, text
    assert (done / "result.json").is_file()
    for name, file, content in (
        ("badresult", "result.json", "garbage"),
        ("badcalib", "calibration.json", '{"seed_workflow": "builder-on'),
        ("wrongcalib", "calibration.json", '{"schema_version": 1}'),
        ("emptycfg", "config.yaml", ""),
    ):
        shutil.copytree(done, tmp_path / name)
        (tmp_path / name / file).write_text(content)


@pytest.fixture
def done_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code = main([*RUN, "--run-dir", str(tmp_path / "done"), "--sandbox", "local", "--json"])
    capsys.readouterr()
    assert code == 0
    return tmp_path / "done"


def test_every_bad_input_is_one_paragraph_and_leaves_nothing_behind(
    tmp_path: Path,
    read_only: bool,
    done_run: Path,
    damaged_evolve_runs: None,
    loopback: Loopback,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    del done_run, damaged_evolve_runs
    _fixtures(tmp_path)
    monkeypatch.chdir(tmp_path)
    loopback.script.answers.extend(Failure(401, f"Incorrect API key: {DUMMY_KEY}")
                                   for _ in range(20))  # fmt: skip
    rows: list[Row] = []
    problems: list[str] = []
    for case in CASES:
        if case.needs_ro and not read_only:
            continue
        with monkeypatch.context() as env:
            for name, value in case.env:
                env.setenv(name, value)
            code, text = _run(case, capsys, loopback.url)
        row = _row(case, text, code, tmp_path)
        rows.append(row)
        problems += _check(case, code, text, tmp_path)
    assert not problems, "\n".join(problems)
    _check_doc(rows, complete=len(rows) == len(CASES))


def _check(case: Case, code: int, text: str, root: Path) -> list[str]:
    what = " ".join(case.argv)
    found = []
    if code != case.code:
        found.append(f"{what}: exit {code}, expected {case.code}:\n{text[-2000:]}")
    if "Traceback" in text:
        found.append(f"{what}: a traceback:\n{text[-2000:]}")
    if case.says not in text:
        found.append(f"{what}: the message does not say {case.says!r}:\n{text[-800:]}")
    if DUMMY_KEY in text:
        found.append(f"{what}: the key reached the output")
    if case.absent is not None and (root / case.absent).exists():
        found.append(f"{what}: left {case.absent} behind")
    return found


def _check_doc(rows: list[Row], *, complete: bool) -> None:
    text = render(rows)
    if os.environ.get("LOOPWRIGHT_WRITE_DOCS") and complete:
        DOC.write_text(text, encoding="utf-8")
        return
    committed = DOC.read_text(encoding="utf-8")
    if complete:
        assert committed == text, (
            "docs/bad-inputs.md is out of date: rewrite it with "
            "LOOPWRIGHT_WRITE_DOCS=1 pytest tests/cli/test_bad_inputs.py"
        )
        return
    table = render([]).splitlines()
    missing = [ln for ln in text.splitlines() if ln not in committed and ln not in table]
    assert not missing, f"docs/bad-inputs.md lacks rows: {missing}"
