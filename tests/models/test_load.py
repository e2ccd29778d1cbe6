"""Real providers under load: `evolve` with local workers and a meta model on a loopback
OpenAI-compatible server that keeps connections alive and injects faults at a fixed seed (429
with Retry-After, 500, slow replies). Every request body the server received parsed, every
request arrived on a connection only one process held, the server's requests equal the
ledger's rows role by role, its tokens the ledger's tokens, and no run lost a node to a client
error. Before the fork fix this failed: forked workers wrote onto the parent's keep-alive
connection (bodies the server could not parse, replies read by the wrong process)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.evaluation import SUMMARY_FILE
from loopwright.models import LEDGER_FILE, LedgerRecord, read_ledger
from loopwright.runtime import EXTERNAL_AGENTS, executable_env_name
from loopwright.workflow import builtin_workflow, workflow_to_yaml
from tests.models.loopback import AnswerFn, Faults, LoopbackServer, reading_answers, role_answers
from tests.models.test_gateway_server import DUMMY_KEY

AGENT_MODEL = "openai/loopback-coder"
META_MODEL = "openai/loopback-meta"
FAULTS = Faults(seed=33, rate_limit=0.02, server_error=0.01, slow=0.01, slow_s=0.3)
PRICES = "prices:\n" + "".join(
    f"  {m}: {{input_per_mtok: 10, output_per_mtok: 2}}\n" for m in (AGENT_MODEL, META_MODEL)
)


def _serving(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answers: AnswerFn
) -> Iterator[LoopbackServer]:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    settings = tmp_path / "settings.yaml"  # no user settings file leaks in from HOME
    settings.write_text("schema_version: 1\nengine: {default_loop_type: react}\n")
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(settings))
    with LoopbackServer(answers, FAULTS).serving() as running:
        yield running


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LoopbackServer]:
    yield from _serving(monkeypatch, tmp_path, role_answers)


@pytest.fixture
def reading_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LoopbackServer]:
    """Agents that read their task before finishing (so research's smoke runs pass)."""
    yield from _serving(monkeypatch, tmp_path, reading_answers)


def assert_exact(server: LoopbackServer, records: list[LedgerRecord]) -> None:
    """What the server received and what the ledger holds agree exactly (see module doc)."""
    received = server.log.snapshot()
    assert server.log.unparsed() == []  # every body and request line parsed
    assert server.log.shared() == []  # no connection held by two processes
    assert Counter(e.role for e in received) == Counter(r.labels.role or "(none)" for r in records)
    assert len(received) == len(records)
    assert server.log.tokens() == (
        sum(r.input_tokens for r in records),
        sum(r.output_tokens for r in records),
    )
    failed = Counter(r.error_kind for r in records if not r.ok)
    assert set(failed) <= {"rate_limit", "server"}  # the injected faults, nothing else
    faults = Counter(e.fault for e in received if e.status != 200)
    assert sum(failed.values()) == faults["429"] + faults["500"]


@pytest.mark.parametrize(
    ("executor", "workers"),
    [("local", 2), ("local", 4), pytest.param("ray", 2, marks=pytest.mark.slow)],
)
def test_evolve_with_workers_and_a_meta_model_keeps_an_exact_ledger_under_faults(
    server: LoopbackServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    executor: str,
    workers: int,
) -> None:
    """Under Ray, a local instance started by the run (as `--executor ray` without an address
    does): its workers are processes of this test's tree, so the server sees their pids."""
    if executor == "ray":
        pytest.importorskip("ray", reason="ray is not installed: pip install 'loopwright[ray]'")
    prices = tmp_path / "models.yaml"
    prices.write_text(PRICES)
    run_dir = tmp_path / "run"
    argv = [
        "evolve", "--bench", "mini", "--seed-workflow", "builder-only",
        "--model", AGENT_MODEL, "--meta-model", META_MODEL, "--api-base", server.url,
        "--config", str(prices), "--train", "l1-roman-numerals,l1-semver-compare",
        "--holdout", "l1-rle-decode", "--population", "3", "--generations", "2",
        "--holdout-reps", "1", "--exploration", "0", "--sandbox", "local", "--no-report",
        "--workers", str(workers), "--executor", executor, "--run-dir", str(run_dir),
    ]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    records = read_ledger(run_dir / LEDGER_FILE)
    assert_exact(server, records)
    roles = Counter(e.role for e in server.log.snapshot())
    assert roles["meta:reflector"] >= 2 and roles["builder"] > roles["meta:reflector"]
    faults = Counter(e.fault for e in server.log.snapshot())
    assert faults["429"] + faults["500"] >= 1  # the faults were met (and retried)


def test_two_workflows_with_one_name_in_one_run_are_kept_apart(
    server: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two files both naming their workflow `twin` (different graphs): two folders, two ledger
    labels, two summary rows, each its own cost; `run` says so."""
    seed = builtin_workflow("builder-only")
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(workflow_to_yaml(seed.model_copy(update={"name": "twin"})))
    builder = seed.nodes[0].model_copy(update={"prompt": seed.nodes[0].prompt + "\nBe careful."})
    second.write_text(
        workflow_to_yaml(seed.model_copy(update={"name": "twin", "nodes": [builder]}))
    )
    run_dir = tmp_path / "run"
    argv = [
        "run", str(first), str(second), "--bench", "mini", "--tasks", "l1-roman-numerals",
        "--model", AGENT_MODEL, "--api-base", server.url, "--sandbox", "local",
        "--no-report", "--run-dir", str(run_dir),
    ]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    labels = [w["workflow"] for w in summary["workflows"]]
    assert len(set(labels)) == 2 and all(label.startswith("twin-") for label in labels)
    assert all((run_dir / label / "workflow.yaml").is_file() for label in labels)
    assert not (run_dir / "twin").exists()
    records = read_ledger(run_dir / LEDGER_FILE)
    by_label = Counter(r.labels.candidate for r in records)
    assert set(by_label) == set(labels)
    calls = {
        w["workflow"]: sum(t["input_tokens"] for t in w["tasks"]) for w in summary["workflows"]
    }
    assert calls == {
        label: sum(r.input_tokens for r in records if r.labels.candidate == label)
        for label in labels
    }  # each row's tokens are its own, not the sum of both
    assert "named twin" in out + err and labels[1] in out + err
    assert_exact(server, records)


def test_research_with_a_parallel_wave_keeps_an_exact_ledger_under_faults(
    reading_server: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`research run` with its agents on the server (the meta phases on the sim, whose THINK
    proposes specs the wave then measures): the smoke runs and holdout runs go from threads of
    this process, the wave's jobs from forked workers, each with its own connections, and
    every request is a ledger row. The agents read their task first, or no smoke run passes
    and no wave runs."""
    server = reading_server
    prices = tmp_path / "models.yaml"
    prices.write_text(PRICES)
    root = tmp_path / "v1"
    init = [
        "research", "init", "--dir", str(root), "--goal", "raise mean partial credit",
        "--workflow", "builder-only", "--bench", "mini", "--eval-model", AGENT_MODEL,
        "--tasks", "l1-semver-compare,l1-roman-numerals", "--workers", "2", "--max-specs", "2",
        "--heartbeat", "1", "--sandbox", "local",
    ]  # fmt: skip
    assert main(init) == 0
    run = [
        "research", "run", "--dir", str(root), "--model", AGENT_MODEL, "--meta-model", "sim",
        "--api-base", server.url, "--config", str(prices), "--iterations", "2", "--no-report",
    ]  # fmt: skip
    assert main(run) == 0
    capsys.readouterr()
    assert_exact(server, read_ledger(root / LEDGER_FILE))
    roles = Counter(e.role for e in server.log.snapshot())
    assert roles["builder"] >= 1, roles
    callers = {pid for e in server.log.snapshot() for pid in e.kept}
    assert os.getpid() in callers and len(callers - {os.getpid()}) >= 2  # the wave's workers


def test_an_ab_cell_keeps_an_exact_ledger_under_faults(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`ab record` with the native loops on the server (the external agents not installed)."""
    for name in [*EXTERNAL_AGENTS, "mini-swe-agent"]:
        monkeypatch.setenv(executable_env_name(name), str(tmp_path / "not-installed" / name))
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        f"loops: all\ntiers:\n  small: {AGENT_MODEL}\nbriefs: [simple-wordfreq]\nrepetitions: 2\n"
    )
    out = tmp_path / "record"
    argv = ["ab", "record", "--gateway-base-url", server.url, "--manifest", str(manifest),
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    records = read_ledger(out / LEDGER_FILE)
    assert_exact(server, records)
    assert {r.labels.candidate for r in records} >= {"react", "plan_execute", "hybrid"}
